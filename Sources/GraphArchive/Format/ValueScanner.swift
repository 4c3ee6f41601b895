// Sources/GraphArchive/Format/ValueScanner.swift - walks tagged values without building them

/// Steps over tagged values (FORMAT.md §6), checking their structure against an archive's
/// shapes and limits: skipping unread keys, locating keys out of order, verifying archives.
/// Its walk (`ValueWalk.swift`) also drives reordering objects and reading values into a
/// ``GraphVisitor``.
struct ValueScanner {
    /// Number of values in each shape, indexed by shape id.
    var shapeValueCounts: [Int]
    var objectCount: Int
    var maximumDepth: Int

    /// Moves `reader` past one tagged value.
    @inline(__always)
    func skipValue(_ reader: inout ByteReader, depth: Int = 0) throws(GraphArchiveError) {
        // The walk's fast path, with a call of the same shape as ever behind it: this is
        // inlined into loops over values (laying records out in columns), where one argument
        // more changes how their registers are allocated (callgrind: 2 to 3 instructions a
        // value).
        if !reader.skipPlainValue() { try skipTaggedValue(&reader, depth: depth) }
    }

    @inline(never)
    private func skipTaggedValue(_ reader: inout ByteReader, depth: Int) throws(GraphArchiveError) {
        var skipping = Skipping()
        try walkTaggedValue(&reader, depth: depth, &skipping)
    }

    /// Moves `reader` past a record: its shape id and the shape's values.
    func skipRecord(_ reader: inout ByteReader, depth: Int) throws(GraphArchiveError) {
        var skipping = Skipping()
        try walkRecord(&reader, depth: depth, &skipping)
    }

    /// Visits nothing: the walk's own checks are all a skip wants.
    private struct Skipping: TaggedValueVisitor {
        // Not zero-sized: every zero-sized value has the same address, so ThreadSanitizer
        // takes two threads' skips, each passing its own `inout`, for a race on one variable.
        var unused: UInt8 = 0
    }

    /// Inlined: every record, each object's included, starts with one (a call cost about 12
    /// instructions an object of the chain benchmark).
    @inline(__always)
    func readShape(_ reader: inout ByteReader) throws(GraphArchiveError) -> Int {
        let offset = reader.offset
        let shape = try reader.readVarint()
        guard shape < UInt64(shapeValueCounts.count) else { throw unknownShape(shape, at: offset) }
        return Int(shape)
    }

    @inline(never)
    private func unknownShape(_ shape: UInt64, at offset: Int) -> GraphArchiveError {
        GraphArchiveError(
            .corrupt,
            "record refers to shape \(shape), but the archive has \(shapeValueCounts.count)",
            offset: offset
        )
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
        writeVarint(Self.referenceDelta(to: index, from: previous))
    }

    /// The varint value of a packed array entry for `index` after `previous` (ZigZag delta).
    @inline(__always)
    static func referenceDelta(to index: Int, from previous: Int) -> UInt64 {
        let delta = index &- previous
        return UInt64(bitPattern: Int64((delta << 1) ^ (delta >> 63)))
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
        var counting = CountingReferences(count: references)
        try walkValue(&reader, depth: depth, &counting)
        references = counting.count
    }

    private struct CountingReferences: TaggedValueVisitor {
        var count: Int

        mutating func reference(_ index: Int, at start: Int) { count += 1 }
        mutating func beginReferenceArray(count: Int, at start: Int, in reader: ByteReader) { self.count += count }
    }
}
