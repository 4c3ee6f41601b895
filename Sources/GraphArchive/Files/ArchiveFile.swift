// Sources/GraphArchive/Files/ArchiveFile.swift - an archive file open for reading

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An archive file open for reading, whole or in pieces; closed when the value ends.
///
/// Only regular files are archives. The file is opened without blocking and checked with
/// `fstat` before anything is read, so a named pipe, a device or a folder given as an archive
/// is a clear error instead of an `open` or a `read` that waits forever (a FIFO with no writer)
/// or never ends (`/dev/zero`).
struct ArchiveFile: ~Copyable {
    let path: String
    /// The file's size when it was opened.
    let size: Int
    private let descriptor: Int32

    /// Opens the regular file at `path`.
    ///
    /// - Throws: `.fileNotFound`, `.ioError` (with the system's message, or naming what the
    ///   path is when it is not a regular file), `.limitExceeded` if the file is larger than
    ///   `maximumBytes`.
    init(path: String, maximumBytes: Int) throws(GraphArchiveError) {
        // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            let code = errno
            // A socket cannot be opened at all (ENXIO): say what it is rather than "No such device".
            var info = stat()
            if code == ENXIO, stat(path, &info) == 0, let kind = FileKind.describe(info.st_mode) {
                throw FileKind.notRegular(path, kind, action: "read")
            }
            throw SystemError.error(code, "cannot open", path)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            close(descriptor)
            throw SystemError.error(code, "cannot inspect", path)
        }
        if let kind = FileKind.describe(info.st_mode) {
            close(descriptor)
            throw FileKind.notRegular(path, kind, action: "read")
        }
        // A regular file ignores O_NONBLOCK; clear it all the same, reads must not return EAGAIN.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        let size = Int(info.st_size)
        guard size <= maximumBytes else {
            close(descriptor)
            throw GraphArchiveError(
                .limitExceeded,
                "\(path) is \(size) bytes, over maximumArchiveBytes (\(maximumBytes))"
            )
        }
        self.path = path
        self.size = size
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// The format the file starts like, from its first eight bytes.
    ///
    /// - Throws: `.ioError` if they cannot be read: a failed read is reported as what it is,
    ///   never as a file of an unknown format.
    func kind() throws(GraphArchiveError) -> ArchiveKind {
        ArchiveKind.detect(try prefix())
    }

    /// The first eight bytes, or all of a shorter file.
    private func prefix() throws(GraphArchiveError) -> [UInt8] {
        try ArchiveBytes(count: min(size, 8)) { (buffer) throws(GraphArchiveError) -> Int in
            try read(into: buffer, at: 0)
        }
        .copyBytes(0..<min(size, 8))
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

    /// Reads a property list whole. A binary one's magic and trailer (the last 32 bytes) are
    /// checked against the file's size first, and an XML one's last bytes, so a foreign,
    /// damaged or extended file fails before its body is read.
    ///
    /// - Throws: `.ioError`, `.badMagic`, and the trailer's errors (`.corrupt`, `.limitExceeded`).
    func readPropertyList(maximumObjectCount: Int, memory: inout MemoryBudget) throws(GraphArchiveError) -> ArchiveBytes
    {
        memory.limitToInput(bytes: size)
        let start = try prefix()
        if BPlist.hasMagic(start) {
            if size >= BPlist.magic.count + 1 + BPlist.trailerSize {
                let trailer = try ArchiveBytes(count: BPlist.trailerSize) { (buffer) throws(GraphArchiveError) -> Int in
                    try read(into: buffer, at: size - BPlist.trailerSize)
                }
                guard trailer.count == BPlist.trailerSize else {
                    throw GraphArchiveError(.truncated, "\(path) ended while it was being read", offset: size)
                }
                var reader = trailer.reader()
                _ = try BPlist.Trailer.read(&reader, byteCount: size, maximumObjectCount: maximumObjectCount)
            }
        } else if PropertyListInput.isXML(start) {
            try checkXMLEnd()
        } else if start.count == BPlist.magic.count {
            throw BPlist.badMagic
        }
        try memory.charge(MemoryBudget.chunk(size), for: "reading the \(size)-byte keyed archive file")
        return try readAll()
    }

    /// An XML property list ends with the closing tag of its value (then only comments,
    /// processing instructions and white space): a file whose last byte other than white space
    /// is not `>` (one cut short, or extended with zeros) fails before its body is read.
    ///
    /// - Throws: `.corrupt`, `.ioError`.
    private func checkXMLEnd() throws(GraphArchiveError) {
        var end = size
        // Back over trailing white space, a piece at a time; a real file has little of it.
        while end > 0 {
            let start = max(0, end - 512)
            let piece = try ArchiveBytes(count: end - start) { (buffer) throws(GraphArchiveError) -> Int in
                try read(into: buffer, at: start)
            }
            .copyBytes(0..<(end - start))
            guard piece.count == end - start else {
                throw GraphArchiveError(
                    .truncated,
                    "\(path) ended while it was being read",
                    offset: start + piece.count
                )
            }
            if let last = piece.lastIndex(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                guard piece[last] == UInt8(ascii: ">") else {
                    throw GraphArchiveError(
                        .corrupt,
                        "XML property list ends with byte 0x\(String(piece[last], radix: 16)), not with the closing tag of its value",
                        offset: start + last
                    )
                }
                return
            }
            end = start
        }
    }

    /// Reads up to `buffer.count` bytes from `offset`, fewer only at the end of the file.
    ///
    /// - Throws: `.ioError` with the system's message.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(GraphArchiveError) -> Int {
        try SystemError.converting("cannot read", path) { () throws(SystemCallFailure) in
            try FileDescriptorIO.read(from: descriptor, into: buffer, at: offset)
        }
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
        try FileDescriptorIO.forEachPiece(of: range, in: descriptor, path: path, pieceSize: pieceSize, body)
    }
}

/// What a path is when it is not a regular file, for the errors of readers and writers.
enum FileKind {
    /// "a directory", "a named pipe (FIFO)", …; nil for a regular file.
    static func describe(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a named pipe (FIFO)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    /// The error for reading or saving `path`, which is `kind`.
    static func notRegular(_ path: String, _ kind: String, action: String) -> GraphArchiveError {
        GraphArchiveError(.ioError, "cannot \(action) \(path): it is \(kind), not a regular file")
    }
}
