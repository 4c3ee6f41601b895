// Tests/GridStoreCLITests/SavedFileCLITests.swift - what a save leaves on the file system

import Foundation
import GridStore
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Saved files")
struct SavedFileCLITests {
    /// `save` through a symbolic link replaces the file it points to, and `load` through the link
    /// sees what was saved.
    @Test func saveThroughALinkKeepsTheLink() throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--generate", "10", "--file", "target.gridstore"]).status == 0)
        try FileManager.default.createSymbolicLink(
            atPath: sandbox.path("link.gridstore"),
            withDestinationPath: "target.gridstore"
        )
        let saved = try sandbox.run(["save", "--generate", "20", "--file", "link.gridstore"])
        #expect(saved.status == 0, "\(saved.errors)")
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: sandbox.path("link.gridstore"))
                == "target.gridstore"
        )
        #expect(try GridStateArchive.readStates(fromFile: sandbox.path("target.gridstore")).count == 20)
        let appended = try sandbox.run(["save", "--append", "--generate", "5", "--file", "link.gridstore"])
        #expect(appended.status == 0, "\(appended.errors)")
        #expect(try GridStateArchive.readStates(fromFile: sandbox.path("link.gridstore")).count == 25)
    }

    @Test func fileNameOf240CharactersSaves() throws {
        let sandbox = try ToolSandbox()
        let name = String(repeating: "g", count: 240)
        let saved = try sandbox.run(["save", "--generate", "5", "--file", name])
        #expect(saved.status == 0, "\(saved.errors)")
        let appended = try sandbox.run(["save", "--append", "--generate", "5", "--file", name])
        #expect(appended.status == 0, "\(appended.errors)")
        #expect(try GridStateArchive.readStates(fromFile: sandbox.path(name)).count == 10)
    }

    /// SIGTERM or SIGHUP while `save` writes the archive: the process ends by the signal, its
    /// temporary file is removed, the archive is the old one. The signal is sent as soon as the
    /// temporary file appears, up to five tries for a write long enough to catch.
    @Test(arguments: [SIGTERM, SIGHUP])
    func signalDuringASaveLeavesNoTemporaryFile(signal: Int32) throws {
        let sandbox = try ToolSandbox()
        #expect(try sandbox.run(["save", "--generate", "10", "--file", "big.gridstore"]).status == 0)
        var caught = false
        for _ in 0..<5 where !caught {
            let process = try sandbox.process(["save", "--generate", "1500000", "--file", "big.gridstore"])
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            process.standardError = FileHandle(forWritingAtPath: "/dev/null")
            try process.run()
            while process.isRunning {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: sandbox.folder)) ?? []
                if names.contains(where: { $0.hasPrefix(".big.gridstore.tmp-") }) {
                    kill(process.processIdentifier, signal)
                    caught = true
                    break
                }
                usleep(1_000)
            }
            sandbox.waitWithTimeout(process)
            if caught {
                #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == signal)
            }
        }
        #expect(caught, "the save ended before its temporary file was seen")
        let names = try FileManager.default.contentsOfDirectory(atPath: sandbox.folder)
        #expect(!names.contains(where: { $0.contains(".tmp-") }), "\(names)")
        #expect(try GridStateArchive.readStates(fromFile: sandbox.path("big.gridstore")).count == 10)
    }
}
