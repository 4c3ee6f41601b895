// Sources/GraphArchive/Format/ArchiveTables.swift - the key, type and shape tables (FORMAT.md §4)

/// The tables at the start of a payload, checked for internal consistency.
struct ArchiveTables {
    var keys: [String] = []
    var typeNames: [String] = []
    var typeIsObject: [Bool] = []
    /// For each shape: its type and where its keys start in `shapeKeyIDs`/`shapeKeys`.
    var shapeType: [Int] = []
    var shapeKeyStart: [Int] = []
    var shapeKeyCount: [Int] = []
    var shapeKeyIDs: [Int] = []
    var shapeKeys: [String] = []
    var topCount = 0

    /// Parses the tables, leaving `reader` at the first top-level entry.
    ///
    /// Each entry is charged to `memory` before it is kept, with what the decoders keep of it
    /// beside (``MemoryBudget``): a key its string, its place in the key lookups of a decode
    /// (`bytesPerKey`), a type its name and checks, a shape its columns and key ids.
    ///
    /// - Parameter bytesBeyond: Bytes of the payload past the reader's end that do not exist
    ///   yet (a payload being decompressed, `PayloadStreamCheck`): a count may claim them,
    ///   reading them is `.truncated`.
    /// - Throws: `.truncated`, `.corrupt`, `.invalidUTF8`, `.limitExceeded`.
    static func parse(
        _ reader: inout ByteReader,
        header: ArchiveHeader,
        options: GraphUnarchiver.Options,
        memory: inout MemoryBudget,
        bytesBeyond: Int = 0
    ) throws(GraphArchiveError) -> ArchiveTables {
        var tables = ArchiveTables()
        // Every table entry takes at least one byte, so no count may exceed the bytes left:
        // a forged count can never make us reserve more than the input justifies.
        let keyOffset = reader.offset
        let keyCount = try boundedCount(&reader, what: "keys", bytesBeyond: bytesBeyond)
        try memory.charge(keyCount * bytesPerKey, for: "the table of \(keyCount) keys", offset: keyOffset)
        tables.keys.reserveCapacity(keyCount)
        for _ in 0..<keyCount {
            tables.keys.append(try readName(&reader, options: options, memory: &memory))
        }
        let typeOffset = reader.offset
        let typeCount = try boundedCount(&reader, what: "types", bytesBeyond: bytesBeyond)
        guard typeCount == Int(header.typeCount) else {
            throw GraphArchiveError(
                .corrupt,
                "type table has \(typeCount) types, header says \(header.typeCount)",
                offset: typeOffset
            )
        }
        try memory.charge(typeCount * bytesPerType, for: "the table of \(typeCount) types", offset: typeOffset)
        for _ in 0..<typeCount {
            let kindOffset = reader.offset
            let kind = try reader.readByte()
            guard kind == TypeKind.object || kind == TypeKind.value else {
                throw GraphArchiveError(.corrupt, "unknown type kind \(kind)", offset: kindOffset)
            }
            tables.typeIsObject.append(kind == TypeKind.object)
            tables.typeNames.append(try readName(&reader, options: options, memory: &memory))
        }
        let shapeOffset = reader.offset
        let shapeCount = try boundedCount(&reader, what: "shapes", bytesBeyond: bytesBeyond)
        try memory.charge(shapeCount * bytesPerShape, for: "the table of \(shapeCount) shapes", offset: shapeOffset)
        // For each key, the last shape that listed it: finds a repeated key in one pass, where a
        // search of the shape's keys so far took quadratic time on a hostile shape of many keys.
        var lastShapeOfKey = [Int](repeating: -1, count: keyCount)
        for shapeIndex in 0..<shapeCount {
            let type = try reader.readIndex(below: typeCount, "shape refers to type")
            let countOffset = reader.offset
            let count = try boundedCount(&reader, what: "shape keys", bytesBeyond: bytesBeyond)
            try memory.charge(count * bytesPerShapeKey, for: "a shape of \(count) keys", offset: countOffset)
            tables.shapeType.append(type)
            tables.shapeKeyStart.append(tables.shapeKeyIDs.count)
            tables.shapeKeyCount.append(count)
            for _ in 0..<count {
                let keyOffset = reader.offset
                let key = try reader.readIndex(below: keyCount, "shape refers to key")
                // A repeated key would make keyed lookup ambiguous.
                guard lastShapeOfKey[key] != shapeIndex else {
                    throw GraphArchiveError(
                        .corrupt,
                        "shape lists key \"\(tables.keys[key])\" twice",
                        offset: keyOffset
                    )
                }
                lastShapeOfKey[key] = shapeIndex
                tables.shapeKeyIDs.append(key)
                tables.shapeKeys.append(tables.keys[key])
            }
        }
        let topOffset = reader.offset
        tables.topCount = try boundedCount(&reader, what: "top-level values", bytesBeyond: bytesBeyond)
        try memory.charge(
            tables.topCount * bytesPerTopValue,
            for: "the index of \(tables.topCount) top-level values",
            offset: topOffset
        )
        return tables
    }

