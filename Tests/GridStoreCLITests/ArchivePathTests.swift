// Tests/GridStoreCLITests/ArchivePathTests.swift - `-` as an archive, and updates that keep the archive's form

import Foundation
import GraphArchive
import GridStore
import Testing

@testable import GridStoreCLI

private let gridstoreMagic = Data([0x89, 0x47, 0x52, 0x41, 0x0D, 0x0A, 0x1A, 0x0A])

/// The inode of the file at `path`: a save (temporary file renamed over it) changes it.
private func inode(_ path: String) throws -> Int {
    try #require(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int)
}

@Suite("Archive paths and kept forms")
struct ArchivePathTests {
    // MARK: - Parsing

    @Test func sessionTakesFormatAndConvertTakesDashes() throws {
        #expect(
            try parsedCommand(["session", "--format", "keyed-plist"]) == .session(SessionOptions(format: .keyedPlist))
        )
        #expect(
            try parsedCommand(["convert", "-", "-", "--to", "gridstore"])
                == .convert(ConvertOptions(input: "-", output: "-", format: .gridstore))
        )
        #expect(try parsedCommand(["save", "--file", "-", "--generate", "1"]).isSave(file: "-"))
        // Without flags the form is left to the run: none given.
        #expect(
            try parsedCommand(["save", "--append", "--generate", "1"])
                == .save(SaveOptions(append: true, source: .generate(count: 1, sharedFraction: 0, seed: 1)))
        )
        #expect(throws: UsageError.self) { try parse(["session", "--format", "keyed-plist", "--compress", "zstd"]) }
        #expect(throws: UsageError.self) { try parse(["convert", "", "b", "--to", "gridstore"]) }
    }

    // MARK: - Standard input and output

    @Test func saveWritesTheArchiveToStandardOutputAndItsSummaryToStandardError() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["save", "--file", "-", "--generate", "40", "--shared", "0.5"])
        #expect(saved.status == 0, "\(saved.errors)")
        #expect(saved.outputBytes.starts(with: gridstoreMagic))
        #expect(saved.errors.hasPrefix("saved 40 records (20 distinct) to standard output: "))
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("-")))

        // The same records as a file save.
        #expect(try sandbox.run(["save", "--file", "f.gridstore", "--generate", "40", "--shared", "0.5"]).status == 0)
        let fromPipe = try sandbox.run(["load", "--file", "-", "--json"], inputBytes: saved.outputBytes)
        #expect(fromPipe.status == 0, "\(fromPipe.errors)")
        #expect(fromPipe.output == (try sandbox.run(["load", "--file", "f.gridstore", "--json"])).output)

        let verified = try sandbox.run(["verify", "--file", "-"], inputBytes: saved.outputBytes)
        #expect(verified.output.hasPrefix("standard input: ok: 40 records, 20 distinct objects, "))
        let stats = try sandbox.run(["load", "--file", "-", "--stats"], inputBytes: saved.outputBytes)
        #expect(stats.output.hasPrefix("archive            standard input\n"))
    }

    @Test(.enabled(if: ArchiveCompression.isZstdAvailable, "needs zstd"))
    func keyedAndCompressedArchivesGoToStandardOutputToo() throws {
        let sandbox = try ToolSandbox()
        let keyed = try sandbox.run(["-q", "save", "--file", "-", "--format", "keyed-plist", "--generate", "5"])
        #expect(keyed.status == 0, "\(keyed.errors)")
        #expect(keyed.errors.isEmpty)
        #expect(keyed.outputBytes.starts(with: Data("bplist00".utf8)))
        let zstd = try sandbox.run(["save", "--file", "-", "--compress", "zstd", "--generate", "5"])
        #expect(zstd.errors.contains("compression zstd:3"))
        for archive in [keyed.outputBytes, zstd.outputBytes] {
            let verified = try sandbox.run(["verify", "--file", "-"], inputBytes: archive)
            #expect(verified.status == 0, "\(verified.errors)")
            #expect(verified.output.contains("ok: 5 records"))
        }
    }

    @Test func anArchiveFromAPipeIsReadWhole() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--file", "big.gridstore", "--generate", "50000"]).status == 0)
        let archive = try #require(sandbox.bytes(of: "big.gridstore"))
        let process = try sandbox.process(["verify", "--file", "-"])
        let input = Pipe()
        process.standardInput = input
        _ = FileManager.default.createFile(atPath: sandbox.path("out"), contents: nil)
        process.standardOutput = FileHandle(forWritingAtPath: sandbox.path("out"))
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        // In pieces, as a producer writes: the reader must not stop at the first short read.
        for start in stride(from: 0, to: archive.count, by: 100_000) {
            try input.fileHandleForWriting.write(contentsOf: archive[start..<min(start + 100_000, archive.count)])
        }
        try input.fileHandleForWriting.close()
        sandbox.waitWithTimeout(process)
        #expect(process.terminationStatus == 0)
        let output = String(decoding: sandbox.bytes(of: "out") ?? Data(), as: UTF8.self)
        #expect(output.hasPrefix("standard input: ok: 50000 records"))
    }

    @Test(.enabled(if: ArchiveCompression.isZstdAvailable, "needs zstd"))
    func convertReadsStandardInputAndWritesStandardOutput() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["save", "--file", "-", "--generate", "30", "--shared", "0.5"])
        let toFile = try sandbox.run(["convert", "-", "k.plist", "--to", "keyed-plist"], inputBytes: saved.outputBytes)
        #expect(toFile.status == 0, "\(toFile.errors)")
        #expect(toFile.output.hasPrefix("converted 30 records (15 distinct) from standard input to k.plist: "))
        let toPipe = try sandbox.run(["convert", "k.plist", "-", "--to", "gridstore", "--compress", "zstd"])
        #expect(toPipe.status == 0, "\(toPipe.errors)")
        #expect(toPipe.outputBytes.starts(with: gridstoreMagic))
        #expect(toPipe.errors.hasPrefix("converted 30 records (15 distinct) from k.plist to standard output: "))
        let through = try sandbox.run(["convert", "-", "-", "--to", "keyed-plist"], inputBytes: toPipe.outputBytes)
        #expect(through.outputBytes.starts(with: Data("bplist00".utf8)))
        let back = try sandbox.run(["load", "--file", "-", "--json"], inputBytes: through.outputBytes)
        let original = try sandbox.run(["load", "--file", "-", "--json"], inputBytes: saved.outputBytes)
        #expect(back.output == original.output)
    }

    @Test func aFileNamedDashIsReachedAsDotSlashDash() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["save", "--file", "./-", "--generate", "2"])
        #expect(saved.status == 0, "\(saved.errors)")
        #expect(saved.output.hasPrefix("saved 2 records (2 distinct) to ./-: "))
        #expect(sandbox.bytes(of: "-")?.starts(with: gridstoreMagic) == true)
        #expect(try sandbox.run(["verify", "--file", "./-"]).status == 0)
        // `-` itself is standard input, here empty: it does not read the file named '-'.
        let fromInput = try sandbox.run(["verify", "--file", "-"])
        #expect(fromInput.status == 1)
        #expect(fromInput.errors == "gridstore: error: standard input is empty: there is no archive to read\n")
    }

    @Test func badArchivesOnStandardInputAreNamedAsSuch() throws {
        let sandbox = try ToolSandbox()
        let result = try sandbox.run(["load", "--file", "-"], input: "not an archive at all")
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("gridstore: error: standard input: not a gridstore archive"))
    }

    @Test(
        arguments: [
            ["session", "--file", "-"], ["save", "--append", "--file", "-", "--generate", "1"],
            ["session"], ["save", "--append", "--generate", "1"],
        ]
    )
    func commandsThatUpdateAFileRefuseDash(arguments: [String]) throws {
        let sandbox = try ToolSandbox()
        // Without --file, a GRIDSTORE_FILE of '-' means the same.
        let result = try sandbox.run(arguments, environment: ["GRIDSTORE_FILE": "-"])
        #expect(result.status == 64)
        #expect(result.errors.contains("so it needs a file, not '-'"))
        #expect(result.output.isEmpty)
    }

    @Test func anArchiveIsNotWrittenToNorReadFromATerminal() throws {
        let sandbox = try ToolSandbox()
        let terminal = try #require(PseudoTerminal())
        // (arguments, whether the terminal is standard output rather than standard input)
        let cases = [
            (["save", "--file", "-", "--generate", "1"], true), (["convert", "a", "-", "--to", "gridstore"], true),
            (["load", "--file", "-"], false), (["verify", "--file", "-"], false),
            (["convert", "-", "b", "--to", "gridstore"], false),
        ]
        for (arguments, terminalIsOutput) in cases {
            let process = try sandbox.process(arguments)
            if terminalIsOutput {
                process.standardOutput = terminal.follower
            } else {
                process.standardInput = terminal.follower
                process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            }
            _ = FileManager.default.createFile(atPath: sandbox.path("err"), contents: nil)
            process.standardError = FileHandle(forWritingAtPath: sandbox.path("err"))
            try sandbox.runToEnd(process)
            #expect(process.terminationStatus == 1, "\(arguments)")
            let errors = String(decoding: sandbox.bytes(of: "err") ?? Data(), as: UTF8.self)
            let stream = terminalIsOutput ? "output" : "input"
            #expect(
                errors.hasPrefix("gridstore: error: standard \(stream) is a terminal, and an archive is binary"),
                "\(arguments): \(errors)"
            )
        }
    }

    // MARK: - Kept format and compression

    @Test(.enabled(if: ArchiveCompression.isZstdAvailable, "needs zstd"))
    func aSessionThatAddsNothingLeavesTheArchiveAlone() throws {
        let sandbox = try ToolSandbox()
        #expect(
            try sandbox.run(["save", "--file", "z.gridstore", "--generate", "100", "--compress", "zstd:19"]).status == 0
        )
        let before = try (sandbox.bytes(of: "z.gridstore"), inode(sandbox.path("z.gridstore")))
        for input in ["\n", "  \n\n", "{\"name\":\"no color\"}\n", ""] {
            let session = try sandbox.run(["session", "--file", "z.gridstore"], input: input)
            #expect(session.outputLines == ["loaded 100"])
            #expect(!session.errors.contains("saved"))
            #expect(try (sandbox.bytes(of: "z.gridstore"), inode(sandbox.path("z.gridstore"))) == before)
        }
    }

    @Test(.enabled(if: ArchiveCompression.isZstdAvailable, "needs zstd"))
    func sessionKeepsACompressedArchiveCompressed() throws {
        let sandbox = try ToolSandbox()
        #expect(
            try sandbox.run(["save", "--file", "z.gridstore", "--generate", "100", "--compress", "zstd:19"]).status == 0
        )
        let session = try sandbox.run(
            ["session", "--file", "z.gridstore"],
            input: ##"{"name":"new","color":"#FF0000","date":"d"}"## + "\n"
        )
        #expect(session.status == 0, "\(session.errors)")
        #expect(session.outputLines == ["loaded 100", "added 101"])
        let stats = try sandbox.run(["load", "--file", "z.gridstore", "--stats", "--json"]).output
        #expect(stats.contains(#""records":101"#))
        #expect(stats.contains(#""compression":"zstd""#))
    }

    @Test(.enabled(if: ArchiveCompression.isZstdAvailable, "needs zstd"))
    func sessionKeepsAKeyedArchiveKeyedUnlessToldOtherwise() throws {
        let sandbox = try ToolSandbox()
        #expect(
            try sandbox.run(["save", "--file", "k.plist", "--format", "keyed-plist", "--generate", "4"]).status == 0
        )
        let record = #"{"name":"new","color":1,"date":"d"}"# + "\n"
        #expect(try sandbox.run(["session", "--file", "k.plist"], input: record).status == 0)
        #expect(sandbox.bytes(of: "k.plist")?.starts(with: Data("bplist00".utf8)) == true)

        let refused = try sandbox.run(["session", "--file", "k.plist", "--compress", "zstd"], input: record)
        #expect(refused.status == 64)
        #expect(refused.errors.contains("k.plist is a keyed-plist archive, which is never compressed"))

        let converted = try sandbox.run(
            ["session", "--file", "k.plist", "--format", "gridstore", "--compress", "zstd"],
            input: record
        )
        #expect(converted.status == 0, "\(converted.errors)")
        let verified = try sandbox.run(["verify", "--file", "k.plist"]).output
        #expect(verified.contains("ok: 6 records"))
        #expect(verified.contains("compression zstd"))
    }

    @Test(.enabled(if: ArchiveCompression.isZstdAvailable, "needs zstd"))
    func appendKeepsTheArchivesFormatAndCompression() throws {
        let sandbox = try ToolSandbox()
        #expect(
            try sandbox.run(["save", "--file", "z.gridstore", "--generate", "50", "--compress", "zstd:19"]).status == 0
        )
        let zstd = try sandbox.run(["save", "--append", "--file", "z.gridstore", "--generate", "1"])
        #expect(zstd.status == 0, "\(zstd.errors)")
        #expect(zstd.output.hasSuffix("compression zstd:3\n"))
        #expect(try sandbox.run(["verify", "--file", "z.gridstore"]).output.contains("51 records"))
        #expect(try sandbox.run(["verify", "--file", "z.gridstore"]).output.contains("compression zstd"))

        #expect(
            try sandbox.run(["save", "--file", "k.plist", "--format", "keyed-plist", "--generate", "3"]).status == 0
        )
        let keyed = try sandbox.run(["save", "--append", "--file", "k.plist", "--generate", "2"])
        #expect(keyed.output.hasSuffix("format keyed-plist\n"), "\(keyed.output)")
        #expect(sandbox.bytes(of: "k.plist")?.starts(with: Data("bplist00".utf8)) == true)

        let uncompressed = try sandbox.run([
            "save", "--append", "--file", "z.gridstore", "--compress", "none", "--generate", "1",
        ])
        #expect(uncompressed.output.hasSuffix("compression none\n"))
        let refused = try sandbox.run([
            "save", "--append", "--file", "k.plist", "--compress", "zstd", "--generate", "1",
        ])
        #expect(refused.status == 64)
    }

    @Test(.enabled(if: ArchiveCompression.isZstdAvailable, "needs zstd"))
    func anAppendThatAddsNothingLeavesTheArchiveAlone() throws {
        let sandbox = try ToolSandbox()
        #expect(
            try sandbox.run(["save", "--file", "z.gridstore", "--generate", "10", "--compress", "zstd"]).status == 0
        )
        let before = try (sandbox.bytes(of: "z.gridstore"), inode(sandbox.path("z.gridstore")))
        for source in [["--generate", "0"], ["--input", "-"]] {
            let result = try sandbox.run(["save", "--append", "--file", "z.gridstore"] + source, input: "[]")
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output == "added 0 records: z.gridstore unchanged (10 records)\n")
            #expect(try (sandbox.bytes(of: "z.gridstore"), inode(sandbox.path("z.gridstore"))) == before)
        }
        let missing = try sandbox.run(["save", "--append", "--file", "none.gridstore", "--generate", "0"])
        #expect(missing.output == "added 0 records: no archive at none.gridstore, none written\n")
        #expect(!FileManager.default.fileExists(atPath: sandbox.path("none.gridstore")))
        // Asked for another form, it writes even without new records.
        let rewritten = try sandbox.run([
            "save", "--append", "--file", "z.gridstore", "--compress", "none", "--generate", "0",
        ])
        #expect(rewritten.output.hasPrefix("saved 10 records (added 0, 10 distinct)"))
        #expect(try sandbox.run(["verify", "--file", "z.gridstore"]).output.contains("compression none"))
    }
}

extension Command {
    fileprivate func isSave(file: String) -> Bool {
        if case .save(let options) = self { return options.file == file }
        return false
    }
}

/// A pseudo-terminal whose follower side a child process can take as standard input or
/// output, so that `isatty` is true there.
private final class PseudoTerminal {
    let leader: Int32
    let follower: FileHandle

    /// `/dev/ptmx`, unlocked, and its `/dev/pts/N`. The request numbers are Linux's generic
    /// ones (x86-64, arm64): TIOCSPTLCK and TIOCGPTN, which Swift does not import.
    init?() {
        leader = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard leader >= 0 else { return nil }
        var locked: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(leader, 0x4004_5431, &locked) == 0, ioctl(leader, 0x8004_5430, &number) == 0,
            let follower = FileHandle(forUpdatingAtPath: "/dev/pts/\(number)"), isatty(follower.fileDescriptor) == 1
        else {
            close(leader)
            return nil
        }
        self.follower = follower
    }

    deinit {
        close(leader)
    }
}
