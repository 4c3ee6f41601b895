// Tests/GraphArchiveTests/AtomicSaveTests.swift - saves that fail, crash or race never lose an archive

import Foundation
import Testing

@testable import GraphArchive

#if canImport(Glibc)
    import Glibc
#endif

/// Numbered versions of one archive: version `v` holds records that all carry `v`, in a count
/// that depends on `v`, so a file mixing two versions, or cut short, cannot pass `check`.
enum ArchiveVersions {
    static func records(_ version: Int, base: Int) -> [Record] {
        let shared = Record(name: "shared", color: version, date: "2024")
        return (0..<(base + (version % 7) * 97)).map {
            $0 % 3 == 0 ? shared : Record(name: "r\($0)", color: version, date: "2024")
        }
    }

    static func save(_ version: Int, base: Int = 2_000, to path: String) throws {
        try GraphArchiver.archiveRootObject(records(version, base: base), toFile: path)
    }

    /// The version the archive at `path` holds, after checking it is one whole version.
    static func check(_ path: String, base: Int = 2_000) throws -> Int {
        _ = try GraphUnarchiver.verify(file: path)
        let records = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path)
        let version = try #require(records.first?.color)
        #expect(records.count == base + (version % 7) * 97)
        #expect(records.allSatisfy { $0.color == version })
        #expect(records[0] === records[3])
        return version
    }

    /// Temporary files `AtomicFile` left beside `path`.
    static func temporaries(of path: String) -> [String] {
        let (folder, name) = AtomicFile.split(path)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix(".\(name).tmp-") }
    }
}

/// Whether this process may mount file systems (root with CAP_SYS_ADMIN, as on CI and the dev machines).
let canMount: Bool = {
    guard getuid() == 0 else { return false }
    let probe = FileManager.default.temporaryDirectory.appendingPathComponent("gridstore-mount-probe-\(getpid())").path
    try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: probe) }
    guard mount("tmpfs", probe, "tmpfs", 0, "size=64k") == 0 else { return false }
    umount(probe)
    return true
}()

/// Runs `body` with a fresh tmpfs of `size` mounted on a new folder.
func withTmpfs(size: String, _ body: (String) throws -> Void) throws {
    try withTemporaryFolder { folder in
        guard mount("tmpfs", folder, "tmpfs", 0, "size=\(size)") == 0 else {
            Issue.record("mount failed: \(String(cString: strerror(errno)))")
            return
        }
        defer { umount2(folder, Int32(MNT_DETACH)) }
        try body(folder)
    }
}

@Suite("Atomic saves")
struct AtomicSaveTests {
    // MARK: - I/O failures: a clear error, the old archive intact, no temporary left

    /// Saves version 2 over version 1 at `path` expecting `code`, then checks version 1 survived.
    func expectFailedSave(at path: String, _ code: GraphArchiveError.Code, mentioning: String, base: Int = 2_000) throws
    {
        expectArchiveError(code, mentioning: mentioning) { try ArchiveVersions.save(2, base: base, to: path) }
        #expect(try ArchiveVersions.check(path) == 1)
        #expect(ArchiveVersions.temporaries(of: path).isEmpty)
    }

