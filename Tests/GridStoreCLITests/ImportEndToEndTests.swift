// Tests/GridStoreCLITests/ImportEndToEndTests.swift - `save --input` with the inputs people actually have

import Foundation
import Testing

@testable import GridStoreCLI

@Suite("Import end to end")
struct ImportEndToEndTests {
    @Test func strictIsAnOptionOfSaveWithInputAndOfSession() throws {
        #expect(
            try parsedCommand(["save", "--input", "a.csv", "--strict"])
                == .save(SaveOptions(source: .input(path: "a.csv"), strict: true))
        )
        #expect(try parsedCommand(["session", "--strict"]) == .session(SessionOptions(strict: true)))
        #expect(throws: UsageError("--strict goes with --input, not --generate", command: .save)) {
            try parse(["save", "--generate", "3", "--strict"])
        }
    }

    @Test func csvExtraColumnsAreSkippedWithAWarningOnStandardError() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write("name,color,date,notes\na,1,d,first\nb,2,d,second\n", to: "extra.csv")
        let saved = try sandbox.run(["save", "--file", "x.gridstore", "--input", "extra.csv"])
        #expect(saved.status == 0, "\(saved.errors)")
        #expect(saved.output.hasPrefix("saved 2 records"))
        #expect(saved.errors == "gridstore: warning: extra.csv, line 1: ignoring unknown column \"notes\"\n")
        // Warnings are not informational output: -q keeps them.
        let quiet = try sandbox.run(["save", "-q", "--file", "x.gridstore", "--input", "extra.csv"])
        #expect(quiet.output.isEmpty)
        #expect(quiet.errors.contains("warning: extra.csv, line 1: ignoring unknown column \"notes\""))
    }

    @Test func strictRefusesExtraColumnsAndLeavesTheArchiveAsItWas() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "x.gridstore", "--generate", "5"]).status == 0)
        let before = sandbox.bytes(of: "x.gridstore")
        try sandbox.write("name,color,date,notes\na,1,d,first\n", to: "extra.csv")
        let refused = try sandbox.run(["save", "--file", "x.gridstore", "--input", "extra.csv", "--strict"])
        #expect(refused.status == 1)
        #expect(refused.errors.hasPrefix("gridstore: error: extra.csv, line 1: unknown column \"notes\""))
        #expect(sandbox.bytes(of: "x.gridstore") == before)
    }

    @Test func aByteOrderMarkIsSkippedInJSONFromStandardInput() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(
            ["save", "--file", "b.gridstore", "--input", "-"],
            input: "\u{FEFF}[{\"name\":\"a\",\"color\":1,\"date\":\"d\"}]"
        )
        #expect(saved.status == 0, "\(saved.errors)")
        #expect(saved.output.hasPrefix("saved 1 record "))
    }

    @Test func colorsAsLoadPrintsThemAreReadBack() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write("name,color,date\nred,#FF0000,d\ngreen,0x00FF00,d\nblue,255,d\n", to: "colors.csv")
        #expect(try sandbox.run(["save", "--file", "c.gridstore", "--input", "colors.csv"]).status == 0)
        let table = try sandbox.run(["load", "--file", "c.gridstore"]).outputLines
        #expect(
            table.dropFirst().map { $0.contains("#FF0000") || $0.contains("#00FF00") || $0.contains("#0000FF") } == [
                true, true, true,
            ]
        )
        // The table's colors, imported again, are the same colors.
        let rows = table.dropFirst().map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        let csv = "name,color,date\n" + rows.map { "\($0[2]),\($0[3]),\($0[4])" }.joined(separator: "\n")
        try sandbox.write(csv, to: "again.csv")
        #expect(try sandbox.run(["save", "--file", "d.gridstore", "--input", "again.csv"]).status == 0)
        let first = try sandbox.run(["load", "--file", "c.gridstore", "--json"]).output
        let second = try sandbox.run(["load", "--file", "d.gridstore", "--json"]).output
        #expect(first == second)
        #expect(first.contains(#""color":16711680"#))
    }

    @Test func anOutOfRangeColorSaysOutOfRange() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write("name,color,date\na,99999999999999999999,d\n", to: "big.csv")
        let result = try sandbox.run(["save", "--file", "x.gridstore", "--input", "big.csv"])
        #expect(result.status == 1)
        #expect(
            result.errors
                == "gridstore: error: big.csv, line 2: color 99999999999999999999 is out of range "
                + "(-9223372036854775808 to 9223372036854775807)\n"
        )
    }

    @Test func emptyOrWhiteSpaceInputIsAnErrorAndTheArchiveIsKept() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "x.gridstore", "--generate", "5"]).status == 0)
        let before = sandbox.bytes(of: "x.gridstore")
        try sandbox.write("  \n\t\n", to: "blank.csv")
        let blank = try sandbox.run(["save", "--file", "x.gridstore", "--input", "blank.csv"])
        #expect(blank.status == 1)
        #expect(blank.errors == "gridstore: error: blank.csv: the input is only white space: no records\n")
        let empty = try sandbox.run(["save", "--file", "x.gridstore", "--input", "-"])
        #expect(empty.status == 1)
        #expect(empty.errors == "gridstore: error: standard input: the input is empty: no records\n")
        #expect(sandbox.bytes(of: "x.gridstore") == before)
    }

    @Test func anErrorAtTheEndOfInputNamesTheLastLine() throws {
        let sandbox = try ToolSandbox()
        let result = try sandbox.run(
            ["save", "--file", "x.gridstore", "--input", "-"],
            input: "{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n{\"name\":\"b\",\"color\":2\n"
        )
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("gridstore: error: standard input, line 2: invalid JSON: "))
    }
}
