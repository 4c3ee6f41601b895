// Sources/GraphArchive/Files/AtomicFile.swift - crash-safe replacement of a file

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a file so that, whatever happens, it holds either its old or its whole new content.
///
/// The new content goes to a temporary file in the same folder (`.NAME.tmp-RANDOM`, or a
/// shortened name with a hash where that would pass 255 bytes), is flushed to disk with
/// `fsync`, then renamed over the target, and the folder is flushed so the rename itself
/// survives a power cut. A failure at any step removes the temporary file and leaves the old one
/// untouched. Two processes saving the same path at once each rename a whole file: the last
/// rename wins, and the file is always one whole archive (``ArchiveLock`` orders writers that
/// must not overwrite each other).
///
/// What the file system holds around the file is kept:
/// - **Symbolic links**: a save through a link writes the file it points to (through every link
///   of a chain); the link stays a link, and the file is created there if it is missing.
/// - **Permissions and owner**: the new file gets the old one's mode (whatever the umask), and
///   its owner and group where the process may set them (root may; others keep their own
///   user, and the group where they belong to it). A new file gets 0644 less the umask.
/// - **Hard links** are not kept: the rename gives the path a new file, and the archive's other
///   names keep the old content, a whole archive still. Writing in place instead would keep
///   the link but could leave a half-written file on a crash; a save never risks that.
///
/// The temporary file is locked (`flock`) by its writer for as long as it is written. A save
/// removes the temporary files of its target that no one holds locked (those of writers that
/// were killed); a writer in another process, container or PID namespace holds its lock, so its
/// file is never removed. When SIGTERM, SIGINT or SIGHUP ends the process during a save (their
/// action being the default), the temporary file is removed and the process then ends by the
/// signal (see `TemporaryFileCleanup`).
enum AtomicFile {
    /// Writes bytes to the temporary file; handed to the closure of ``write(to:_:)``.
    public struct Sink: ~Copyable {
        fileprivate let descriptor: Int32
        fileprivate let path: String
        /// Bytes written so far.
        private(set) var count = 0

        /// Appends everything `writer` holds.
        mutating func write(_ writer: borrowing ByteWriter) throws(GraphArchiveError) {
            try SystemError.converting("cannot write", path) { () throws(SystemCallFailure) in
                try FileDescriptorIO.writeAll(writer, to: descriptor)
            }
            count += writer.count
        }

        /// An appender for code that cannot borrow the sink: a payload compressed while its
        /// archive is still being encoded. Valid only inside ``AtomicFile/write(to:_:)``; what it
        /// writes is not counted in ``count``.
        func appender() -> Appender {
            Appender(descriptor: descriptor, path: path)
        }

        mutating func write(_ bytes: [UInt8]) throws(GraphArchiveError) {
            try SystemError.converting("cannot write", path) { () throws(SystemCallFailure) in
                try FileDescriptorIO.writeAll(bytes, to: descriptor)
            }
            count += bytes.count
        }

        /// Writes `bytes` at `offset` without moving the append position (to patch a header).
        func write(_ bytes: [UInt8], at offset: Int) throws(GraphArchiveError) {
            try SystemError.converting("cannot write", path) { () throws(SystemCallFailure) in
                try FileDescriptorIO.write(bytes, to: descriptor, at: offset)
            }
        }
    }

    /// Appends to the temporary file of a running ``write(to:_:)`` (see ``Sink/appender()``).
    final class Appender {
        private let descriptor: Int32
        private let path: String

        fileprivate init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws(GraphArchiveError) {
            try SystemError.converting("cannot write", path) { () throws(SystemCallFailure) in
                try FileDescriptorIO.writeAll(bytes, to: descriptor)
            }
        }
    }

    /// Replaces `path` with what `body` writes; returns the new file's size in bytes.
    ///
    /// - Throws: `.ioError` or `.fileNotFound` (missing folder) with the system's message, or
    ///   what `body` throws; in every case the previous file at `path` is left as it was.
    @discardableResult
    static func write(to path: String, _ body: (inout Sink) throws -> Void) throws -> Int {
        let target = try SymbolicLinks.finalTarget(of: path)
        var info = stat()
        let existing: stat? = stat(target, &info) == 0 ? info : nil
        if let existing, let kind = FileKind.describe(existing.st_mode) {
            // The rename would replace a folder, device, pipe or socket (say /dev/full) with a file.
            throw GraphArchiveError(.ioError, "cannot save to \(path): it is \(kind), not a regular file")
        }
        let (folder, name) = split(target)
        removeStaleTemporaries(in: folder, name: name)
        let (descriptor, temporary, cleanupSlot) = try createTemporary(in: folder, name: name, for: path)
        defer { TemporaryFileCleanup.unregister(cleanupSlot) }
        var written = stat()
        do {
            var sink = Sink(descriptor: descriptor, path: path)
            try body(&sink)
            if let existing { keepOwnerAndMode(of: existing, on: descriptor) }
            guard fsync(descriptor) == 0 else { throw SystemError.error(errno, "cannot flush", path) }
            // The size from the file itself: a compressed payload's appender is not counted in the sink.
            guard fstat(descriptor, &written) == 0 else {
                throw SystemError.error(errno, "cannot read the size of", path)
            }
            // Renamed while still open, so its lock keeps other saves' cleanup away until then.
            guard rename(temporary, target) == 0 else { throw SystemError.error(errno, "cannot replace", path) }
        } catch {
            unlink(temporary)
            close(descriptor)
            throw error
        }
        close(descriptor)
        // Flush the folder so the rename is durable; failure here cannot undo the save.
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
        return Int(written.st_size)
    }

