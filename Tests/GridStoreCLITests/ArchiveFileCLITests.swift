// Tests/GridStoreCLITests/ArchiveFileCLITests.swift - what the commands do with files that are not archives

import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Archive files given to the commands")
struct ArchiveFileCLITests {
    /// Every command that reads an archive, on `path`.
    static func readingCommands(_ path: String) -> [[String]] {
        [
            ["load", "--file", path], ["load", "--stats", "--file", path], ["verify", "--file", path],
            ["save", "--append", "--generate", "1", "--file", path], ["session", "--file", path],
            ["convert", path, "out.gridstore", "--to", "gridstore"],
        ]
    }

    /// A FIFO no one writes to: every command says what it is and exits 1 at once, instead of
    /// waiting forever in open().
    @Test func namedPipeIsAClearErrorForEveryCommand() throws {
        let sandbox = try ToolSandbox()
        #expect(mkfifo(sandbox.path("pipe"), 0o600) == 0)
        for command in Self.readingCommands("pipe") {
            let started = ContinuousClock.now
            let result = try sandbox.run(command)
            #expect(result.reason == .exit && result.status == 1, "\(command)")
            #expect(
                result.errors == "gridstore: error: cannot read pipe: it is a named pipe (FIFO), not a regular file\n",
                "\(command)"
            )
            #expect(ContinuousClock.now - started < .seconds(30), "\(command)")
        }
    }

    @Test func folderAndDeviceAreClearErrors() throws {
        let sandbox = try ToolSandbox()
        for (path, kind) in [(sandbox.folder, "a directory"), ("/dev/zero", "a character device")] {
            for command in Self.readingCommands(path) {
                let result = try sandbox.run(command)
                #expect(result.reason == .exit && result.status == 1, "\(command)")
                #expect(
                    result.errors == "gridstore: error: cannot read \(path): it is \(kind), not a regular file\n",
                    "\(command)"
                )
            }
        }
    }

    /// A 1,000-record archive extended to 3 GB (sparse): reported from its header at once.
    @Test func extendedArchiveFailsWithoutBeingRead() throws {
        let sandbox = try ToolSandbox()
        let saved = try sandbox.run(["save", "--generate", "1000", "--file", "a.gridstore"])
        #expect(saved.status == 0, "\(saved.errors)")
        let size = try #require(sandbox.bytes(of: "a.gridstore")?.count)
        #expect(truncate(sandbox.path("a.gridstore"), 3 << 30) == 0)
        let result = try sandbox.run(["verify", "--file", "a.gridstore"])
        #expect(result.status == 1)
        #expect(
            result.errors
                == "gridstore: error: a.gridstore: \((3 << 30) - size) unexpected bytes after the archive [byte \(size)]\n"
        )
    }
}
