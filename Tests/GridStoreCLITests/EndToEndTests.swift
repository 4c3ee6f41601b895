// Tests/GridStoreCLITests/EndToEndTests.swift - the built `gridstore` executable, run as users run it

import Foundation
import GraphArchive
import GridStore
import Testing

/// Parses one line of JSON output into a dictionary.
private func jsonObject(_ line: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

/// For each record line of `load --json`, its id.
private func ids(_ output: String) throws -> [Int] {
    try output.split(separator: "\n").map { try #require(jsonObject(String($0))["id"] as? Int) }
}

/// Slots' sharing pattern from any labels: for each slot, the first slot with the same label.
private func pattern<Label: Equatable>(_ labels: [Label]) -> [Int] {
    labels.map { label in labels.firstIndex(of: label)! }
}

@Suite("End to end")
struct EndToEndTests {
    @Test func generateHundredThousandThenStatsReportsTheSharing() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["save", "--file", "g.gridstore", "--generate", "100000", "--shared", "0.25"])
        #expect(saved.status == 0, "\(saved.errors)")
        #expect(saved.errors.isEmpty)  // no progress on a pipe
        #expect(saved.output.contains("saved 100000 records (75000 distinct)"))

        let loaded = try sandbox.run(["load", "--file", "g.gridstore", "--stats", "--json"])
        #expect(loaded.status == 0, "\(loaded.errors)")
        #expect(loaded.errors.isEmpty)
        #expect(loaded.outputLines.count == 1)
        let stats = try jsonObject(loaded.output)
        #expect(
            Set(stats.keys) == [
                "records", "uniqueObjects", "sharedReferences", "types", "fileBytes", "payloadBytes", "compression",
                "formatVersion", "checksum", "loadSeconds",
            ]
        )
        #expect(stats["records"] as? Int == 100_000)
        #expect(stats["uniqueObjects"] as? Int == 75_000)
        #expect(stats["sharedReferences"] as? Int == 25_000)
        #expect(stats["types"] as? [String] == ["GridState"])
        #expect(stats["fileBytes"] as? Int == sandbox.bytes(of: "g.gridstore")?.count)
        #expect((stats["payloadBytes"] as? Int ?? 0) > 100_000)
        #expect(stats["compression"] as? String == "none")
        #expect(stats["formatVersion"] as? String == "1.0")
        #expect(stats["checksum"] as? String == "ok")
        #expect((stats["loadSeconds"] as? Double ?? -1) >= 0)

        let table = try sandbox.run(["load", "--file", "g.gridstore", "--stats"])
        #expect(table.status == 0)
        #expect(table.output.contains("records            100000"))
        #expect(table.output.contains("distinct objects   75000"))
    }

    @Test func sameSeedSameRecordsOtherSeedOthers() throws {
        let sandbox = try ToolSandbox()
        for (file, seed) in [("a", "7"), ("b", "7"), ("c", "8")] {
            let result = try sandbox.run([
                "save", "--file", file, "--generate", "200", "--shared", "0.5", "--seed", seed,
            ])
            #expect(result.status == 0)
        }
        let outputs = try ["a", "b", "c"].map { try sandbox.run(["load", "--file", $0, "--json"]).output }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0] != outputs[2])
        #expect(outputs[0].split(separator: "\n").count == 200)
        #expect(Set(try ids(outputs[0])).count == 100)
    }

    @Test func idsSurviveJSONInputArchiveAndLoadJSON() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write(
            """
            [
              {"name": "Sunset", "color": 16746496, "date": "2024-06-01T18:00:00Z", "id": "sun"},
              {"name": "Night", "color": 0, "date": "2024-06-02T00:00:00Z", "id": "night"},
              {"id": "sun"},
              {"name": "Dawn", "color": 255, "date": "2024-06-03T06:00:00Z"},
              {"id": "night"},
              {"id": "sun", "name": "Sunset"}
            ]
            """,
            to: "in.json"
        )
        let saved = try sandbox.run(["save", "--file", "ids.gridstore", "--input", "in.json"])
        #expect(saved.status == 0, "\(saved.errors)")
        let loaded = try sandbox.run(["load", "--file", "ids.gridstore", "--json"])
        #expect(loaded.status == 0)
        let records = try loaded.outputLines.map(jsonObject)
        #expect(records.map { $0["name"] as? String } == ["Sunset", "Night", "Sunset", "Dawn", "Night", "Sunset"])
        // Input ids sun, night, sun, -, night, sun: the same slots share.
        #expect(pattern(try ids(loaded.output)) == [0, 1, 0, 3, 1, 0])
        #expect(try ids(loaded.output) == [1, 2, 1, 3, 2, 1])

        // The archive itself keeps the instances shared.
        let states = try GridStateArchive.readStates(fromFile: sandbox.path("ids.gridstore"))
        #expect(states[0] === states[2] && states[0] === states[5] && states[1] === states[4])
        #expect(states[3] !== states[0])

        // `load --json` output is valid input: piping it back gives the same output, ids included.
        let again = try sandbox.run(["save", "--file", "again.gridstore", "--input", "-"], input: loaded.output)
        #expect(again.status == 0, "\(again.errors)")
        #expect(try sandbox.run(["load", "--file", "again.gridstore", "--json"]).output == loaded.output)
    }

    @Test func csvAndJSONLinesInputs() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write(
            "name,color,date,id\r\n\"Smith, \"\"Jo\"\"\",255,2024-01-01,a\r\nplain,16,2024-01-02,\r\n,,,a\r\n",
            to: "in.csv"
        )
        let csv = try sandbox.run(["save", "--file", "csv.gridstore", "--input", "in.csv"])
        #expect(csv.status == 0, "\(csv.errors)")
        let csvRecords = try sandbox.run(["load", "--file", "csv.gridstore", "--json"]).outputLines.map(jsonObject)
        #expect(csvRecords.map { $0["name"] as? String } == ["Smith, \"Jo\"", "plain", "Smith, \"Jo\""])
        #expect(csvRecords.map { $0["color"] as? Int } == [255, 16, 255])
        #expect(csvRecords.map { $0["id"] as? Int } == [1, 2, 1])

        try sandbox.write(
            "{\"name\":\"a\",\"color\":1,\"date\":\"d1\",\"id\":9}\n\n{\"name\":\"b\",\"color\":2,\"date\":\"d2\"}\n{\"id\":9}\n",
            to: "in.jsonl"
        )
        let lines = try sandbox.run(["save", "--file", "jsonl.gridstore", "--input", "in.jsonl"])
        #expect(lines.status == 0, "\(lines.errors)")
        let jsonl = try sandbox.run(["load", "--file", "jsonl.gridstore", "--json"])
        #expect(try ids(jsonl.output) == [1, 2, 1])

        // Standard input is told apart by content.
        let piped = try sandbox.run(
            ["save", "--file", "stdin.gridstore", "--input", "-"],
            input: "name,color,date\nx,3,d\n"
        )
        #expect(piped.status == 0, "\(piped.errors)")
        #expect(
            try sandbox.run(["load", "--file", "stdin.gridstore", "--json"]).output
                == "{\"name\":\"x\",\"color\":3,\"date\":\"d\",\"id\":1}\n"
        )
    }

    /// Bad records fail with status 1 and the line, and leave an existing archive as it was.
    @Test(
        arguments: [
            (
                "bad.json", "[\n{\"name\":\"a\",\"color\":1,\"date\":\"d\"},\n{\"name\":\"b\",\"date\":\"d\"}\n]", 3,
                "no \"color\""
            ),
            ("bad.json", "[\n{\"name\":\"a\",\"color\":\"red\",\"date\":\"d\"}\n]", 2, "color must be an integer"),
            ("bad.json", "[\n{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n{\"name\":\"b\"}]", 3, "invalid JSON"),
            (
                "bad.jsonl", "{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n{\"name\":\"a\",\"color\":1,\"date\":}\n", 2,
                "invalid JSON"
            ),
            (
                "bad.jsonl", "{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n{\"name\":2,\"color\":1,\"date\":\"d\"}\n",
                2, "name must be a string"
            ),
            ("bad.csv", "name,color,date\nok,1,d\nbad,one,d\n", 3, "color must be an integer"),
            ("bad.csv", "name,color,date\nok,1,d\n\nshort,1\n", 4, "expected 3 fields"),
        ] as [(String, String, Int, String)]
    )
    func malformedInputExitsOneWithTheLine(file: String, content: String, line: Int, fragment: String) throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "keep.gridstore", "--generate", "10"]).status == 0)
        let before = sandbox.bytes(of: "keep.gridstore")
        try sandbox.write(content, to: file)
        let result = try sandbox.run(["save", "--file", "keep.gridstore", "--input", file])
        #expect(result.status == 1)
        #expect(result.reason == .exit)
        #expect(result.errors.hasPrefix("gridstore: error: \(file), line \(line): "), "\(result.errors)")
        #expect(result.errors.contains(fragment), "\(result.errors)")
        #expect(result.output.isEmpty)
        #expect(sandbox.bytes(of: "keep.gridstore") == before)
    }

    @Test func missingInputFileIsARuntimeError() throws {
        let sandbox = try ToolSandbox()
        let result = try sandbox.run(["save", "--input", "absent.csv"])
        #expect(result.status == 1)
        #expect(result.errors == "gridstore: error: cannot read absent.csv: No such file or directory\n")
    }

    /// Damaged archives: every command that reads one exits 1 with a clear message, nothing
    /// crashes, and nothing replaces the file.
    @Test(arguments: ["flip a payload byte", "truncate", "not an archive", "empty file"])
    func corruptArchiveExitsOneWithAClearMessage(damage: String) throws {
        let sandbox = try ToolSandbox()
        #expect(
            try sandbox.run(["save", "--file", "c.gridstore", "--generate", "1000", "--shared", "0.5"]).status == 0
        )
        var bytes = try #require(sandbox.bytes(of: "c.gridstore"))
        let expected: String
        switch damage {
        case "flip a payload byte":
            bytes[bytes.count / 2] ^= 0x10
            expected = "checksum"
        case "truncate":
            bytes = bytes.prefix(bytes.count - 100)
            expected = "truncated"
        case "not an archive":
            bytes = Data("name,color,date\n".utf8)
            expected = "not a gridstore archive"
        default:
            bytes = Data()
            expected = "too short"
        }
        try bytes.write(to: URL(fileURLWithPath: sandbox.path("c.gridstore")))

        for arguments in [
            ["load"], ["load", "--stats"], ["load", "--stats", "--json"], ["load", "--json"], ["verify"],
            ["save", "--append", "--generate", "5"], ["session"],
        ] {
            let result = try sandbox.run(arguments + ["--file", "c.gridstore"])
            #expect(result.status == 1, "\(arguments)")
            #expect(result.reason == .exit)
            #expect(result.errors.hasPrefix("gridstore: error: c.gridstore: "), "\(arguments): \(result.errors)")
            #expect(result.errors.contains(expected), "\(arguments): \(result.errors)")
            #expect(result.errors.split(separator: "\n").count == 1, "\(arguments): \(result.errors)")
            #expect(sandbox.bytes(of: "c.gridstore") == bytes, "\(arguments) changed the damaged archive")
        }
    }

    @Test func verifySaysOkForASoundArchive() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "v.gridstore", "--generate", "500", "--shared", "0.2"]).status == 0)
        let result = try sandbox.run(["verify", "--file", "v.gridstore"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("v.gridstore: ok: 500 records, 400 distinct objects"))
        #expect(result.output.contains("checksum ok"))
    }

    @Test func loadOfAMissingArchiveFails() throws {
        let sandbox = try ToolSandbox()
        for arguments in [["load"], ["load", "--stats"], ["verify"]] {
            let result = try sandbox.run(arguments + ["--file", "absent.gridstore"])
            #expect(result.status == 1)
            #expect(result.errors.hasPrefix("gridstore: error: "))
            #expect(result.errors.contains("absent.gridstore"))
        }
    }

    @Test func appendKeepsTheArchivedRecordsAndTheirSharing() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write("{\"name\":\"a\",\"color\":1,\"date\":\"d\",\"id\":1}\n{\"id\":1}\n", to: "first.jsonl")
        try sandbox.write("{\"name\":\"b\",\"color\":2,\"date\":\"d\",\"id\":1}\n{\"id\":1}\n", to: "second.jsonl")
        #expect(try sandbox.run(["save", "--file", "a.gridstore", "--input", "first.jsonl"]).status == 0)
        let appended = try sandbox.run(["save", "--file", "a.gridstore", "--append", "--input", "second.jsonl"])
        #expect(appended.status == 0, "\(appended.errors)")
        #expect(appended.output.contains("saved 4 records (added 2, 2 distinct)"))
        let loaded = try sandbox.run(["load", "--file", "a.gridstore", "--json"])
        #expect(try ids(loaded.output) == [1, 1, 2, 2])

        // Without --append the records are replaced; --append on a missing archive starts empty.
        #expect(
            try sandbox.run(["save", "--file", "a.gridstore", "--generate", "3"]).output.contains("saved 3 records")
        )
        #expect(try sandbox.run(["save", "--file", "new.gridstore", "--append", "--generate", "2"]).status == 0)
    }

    @Test func tableIsAlignedAndLimitCuts() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write(
            "name,color,date,id\nshort,1,2024-01-01T00:00:00Z,x\na much longer name,16777215,2024-01-02T00:00:00Z,\n"
                + "esc\u{1B}[31m,-4,2024-01-03T00:00:00Z,\n,,,x\n",
            to: "t.csv"
        )
        #expect(try sandbox.run(["save", "--file", "t.gridstore", "--input", "t.csv"]).status == 0)
        let table = try sandbox.run(["load", "--file", "t.gridstore"])
        #expect(table.status == 0)
        let lines = table.outputLines
        #expect(lines.count == 5)
        #expect(lines[0].hasPrefix("SLOT  ID  NAME"))
        // Every row's DATE starts in the header's DATE column.
        let dateColumn = try #require(lines[0].range(of: "DATE")).lowerBound.utf16Offset(in: lines[0])
        for line in lines.dropFirst() {
            #expect(try #require(line.range(of: "2024-")).lowerBound.utf16Offset(in: line) == dateColumn, "\(line)")
        }
        #expect(lines[1].contains("#000001"))
        #expect(lines[2].contains("#FFFFFF"))
        #expect(lines[3].contains("esc\\u{1B}[31m"))  // escaped, never sent raw to a terminal
        #expect(!table.output.contains("\u{1B}"))
        #expect(lines[4].hasPrefix("   3   1  short"))  // slot 3 shares record 1

        let limited = try sandbox.run(["load", "--file", "t.gridstore", "--limit", "2"])
        #expect(limited.outputLines.count == 3)
        let json = try sandbox.run(["load", "--file", "t.gridstore", "--json", "--limit", "1"])
        #expect(json.outputLines.count == 1)
        #expect(try sandbox.run(["load", "--file", "t.gridstore", "--json", "--limit", "0"]).output.isEmpty)
    }

    @Test func defaultArchiveLocationFollowsTheEnvironment() throws {
        let sandbox = try ToolSandbox()
        // $GRIDSTORE_FILE (the sandbox sets it for every run).
        #expect(try sandbox.run(["save", "--generate", "4"]).status == 0)
        #expect(sandbox.bytes(of: "default.gridstore") != nil)

        // $XDG_DATA_HOME/gridstore/grids.gridstore, folders created.
        let xdg = ["GRIDSTORE_FILE": nil, "XDG_DATA_HOME": sandbox.path("xdg")]
        #expect(try sandbox.run(["save", "--generate", "5"], environment: xdg).status == 0)
        #expect(sandbox.bytes(of: "xdg/gridstore/grids.gridstore") != nil)
        #expect(try sandbox.run(["load", "--json"], environment: xdg).outputLines.count == 5)

        // ~/.local/share/gridstore/grids.gridstore.
        let home = ["GRIDSTORE_FILE": nil, "HOME": sandbox.path("home")]
        #expect(try sandbox.run(["save", "--generate", "6"], environment: home).status == 0)
        #expect(sandbox.bytes(of: "home/.local/share/gridstore/grids.gridstore") != nil)
    }

    @Test func zstdCompressionWorksOrSaysItIsUnavailable() throws {
        let sandbox = try ToolSandbox()
        let result = try sandbox.run(["save", "--file", "z.gridstore", "--compress", "zstd:5", "--generate", "1000"])
        if result.status == 0 {
            let stats = try jsonObject(try sandbox.run(["load", "--file", "z.gridstore", "--stats", "--json"]).output)
            #expect(stats["compression"] as? String == "zstd")
            #expect(stats["records"] as? Int == 1000)
        } else {
            #expect(result.status == 1)
            #expect(result.errors.contains("zstd"))
            #expect(sandbox.bytes(of: "z.gridstore") == nil)
        }
    }

    @Test func usageErrorsExit64WithTheContractMessage() throws {
        let sandbox = try ToolSandbox()
        for arguments in [
            [], ["nope"], ["save"], ["load", "--limit", "x"], ["save", "--generate", "5", "--shared", "2"],
        ] {
            let result = try sandbox.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.errors.hasPrefix("gridstore: error: "), "\(arguments)")
            #expect(result.output.isEmpty)
        }
    }

    @Test func helpAndVersionGoToStandardOutput() throws {
        let sandbox = try ToolSandbox()
        for arguments in [
            ["--help"], ["-h"], ["help"], ["save", "--help"], ["load", "-h"], ["help", "verify"],
            ["session", "--help"],
        ] {
            let result = try sandbox.run(arguments)
            #expect(result.status == 0)
            #expect(result.output.contains("Usage: gridstore"), "\(arguments)")
            #expect(result.errors.isEmpty)
        }
        let version = try sandbox.run(["--version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("gridstore "))
    }

    /// `gridstore load | head`: the reader leaves early; the tool stops quietly, not by SIGPIPE.
    @Test func closedOutputPipeEndsQuietly() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "p.gridstore", "--generate", "50000"]).status == 0)
        let process = try sandbox.process(["load", "--file", "p.gridstore", "--json"])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        _ = output.fileHandleForReading.readData(ofLength: 100)
        try output.fileHandleForReading.close()
        sandbox.waitWithTimeout(process)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }
}
