// Sources/GraphArchive/Files/ArchiveLock.swift - an advisory lock between processes on one archive

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock, between processes, on one archive file: held by one owner at a time, so
/// that a read-modify-write of the archive (load, change, save) cannot lose another process's
/// save made in between.
///
/// ```swift
/// try ArchiveLock.withLock(onArchive: path) {
///     var states = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromFile: path)
///     states.append(GridState(name: "Dusk", color: 0x333366, date: "2024-06-02T21:00:00Z"))
///     try GraphArchiver.archiveRootObject(states, toFile: path)
/// }
/// ```
///
/// The lock is an `flock(2)` on a lock file beside the archive, `.NAME.lock` for an archive
/// named NAME (in the folder of the file a symbolic link points to, so every path to one
/// archive shares one lock). The lock file is created when first needed and never removed
/// (removing it could let two owners lock two different files); it holds the process id of
/// the last owner, which the error of a lock not obtained names. The kernel releases the lock
/// when its owner closes it or ends, however it ends, so a killed process never leaves the
/// archive locked. Locks taken through two `ArchiveLock`s exclude each other even within one
/// process.
///
/// It is advisory: it binds only code that takes it. Reading needs no lock (a save replaces
/// the archive by renaming a whole new file over it, so a reader sees one whole archive or the
/// other), and ``GraphArchiver``'s own saves do not take it; `GridStateDataSource` and the
/// `gridstore` command's saves do.
public final class ArchiveLock: Sendable {
    /// How long ``init(archivePath:timeout:)`` waits by default for another owner: 10 seconds.
    public static let defaultTimeout: Duration = .seconds(10)

    /// The archive this lock guards, as given.
    public let archivePath: String
    /// The lock file beside the archive (see ``lockFilePath(forArchive:)``).
    public let lockFilePath: String
    /// The open lock file while the lock is held; -1 once released.
    private let descriptor: Atomic<Int32>

    /// Takes the lock on the archive at `archivePath`, waiting up to `timeout` for its owner,
    /// if another holds it, to release it.
    ///
    /// - Parameters:
    ///   - archivePath: The archive to lock; it need not exist yet, but its folder must.
    ///   - timeout: How long to wait; zero fails at once if the lock is held.
    /// - Throws: ``GraphArchiveError`` `.locked` (naming the owner's process id when the lock
    ///   file holds it) if the lock is still held after `timeout`; `.ioError` or
    ///   `.fileNotFound` if the lock file cannot be created or opened (a missing or read-only
    ///   folder, for example).
    public init(archivePath: String, timeout: Duration = defaultTimeout) throws {
        self.archivePath = archivePath
        lockFilePath = try Self.lockFilePath(forArchive: archivePath)
        descriptor = Atomic(try Self.acquire(lockFilePath, archive: archivePath, timeout: timeout))
    }

    deinit {
        unlock()
    }

    /// Whether this lock is still held (``unlock()`` not called yet).
    public var isLocked: Bool {
        descriptor.load(ordering: .acquiring) >= 0
    }

    /// Releases the lock; later calls do nothing.
    public func unlock() {
        let open = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if open >= 0 { close(open) }
    }

    /// Runs `body` holding the lock on the archive at `path`, taken as
    /// ``init(archivePath:timeout:)`` takes it, and releases it when `body` returns or throws.
    public static func withLock<Result>(
        onArchive path: String,
        timeout: Duration = defaultTimeout,
        _ body: () throws -> Result
    ) throws -> Result {
        let lock = try ArchiveLock(archivePath: path, timeout: timeout)
        defer { lock.unlock() }
        return try body()
    }

    /// The lock file of the archive at `path`: `.NAME.lock` beside the file `path` names after
    /// following symbolic links, or, where that name would be longer than a file name may be
    /// (255 bytes), `.` + the name's start + `-` + a hash of the whole name + `.lock`.
    ///
    /// - Throws: `.ioError` for a loop of symbolic links.
    public static func lockFilePath(forArchive path: String) throws -> String {
        let (folder, name) = AtomicFile.split(try SymbolicLinks.finalTarget(of: path))
        return folder + "/" + HiddenName.make(for: name, suffix: ".lock")
    }

