// Sources/GridStoreCLI/Output.swift - standard output in large writes, and messages on standard error

import Foundation
import GridStore

/// Bytes for standard output, written in large pieces (a line at a time would be a system call
/// per record).
struct OutputBuffer {
    private var bytes: [UInt8] = []
    private static let flushSize = 1 << 16

    init() {
        bytes.reserveCapacity(Self.flushSize + 256)
    }

    mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends `text` filled with spaces to `width` terminal columns, then `separator`.
    mutating func append(_ text: String, paddedTo width: Int, alignRight: Bool, separator: String) {
        let fill = repeatElement(UInt8(ascii: " "), count: max(0, width - DisplayWidth.of(text)))
        if alignRight { bytes.append(contentsOf: fill) }
        bytes.append(contentsOf: text.utf8)
        if !alignRight { bytes.append(contentsOf: fill) }
        bytes.append(contentsOf: separator.utf8)
    }

    /// Lets `body` append raw bytes.
    mutating func append(_ body: (inout [UInt8]) -> Void) {
        body(&bytes)
    }

    /// Writes out once a large piece has gathered.
    mutating func flushIfFull() throws {
        if bytes.count >= Self.flushSize { try flush() }
    }

    /// Writes out everything gathered.
    mutating func flush() throws {
        guard !bytes.isEmpty else { return }
        try Self.write(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Writes `bytes` to standard output now.
    static func write(_ bytes: some DataProtocol) throws {
        do {
            try FileHandle.standardOutput.write(contentsOf: bytes)
        } catch {
            // `gridstore load | head`: the reader left; stopping quietly is what it wants.
            if FileErrorReason.posixCode(of: error) == EPIPE { throw OutputClosed() }
            throw ToolError("cannot write to standard output: \(FileErrorReason.reason(of: error))")
        }
    }
}

/// The reader of standard output went away; the tool stops and exits 0 without a message.
struct OutputClosed: Error {}

/// A failure at run time (exit status 1), with a message for people.
struct ToolError: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

/// Standard error, unbuffered.
enum StandardError {
    /// The program name for messages: the last part of argv[0].
    static let programName: String = {
        let name = CommandLine.arguments.first?.split(separator: "/").last.map(String.init) ?? ""
        return name.isEmpty ? "gridstore" : name
    }()

    static func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// `gridstore: error: MESSAGE`.
    static func error(_ message: String) {
        write("\(programName): error: \(message)\n")
    }

    /// `gridstore: warning: MESSAGE`.
    static func warning(_ message: String) {
        write("\(programName): warning: \(message)\n")
    }

    static var isTerminal: Bool {
        isatty(STDERR_FILENO) == 1
    }
}

/// What a command says besides its results, and whether it says it.
///
/// `-q`/`--quiet` silences progress and informational lines (`saved 3 records …`, `loaded 2`);
/// results (records, statistics), warnings and errors are always written.
struct Console {
    var quiet = false

    /// A progress line for a long operation: drawn on a terminal unless quiet.
    func progress() -> Progress {
        Progress(enabled: !quiet && StandardError.isTerminal)
    }

    /// A line saying what was done, on standard output (on standard error when standard output
    /// carries an archive); nothing when quiet.
    func summary(_ line: String, onStandardError: Bool = false) throws {
        guard !quiet else { return }
        if onStandardError {
            StandardError.write(line + "\n")
            return
        }
        var output = OutputBuffer()
        output.append(line + "\n")
        try output.flush()
    }

    /// `gridstore: TEXT` on standard error; nothing when quiet.
    func note(_ text: String) {
        guard !quiet else { return }
        StandardError.write("\(StandardError.programName): \(text)\n")
    }

    /// `gridstore: warning: TEXT` on standard error, quiet or not.
    func warning(_ text: String) {
        StandardError.warning(text)
    }
}

/// `count` and `noun`, the noun plural unless the count is 1: "1 record", "3 records".
func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}
