// Sources/GraphArchive/Internals/FileDescriptorIO.swift - bytes read from and written to open files

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The library's reads and writes of bytes on open file descriptors.
///
/// The pointer work of the system calls (addresses of array storage, advancing past short reads
/// and writes, a reused read buffer) lives here, so that `Files/` and the rest of the engine
/// pass arrays and writers they own. Failures come back as `errno` codes in
/// ``SystemCallFailure``; callers turn them into `GraphArchiveError`s naming their path.
enum FileDescriptorIO {
    /// Writes all of `bytes` at the file position, retrying short and interrupted writes.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws(SystemCallFailure) {
        guard var next = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let written = systemWrite(descriptor, next, left)
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallFailure(code: errno)
            }
            next += written
            left -= written
        }
    }

    /// Writes all of `bytes` at the file position, retrying short and interrupted writes.
    static func writeAll(_ bytes: [UInt8], to descriptor: Int32) throws(SystemCallFailure) {
        // Array.withUnsafeBytes rethrows untyped errors; carry the typed result out instead.
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemCallFailure) in try writeAll(raw, to: descriptor) }
        }
        try result.get()
    }

    /// Writes everything `writer` holds at the file position.
    static func writeAll(_ writer: borrowing ByteWriter, to descriptor: Int32) throws(SystemCallFailure) {
        try writer.withUnsafeBytes { (raw) throws(SystemCallFailure) in try writeAll(raw, to: descriptor) }
    }

    /// Writes `bytes` at `offset` with one `pwrite`, without moving the file position.
    ///
    /// - Throws: the call's `errno`, or `EIO` when it wrote fewer bytes.
    static func write(_ bytes: [UInt8], to descriptor: Int32, at offset: Int) throws(SystemCallFailure) {
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        if written < 0 { throw SystemCallFailure(code: errno) }
        guard written == bytes.count else { throw SystemCallFailure(code: EIO) }
    }

    /// Reads up to `buffer.count` bytes from `offset` into `buffer`, fewer only at the end of
    /// the file; returns how many it read. Retries short and interrupted reads.
    static func read(
        from descriptor: Int32,
        into buffer: UnsafeMutableRawBufferPointer,
        at offset: Int
    ) throws(SystemCallFailure) -> Int {
        guard let start = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let result = pread(descriptor, start + done, buffer.count - done, off_t(offset + done))
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemCallFailure(code: errno)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    /// Up to `count` bytes from `offset`, fewer only at the end of the file.
    static func read(from descriptor: Int32, count: Int, at offset: Int) throws(SystemCallFailure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let result = bytes.withUnsafeMutableBytes { raw in
            Result { () throws(SystemCallFailure) in try read(from: descriptor, into: raw, at: offset) }
        }
        bytes.removeSubrange(try result.get()...)
        return bytes
    }

    /// The bytes from the file position to the end of the file, read 4 KiB at a time until the
    /// end, a failed read, or once `limit` bytes or more are in; for small files of `/proc`.
    static func readToEnd(from descriptor: Int32, limit: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return bytes
    }

    /// Calls `body` with the bytes of `range`, in order, in pieces of at most `pieceSize` bytes,
    /// read through one buffer, so that a large range takes no more memory than a piece.
    ///
    /// - Warning: Do not escape the pointer.
    /// - Throws: `.truncated` if the file ends before `range` does, `.ioError` naming `path`,
    ///   or what `body` throws.
    static func forEachPiece(
        of range: Range<Int>,
        in descriptor: Int32,
        path: String,
        pieceSize: Int,
        _ body: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        try withUnsafeTemporaryAllocation(byteCount: min(pieceSize, max(range.count, 1)), alignment: 16) {
            (buffer) throws(GraphArchiveError) in
            var offset = range.lowerBound
            while offset < range.upperBound {
                let wanted = min(buffer.count, range.upperBound - offset)
                let piece = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted])
                let count = try SystemError.converting("cannot read", path) { () throws(SystemCallFailure) in
                    try read(from: descriptor, into: piece, at: offset)
                }
                guard count == wanted else {
                    throw GraphArchiveError(.truncated, "\(path) ended while it was being read", offset: offset + count)
                }
                try body(UnsafeRawBufferPointer(piece))
                offset += count
            }
        }
    }
}

extension FileDescriptorIO {
    /// Calls `body` with the name of each entry of the folder at `path` (`.` and `..`
    /// included), in the order the system lists them; does nothing if it cannot be opened.
    static func forEachEntryName(in path: String, _ body: (String) -> Void) {
        guard let directory = opendir(path) else { return }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            // d_name is NUL-terminated inside the entry, which may be shorter than the declared
            // 256 bytes: read up to the NUL only (reading the whole array overflowed, per ASan).
            let name = withUnsafePointer(to: &entry.pointee.d_name) { field in
                field.withMemoryRebound(to: CChar.self, capacity: 1) { String(cString: $0) }
            }
            body(name)
        }
    }
}

#if canImport(Darwin)
private let systemWrite = Darwin.write
private let systemRead = Darwin.read
#elseif canImport(Musl)
private let systemWrite = Musl.write
private let systemRead = Musl.read
#else
private let systemWrite = Glibc.write
private let systemRead = Glibc.read
#endif

/// A failed system call: its `errno`.
struct SystemCallFailure: Error {
    let code: Int32
}