    /// Creates and locks a new temporary file for `name` in `folder`; returns it open, its path,
    /// and its slot in `TemporaryFileCleanup`.
    ///
    /// The path is registered for removal by a signal before the file exists, so no signal can
    /// fall between its creation and its registration. Another save's cleanup may take the
    /// lock of a file created a moment ago, before its writer took it, and remove it: then the
    /// writer's path no longer names its file, and it starts again with a new name.
    private static func createTemporary(in folder: String, name: String, for path: String) throws(GraphArchiveError)
        -> (Int32, String, Int?)
    {
        for _ in 0..<8 {
            let temporary = folder + "/" + temporaryName(for: name)
            let slot = TemporaryFileCleanup.register(temporary)
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                let code = errno
                TemporaryFileCleanup.unregister(slot)
                if code == EEXIST { continue }
                throw SystemError.error(code, "cannot create a temporary file for", path)
            }
            var opened = stat()
            var named = stat()
            if flock(descriptor, LOCK_EX) == 0, fstat(descriptor, &opened) == 0, lstat(temporary, &named) == 0,
                opened.st_ino == named.st_ino, opened.st_dev == named.st_dev
            {
                return (descriptor, temporary, slot)
            }
            TemporaryFileCleanup.unregister(slot)
            close(descriptor)
        }
        throw GraphArchiveError(.ioError, "cannot create a temporary file for \(path): its name was taken every time")
    }

    /// Gives the new file the old one's owner and group, where the process may (root may; a
    /// user may give it a group of theirs), then its mode, whatever the umask. Setting the
    /// owner clears the set-user-ID and set-group-ID bits, so the mode comes last.
    private static func keepOwnerAndMode(of existing: stat, on descriptor: Int32) {
        var created = stat()
        guard fstat(descriptor, &created) == 0 else { return }
        if created.st_uid != existing.st_uid || created.st_gid != existing.st_gid {
            if fchown(descriptor, existing.st_uid, existing.st_gid) != 0 && created.st_gid != existing.st_gid {
                _ = fchown(descriptor, uid_t.max, existing.st_gid)
            }
        }
        _ = fchmod(descriptor, existing.st_mode & 0o7777)
    }

    @discardableResult
    static func write(_ output: ArchiveOutput, to path: String) throws -> Int {
        try write(to: path) { sink in try output.write(to: &sink) }
    }

    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    /// The letters after `.tmp-` in a temporary file's name.
    private static let randomLength = 12

    /// `.NAME.tmp-` + 12 random letters and digits, or where that would pass 255 bytes the
    /// shortened form of ``HiddenName``.
    static func temporaryName(for name: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        let random = String((0..<randomLength).map { _ in alphabet.randomElement()! })
        return temporaryPrefix(for: name) + random
    }

    /// What the names of `name`'s temporary files start with.
    static func temporaryPrefix(for name: String) -> String {
        String(
            HiddenName.make(for: name, suffix: ".tmp-" + String(repeating: "x", count: randomLength)).dropLast(
                randomLength
            )
        )
    }

    /// Removes the temporary files of `name` that no writer holds: a writer locks its file
    /// (`flock`) from creating it to renaming it, so a file whose lock can be taken was left by
    /// a process that ended. Checked by lock, not by process id, which says nothing about a
    /// writer in another PID namespace (a container sharing the folder).
    static func removeStaleTemporaries(in folder: String, name: String) {
        let prefix = temporaryPrefix(for: name)
        FileDescriptorIO.forEachEntryName(in: folder) { entryName in
            if entryName.hasPrefix(prefix) { removeIfUnlocked(folder + "/" + entryName) }
        }
    }

    /// Removes the regular file at `path` if its lock can be taken at once, holding the lock
    /// while it unlinks, and only if the name still names the file it locked.
    private static func removeIfUnlocked(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, FileKind.describe(opened.st_mode) == nil,
            flock(descriptor, LOCK_EX | LOCK_NB) == 0,
            lstat(path, &named) == 0, named.st_ino == opened.st_ino, named.st_dev == opened.st_dev
        else { return }
        unlink(path)
    }
}
