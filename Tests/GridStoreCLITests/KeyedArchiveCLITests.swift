// Tests/GridStoreCLITests/KeyedArchiveCLITests.swift - Apple keyed archives through the CLI: parsing and end to end

import Foundation
import GraphArchive
import GridStore
import Testing

@testable import GridStoreCLI

/// The committed keyed-archive fixtures of the engine's tests.
private let keyedFixtures = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("GraphArchiveTests/Fixtures/KeyedArchives").path

private func jsonObject(_ line: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
}

/// Each record line of `load --json` as (name, color, date, id).
private func records(_ output: String) throws -> [String] {
    try output.split(separator: "\n").map { line in
        let object = try jsonObject(String(line))
        return "\(object["name"] ?? "") \(object["color"] ?? "") \(object["date"] ?? "") \(object["id"] ?? "")"
    }
}

@Suite("Keyed archives: parsing")
struct KeyedArchiveParsingTests {
    @Test func convertWithEveryForm() throws {
        #expect(
            try parsedCommand(["convert", "in.gridstore", "out.plist", "--to", "keyed-plist"])
                == .convert(ConvertOptions(input: "in.gridstore", output: "out.plist", format: .keyedPlist))
        )
        #expect(
            try parsedCommand(["convert", "--to=gridstore", "--compress", "zstd:7", "a", "b"])
                == .convert(ConvertOptions(input: "a", output: "b", format: .gridstore, compression: .zstd(level: 7)))
        )
        #expect(
            try parsedCommand(["convert", "--to", "gridstore", "--", "a", "a"])
                == .convert(ConvertOptions(input: "a", output: "a", format: .gridstore))
        )
        // none is no compression, so it is allowed with keyed-plist.
        #expect(
            try parsedCommand(["convert", "a", "b", "--to", "keyed-plist", "--compress", "none"])
                == .convert(ConvertOptions(input: "a", output: "b", format: .keyedPlist))
        )
        #expect(try parsedCommand(["convert", "--help"]) == .help(.convert))
        #expect(HelpText.text(for: .convert).contains("--to FORMAT"))
        #expect(HelpText.general.contains("convert"))
    }

    @Test func saveFormat() throws {
        #expect(
            try parsedCommand(["save", "--format", "keyed-plist", "--generate", "5"])
                == .save(SaveOptions(format: .keyedPlist, source: .generate(count: 5, sharedFraction: 0, seed: 1)))
        )
        #expect(
            try parsedCommand(["save", "--format=gridstore", "--compress", "zstd", "--input", "x.csv"])
                == .save(SaveOptions(compression: .zstd(level: 3), format: .gridstore, source: .input(path: "x.csv")))
        )
        #expect(
            try parsedCommand(["save", "--generate", "1"])
                == .save(SaveOptions(source: .generate(count: 1, sharedFraction: 0, seed: 1)))
        )
    }

    @Test(
        arguments: [
            (["convert"], "two paths"),
            (["convert", "a", "--to", "gridstore"], "two paths"),
            (["convert", "a", "b", "c", "--to", "gridstore"], "two paths"),
            (["convert", "a", "b"], "needs --to"),
            (["convert", "a", "b", "--to", "xml"], "--to takes gridstore or keyed-plist, not 'xml'"),
            (["convert", "a", "b", "--to"], "--to needs a value"),
            (["convert", "a", "b", "--to", "gridstore", "--to", "keyed-plist"], "--to is given more than once"),
            (
                ["convert", "a", "b", "--to", "keyed-plist", "--compress", "zstd"],
                "keyed-plist archives are not compressed"
            ),
            (["convert", "a", "b", "--to", "keyed-plist", "--compress=zstd:9"], "goes with --to gridstore"),
            (["convert", "a", "b", "--to", "gridstore", "--compress", "lz4"], "--compress takes none, zstd"),
            (["convert", "a", "b", "--to", "gridstore", "--file", "x"], "unknown option '--file' for convert"),
            (["convert", "a", "b", "--too", "gridstore"], "did you mean '--to'?"),
            (["convert", "a", "", "--to", "gridstore"], "convert needs paths, not an empty string"),
            (["convert", "-x", "b", "--to", "gridstore"], "unknown option '-x' for convert"),
            (
                ["save", "--format", "keyed-plist", "--compress", "zstd", "--generate", "1"],
                "goes with --format gridstore"
            ),
            (["save", "--format", "plist", "--generate", "1"], "--format takes gridstore or keyed-plist"),
            (["save", "--format", "--generate", "1"], "--format needs a value"),
            (["load", "extra"], "load takes only options"),
            (["verify", "--", "x"], "verify takes only options"),
        ] as [([String], String)]
    )
    func usageErrors(arguments: [String], fragment: String) {
        #expect {
            try parse(arguments)
        } throws: { error in
            (error as? UsageError)?.message.contains(fragment) == true && GridStoreTool.exitStatus(for: error) == 64
        }
    }

    @Test func convertUsageErrorsPointToConvertHelp() {
        #expect(throws: UsageError.self) { try parse(["convert", "a", "b"]) }
        do {
            _ = try parse(["convert", "a", "b"])
        } catch {
            #expect(error.hint == "see 'gridstore convert --help'")
        }
    }
}

