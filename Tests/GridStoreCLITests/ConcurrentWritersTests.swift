// Tests/GridStoreCLITests/ConcurrentWritersTests.swift - several gridstore processes writing one archive

import Foundation
import GridStore
import Testing

@testable import GridStoreCLI

@Suite("Concurrent writers")
struct ConcurrentWritersTests {
    /// Runs `gridstore arguments` to the end in the background.
    static func start(_ sandbox: ToolSandbox, _ arguments: [String]) throws -> Process {
        let process = try sandbox.process(arguments)
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        return process
    }

    static func records(_ sandbox: ToolSandbox, _ file: String) throws -> Int {
        try GridStateArchive.readStates(fromFile: sandbox.path(file)).count
    }

    /// Two `save --append --generate 1000` at once on a 1,000-record archive, round after round:
    /// each waits for the other's lock, so every round ends with 3,000 records and both succeed.
    @Test func twoAppendsAtOnceKeepEveryRecord() throws {
        let sandbox = try ToolSandbox()
        for round in 0..<12 {
            let base = try sandbox.run(["save", "--generate", "1000", "--file", "a.gridstore"])
            #expect(base.status == 0, "\(base.errors)")
            let first = try Self.start(
                sandbox,
                ["save", "--append", "--generate", "1000", "--seed", "2", "--file", "a.gridstore"]
            )
            let second = try Self.start(
                sandbox,
                ["save", "--append", "--generate", "1000", "--seed", "3", "--file", "a.gridstore"]
            )
            sandbox.waitWithTimeout(first)
            sandbox.waitWithTimeout(second)
            #expect(first.terminationStatus == 0 && second.terminationStatus == 0, "round \(round)")
            #expect(try Self.records(sandbox, "a.gridstore") == 3_000, "round \(round)")
        }
    }

    /// A session holds the archive's lock from its load to its end: an append that may not wait
    /// fails, naming the holder, and the archive is as it was; after the session, it goes in.
    @Test func sessionHoldsTheLockUntilItEnds() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--generate", "10", "--file", "s.gridstore"]).status == 0)
        let session = try RunningSession(sandbox, file: "s.gridstore")
        #expect(session.nextLine() == "loaded 10")

        let refused = try sandbox.run([
            "save", "--append", "--generate", "5", "--lock-timeout", "0", "--file", "s.gridstore",
        ])
        #expect(refused.status == 1)
        #expect(
            refused.errors.hasPrefix(
                "gridstore: error: s.gridstore is locked by another process (pid \(session.process.processIdentifier))"
            )
        )
        #expect(refused.errors.contains("was not released within 0 s"))
        let plain = try sandbox.run(["save", "--generate", "5", "--lock-timeout", "0.2", "--file", "s.gridstore"])
        #expect(plain.status == 1 && plain.errors.contains("is locked by another process"))
        #expect(try Self.records(sandbox, "s.gridstore") == 10)

        try session.send(#"{"name":"Dusk","color":1,"date":"2024"}"#)
        #expect(session.nextLine() == "added 11")
        try session.closeInput()
        sandbox.waitWithTimeout(session.process)
        #expect(session.process.terminationStatus == 0)

        let appended = try sandbox.run([
            "save", "--append", "--generate", "5", "--lock-timeout", "0", "--file", "s.gridstore",
        ])
        #expect(appended.status == 0, "\(appended.errors)")
        #expect(try Self.records(sandbox, "s.gridstore") == 16)
    }

    /// A second session waits for the first (within its timeout) and starts from what the first
    /// saved, so both sessions' records are kept.
    @Test func secondSessionWaitsForTheFirstAndKeepsItsRecords() throws {
        let sandbox = try ToolSandbox()
        let first = try RunningSession(sandbox, file: "t.gridstore")
        #expect(first.nextLine() == "loaded 0")
        try first.send(#"{"name":"first","color":1,"date":"2024"}"#)
        #expect(first.nextLine() == "added 1")

        let second = try RunningSession(sandbox, file: "t.gridstore", options: ["--lock-timeout", "60"])
        try second.send(#"{"name":"second","color":2,"date":"2024"}"#)
        try second.closeInput()
        try first.closeInput()
        sandbox.waitWithTimeout(first.process)
        #expect(second.nextLine() == "loaded 1")
        #expect(second.nextLine() == "added 2")
        sandbox.waitWithTimeout(second.process)
        #expect(first.process.terminationStatus == 0 && second.process.terminationStatus == 0)
        let names = try GridStateArchive.readStates(fromFile: sandbox.path("t.gridstore")).map(\.name)
        #expect(names == ["first", "second"])
    }

    @Test func lockTimeoutTakesSecondsFromZeroToADay() throws {
        let parsed = try parse(["save", "--generate", "1", "--lock-timeout", "2.5"])
        guard case .save(let options) = parsed.command else {
            Issue.record("not a save: \(parsed)")
            return
        }
        #expect(options.lockTimeout == .milliseconds(2_500))
        guard case .session(let session) = try parse(["session"]).command else { return }
        #expect(session.lockTimeout == .seconds(10))
        for bad in ["-1", "x", "90000", "nan"] {
            #expect(throws: UsageError.self) {
                try parse(["convert", "a", "b", "--to", "gridstore", "--lock-timeout", bad])
            }
        }
    }
}
