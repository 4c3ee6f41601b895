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
    /// - Throws: `.truncated`, `.corrupt`, `.invalidUTF8`, `.limitExceeded`.
    static func parse(
        _ reader: inout ByteReader, header: ArchiveHeader, options: GraphUnarchiver.Options
    ) throws(GraphArchiveError) -> ArchiveTables {
        var tables = ArchiveTables()
        // Every table entry takes at least one byte, so no count may exceed the bytes left:
        // a forged count can never make us reserve more than the input justifies.
        let keyCount = try boundedCount(&reader, what: "keys")
        tables.keys.reserveCapacity(keyCount)
        for _ in 0..<keyCount {
            tables.keys.append(try readName(&reader, options: options))
        }
        let typeOffset = reader.offset
        let typeCount = try boundedCount(&reader, what: "types")
        guard typeCount == Int(header.typeCount) else {
            throw GraphArchiveError(.corrupt, "type table has \(typeCount) types, header says \(header.typeCount)", offset: typeOffset)
        }
        for _ in 0..<typeCount {
            let kindOffset = reader.offset
            let kind = try reader.readByte()
            guard kind == TypeKind.object || kind == TypeKind.value else {
                throw GraphArchiveError(.corrupt, "unknown type kind \(kind)", offset: kindOffset)
            }
            tables.typeIsObject.append(kind == TypeKind.object)
            tables.typeNames.append(try readName(&reader, options: options))
        }
        let shapeCount = try boundedCount(&reader, what: "shapes")
        // For each key, the last shape that listed it: finds a repeated key in one pass, where a
        // search of the shape's keys so far took quadratic time on a hostile shape of many keys.
        var lastShapeOfKey = [Int](repeating: -1, count: keyCount)
        for shapeIndex in 0..<shapeCount {
            let shapeOffset = reader.offset
            let type = try reader.readCount()
            guard type < typeCount else {
                throw GraphArchiveError(.corrupt, "shape refers to type \(type), but the archive has \(typeCount)", offset: shapeOffset)
            }
            let count = try boundedCount(&reader, what: "shape keys")
            tables.shapeType.append(type)
            tables.shapeKeyStart.append(tables.shapeKeyIDs.count)
            tables.shapeKeyCount.append(count)
            for _ in 0..<count {
                let keyOffset = reader.offset
                let key = try reader.readCount()
                guard key < keyCount else {
                    throw GraphArchiveError(.corrupt, "shape refers to key \(key), but the archive has \(keyCount)", offset: keyOffset)
                }
                // A repeated key would make keyed lookup ambiguous.
                guard lastShapeOfKey[key] != shapeIndex else {
                    throw GraphArchiveError(.corrupt, "shape lists key \"\(tables.keys[key])\" twice", offset: keyOffset)
                }
                lastShapeOfKey[key] = shapeIndex
                tables.shapeKeyIDs.append(key)
                tables.shapeKeys.append(tables.keys[key])
            }
        }
        tables.topCount = try boundedCount(&reader, what: "top-level values")
        return tables
    }

    private static func boundedCount(_ reader: inout ByteReader, what: String) throws(GraphArchiveError) -> Int {
        let offset = reader.offset
        let count = try reader.readCount()
        guard count <= reader.remaining else {
            throw GraphArchiveError(.corrupt, "count of \(what) (\(count)) exceeds the bytes left", offset: offset)
        }
        return count
    }

    private static func readName(_ reader: inout ByteReader, options: GraphUnarchiver.Options) throws(GraphArchiveError) -> String {
        let offset = reader.offset
        let length = try reader.readCount()
        guard length <= options.maximumStringLength else {
            throw GraphArchiveError(
                .limitExceeded, "name of \(length) bytes exceeds maximumStringLength (\(options.maximumStringLength))", offset: offset)
        }
        return try reader.readString(count: length)
    }

    var scanner: ValueScanner {
        ValueScanner(shapeValueCounts: shapeKeyCount, objectCount: 0, maximumDepth: 0)
    }
}
