// Tests/GridStoreCLITests/CommandParserTests.swift - the command line as a pure function

import GraphArchive
import GridStore
import Testing

@testable import GridStoreCLI

/// The command `arguments` parse to, whatever `-q` says.
func parsedCommand(_ arguments: [String]) throws -> Command {
    try parse(arguments).command
}

@Suite("Command parsing")
struct CommandParserTests {
    @Test(
        arguments: [
            (["--help"], Command.help(nil)), (["-h"], .help(nil)), (["help"], .help(nil)),
            (["help", "load"], .help(.load)),
            (["--help", "verify"], .help(.verify)), (["save", "--help"], .help(.save)),
            (["load", "--stats", "-h"], .help(.load)), (["session", "--bogus", "--help"], .help(.session)),
            (["--version"], .version),
        ] as [([String], Command)]
    )
    func helpAndVersion(arguments: [String], expected: Command) throws {
        #expect(try parsedCommand(arguments) == expected)
    }

    @Test func saveGenerateWithEveryOption() throws {
        let command = try parsedCommand([
            "save", "--file", "/tmp/g.gridstore", "--compress", "zstd:19", "--append", "--generate", "100000",
            "--shared", "0.25", "--seed", "42",
        ])
        #expect(
            command
                == .save(
                    SaveOptions(
                        file: "/tmp/g.gridstore",
                        compression: .zstd(level: 19),
                        append: true,
                        source: .generate(count: 100_000, sharedFraction: 0.25, seed: 42)
                    )
                )
        )
    }

    @Test func saveDefaults() throws {
        #expect(
            try parsedCommand(["save", "--generate", "10"])
                == .save(SaveOptions(source: .generate(count: 10, sharedFraction: 0, seed: 1)))
        )
        #expect(try parsedCommand(["save", "--input", "-"]) == .save(SaveOptions(source: .input(path: "-"))))
        #expect(
            try parsedCommand(["save", "--input=states.csv", "--file=x", "--compress=none"])
                == .save(
                    SaveOptions(file: "x", compression: ArchiveCompression.none, source: .input(path: "states.csv"))
                )
        )
    }

    @Test(
        arguments: [
            ("none", ArchiveCompression.none), ("zstd", .zstd(level: 3)), ("zstd:1", .zstd(level: 1)),
            ("zstd:-5", .zstd(level: -5)), ("zstd:22", .zstd(level: 22)),
        ] as [(String, ArchiveCompression)]
    )
    func compressionValues(text: String, expected: ArchiveCompression) throws {
        #expect(
            try parsedCommand(["save", "--compress", text, "--generate", "1"])
                == .save(
                    SaveOptions(compression: expected, source: .generate(count: 1, sharedFraction: 0, seed: 1))
                )
        )
    }

    @Test func loadVerifyAndSession() throws {
        #expect(try parsedCommand(["load"]) == .load(LoadOptions()))
        #expect(
            try parsedCommand(["load", "--file", "a", "--json", "--limit", "5"])
                == .load(LoadOptions(file: "a", json: true, limit: 5))
        )
        #expect(try parsedCommand(["load", "--stats", "--json"]) == .load(LoadOptions(stats: true, json: true)))
        #expect(try parsedCommand(["verify", "--file", "a"]) == .verify(VerifyOptions(file: "a")))
        #expect(try parsedCommand(["verify"]) == .verify(VerifyOptions()))
        #expect(try parsedCommand(["session", "--compress", "zstd"]) == .session(SessionOptions(compression: .zstd)))
        #expect(try parsedCommand(["load", "--"]) == .load(LoadOptions()))
    }

    /// Every mistake is a usage error with a message that names it, and exits with 64.
    @Test(
        arguments: [
            ([], "no command given"),
            (["bogus"], "unknown command 'bogus'"),
            (["--bogus"], "unknown option '--bogus'"),
            (["help", "bogus"], "no help on 'bogus'"),
            (["help", "save", "load"], "no help on"),
            (["--version", "x"], "unexpected argument 'x'"),
            (["save"], "save needs records"),
            (["save", "--generate", "5", "--input", "a"], "cannot be used together"),
            (["save", "--input", "a", "--shared", "0.5"], "go with --generate"),
            (["save", "--input", "a", "--seed", "3"], "go with --generate"),
            (["save", "--generate"], "--generate needs a value"),
            (["save", "--generate", "--append"], "--generate needs a value"),
            (["save", "--generate", "-1"], "whole number from 0 to \(maximumGeneratedRecords)"),
            (["save", "--generate", "ten"], "not 'ten'"),
            (["save", "--generate", "\(maximumGeneratedRecords + 1)"], "not '\(maximumGeneratedRecords + 1)'"),
            (["save", "--generate", "5", "--shared", "1"], "below 1"),
            (["save", "--generate", "5", "--shared", "-0.1"], "not '-0.1'"),
            (["save", "--generate", "5", "--shared", "nan"], "not 'nan'"),
            (["save", "--generate", "5", "--seed", "-3"], "not '-3'"),
            (["save", "--generate", "5", "--compress", "gzip"], "takes none, zstd or zstd:LEVEL"),
            (["save", "--generate", "5", "--compress", "zstd:23"], "not 'zstd:23'"),
            (["save", "--generate", "5", "--compress", "zstd:"], "not 'zstd:'"),
            (["save", "--generate", "5", "--append=yes"], "--append takes no value"),
            (["save", "--generate", "5", "--generate", "6"], "--generate is given more than once"),
            (["save", "--generate", "5", "--file", ""], "--file needs a path"),
            (["save", "--generate", "5", "--stats"], "unknown option '--stats' for save"),
            (["save", "--generat", "5"], "did you mean '--generate'?"),
            (["save", "--generate", "5", "extra"], "unexpected argument 'extra'"),
            (["save", "--generate", "5", "-x"], "unknown option '-x'"),
            (["load", "--limit", "-1"], "not '-1'"),
            (["load", "--limit"], "--limit needs a value"),
            (["load", "--stats", "--limit", "3"], "--limit applies to printed records"),
            (["load", "--json=1"], "--json takes no value"),
            (["load", "--append"], "unknown option '--append' for load"),
            (["load", "--", "x"], "unexpected argument 'x'"),
            (["verify", "--json"], "unknown option '--json' for verify"),
            (["verify", "a.gridstore"], "unexpected argument 'a.gridstore'"),
            (["session", "--generate", "5"], "unknown option '--generate' for session"),
            (["verify", "--quiet=yes"], "--quiet takes no value"),
            (["-q"], "no command given"),
            (["-x", "verify"], "unknown option '-x'"),
        ] as [([String], String)]
    )
    func usageErrors(arguments: [String], fragment: String) {
        #expect {
            try parse(arguments)
        } throws: { error in
            (error as? UsageError)?.message.contains(fragment) == true && GridStoreTool.exitStatus(for: error) == 64
        }
    }

    @Test(
        arguments: [
            ["-q", "verify"], ["--quiet", "verify"], ["verify", "-q"], ["verify", "--quiet"],
            ["-q", "verify", "--quiet"], ["verify", "--file", "a", "-q"],
        ]
    )
    func quietGoesBeforeTheCommandOrAmongItsOptions(arguments: [String]) throws {
        let invocation = try parse(arguments)
        #expect(invocation.quiet)
        #expect(invocation.command == .verify(VerifyOptions(file: arguments.contains("a") ? "a" : nil)))
    }

    @Test func quietIsOffUnlessAskedAndAValueAfterAnOptionIsNotQuiet() throws {
        #expect(try parse(["verify"]).quiet == false)
        // `-q` as the value of --file is a file named "-q"; after `--` it is an operand.
        let named = try parse(["verify", "--file", "-q"])
        #expect(named == Invocation(command: .verify(VerifyOptions(file: "-q")), quiet: false))
        let operand = try parse(["convert", "--to", "gridstore", "--", "-q", "b"])
        #expect(operand.quiet == false)
        #expect(
            operand.command == .convert(ConvertOptions(input: "-q", output: "b", format: .gridstore))
        )
    }

    @Test func usageErrorsPointToTheRightHelp() throws {
        let error = try #require(throws: UsageError.self) { try parse(["load", "--nope"]) }
        #expect(error.command == .load)
        #expect(error.hint == "see 'gridstore load --help'")
        let general = try #require(throws: UsageError.self) { try parse(["nope"]) }
        #expect(general.hint == "see 'gridstore --help'")
    }

    @Test func editDistanceForSuggestions() {
        #expect(editDistance("--file", "--fil") == 1)
        #expect(editDistance("--json", "--jsno") == 2)
        #expect(editDistance("", "abc") == 3)
    }
}
