// Tests/GridStoreCLITests/SaveOnExitTests.swift - the data source saves when the process is told to end

import Foundation
import GraphArchive
import GridStore
import Testing

/// A running `gridstore session`: records go in through standard input, its `loaded N` /
/// `added N` lines come back through standard output.
final class RunningSession {
    let process: Process
    private let input = Pipe()
    private let output = Pipe()
    private var pending = ""

    /// Starts `gridstore session --file FILE` with `options` added; its standard error goes to
    /// the sandbox file `errors` when given.
    init(_ sandbox: ToolSandbox, file: String, options: [String] = [], errors: String? = nil) throws {
        process = try sandbox.process(["session", "--file", file] + options)
        process.standardInput = input
        process.standardOutput = output
        if let errors {
            _ = FileManager.default.createFile(atPath: sandbox.path(errors), contents: nil)
            process.standardError = FileHandle(forWritingAtPath: sandbox.path(errors))
        } else {
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        }
        try process.run()
    }

    func send(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    func closeInput() throws {
        try input.fileHandleForWriting.close()
    }

    /// The next line of output; `nil` once the process closed it.
    func nextLine() -> String? {
        while true {
            if let newline = pending.firstIndex(of: "\n") {
                let line = String(pending[..<newline])
                pending = String(pending[pending.index(after: newline)...])
                return line
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return nil }
            pending += String(decoding: data, as: UTF8.self)
        }
    }
}

@Suite("Save on exit")
struct SaveOnExitTests {
    static let records = [
        #"{"name":"Sunset","color":16746496,"date":"2024-06-01T18:00:00Z","id":"s"}"#,
        #"{"name":"Night","color":0,"date":"2024-06-02T00:00:00Z"}"#,
        #"{"id":"s"}"#,
    ]

    /// SIGTERM, SIGINT and SIGHUP each save the records taken in, then end the process by that
    /// signal, as the sender asked.
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func signalSavesThenEndsTheProcess(signal: Int32) throws {
        let sandbox = try ToolSandbox()
        let session = try RunningSession(sandbox, file: "s.gridstore")
        #expect(session.nextLine() == "loaded 0")
        for (index, record) in Self.records.enumerated() {
            try session.send(record)
            #expect(session.nextLine() == "added \(index + 1)")
        }
        kill(session.process.processIdentifier, signal)
        sandbox.waitWithTimeout(session.process)
        #expect(session.process.terminationReason == .uncaughtSignal)
        #expect(session.process.terminationStatus == signal)

        let states = try GridStateArchive.readStates(fromFile: sandbox.path("s.gridstore"))
        #expect(states.map(\.name) == ["Sunset", "Night", "Sunset"])
        #expect(states[0] === states[2])
    }

    /// A save on a signal that fails is not hidden behind the usual ending by the signal: the
    /// error is printed and the status is 1. The archive's folder is replaced by a file, which
    /// fails the save even for root.
    @Test func failedSaveOnASignalExitsOneWithTheError() throws {
        let sandbox = try ToolSandbox()
        let session = try RunningSession(sandbox, file: "folder/s.gridstore", errors: "errors")
        #expect(session.nextLine() == "loaded 0")
        try session.send(Self.records[0])
        #expect(session.nextLine() == "added 1")
        try FileManager.default.removeItem(atPath: sandbox.path("folder"))
        #expect(FileManager.default.createFile(atPath: sandbox.path("folder"), contents: Data("a file".utf8)))
        kill(session.process.processIdentifier, SIGTERM)
        sandbox.waitWithTimeout(session.process)
        #expect(session.process.terminationReason == .exit)
        #expect(session.process.terminationStatus == 1)
        let errors = String(decoding: sandbox.bytes(of: "errors") ?? Data(), as: UTF8.self)
        #expect(errors.hasPrefix("gridstore: error: could not save folder/s.gridstore (on signal 15): "), "\(errors)")
    }

    @Test func endOfInputSavesAndExitsZero() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "s.gridstore", "--generate", "2"]).status == 0)
        let result = try sandbox.run(["session", "--file", "s.gridstore"], input: Self.records.joined(separator: "\n"))
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.outputLines == ["loaded 2", "added 3", "added 4", "added 5"])
        #expect(result.errors == "gridstore: saved 5 records to s.gridstore\n")
        let states = try GridStateArchive.readStates(fromFile: sandbox.path("s.gridstore"))
        #expect(states.count == 5)
        #expect(states[2] === states[4])
    }

    @Test func badLinesAreSkippedAndSetTheStatus() throws {
        let sandbox = try ToolSandbox()
        let result = try sandbox.run(
            ["session", "--file", "s.gridstore"],
            input: "\(Self.records[0])\n{\"name\":1}\n\(Self.records[1])\n"
        )
        #expect(result.status == 1)
        #expect(result.outputLines == ["loaded 0", "added 1", "added 2"])
        #expect(result.errors.contains("gridstore: error: standard input, line 2: name must be a string"))
        #expect(try GridStateArchive.readStates(fromFile: sandbox.path("s.gridstore")).count == 2)
    }

    /// An unchanged store is not written on a signal: the archive keeps its bytes and its inode.
    @Test func signalWithoutChangesLeavesTheArchiveAlone() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "s.gridstore", "--generate", "20"]).status == 0)
        let before = try FileManager.default.attributesOfItem(atPath: sandbox.path("s.gridstore"))
        let bytes = sandbox.bytes(of: "s.gridstore")
        let session = try RunningSession(sandbox, file: "s.gridstore")
        #expect(session.nextLine() == "loaded 20")
        session.process.terminate()
        sandbox.waitWithTimeout(session.process)
        #expect(session.process.terminationReason == .uncaughtSignal)
        let after = try FileManager.default.attributesOfItem(atPath: sandbox.path("s.gridstore"))
        #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int)
        #expect(sandbox.bytes(of: "s.gridstore") == bytes)
    }

    @Test func closingInputOfARunningSessionSaves() throws {
        let sandbox = try ToolSandbox()
        let session = try RunningSession(sandbox, file: "s.gridstore")
        #expect(session.nextLine() == "loaded 0")
        try session.send(Self.records[1])
        #expect(session.nextLine() == "added 1")
        try session.closeInput()
        #expect(session.nextLine() == nil)
        sandbox.waitWithTimeout(session.process)
        #expect(session.process.terminationReason == .exit)
        #expect(session.process.terminationStatus == 0)
        #expect(try GridStateArchive.readStates(fromFile: sandbox.path("s.gridstore")).map(\.name) == ["Night"])
    }
}