    /// What a decode keeps per key (the key's `String`, a last-use mark), type (its name, kind
    /// and checks), shape (its type, key range, learned read order) and shape key (its id,
    /// `String`, match words, learned order), beside the strings' own storage; and per
    /// top-level value, its entry in the by-name index.
    static let bytesPerKey = 32
    static let bytesPerType = 48
    static let bytesPerShape = 48
    static let bytesPerShapeKey = 80
    static let bytesPerTopValue = 64

    /// ``parse(_:header:options:memory:)`` charging a budget of its own from `options`.
    static func parse(
        _ reader: inout ByteReader,
        header: ArchiveHeader,
        options: GraphUnarchiver.Options
    ) throws(GraphArchiveError) -> ArchiveTables {
        var memory = MemoryBudget(options)
        return try parse(&reader, header: header, options: options, memory: &memory)
    }

    private static func boundedCount(_ reader: inout ByteReader, what: String, bytesBeyond: Int)
        throws(GraphArchiveError) -> Int
    {
        let offset = reader.offset
        let count = try reader.readCount()
        guard count <= reader.remaining + bytesBeyond else {
            throw GraphArchiveError(.corrupt, "count of \(what) (\(count)) exceeds the bytes left", offset: offset)
        }
        return count
    }

    private static func readName(
        _ reader: inout ByteReader,
        options: GraphUnarchiver.Options,
        memory: inout MemoryBudget
    ) throws(GraphArchiveError) -> String {
        let offset = reader.offset
        let length = try reader.readCount()
        try options.checkStringLength(length, of: "name", at: offset)
        guard length <= reader.remaining else { throw reader.truncated("a name") }
        try memory.charge(MemoryBudget.string(length), for: "a name of \(length) bytes", offset: offset)
        return try reader.readString(count: length)
    }

    var scanner: ValueScanner {
        ValueScanner(shapeValueCounts: shapeKeyCount, objectCount: 0, maximumDepth: 0)
    }
}

extension ArchiveTables {
    /// Reads the key of a top-level entry (FORMAT.md §4) and returns its name.
    ///
    /// - Throws: `.corrupt` for a key the table does not have.
    func readTopKey(_ reader: inout ByteReader) throws(GraphArchiveError) -> String {
        keys[try reader.readIndex(below: keys.count, "top-level entry uses key")]
    }
}

extension ByteReader {
    /// Reads a count that indexes a table of `tableCount` entries.
    ///
    /// - Throws: `.corrupt` ("`what` 7, but the archive has 3") at the count's offset when it
    ///   is past the table.
    mutating func readIndex(below tableCount: Int, _ what: @autoclosure () -> String) throws(GraphArchiveError)
        -> Int
    {
        let offset = self.offset
        let index = try readCount()
        guard index < tableCount else {
            throw GraphArchiveError(.corrupt, "\(what()) \(index), but the archive has \(tableCount)", offset: offset)
        }
        return index
    }
}
