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
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw SystemError.error(errno, "cannot open", path) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemError.error(errno, "cannot inspect", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw GraphArchiveError(.ioError, "cannot read \(path): not a regular file")
        }
        let size = Int(info.st_size)
        guard size <= maximumBytes else {
            throw GraphArchiveError(.limitExceeded, "\(path) is \(size) bytes, over maximumArchiveBytes (\(maximumBytes))")
        }
        return try ArchiveBytes(count: size) { (buffer) throws(GraphArchiveError) -> Int in
            var done = 0
            while done < size {
                let result = systemRead(descriptor, buffer.baseAddress! + done, size - done)
                if result < 0 {
                    if errno == EINTR { continue }
                    throw SystemError.error(errno, "cannot read", path)
                }
                if result == 0 { break }  // the file shrank while we read: report what we have as truncated
                done += result
            }
            return done
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
let systemRead = Darwin.read
let systemWrite = Darwin.write
#elseif canImport(Musl)
let systemRead = Musl.read
let systemWrite = Musl.write
#else
let systemRead = Glibc.read
let systemWrite = Glibc.write
#endif
