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
/// The new content goes to a temporary file in the same folder (`.NAME.tmp-PID-RANDOM`), is
/// flushed to disk with `fsync`, then renamed over the target, and the folder is flushed so
/// the rename itself survives a power cut. A failure at any step removes the temporary file
/// and leaves the old one untouched. Two processes saving the same path at once each rename a
/// whole file: the last rename wins, and the file is always one whole archive. Temporary files
/// left by a killed process (its PID no longer running) are removed by the next save.
public enum AtomicFile {
    /// Writes bytes to the temporary file; handed to the closure of ``write(to:_:)``.
    public struct Sink: ~Copyable {
        fileprivate let descriptor: Int32
        fileprivate let path: String
        /// Bytes written so far.
        public private(set) var count = 0

        /// Appends `bytes`, retrying short writes.
        public mutating func write(_ bytes: UnsafeRawBufferPointer) throws(GraphArchiveError) {
            try AtomicFile.writeAll(bytes, to: descriptor, path: path)
            count += bytes.count
        }

        /// An appender for code that cannot borrow the sink: a payload compressed while its
        /// archive is still being encoded. Valid only inside ``AtomicFile/write(to:_:)``; what it
        /// writes is not counted in ``count``.
        func appender() -> Appender {
            Appender(descriptor: descriptor, path: path)
        }

        public mutating func write(_ bytes: [UInt8]) throws(GraphArchiveError) {
            // Array.withUnsafeBytes rethrows untyped errors; carry the typed result out instead.
            let result: Result<Void, GraphArchiveError> = bytes.withUnsafeBytes { raw in
                Result { () throws(GraphArchiveError) in try write(raw) }
            }
            try result.get()
        }

        /// Writes `bytes` at `offset` without moving the append position (to patch a header).
        public func write(_ bytes: [UInt8], at offset: Int) throws(GraphArchiveError) {
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            guard written == bytes.count else { throw SystemError.error(errno, "cannot write", path) }
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
            try AtomicFile.writeAll(bytes, to: descriptor, path: path)
        }
    }

    /// Writes all of `bytes` to `descriptor`, retrying short and interrupted writes.
    private static func writeAll(
        _ bytes: UnsafeRawBufferPointer,
        to descriptor: Int32,
        path: String
    ) throws(GraphArchiveError) {
        guard var next = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = systemWrite(descriptor, next, left)
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError.error(errno, "cannot write", path)
            }
            next += written
            left -= written
        }
    }

    /// Replaces `path` with what `body` writes.
    ///
    /// - Throws: `.ioError` or `.fileNotFound` (missing folder) with the system's message, or
    ///   what `body` throws; in every case the previous file at `path` is left as it was.
    public static func write(to path: String, _ body: (inout Sink) throws -> Void) throws {
        var info = stat()
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw GraphArchiveError(.ioError, "cannot save to \(path): it is a directory")
        }
        // The rename would replace a device, pipe or socket (say /dev/full) with a plain file.
        if stat(path, &info) == 0 && (info.st_mode & S_IFMT) != S_IFREG {
            throw GraphArchiveError(.ioError, "cannot save to \(path): it is not a regular file")
        }
        // Keep the old file's permissions; a new file gets 0644 less the umask.
        let mode: mode_t = stat(path, &info) == 0 ? info.st_mode & 0o7777 : 0o644
        let (folder, name) = split(path)
        removeStaleTemporaries(in: folder, name: name)
        let temporary = "\(folder)/.\(name).tmp-\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 36))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw SystemError.error(errno, "cannot create a temporary file for", path) }
        var closed = false
        do {
            var sink = Sink(descriptor: descriptor, path: path)
            try body(&sink)
            guard fsync(descriptor) == 0 else { throw SystemError.error(errno, "cannot flush", path) }
            closed = true
            guard close(descriptor) == 0 else { throw SystemError.error(errno, "cannot close", path) }
            if mode != 0o644 { fchmodIfNeeded(temporary, mode) }
            guard rename(temporary, path) == 0 else { throw SystemError.error(errno, "cannot replace", path) }
        } catch {
            if !closed { close(descriptor) }
            unlink(temporary)
            throw error
        }
        // Flush the folder so the rename is durable; failure here cannot undo the save.
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    static func write(_ output: ArchiveOutput, to path: String) throws {
        try write(to: path) { sink in try output.write(to: &sink) }
    }

    private static func fchmodIfNeeded(_ path: String, _ mode: mode_t) {
        chmod(path, mode)
    }

    static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    /// Removes `.NAME.tmp-PID-*` files whose writer is no longer running.
    static func removeStaleTemporaries(in folder: String, name: String) {
        guard let directory = opendir(folder) else { return }
        defer { closedir(directory) }
        let prefix = ".\(name).tmp-"
        while let entry = readdir(directory) {
            // d_name is NUL-terminated inside the entry, which may be shorter than the declared
            // 256 bytes: read up to the NUL only (reading the whole array overflowed, per ASan).
            let entryName = withUnsafePointer(to: &entry.pointee.d_name) { field in
                field.withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) }
            }
            guard entryName.hasPrefix(prefix) else { continue }
            let rest = entryName.dropFirst(prefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]) else { continue }
            // kill(pid, 0) fails with ESRCH only when no such process exists.
            if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
                unlink("\(folder)/\(entryName)")
            }
        }
    }
}
