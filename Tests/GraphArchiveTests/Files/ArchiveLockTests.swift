// Tests/GraphArchiveTests/Files/ArchiveLockTests.swift - the lock between processes on one archive

import Foundation
import Testing

@testable import GraphArchive

#if canImport(Glibc)
import Glibc
#endif

@Suite("Archive lock")
struct ArchiveLockTests {
    /// While this process holds the lock, a child process cannot take it (timeout 0) and is told
    /// who holds it; once it is released, the child takes it.
    @Test func lockExcludesAnotherProcessUntilReleased() async throws {
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/archive"
            let lock = try ArchiveLock(archivePath: path)
            #expect(lock.lockFilePath == folder + "/.archive.lock")
            await #expect(processExitsWith: .success) { [path = path as String] in
                let error = archiveError { _ = try ArchiveLock(archivePath: path, timeout: .zero) }
                #expect(error?.code == .locked)
                #expect(error?.message.hasPrefix("\(path) is locked by another process (pid ") == true)
                #expect(error?.message.contains("and was not released within 0 s") == true)
            }
            lock.unlock()
            #expect(!lock.isLocked)
            await #expect(processExitsWith: .success) { [path = path as String] in
                let taken = try ArchiveLock(archivePath: path, timeout: .zero)
                #expect(taken.isLocked)
            }
        }
    }

    /// Two locks of one process exclude each other too; a waiter gets the lock once it is let go.
    @Test func waiterGetsTheLockWhenItIsReleasedWithinItsTimeout() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/archive"
            let first = try ArchiveLock(archivePath: path)
            #expect(
                archiveError { _ = try ArchiveLock(archivePath: path, timeout: .milliseconds(100)) }?.code == .locked
            )
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { first.unlock() }
            let started = ContinuousClock.now
            let second = try ArchiveLock(archivePath: path, timeout: .seconds(20))
            #expect(second.isLocked && !first.isLocked)
            #expect(ContinuousClock.now - started >= .milliseconds(150))
        }
    }

    /// The kernel lets go of a killed owner's lock: nothing is left locked.
    @Test func killedOwnerLeavesTheArchiveUnlocked() async throws {
        try await withTemporaryFolderAsync { folder in
            let path = folder + "/archive"
            await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
                let lock = try ArchiveLock(archivePath: path)
                withExtendedLifetime(lock) { _ = kill(getpid(), SIGKILL) }
            }
            let again = try ArchiveLock(archivePath: path, timeout: .zero)
            #expect(again.isLocked)
        }
    }

    /// A symbolic link and the file it points to are one archive with one lock, beside the target.
    @Test func linkAndTargetShareOneLock() throws {
        try withTemporaryFolder { folder in
            try FileManager.default.createDirectory(atPath: folder + "/data", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: folder + "/link", withDestinationPath: "data/archive")
            let throughLink = try ArchiveLock(archivePath: folder + "/link")
            #expect(throughLink.lockFilePath == folder + "/data/.archive.lock")
            #expect(
                archiveError { _ = try ArchiveLock(archivePath: folder + "/data/archive", timeout: .zero) }?.code
                    == .locked
            )
        }
    }

    /// A 250-byte archive name would make `.NAME.lock` too long for the file system; the lock
    /// file takes a shortened name of its own instead.
    @Test func longArchiveNameHasALockFileOfLegalLength() throws {
        try withTemporaryFolder { folder in
            let name = String(repeating: "é", count: 125)  // 250 bytes
            let lock = try ArchiveLock(archivePath: folder + "/" + name)
            let lockName = String(lock.lockFilePath.dropFirst(folder.count + 1))
            #expect(lockName.utf8.count <= 255 && lockName.hasPrefix(".é") && lockName.hasSuffix(".lock"))
            #expect(FileManager.default.fileExists(atPath: lock.lockFilePath))
            let other = try ArchiveLock.lockFilePath(forArchive: folder + "/" + name + "x")
            #expect(other != lock.lockFilePath)
        }
    }

    @Test func lockFileOfAMissingFolderIsAnError() {
        let error = archiveError { _ = try ArchiveLock(archivePath: "/nonexistent-folder/archive") }
        #expect(error?.code == .fileNotFound)
        #expect(error?.message.hasPrefix("cannot open the lock file /nonexistent-folder/.archive.lock") == true)
    }

    @Test func withLockReleasesWhenTheBodyThrows() throws {
        try withTemporaryFolder { folder in
            struct Failure: Error {}
            let path = folder + "/archive"
            #expect(throws: Failure.self) {
                try ArchiveLock.withLock(onArchive: path) { () throws -> Void in throw Failure() }
            }
            // Not .zero: under ThreadSanitizer a process spawned by a test running beside this
            // one is forked, and holds the closed descriptor until it execs.
            let again = try ArchiveLock(archivePath: path, timeout: .seconds(5))
            #expect(again.isLocked)
        }
    }
}
