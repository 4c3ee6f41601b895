// Tests/GridStoreCLITests/HelpAndOutputTests.swift - help texts, -q, plurals, progress lines, table widths

import Foundation
import Testing

@testable import GridStoreCLI

@Suite("Help and output")
struct HelpAndOutputTests {
    // MARK: - Help

    @Test func generalHelpListsEveryCommandHelpAndQuietInWholeSentences() {
        let help = HelpText.general
        for name in CommandName.allCases.map(\.rawValue) + ["help"] {
            #expect(help.contains("\n  \(name) "), "general help does not list \(name)")
        }
        #expect(help.contains("-q, --quiet"))
        #expect(help.contains("-h, --help"))
        #expect(help.contains("--version"))
        // Every paragraph ends a sentence or a list entry; none stops mid-phrase.
        #expect(!help.contains("shows a command's\n"))
        #expect(help.hasSuffix("64 usage error."))
    }

    @Test(arguments: CommandName.allCases)
    func everyCommandsHelpListsEachOfItsOptions(command: CommandName) {
        let help = HelpText.text(for: command)
        for option in command.optionNames + ["-q, --quiet", "-h, --help"] {
            #expect(help.contains("  \(option)"), "'\(command.rawValue) --help' does not list \(option)")
        }
        #expect(help.contains("Usage: gridstore \(command.rawValue) [-q]"))
    }

    @Test func helpLinesFitEightyColumns() {
        for command in [nil] + CommandName.allCases.map(Optional.some) {
            for line in HelpText.text(for: command).split(separator: "\n") {
                #expect(line.count <= 80, "too long: \(line)")
            }
        }
    }

    // MARK: - Plurals

    @Test func countedNounsArePluralExceptForOne() {
        #expect(counted(0, "record") == "0 records")
        #expect(counted(1, "record") == "1 record")
        #expect(counted(2, "record") == "2 records")
        #expect(counted(1, "distinct object") == "1 distinct object")
        #expect(counted(1, "byte") == "1 byte")
    }

    // MARK: - Progress

    @Test func progressShowsCountOfTotalAndPercentageWhenTheTotalIsKnown() {
        let line = Progress.line(
            phase: "generating records",
            done: 1200,
            total: 5000,
            unit: .items,
            detail: "",
            elapsed: .seconds(2)
        )
        #expect(line.hasSuffix("generating records 1200/5000 (24%) 2.0s"))
    }

    @Test func progressOfAnImportShowsThePercentageOfItsBytesAndTheRecordsSoFar() {
        let line = Progress.line(
            phase: "importing csv from a.csv",
            done: 3_075_000,
            total: 12_300_000,
            unit: .bytes,
            detail: "1200 records",
            elapsed: .milliseconds(1500)
        )
        #expect(line.hasSuffix("importing csv from a.csv 25% of 12.3 MB (1200 records) 1.5s"))
    }