    // MARK: - Taking the lock

    /// Opens (creating) the lock file and locks it, polling until `timeout`.
    private static func acquire(_ lockFile: String, archive: String, timeout: Duration) throws(GraphArchiveError)
        -> Int32
    {
        let descriptor = try openLockFile(lockFile)
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(1)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(descriptor)
                throw SystemError.error(code, "cannot lock", lockFile)
            }
            guard ContinuousClock.now < deadline else {
                let owner = Self.owner(descriptor)
                close(descriptor)
                throw GraphArchiveError(
                    .locked,
                    "\(archive) is locked by another process\(owner.map { " (pid \($0))" } ?? "") "
                        + "and was not released within \(seconds(timeout)) s (lock file \(lockFile))"
                )
            }
            let left = deadline - ContinuousClock.now
            let nap = min(pause, max(left, .zero))
            usleep(UInt32(nap / .microseconds(1)))
            pause = min(pause * 2, .milliseconds(50))
        }
        // Note who holds it, for the error of whoever waits next; the lock works without.
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(descriptor, 0) == 0 {
            _ = try? FileDescriptorIO.write(text, to: descriptor, at: 0)
        }
        return descriptor
    }

    /// Opens the lock file, creating it; read-only when it exists but may not be written
    /// (`flock` needs no write access).
    private static func openLockFile(_ lockFile: String) throws(GraphArchiveError) -> Int32 {
        // O_NONBLOCK: if someone made the name a FIFO, opening must not wait for a writer.
        let flags = O_CLOEXEC | O_NONBLOCK | O_NOCTTY
        var descriptor = open(lockFile, O_RDWR | O_CREAT | flags, 0o644)
        if descriptor < 0 && (errno == EACCES || errno == EROFS) {
            descriptor = open(lockFile, O_RDONLY | flags)
        }
        guard descriptor >= 0 else { throw SystemError.error(errno, "cannot open the lock file", lockFile) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, FileKind.describe(info.st_mode) == nil else {
            close(descriptor)
            throw FileKind.notRegular(lockFile, FileKind.describe(info.st_mode) ?? "unknown", action: "lock")
        }
        return descriptor
    }

    /// The process id the lock file holds, if any.
    private static func owner(_ descriptor: Int32) -> Int? {
        guard let bytes = try? FileDescriptorIO.read(from: descriptor, count: 24, at: 0), !bytes.isEmpty else {
            return nil
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return Int(text.trimmingSuffix(while: { $0 == "\n" }))
    }

    /// `duration` in seconds, as people write it ("10", "0.5").
    private static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        guard fraction != 0 else { return "\(whole)" }
        let value = Double(whole) + Double(fraction) / 1e18
        return String(value)
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[..<end]
    }
}

/// Names of the hidden files kept beside an archive (its lock file, its temporary files).
enum HiddenName {
    /// The longest file name most file systems take (NAME_MAX).
    static let maximumLength = 255

    /// `.NAME` + `suffix`, or, if that is longer than ``maximumLength`` bytes, `.` + the start
    /// of NAME (whole characters) + `-` + 16 hex digits of a hash of NAME + `suffix`: a long
    /// archive name still has hidden files of its own, of a legal length.
    static func make(for name: String, suffix: String) -> String {
        let plain = "." + name + suffix
        guard plain.utf8.count > maximumLength else { return plain }
        let hash = String(XXH64.hash(Array(name.utf8)), radix: 16)
        let tail = "-" + String(repeating: "0", count: 16 - hash.count) + hash + suffix
        let room = maximumLength - 1 - tail.utf8.count
        var start = ""
        for character in name {
            guard start.utf8.count + character.utf8.count <= room else { break }
            start.append(character)
        }
        return "." + start + tail
    }
}
