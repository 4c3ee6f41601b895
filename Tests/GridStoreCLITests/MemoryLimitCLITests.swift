// Tests/GridStoreCLITests/MemoryLimitCLITests.swift - the commands under a memory limit

import Foundation
import Testing

@testable import GridStoreCLI

@Suite("Memory limits")
struct MemoryLimitCLITests {
    /// `gridstore ARGUMENTS` under `ulimit -v KILOBYTES`, through `sh`, as a user would run it.
    static func runLimited(_ sandbox: ToolSandbox, kilobytes: Int, _ arguments: [String], input: String = "") throws
        -> ToolResult
    {
        let tool = try GridStoreExecutable.located.get()
        let quoted = ([tool] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let process = try sandbox.process([])
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -v \(kilobytes) && exec " + quoted.joined(separator: " ")]
        let name = UUID().uuidString
        try sandbox.write(input, to: "\(name).in")
        _ = FileManager.default.createFile(atPath: sandbox.path("\(name).out"), contents: nil)
        _ = FileManager.default.createFile(atPath: sandbox.path("\(name).err"), contents: nil)
        process.standardInput = FileHandle(forReadingAtPath: sandbox.path("\(name).in"))
        process.standardOutput = FileHandle(forWritingAtPath: sandbox.path("\(name).out"))
        process.standardError = FileHandle(forWritingAtPath: sandbox.path("\(name).err"))
        try sandbox.runToEnd(process)
        return ToolResult(
            status: process.terminationStatus,
            reason: process.terminationReason,
            output: String(decoding: sandbox.bytes(of: "\(name).out") ?? Data(), as: UTF8.self),
            errors: String(decoding: sandbox.bytes(of: "\(name).err") ?? Data(), as: UTF8.self)
        )
    }

    /// Under `ulimit -v 200000` (about 195 MiB of address space, of which the tool itself maps
    /// some 100), a 300,000-record archive cannot be decoded. Every command that reads it says
    /// so and exits 1: no signal, no crash. A 1,000-record archive loads under the same limit.
    @Test(
        .disabled(
            if: runsUnderAddressSanitizer,
            "the tool built with it maps its shadow memory at start, which ulimit -v forbids"
        )
    )
    func commandsUnderAnAddressSpaceLimitFailCleanly() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--generate", "300000", "--file", "big.gridstore"]).status == 0)
        #expect(try sandbox.run(["save", "--generate", "1000", "--file", "small.gridstore"]).status == 0)
        let limit = 200_000
        let small = try Self.runLimited(
            sandbox,
            kilobytes: limit,
            ["load", "--stats", "--json", "--file", "small.gridstore"]
        )
        #expect(small.reason == .exit && small.status == 0, "\(small.errors)")
        for command in [
            ["load", "--stats", "--json", "--file", "big.gridstore"],
            ["load", "--limit", "1", "--file", "big.gridstore"],
            ["verify", "--file", "big.gridstore"], ["save", "--append", "--generate", "1", "--file", "big.gridstore"],
            ["session", "--file", "big.gridstore"], ["convert", "big.gridstore", "out.gridstore", "--to", "gridstore"],
        ] {
            let result = try Self.runLimited(sandbox, kilobytes: limit, command)
            #expect(result.reason == .exit && result.status == 1, "\(command): \(result.reason) \(result.status)")
            #expect(result.errors.hasPrefix("gridstore: error: big.gridstore: "), "\(command): \(result.errors)")
            #expect(result.errors.contains("needs more memory than"), "\(command): \(result.errors)")
        }
        // inspect --summary streams the archive without building its objects: it fits.
        let summary = try Self.runLimited(sandbox, kilobytes: limit, ["inspect", "--summary", "big.gridstore"])
        #expect(summary.reason == .exit && summary.status == 0, "\(summary.errors)")
        // Nothing was written: the archive is as it was.
        #expect(try sandbox.run(["verify", "--file", "big.gridstore"]).output.contains("ok: 300000 records"))
        #expect(sandbox.bytes(of: "out.gridstore") == nil)
    }

    /// `save --generate` checks the budget before it makes a record.
    @Test(
        .disabled(
            if: runsUnderAddressSanitizer,
            "the tool built with it maps its shadow memory at start, which ulimit -v forbids"
        )
    )
    func generatingMoreThanTheBudgetTakesIsRefusedFirst() throws {
        let sandbox = try ToolSandbox()
        let result = try Self.runLimited(
            sandbox,
            kilobytes: 200_000,
            ["save", "--generate", "2000000", "--file", "g.gridstore"]
        )
        #expect(result.reason == .exit && result.status == 1)
        #expect(
            result.errors.hasPrefix("gridstore: error: generating and saving 2000000 records needs about 629.4 MiB")
        )
        let limited = try sandbox.run(["save", "--generate", "10000", "--memory-limit", "1M", "--file", "g.gridstore"])
        #expect(limited.status == 1 && limited.errors.contains("more than the 1.0 MiB this process may use"))
        #expect(sandbox.bytes(of: "g.gridstore") == nil)
    }

    /// `--memory-limit SIZE` sets the budget of reading: 1 MiB is too little for 10,000 records,
    /// 256 MiB is enough.
    @Test func memoryLimitFlagSetsTheBudget() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--generate", "10000", "--file", "m.gridstore"]).status == 0)
        let refused = try sandbox.run(["load", "--stats", "--memory-limit", "1M", "--file", "m.gridstore"])
        #expect(refused.status == 1)
        #expect(refused.errors.contains("decoding needs more memory than maximumMemoryBytes (1.0 MiB) allows"))
        #expect(refused.errors.hasSuffix("; --memory-limit SIZE sets the budget\n"))
        for command in [["load", "--stats"], ["verify"], ["inspect", "--summary"]] {
            let result = try sandbox.run(command + ["--memory-limit", "256M", "--file", "m.gridstore"])
            #expect(result.status == 0, "\(command): \(result.errors)")
        }
    }

    @Test func memoryLimitTakesSizesWithBinaryUnits() throws {
        #expect(parseByteSize("512M") == 512 << 20)
        #expect(parseByteSize("2G") == 2 << 30)
        #expect(parseByteSize("1.5g") == 3 << 29)
        #expect(parseByteSize("64KiB") == 64 << 10)
        #expect(parseByteSize("1000000") == 1_000_000)
        #expect(parseByteSize("4TB") == 4 << 40)
        for bad in ["", "M", "-1G", "1.2.3M", "12Q", "1e9", "nan", "99999999999T"] {
            #expect(parseByteSize(bad) == nil, "\(bad)")
        }
        #expect(throws: UsageError.self) { try parse(["load", "--memory-limit", "0"]) }
        #expect(throws: UsageError.self) { try parse(["verify", "--memory-limit", "lots"]) }
        guard case .load(let options) = try parse(["load", "--memory-limit=2G"]).command else {
            Issue.record("not a load")
            return
        }
        #expect(options.memoryLimit == 2 << 30)
    }
}