    @Test func progressWithoutATotalShowsTheCountOrOnlyTheTime() {
        #expect(
            Progress.line(phase: "reading x", done: 0, total: nil, unit: .items, detail: "", elapsed: .seconds(1))
                .hasSuffix("reading x 1.0s")
        )
        #expect(
            Progress.line(
                phase: "reading x",
                done: 2_500_000,
                total: nil,
                unit: .bytes,
                detail: "",
                elapsed: .seconds(1)
            )
            .hasSuffix("reading x 2.5 MB 1.0s")
        )
        #expect(
            Progress.line(phase: "none", done: 0, total: 0, unit: .items, detail: "", elapsed: .seconds(1))
                .hasSuffix("none 0/0 (100%) 1.0s")
        )
    }

    @Test func byteSizesUseDecimalUnits() {
        #expect(Progress.byteSize(1) == "1 byte")
        #expect(Progress.byteSize(999) == "999 bytes")
        #expect(Progress.byteSize(1500) == "1.5 kB")
        #expect(Progress.byteSize(999_999) == "1.0 MB")
        #expect(Progress.byteSize(4_200_000_000) == "4.2 GB")
    }

    // MARK: - Display width

    @Test(
        arguments: [
            ("plain", 5), ("", 0), ("café", 4), ("cafe\u{301}", 4), ("日本語", 6), ("한국어", 6), ("ｶﾀｶﾅ", 4),
            ("ＡＢ", 4), ("🌅", 2), ("a🌅b", 4), ("❤️", 2), ("❤", 1), ("👩‍👩‍👧", 2), ("🇫🇷", 2), ("1️⃣", 2),
            ("e\u{200B}", 1), ("ᄀ\u{1161}", 2), ("\u{3000}", 2),
        ] as [(String, Int)]
    )
    func displayWidthCountsWideAndEmojiAsTwoAndMarksAsZero(text: String, columns: Int) {
        #expect(DisplayWidth.of(text) == columns)
    }

    @Test func truncationCutsByColumnsAndNeverSplitsAWideCharacter() {
        #expect(DisplayWidth.truncate("abcdef", toWidth: 6) == "abcdef")
        #expect(DisplayWidth.truncate("abcdefg", toWidth: 6) == "abcde…")
        #expect(DisplayWidth.truncate("日本語日本語", toWidth: 6) == "日本…")
        #expect(DisplayWidth.of(DisplayWidth.truncate("日本語日本語", toWidth: 6)) == 5)
        #expect(DisplayWidth.truncate("🌅🌅🌅🌅", toWidth: 6) == "🌅🌅…")
    }

    // MARK: - End to end

    @Test func tableColumnsLineUpWithCJKAndEmojiNames() throws {
        let sandbox = try ToolSandbox()
        try sandbox.write(
            """
            name,color,date
            Sunset,16746496,2024-06-01
            日本語の名前,255,2024-06-02
            🌅 sunrise 🌅,0,2024-06-03
            cafe\u{301},65280,2024-06-04
            """,
            to: "names.csv"
        )
        let saved = try sandbox.run(["save", "--file", "n.gridstore", "--input", "names.csv"])
        #expect(saved.status == 0, "\(saved.errors)")
        let table = try sandbox.run(["load", "--file", "n.gridstore"])
        #expect(table.status == 0, "\(table.errors)")
        let lines = table.outputLines
        #expect(lines.count == 5)
        // The COLOR column starts at the same terminal column on every line.
        let colorColumns = lines.map { line in
            let colorStart = line.range(of: "COLOR") ?? line.range(of: "#")!
            return DisplayWidth.of(String(line[..<colorStart.lowerBound]))
        }
        #expect(Set(colorColumns).count == 1, "\(lines.joined(separator: "\n"))")
    }

    @Test func summariesSayOneRecordNotOneRecords() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["save", "--file", "one.gridstore", "--generate", "1"])
        #expect(saved.output.hasPrefix("saved 1 record (1 distinct) to one.gridstore: "), "\(saved.output)")
        let verified = try sandbox.run(["verify", "--file", "one.gridstore"])
        #expect(verified.output.hasPrefix("one.gridstore: ok: 1 record, 1 distinct object, "), "\(verified.output)")
        let converted = try sandbox.run(["convert", "one.gridstore", "one.plist", "--to", "keyed-plist"])
        #expect(converted.output.hasPrefix("converted 1 record (1 distinct) from one.gridstore"), "\(converted.output)")
    }

    @Test func quietSilencesSummariesButNotResultsWarningsOrErrors() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["-q", "save", "--file", "q.gridstore", "--generate", "3"])
        #expect(saved.status == 0)
        #expect(saved.output.isEmpty && saved.errors.isEmpty)
        let verified = try sandbox.run(["verify", "--quiet", "--file", "q.gridstore"])
        #expect(verified.status == 0)
        #expect(verified.output.isEmpty && verified.errors.isEmpty)
        let session = try sandbox.run(["session", "-q", "--file", "q.gridstore"], input: #"{"id":1}"# + "\n")
        #expect(session.status == 1)
        #expect(session.output.isEmpty)
        #expect(session.errors.contains("error: standard input, line 1"))
        #expect(session.errors.contains("1 of 1 input line was rejected"))
        // Records are the result of load: printed even when quiet.
        let loaded = try sandbox.run(["load", "-q", "--file", "q.gridstore", "--json"])
        #expect(loaded.outputLines.count == 3)
        let missing = try sandbox.run(["-q", "load", "--file", "missing.gridstore"])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("error: no archive at missing.gridstore"))
    }
}