@Suite("Keyed archives: end to end")
struct KeyedArchiveEndToEndTests {
    @Test func statsOfTheSeedShapedFoundationFixture() throws {
        let sandbox = try ToolSandbox()
        let fixture = keyedFixtures + "/foundation-gridstates.plist"
        let loaded = try sandbox.run(["load", "--file", fixture, "--stats", "--json"])
        #expect(loaded.status == 0, "\(loaded.errors)")
        #expect(loaded.outputLines.count == 1)
        let stats = try jsonObject(loaded.output)
        #expect(
            Set(stats.keys) == [
                "records", "uniqueObjects", "sharedReferences", "types", "fileBytes", "payloadBytes", "compression",
                "formatVersion", "checksum", "loadSeconds",
            ]
        )
        let records = try #require(stats["records"] as? Int)
        let unique = try #require(stats["uniqueObjects"] as? Int)
        #expect(records > 0)
        #expect(unique > 0 && unique <= records)
        #expect(stats["sharedReferences"] as? Int == records - unique)
        #expect((stats["types"] as? [String])?.contains { $0.hasSuffix("UAGridState") } == true)
        #expect(stats["fileBytes"] as? Int == FileManager.default.contents(atPath: fixture)?.count)
        #expect((stats["payloadBytes"] as? Int ?? 0) > 0)
        #expect(stats["compression"] as? String == "none")
        #expect(stats["formatVersion"] as? String == "NSKeyedArchiver 100000")
        #expect(stats["checksum"] as? String == "none")

        // The records themselves load, with as many distinct ids as distinct objects.
        let listed = try sandbox.run(["load", "--file", fixture, "--json"])
        #expect(listed.status == 0, "\(listed.errors)")
        #expect(listed.outputLines.count == records)
        let ids = try listed.outputLines.map { try #require(jsonObject($0)["id"] as? Int) }
        #expect(Set(ids).count == unique)

        let verified = try sandbox.run(["verify", "--file", fixture])
        #expect(verified.status == 0, "\(verified.errors)")
        #expect(verified.output.contains("ok: \(records) records"))
        #expect(verified.output.contains("no checksum (keyed archive)"))
    }

    @Test func pythonFixtureRecordsKeepTheirSharing() throws {
        let sandbox = try ToolSandbox()
        let loaded = try sandbox.run(["load", "--file", keyedFixtures + "/python-gridstates.plist", "--json"])
        #expect(loaded.status == 0, "\(loaded.errors)")
        let ids = try loaded.outputLines.map { try #require(jsonObject($0)["id"] as? Int) }
        #expect(ids.count == 5)
        #expect(Set(ids).count == 3)
    }

    @Test func gridstoreToKeyedAndBackKeepsRecordsAndSharing() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["save", "--file", "a.gridstore", "--generate", "2000", "--shared", "0.4"])
        #expect(saved.status == 0, "\(saved.errors)")
        let original = try sandbox.run(["load", "--file", "a.gridstore", "--json"])

        let toKeyed = try sandbox.run(["convert", "a.gridstore", "k.plist", "--to", "keyed-plist"])
        #expect(toKeyed.status == 0, "\(toKeyed.errors)")
        #expect(toKeyed.output.contains("converted 2000 records (1200 distinct)"))
        let plist = try #require(sandbox.bytes(of: "k.plist"))
        #expect(plist.starts(with: Data("bplist00".utf8)))
        #expect(plist.range(of: Data("UAGridState".utf8)) != nil)  // the iOS app's class name

        let keyedStats = try jsonObject(try sandbox.run(["load", "--file", "k.plist", "--stats", "--json"]).output)
        #expect(keyedStats["records"] as? Int == 2000)
        #expect(keyedStats["uniqueObjects"] as? Int == 1200)
        #expect(keyedStats["types"] as? [String] == ["UAGridState"])
        #expect(keyedStats["formatVersion"] as? String == "NSKeyedArchiver 100000")

        // zstd where this build has it (the no-trait CI build has not).
        let compression = ArchiveCompression.isZstdAvailable ? "zstd" : "none"
        let back = try sandbox.run([
            "convert", "k.plist", "b.gridstore", "--to", "gridstore", "--compress", compression,
        ])
        #expect(back.status == 0, "\(back.errors)")
        let stats = try jsonObject(try sandbox.run(["load", "--file", "b.gridstore", "--stats", "--json"]).output)
        #expect(stats["compression"] as? String == compression)
        #expect(stats["checksum"] as? String == "ok")
        #expect(stats["uniqueObjects"] as? Int == 1200)

