// Sources/GraphArchive/Files/SymbolicLinks.swift - the file a path finally names

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Follows symbolic links at the end of a path, so that a save through a link writes the file
/// the link points to (the link stays a link) and its lock is the target's.
enum SymbolicLinks {
    /// The most links followed, as the kernel allows (MAXSYMLINKS, `ELOOP` beyond).
    static let maximumHops = 40

    /// `path` with every symbolic link at its end replaced by what it points to, to a path that
    /// is not a link: an existing file, or (for a new file or a dangling link) the path at which
    /// to create it. Links in the folders above are left to the system, which follows them.
    ///
    /// - Throws: `.ioError` for a loop of links or a link that cannot be read.
    static func finalTarget(of path: String) throws(GraphArchiveError) -> String {
        var current = path
        for _ in 0..<maximumHops {
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK else { return current }
            let target = try linkTarget(current)
            if target.hasPrefix("/") {
                current = target
            } else {
                let (folder, _) = AtomicFile.split(current)
                current = folder == "/" ? "/" + target : folder + "/" + target
            }
        }
        throw GraphArchiveError(.ioError, "cannot follow \(path): \(String(cString: strerror(ELOOP)))")
    }

    /// What the link at `path` holds.
    private static func linkTarget(_ path: String) throws(GraphArchiveError) -> String {
        var size = 256
        while true {
            var buffer = [CChar](repeating: 0, count: size)
            let read = readlink(path, &buffer, size)
            guard read >= 0 else { throw SystemError.error(errno, "cannot read the link", path) }
            // A target that fills the buffer may have been cut: read it again into a larger one.
            if read < size { return String(decoding: buffer[0..<read].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
            size *= 2
        }
    }
}
