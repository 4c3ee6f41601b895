// Sources/GraphArchive/ArchiveGraph/ArchiveGraph+Converting.swift - any archive graph written in either format

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ArchiveGraph {
    /// The graph as a gridstore archive: every object a record named by its class, its
    /// fields in stored order, sharing and cycles kept; records in construction order
    /// (FORMAT.md §5.4), so model types read it like an archive they wrote.
    ///
    /// From a keyed archive the conversion is lossless: the gridstore archive also keeps each
    /// class's `$classes` and how each value was stored where a keyed writer would store it
    /// otherwise (FORMAT.md §12), and ``keyedArchiveData(options:)`` of it gives back the same
    /// graph: class names and chains, keys, values, and which objects are shared.
    ///
    /// - Throws: ``GraphArchiveError`` for damage found while reading the graph, and
    ///   `.compressionUnavailable` for zstd in a build without it.
    public func gridstoreArchiveData(compression: ArchiveCompression = .none) throws -> Data {
        try checkRoomToWrite()
        return try NativeGraphWriter.write(self, compression: compression).takeData()
    }

    /// Writes the graph as a gridstore archive at `path`, atomically (see
    /// <doc:HostileInput#Saving>); see ``gridstoreArchiveData(compression:)``.
    ///
    /// - Returns: The size of the archive written, in bytes.
    @discardableResult
    public func writeGridstoreArchive(toFile path: String, compression: ArchiveCompression = .none) throws -> Int {
        try checkRoomToWrite()
        return try AtomicFile.write(NativeGraphWriter.write(self, compression: compression), to: path)
    }

    /// The graph as an NSKeyedArchiver archive (a binary property list) that Foundation's
    /// `NSKeyedUnarchiver` reads wherever it knows the classes: each object an instance
    /// dictionary of its fields and `$class`, values stored as NSKeyedArchiver stores them
    /// (numbers in place, strings, data and dates by UID, arrays as NSMutableArray…), except
    /// where the graph, read from a keyed archive, says how they were stored.
    ///
    /// - Throws: ``GraphArchiveError`` for damage found while reading the graph, and
    ///   `.invalidValue` for nil inside an array or dictionary, which NSArray cannot hold.
    public func keyedArchiveData(options: KeyedArchive.Options = KeyedArchive.Options()) throws -> Data {
        try checkRoomToWrite()
        return try KeyedArchiveWriter.write(self, classNames: options.classNames).takeData()
    }

    /// Writes the graph as an NSKeyedArchiver archive at `path`, atomically; see
    /// ``keyedArchiveData(options:)``.
    ///
    /// - Returns: The size of the archive written, in bytes.
    @discardableResult
    public func writeKeyedArchive(toFile path: String, options: KeyedArchive.Options = KeyedArchive.Options()) throws
        -> Int
    {
        try checkRoomToWrite()
        return try KeyedArchive.write(KeyedArchiveWriter.write(self, classNames: options.classNames), to: path)
    }

    /// Throws `.limitExceeded`, before anything is written, when the memory budget of
    /// ``GraphUnarchiver/Options/maximumMemoryBytes`` cannot hold a conversion: its output and
    /// the writer's tables, about four times the archive read (its decompressed payload), and
    /// the 64 MiB an output buffer takes once it passes 1 MiB. An allocation that fails traps.
    func checkRoomToWrite() throws(GraphArchiveError) {
        var input = archiveBytes
        if case .native(let native) = source { input = max(input, native.loaded.payload.count) }
        let (scaled, overflow) = input.multipliedReportingOverflow(by: 4)
        let needed = overflow ? Int.max : scaled + ByteWriter.largeCapacity
        let budget = AvailableMemory.current().budget(choosing: options.maximumMemoryBytes)
        guard needed <= budget else {
            throw GraphArchiveError(
                .limitExceeded,
                "decoding needs more memory than the memory budget (\(MemoryBudget.describe(budget))) allows: "
                    + "converting the archive needs about \(MemoryBudget.describe(needed))"
            )
        }
    }
}
