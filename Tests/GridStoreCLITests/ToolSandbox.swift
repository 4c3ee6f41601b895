// Tests/GridStoreCLITests/ToolSandbox.swift - runs the built `gridstore` in a scratch folder

import Foundation
import Synchronization
import Testing

/// The `gridstore` executable SwiftPM built next to this test bundle.
enum GridStoreExecutable {
    /// Its path, or `nil` with the places searched.
    static let located: Result<String, LocateError> = locate()

    struct LocateError: Error, CustomStringConvertible {
        var searched: [String]
        var description: String {
            "no gridstore executable in \(searched.joined(separator: ", ")); build it, or set GRIDSTORE_EXECUTABLE"
        }
    }

    /// `$GRIDSTORE_EXECUTABLE`, else a `gridstore` file in the folder of the running test binary
    /// (Linux: `.build/debug/gridstorePackageTests.xctest`) or of the bundle, or up to three
    /// folders above them (macOS: `….xctest/Contents/MacOS/…`).
    private static func locate() -> Result<String, LocateError> {
        if let path = ProcessInfo.processInfo.environment["GRIDSTORE_EXECUTABLE"], !path.isEmpty {
            return .success(path)
        }
        let starts = [
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "",
            Bundle.main.executablePath ?? "", Bundle.main.bundlePath, CommandLine.arguments.first ?? "",
        ]
        var searched: [String] = []
        for start in starts where !start.isEmpty {
            var folder = URL(fileURLWithPath: start).deletingLastPathComponent()
            for _ in 0..<4 {
                let candidate = folder.appendingPathComponent("gridstore").path
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isFolder), !isFolder.boolValue,
                    FileManager.default.isExecutableFile(atPath: candidate)
                {
                    return .success(candidate)
                }
                if !searched.contains(folder.path) { searched.append(folder.path) }
                folder = folder.deletingLastPathComponent()
            }
        }
        return .failure(LocateError(searched: searched))
    }
}

/// What one run of the tool did.
struct ToolResult {
    var status: Int32
    /// `.exit` or `.uncaughtSignal` (then `status` is the signal).
    var reason: Process.TerminationReason
    var output: String
    var errors: String
    /// Standard output as bytes, for archives written there.
    var outputBytes = Data()

    var outputLines: [String] {
        output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

/// A scratch folder whose runs of `gridstore` find their default archive inside it, never in
/// the user's home.
final class ToolSandbox {
    let folder: String
    /// Seconds a run may take before it is killed (and the test fails on its status).
    static let timeout = 120.0

    init() throws {
        folder = NSTemporaryDirectory() + "gridstore-cli-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func path(_ name: String) -> String {
        folder + "/" + name
    }

    func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path(name)))
    }

    /// Copies the file at `source` into the sandbox under its own name, so that commands may
    /// lock and replace it there (never in the source tree); returns the copy's path.
    func copy(_ source: String) throws -> String {
        let copy = path(URL(fileURLWithPath: source).lastPathComponent)
        try FileManager.default.copyItem(atPath: source, toPath: copy)
        return copy
    }

    func bytes(of name: String) -> Data? {
        FileManager.default.contents(atPath: path(name))
    }

    /// The environment runs get: this process's, with the default archive inside the sandbox.
    func environment(_ changes: [String: String?]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GRIDSTORE_FILE"] = path("default.gridstore")
        environment.removeValue(forKey: "XDG_DATA_HOME")
        for (key, value) in changes { environment[key] = value }
        return environment
    }

    /// A configured, not yet started process.
    func process(_ arguments: [String], environment changes: [String: String?] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try GridStoreExecutable.located.get())
        process.arguments = arguments
        process.environment = environment(changes)
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        return process
    }

    /// Runs `gridstore arguments` to the end, `input` as standard input.
    func run(_ arguments: [String], input: String = "", environment: [String: String?] = [:]) throws -> ToolResult {
        try run(arguments, inputBytes: Data(input.utf8), environment: environment)
    }

    /// Runs `gridstore arguments` to the end, `inputBytes` as standard input.
    func run(_ arguments: [String], inputBytes: Data, environment: [String: String?] = [:]) throws -> ToolResult {
        let process = try process(arguments, environment: environment)
        // Files rather than pipes: nothing to drain while waiting, so no run can block on a full pipe.
        let name = UUID().uuidString
        try inputBytes.write(to: URL(fileURLWithPath: path("\(name).in")))
        _ = FileManager.default.createFile(atPath: path("\(name).out"), contents: nil)
        _ = FileManager.default.createFile(atPath: path("\(name).err"), contents: nil)
        process.standardInput = FileHandle(forReadingAtPath: path("\(name).in"))
        process.standardOutput = FileHandle(forWritingAtPath: path("\(name).out"))
        process.standardError = FileHandle(forWritingAtPath: path("\(name).err"))
        try runToEnd(process)
        defer {
            for suffix in ["in", "out", "err"] {
                try? FileManager.default.removeItem(atPath: path("\(name).\(suffix)"))
            }
        }
        let output = bytes(of: "\(name).out") ?? Data()
        return ToolResult(
            status: process.terminationStatus,
            reason: process.terminationReason,
            output: String(decoding: output, as: UTF8.self),
            errors: String(decoding: bytes(of: "\(name).err") ?? Data(), as: UTF8.self),
            outputBytes: output
        )
    }

    /// Starts `process` and waits for it, killing it after ``timeout``.
    func runToEnd(_ process: Process) throws {
        try process.run()
        waitWithTimeout(process)
    }

    func waitWithTimeout(_ process: Process) {
        let finished = Finished()
        let pid = process.processIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.timeout) {
            if !finished.flag.load(ordering: .acquiring) { kill(pid, SIGKILL) }
        }
        process.waitUntilExit()
        finished.flag.store(true, ordering: .releasing)
    }

    private final class Finished: Sendable {
        let flag = Atomic(false)
    }
}
