// Sources/GraphArchive/Archiving/GraphArchiver+DeepCopy.swift - copying a graph (the NSCopying job)

extension GraphArchiver {
    /// Returns a deep copy of `value`: every object reachable from it is copied once, so
    /// sharing and cycles in the copy mirror the original's exactly.
    ///
    /// The copy goes through the archive format in memory, with the types met while encoding
    /// as the registry, so there is no per-class `copy(with:)` to write (or to get wrong, as one
    /// seed's `copyWithZone:` does by assigning to the original).
    public static func deepCopy<T: GraphValue>(of value: T, options: Options = Options()) throws -> T {
        let archiver = GraphArchiver(options: options)
        try archiver.encode(value, forKey: rootKey)
        try archiver.finishEncoding()
        let unarchiver = try GraphUnarchiver(
            bytes: ArchiveBytes(copying: archiver.encodedBytes),
            registry: archiver.encounteredTypes,
            options: .init()
        )
        return try unarchiver.decodeRoot(T.self)
    }
}
