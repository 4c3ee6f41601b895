// Sources/GraphArchive/Format/ValueScanner.swift - walks tagged values without building them

/// Steps over tagged values (FORMAT.md §6), checking their structure: the shared walker behind
/// skipping unread keys, locating keys out of order, verifying archives and reordering objects.
struct ValueScanner {
    /// Number of values in each shape, indexed by shape id.
    var shapeValueCounts: [Int]
    var objectCount: Int
    var maximumDepth: Int

    /// Moves `reader` past one tagged value.
    @inline(__always)
    func skipValue(_ reader: inout ByteReader, depth: Int = 0) throws(GraphArchiveError) {
        // Most values are scalars whose tag gives their length: stepped over in line, without
        // the call and the switch (a third of the instructions of laying records out in
        // columns, callgrind).
        if !reader.skipPlainValue() { try skipAnyValue(&reader, depth: depth) }
    }

    private func skipAnyValue(_ reader: inout ByteReader, depth: Int) throws(GraphArchiveError) {
        let tagOffset = reader.offset
        let tag = try reader.readByte()
        switch tag {
        case ValueTag.null, ValueTag.falseValue, ValueTag.trueValue:
            return
        case ValueTag.float32:
            try reader.skip(4)
        case ValueTag.float64, ValueTag.date:
            try reader.skip(8)
        case ValueTag.string, ValueTag.bytes:
            try reader.skip(try reader.readCount())
        case ValueTag.objectReference:
            try checkObjectIndex(try reader.readVarint(), at: tagOffset)
        case ValueTag.array:
            let count = try reader.readCount()
            try checkDepth(depth, at: tagOffset)
            for _ in 0..<count {
                try skipValue(&reader, depth: depth + 1)
            }
        case ValueTag.referenceArray:
            let count = try reader.readCount()
            var previous = -1
            for _ in 0..<count {
                let offset = reader.offset
                let index = try Self.nextReferenceIndex(&reader, previous: previous)
                try checkObjectIndex(UInt64(bitPattern: Int64(index)), at: offset)
                previous = index
            }
        case ValueTag.dictionary:
            let count = try reader.readCount()
            try checkDepth(depth, at: tagOffset)
            for _ in 0..<count {
                try skipValue(&reader, depth: depth + 1)
                try skipValue(&reader, depth: depth + 1)
            }
        case ValueTag.valueRecord:
            try checkDepth(depth, at: tagOffset)
            try skipRecord(&reader, depth: depth + 1)
        case ValueTag.unsignedBase...(ValueTag.negativeBase + 7):
            try reader.skip(Int(tag & 7) + 1)
        case ValueTag.smallIntegerBase..<(ValueTag.smallIntegerBase + 64):
            return
        case ValueTag.shortStringBase..<(ValueTag.shortStringBase + 64):
            try reader.skip(Int(tag - ValueTag.shortStringBase))
        default:
            throw GraphArchiveError(.corrupt, "unknown value tag 0x\(String(tag, radix: 16))", offset: tagOffset)
        }
    }

    /// Moves `reader` past a record: its shape id and the shape's values.
    func skipRecord(_ reader: inout ByteReader, depth: Int) throws(GraphArchiveError) {
        let shape = try readShape(&reader)
        for _ in 0..<shapeValueCounts[shape] {
            try skipValue(&reader, depth: depth)
        }
    }

    func readShape(_ reader: inout ByteReader) throws(GraphArchiveError) -> Int {
        let offset = reader.offset
        let shape = try reader.readVarint()
        guard shape < UInt64(shapeValueCounts.count) else {
            throw GraphArchiveError(
                .corrupt,
                "record refers to shape \(shape), but the archive has \(shapeValueCounts.count)",
                offset: offset
            )
        }
        return Int(shape)
    }

    @inline(__always)
    func checkDepth(_ depth: Int, at offset: Int) throws(GraphArchiveError) {
        guard depth < maximumDepth else {
            throw GraphArchiveError(
                .limitExceeded,
                "values nest deeper than maximumDepth (\(maximumDepth))",
                offset: offset
            )
        }
    }

    @inline(__always)
    func checkObjectIndex(_ index: UInt64, at offset: Int) throws(GraphArchiveError) {
        guard index < UInt64(objectCount) else {
            throw GraphArchiveError(
                .badObjectReference,
                "reference to object \(index), but the archive has \(objectCount)",
                offset: offset
            )
        }
    }

    /// Reads one ZigZag delta of a reference array and applies it to `previous`.
    @inline(__always)
    static func nextReferenceIndex(_ reader: inout ByteReader, previous: Int) throws(GraphArchiveError) -> Int {
        let offset = reader.offset
        let zigzag = try reader.readVarint()
        let delta = Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
        let (index, overflow) = previous.addingReportingOverflow(Int(delta))
        guard !overflow, index >= 0 else {
            throw GraphArchiveError(.badObjectReference, "reference array points before object 0", offset: offset)
        }
        return index
    }
}

extension ByteWriter {
    /// Writes `index` as the next entry of a packed reference array whose previous entry was
    /// `previous` (-1 before the first): the ZigZag varint of the delta, which
    /// `ValueScanner.nextReferenceIndex` reads back (FORMAT.md §6.5).
    @inline(__always)
    mutating func writeReferenceDelta(to index: Int, from previous: Int) {
        let delta = index &- previous
        writeVarint(UInt64(bitPattern: Int64((delta << 1) ^ (delta >> 63))))
    }
}

extension ValueScanner {
    /// Moves `reader` past one tagged value as ``skipValue(_:depth:)`` does, adding to
    /// `references` the object references it holds (FORMAT.md §6.4; each slot of a reference
    /// array, §6.5): what the header's `referenceCount` counts, for `verify`.
    func skipValue(
        _ reader: inout ByteReader,
        depth: Int = 0,
        countingReferencesInto references: inout Int
    ) throws(GraphArchiveError) {
        var content = reader
        let tag = try content.readByte()
        switch tag {
        case ValueTag.objectReference:
            references += 1
        case ValueTag.referenceArray:
            references += try content.readCount()
        case ValueTag.array, ValueTag.dictionary:
            try checkDepth(depth, at: reader.offset)
            let count = try content.readCount()
            reader = content
            for _ in 0..<(tag == ValueTag.dictionary ? 2 * count : count) {
                try skipValue(&reader, depth: depth + 1, countingReferencesInto: &references)
            }
            return
        case ValueTag.valueRecord:
            try checkDepth(depth, at: reader.offset)
            reader = content
            let shape = try readShape(&reader)
            for _ in 0..<shapeValueCounts[shape] {
                try skipValue(&reader, depth: depth + 1, countingReferencesInto: &references)
            }
            return
        default:
            break
        }
        try skipValue(&reader, depth: depth)
    }
}