    @Test func pathIsADirectory() throws {
        try withTemporaryFolder { folder in
            expectArchiveError(.ioError, mentioning: "is a directory") { try ArchiveVersions.save(1, to: folder) }
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue)
        }
    }

    /// A device or pipe at the path is refused, not replaced by a plain file: here a FIFO and a
    /// private copy of /dev/full (made with mknod when root, so /dev itself is never at stake).
    @Test func specialFilesAreNotReplaced() throws {
        try withTemporaryFolder { folder in
            var specials = [folder + "/pipe"]
            #expect(mkfifo(specials[0], 0o644) == 0)
            if getuid() == 0 {
                specials.append(folder + "/full")
                #expect(mknod(specials[1], S_IFCHR | 0o666, 1 << 8 | 7) == 0)  // makedev(1, 7): the device behind /dev/full
            }
            for path in specials {
                expectArchiveError(.ioError, mentioning: "not a regular file") { try ArchiveVersions.save(1, to: path) }
                var info = stat()
                #expect(stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG, "\(path) was replaced")
                #expect(ArchiveVersions.temporaries(of: path).isEmpty)
            }
            // Reading one is refused as well, before any read could block or run without end.
            expectArchiveError(.ioError, mentioning: "not a regular file") {
                _ = try GraphUnarchiver.verify(file: "/dev/zero")
            }
        }
    }

    @Test func missingFolder() throws {
        try withTemporaryFolder { folder in
            expectArchiveError(.fileNotFound, mentioning: "No such file or directory") {
                try ArchiveVersions.save(1, to: folder + "/missing/archive")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(left.isEmpty)
        }
    }

    @Test func failureInsideTheWriterKeepsTheOldFile() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, to: path)
            struct Interrupted: Error {}
            #expect(throws: Interrupted.self) {
                try AtomicFile.write(to: path) { sink in
                    try sink.write([1, 2, 3])
                    throw Interrupted()
                }
            }
            #expect(try ArchiveVersions.check(path) == 1)
            #expect(ArchiveVersions.temporaries(of: path).isEmpty)
        }
    }

    @Test func permissionDenied() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "gridstore-denied-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/archive"
        try ArchiveVersions.save(1, to: path)
        if getuid() == 0 {
            // Root writes anywhere: the save runs in a child process that gives up root first.
            chmod(folder, 0o755)
            await #expect(processExitsWith: .success) { [path = path as String] in
                guard setgid(65534) == 0, setuid(65534) == 0 else { exit(2) }
                do {
                    try ArchiveVersions.save(2, to: path)
                    exit(3)
                } catch let error as GraphArchiveError
                    where error.code == .ioError && error.message.contains("Permission denied")
                {
                    exit(0)
                } catch {
                    exit(4)
                }
            }
        } else {
            chmod(folder, 0o555)
            defer { chmod(folder, 0o755) }
            expectArchiveError(.ioError, mentioning: "Permission denied") { try ArchiveVersions.save(2, to: path) }
        }
        #expect(try ArchiveVersions.check(path) == 1)
        #expect(ArchiveVersions.temporaries(of: path).isEmpty)
    }

    @Test(.enabled(if: canMount, "needs root to mount a tmpfs"))
    func readOnlyFolder() throws {
        try withTmpfs(size: "4m") { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, to: path)
            guard mount("tmpfs", folder, "tmpfs", UInt(MS_REMOUNT) | UInt(MS_RDONLY), nil) == 0 else {
                Issue.record("remount read-only failed: \(String(cString: strerror(errno)))")
                return
            }
            try expectFailedSave(at: path, .ioError, mentioning: "Read-only file system")
        }
    }

    @Test(.enabled(if: canMount, "needs root to mount a small tmpfs"))
    func diskFull() throws {
        try withTmpfs(size: "256k") { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, base: 1_000, to: path)
            // Version 2 at 100,000 records needs far more than the 256 KiB the disk has.
            expectArchiveError(.ioError, mentioning: "No space left on device") {
                try ArchiveVersions.save(2, base: 100_000, to: path)
            }
            #expect(try ArchiveVersions.check(path, base: 1_000) == 1)
            #expect(ArchiveVersions.temporaries(of: path).isEmpty)
            // The space came back: a save that fits succeeds.
            try ArchiveVersions.save(3, base: 1_000, to: path)
            #expect(try ArchiveVersions.check(path, base: 1_000) == 3)
        }
    }

    // MARK: - What a save keeps and cleans up

    @Test func existingPermissionsAreKept() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, to: path)
            chmod(path, 0o600)
            try ArchiveVersions.save(2, to: path)
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func temporariesOfDeadWritersAreRemovedByTheNextSave() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            let finished = Process()
            finished.executableURL = URL(fileURLWithPath: "/bin/true")
            try finished.run()
            finished.waitUntilExit()
            let dead = "\(folder)/.archive.tmp-\(finished.processIdentifier)-left"
            let alive = "\(folder)/.archive.tmp-1-writing"  // pid 1 is running: its save may be in progress
            let unrelated = "\(folder)/.other.tmp-\(finished.processIdentifier)-left"
            for file in [dead, alive, unrelated] {
                #expect(FileManager.default.createFile(atPath: file, contents: Data([1])))
            }
            try ArchiveVersions.save(1, to: path)
            #expect(!FileManager.default.fileExists(atPath: dead))
            #expect(FileManager.default.fileExists(atPath: alive))
            #expect(FileManager.default.fileExists(atPath: unrelated))
        }
    }

    // MARK: - Crashes and races between processes

    /// A child process saves version after version of a 20,000-record archive and SIGKILLs itself
    /// at a random moment; after every kill the file is one whole version, never older than before.
    @Test func killedSavesLeaveAWholeArchive() async throws {
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, base: 20_000, to: path)
            var version = 1
            for _ in 0..<12 {
                await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, version = version as Int] in
                    let delay = UInt32.random(in: 0...150_000)
                    Thread.detachNewThread {
                        usleep(delay)
                        kill(getpid(), SIGKILL)
                    }
                    for next in (version + 1)... {
                        try ArchiveVersions.save(next, base: 20_000, to: path)
                    }
                }
                let now = try ArchiveVersions.check(path, base: 20_000)
                #expect(now >= version)
                version = now
            }
            // The next uninterrupted save removes what the killed writers left.
            try ArchiveVersions.save(version + 1, base: 20_000, to: path)
            #expect(ArchiveVersions.temporaries(of: path).isEmpty)
            #expect(try ArchiveVersions.check(path, base: 20_000) == version + 1)
        }
    }

    /// Two processes save the same path at once: each rename replaces the whole file, so the file
    /// ends as the last save of whichever finished last (last writer wins), never a mix.
    @Test func concurrentSavesFromTwoProcessesLeaveOneWholeArchive() async throws {
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/archive"
            async let first = #expect(processExitsWith: .success) { [path = path as String] in
                for version in 100..<106 { try ArchiveVersions.save(version, to: path) }
            }
            async let second = #expect(processExitsWith: .success) { [path = path as String] in
                for version in 200..<206 { try ArchiveVersions.save(version, to: path) }
            }
            _ = await (first, second)
            let winner = try ArchiveVersions.check(path)
            #expect([105, 205].contains(winner))
            #expect(ArchiveVersions.temporaries(of: path).isEmpty)
        }
    }
}

func withTemporaryFolderAsync(_ body: (String) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gridstore-test-\(UUID().uuidString)")
        .path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try await body(folder)
}
