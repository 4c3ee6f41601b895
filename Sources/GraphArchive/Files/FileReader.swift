// Sources/GraphArchive/Files/FileReader.swift - reading a whole archive file

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum FileReader {
    /// Reads the file at `path` into one allocation of exactly its size.
    ///
    /// - Throws: `.fileNotFound`, `.ioError` (with the system's message), `.limitExceeded`.
    static func read(_ path: String, maximumBytes: Int) throws(GraphArchiveError) -> ArchiveBytes {
        try ArchiveFile(path: path, maximumBytes: maximumBytes).readAll()
    }
}

/// An archive file open for reading, whole or in pieces; closed when the value ends.
struct ArchiveFile: ~Copyable {
    let path: String
    /// The file's size when it was opened.
    let size: Int
    private let descriptor: Int32

    /// Opens the regular file at `path`.
    ///
    /// - Throws: `.fileNotFound`, `.ioError` (with the system's message), `.limitExceeded` if
    ///   the file is larger than `maximumBytes`.
    init(path: String, maximumBytes: Int) throws(GraphArchiveError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError.error(errno, "cannot open", path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw SystemError.error(code, "cannot inspect", path)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw GraphArchiveError(.ioError, "cannot read \(path): not a regular file")
        }
        let size = Int(info.st_size)
        guard size <= maximumBytes else {
            close(descriptor)
            throw GraphArchiveError(.limitExceeded, "\(path) is \(size) bytes, over maximumArchiveBytes (\(maximumBytes))")
        }
        self.path = path
        self.size = size
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Reads the whole file into one allocation of exactly its size.
    ///
    /// - Throws: `.ioError` with the system's message.
    func readAll() throws(GraphArchiveError) -> ArchiveBytes {
        try ArchiveBytes(count: size) { (buffer) throws(GraphArchiveError) -> Int in
            // A file that shrank while we read is returned short and reported as truncated.
            try read(into: buffer, at: 0)
        }
    }

    /// Reads up to `buffer.count` bytes from `offset`, fewer only at the end of the file.
    ///
    /// - Throws: `.ioError` with the system's message.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(GraphArchiveError) -> Int {
        var done = 0
        while done < buffer.count {
            let result = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if result < 0 {
                if errno == EINTR { continue }
                throw SystemError.error(errno, "cannot read", path)
            }
            if result == 0 { break }
            done += result
        }
        return done
    }

    /// Calls `body` with the bytes of `range`, in order, in pieces of at most `pieceSize`
    /// bytes, so a large range is read through one small buffer.
    ///
    /// - Warning: Do not escape the pointer.
    /// - Throws: `.truncated` if the file ends before `range` does, `.ioError`, or what `body` throws.
    func forEachPiece(
        of range: Range<Int>,
        pieceSize: Int = 1 << 18,
        _ body: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        try withUnsafeTemporaryAllocation(byteCount: min(pieceSize, max(range.count, 1)), alignment: 16) {
            (buffer) throws(GraphArchiveError) in
            var offset = range.lowerBound
            while offset < range.upperBound {
                let wanted = min(buffer.count, range.upperBound - offset)
                let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: offset)
                guard count == wanted else {
                    throw GraphArchiveError(.truncated, "\(path) ended while it was being read", offset: offset + count)
                }
                try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                offset += count
            }
        }
    }
}

enum SystemError {
    /// The one conversion of `errno` into the public error.
    static func error(_ code: Int32, _ action: String, _ path: String) -> GraphArchiveError {
        let reason = String(cString: strerror(code))
        if code == ENOENT {
            return GraphArchiveError(.fileNotFound, "\(action) \(path): \(reason)")
        }
        return GraphArchiveError(.ioError, "\(action) \(path): \(reason)")
    }
}

#if canImport(Darwin)
let systemWrite = Darwin.write
#elseif canImport(Musl)
let systemWrite = Musl.write
#else
let systemWrite = Glibc.write
#endif
