// Tests/GraphArchiveTests/Files/AtomicSaveTests.swift - saves that fail, crash or race never lose an archive

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
        return names.filter { $0.hasPrefix(AtomicFile.temporaryPrefix(for: name)) }
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
                // makedev(1, 7): the device behind /dev/full
                #expect(mknod(specials[1], S_IFCHR | 0o666, 1 << 8 | 7) == 0)
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

    /// A temporary file no one holds locked was left by a writer that ended: the next save
    /// removes it. One whose lock is held belongs to a writer still at work (here another open
    /// file of this process, as a writer in another PID namespace would hold it) and stays.
    @Test func unlockedTemporariesAreRemovedAndLockedOnesKept() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            let dead = "\(folder)/.archive.tmp-left"
            let alive = "\(folder)/.archive.tmp-writing"
            let unrelated = "\(folder)/.other.tmp-left"
            for file in [dead, alive, unrelated] {
                #expect(FileManager.default.createFile(atPath: file, contents: Data([1])))
            }
            let writer = open(alive, O_RDONLY)
            defer { close(writer) }
            #expect(flock(writer, LOCK_EX) == 0)
            try ArchiveVersions.save(1, to: path)
            #expect(!FileManager.default.fileExists(atPath: dead))
            #expect(FileManager.default.fileExists(atPath: alive))
            #expect(FileManager.default.fileExists(atPath: unrelated))
        }
    }

    /// A save through a symbolic link (or a chain of them) writes the file the link points to;
    /// the links stay links, and loads through them see the new archive.
    @Test func saveThroughALinkWritesItsTarget() throws {
        try withTemporaryFolder { folder in
            try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
            try ArchiveVersions.save(1, to: folder + "/data/archive")
            try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: "data/archive")
            try FileManager.default.createSymbolicLink(atPath: folder + "/link2", withDestinationPath: folder + "/link")
            try ArchiveVersions.save(2, to: folder + "/link2")
            for link in ["/link", "/link2"] {
                #expect(
                    try FileManager.default.destinationOfSymbolicLink(atPath: folder + link).hasSuffix("link")
                        || link == "/link"
                )
                let kind = try FileManager.default.attributesOfItem(atPath: folder + link)[.type] as? FileAttributeType
                #expect(kind == .typeSymbolicLink)
            }
            #expect(try ArchiveVersions.check(folder + "/data/archive") == 2)
            #expect(try ArchiveVersions.check(folder + "/link") == 2)
            #expect(ArchiveVersions.temporaries(of: folder + "/data/archive").isEmpty)
            // A dangling link: the save creates the file it points to.
            try FileManager.default.createSymbolicLink(atPath: folder + "/dangling", withDestinationPath: "data/new")
            try ArchiveVersions.save(3, to: folder + "/dangling")
            #expect(try ArchiveVersions.check(folder + "/data/new") == 3)
            // A loop of links is an error, not a hang.
            try FileManager.default.createSymbolicLink(atPath: folder + "/loopA", withDestinationPath: "loopB")
            try FileManager.default.createSymbolicLink(atPath: folder + "/loopB", withDestinationPath: "loopA")
            #expect(archiveError { try ArchiveVersions.save(4, to: folder + "/loopA") }?.code == .ioError)
        }
    }

    /// Under umask 077 an existing 0644 archive stays 0644 (a new one gets 0644 less the umask).
    @Test func modeIsKeptWhateverTheUmask() async throws {
        try await withTemporaryFolderAsync { folder in
            await #expect(processExitsWith: .success) { [folder = folder as String] in
                let path = folder + "/archive"
                try ArchiveVersions.save(1, to: path)
                chmod(path, 0o644)
                umask(0o077)
                try ArchiveVersions.save(2, to: path)
                #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o644)
                try ArchiveVersions.save(1, to: folder + "/new")
                #expect(
                    try FileManager.default.attributesOfItem(atPath: folder + "/new")[.posixPermissions] as? Int
                        == 0o600
                )
            }
        }
    }

    /// Root saving another user's archive keeps its owner, group and mode (it became root's, 0640).
    @Test(.enabled(if: getuid() == 0, "needs root to give files away"))
    func ownerAndGroupAreKeptWherePermitted() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, to: path)
            #expect(chown(path, 65534, 65534) == 0)
            #expect(chmod(path, 0o640) == 0)
            try ArchiveVersions.save(2, to: path)
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect(attributes[.ownerAccountID] as? Int == 65534)
            #expect(attributes[.groupOwnerAccountID] as? Int == 65534)
            #expect(attributes[.posixPermissions] as? Int == 0o640)
        }
    }

    /// A name of 240 characters leaves no room for `.NAME.tmp-...`: the temporary file takes a
    /// shortened name, and the save works.
    @Test func longFileNamesSave() throws {
        try withTemporaryFolder { folder in
            for length in [240, 250, 255] {
                let path = folder + "/" + String(repeating: "n", count: length)
                try ArchiveVersions.save(1, to: path)
                try ArchiveVersions.save(2, to: path)
                #expect(try ArchiveVersions.check(path) == 2)
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(names.count == 3)
        }
    }

    /// A hard link is not kept: the path gets the new archive, the other name keeps the old one,
    /// whole (a save never writes a file in place).
    @Test func hardLinkKeepsTheOldArchiveUnderItsOtherName() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, to: path)
            #expect(link(path, folder + "/other") == 0)
            try ArchiveVersions.save(2, to: path)
            #expect(try ArchiveVersions.check(path) == 2)
            #expect(try ArchiveVersions.check(folder + "/other") == 1)
        }
    }

    /// SIGTERM, SIGINT or SIGHUP in the middle of a save (their action the default) removes its
    /// temporary file; the process still ends by the signal.
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func signalDuringASaveRemovesItsTemporaryFile(signal: Int32) async throws {
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/archive"
            try ArchiveVersions.save(1, to: path)
            await #expect(processExitsWith: .signal(signal)) { [path = path as String, signal = signal as Int32] in
                // As a command's process starts: the signal's action the default, not blocked.
                Glibc.signal(signal, SIG_DFL)
                var unblocked = sigset_t()
                sigemptyset(&unblocked)
                sigaddset(&unblocked, signal)
                pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
                try AtomicFile.write(to: path) { sink in
                    try sink.write([UInt8](repeating: 7, count: 1 << 20))
                    #expect(ArchiveVersions.temporaries(of: path).count == 1)
                    raise(signal)
                    Issue.record("the signal did not end the process")
                }
            }
            #expect(ArchiveVersions.temporaries(of: path).isEmpty)
            #expect(try ArchiveVersions.check(path) == 1)
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
