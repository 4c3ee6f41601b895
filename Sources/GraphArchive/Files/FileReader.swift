// Sources/GraphArchive/Files/FileReader.swift - reading a whole keyed archive file, and system errors

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum FileReader {
    /// Reads the keyed archive (binary property list) at `path` whole, its trailer checked first.
    ///
    /// - Throws: `.fileNotFound`, `.ioError` (with the system's message), `.limitExceeded`,
    ///   and a damaged trailer's errors.
    static func readKeyedArchive(
        _ path: String,
        options: GraphUnarchiver.Options,
        memory: inout MemoryBudget
    ) throws(GraphArchiveError) -> ArchiveBytes {
        try ArchiveFile(path: path, maximumBytes: options.maximumArchiveBytes)
            .readPropertyList(maximumObjectCount: options.maximumObjectCount, memory: &memory)
    }

    /// ``readKeyedArchive(_:options:memory:)`` charging a budget of its own.
    static func readKeyedArchive(_ path: String, options: GraphUnarchiver.Options) throws(GraphArchiveError)
        -> ArchiveBytes
    {
        var memory = MemoryBudget(options)
        return try readKeyedArchive(path, options: options, memory: &memory)
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

    /// What `call` returns; its failure as the public error, saying `action` and `path`.
    static func converting<R>(_ action: String, _ path: String, _ call: () throws(SystemCallFailure) -> R)
        throws(GraphArchiveError) -> R
    {
        do { return try call() } catch { throw Self.error(error.code, action, path) }
    }
}