        let roundTripped = try sandbox.run(["load", "--file", "b.gridstore", "--json"])
        #expect(try records(roundTripped.output) == records(original.output))
        #expect(try records(sandbox.run(["load", "--file", "k.plist", "--json"]).output) == records(original.output))
    }

    @Test func convertInPlaceReplacesTheFileAtomically() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "x", "--generate", "300", "--shared", "0.5"]).status == 0)
        let original = try sandbox.run(["load", "--file", "x", "--json"])
        let converted = try sandbox.run(["convert", "x", "x", "--to", "keyed-plist"])
        #expect(converted.status == 0, "\(converted.errors)")
        #expect(sandbox.bytes(of: "x")?.starts(with: Data("bplist00".utf8)) == true)
        #expect(try records(sandbox.run(["load", "--file", "x", "--json"]).output) == records(original.output))
        // No temporary file is left behind; the lock file of x stays, as it always does.
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.folder).sorted() == [".x.lock", "x"])
    }

    @Test func saveKeyedThenLoadAndAppend() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run([
            "save", "--file", "s.plist", "--format", "keyed-plist", "--generate", "50", "--shared", "0.5",
        ])
        #expect(saved.status == 0, "\(saved.errors)")
        #expect(saved.output.contains("saved 50 records (25 distinct)"))
        #expect(saved.output.contains("format keyed-plist"))
        #expect(sandbox.bytes(of: "s.plist")?.starts(with: Data("bplist00".utf8)) == true)

        let loaded = try sandbox.run(["load", "--file", "s.plist", "--json"])
        #expect(loaded.status == 0, "\(loaded.errors)")
        let ids = try loaded.outputLines.map { try #require(jsonObject($0)["id"] as? Int) }
        #expect(ids.count == 50)
        #expect(Set(ids).count == 25)

        let appended = try sandbox.run([
            "save", "--file", "s.plist", "--append", "--format", "keyed-plist", "--generate", "3",
        ])
        #expect(appended.status == 0, "\(appended.errors)")
        #expect(appended.output.contains("saved 53 records (added 3, 28 distinct)"))
        let stats = try jsonObject(try sandbox.run(["load", "--file", "s.plist", "--stats", "--json"]).output)
        #expect(stats["records"] as? Int == 53)
        #expect(stats["formatVersion"] as? String == "NSKeyedArchiver 100000")
    }

    @Test(arguments: ["truncate", "self-containing array", "wrong archiver"])
    func corruptKeyedArchiveExitsOneWithAClearMessage(damage: String) throws {
        let sandbox = try ToolSandbox()
        let file: String
        let expected: String
        switch damage {
        case "truncate":
            #expect(
                try sandbox.run(["save", "--file", "k.plist", "--format", "keyed-plist", "--generate", "100"]).status
                    == 0
            )
            let bytes = try #require(sandbox.bytes(of: "k.plist"))
            try bytes.prefix(bytes.count - 20).write(to: URL(fileURLWithPath: sandbox.path("k.plist")))
            file = sandbox.path("k.plist")
            expected = "trailer"
        case "self-containing array":
            file = try sandbox.copy(keyedFixtures + "/python-hostile-self-containing-array.plist")
            expected = "contains itself"
        default:
            file = try sandbox.copy(keyedFixtures + "/python-hostile-wrong-archiver.plist")
            expected = "archiver"
        }
        let before = FileManager.default.contents(atPath: file)
        // An array that contains itself is no array of grid states, but it is a graph: convert
        // keeps it (as an object that refers to itself).
        let converts = damage == "self-containing array"
        for arguments in [["load", "--file", file], ["load", "--file", file, "--stats"], ["verify", "--file", file]]
            + (converts ? [] : [["convert", file, file, "--to", "gridstore"]])
        {
            let result = try sandbox.run(arguments)
            #expect(result.reason == .exit)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.errors.hasPrefix("gridstore: error: "))
            #expect(result.errors.contains(expected), "\(result.errors)")
            #expect(result.output.isEmpty)
        }
        #expect(FileManager.default.contents(atPath: file) == before)  // never replaced
        if converts {
            let converted = try sandbox.run(["convert", file, "self.gridstore", "--to", "gridstore"])
            #expect(converted.status == 0, "\(converted.errors)")
            let tree = try sandbox.run(["inspect", "self.gridstore"])
            #expect(tree.output.contains("↻ #0 NSArray (cycle)"), "\(tree.output)")
        }
    }
}
