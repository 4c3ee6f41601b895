// Sources/GraphArchive/Archiving/ObjectOrdering+ForwardReferences.swift - numbers references written before their target's index was known

extension ObjectOrdering {
    /// The index of every object a writer referred to before the object had one.
    ///
    /// A writer that numbers objects as their bodies finish (the Codable bridge: its indexes
    /// are a depth-first post-order, the construction order of FORMAT.md §5.4) cannot know the
    /// index of an object whose body is still being written, or is still to be written, when a
    /// reference to it is allowed to close a cycle. It writes such a reference as `base` plus
    /// the object's discovery number, a value no real index reaches, and once every body is
    /// written, ``numberForwardReferences(top:topCount:objects:objectCount:shapeValueCounts:numbering:)``
    /// rewrites it to the index `indexOfDiscovery` gives.
    struct ForwardNumbering: ObjectIndexMapping {
        /// Above every real index (an archive of 2^48 objects would need petabytes), and small
        /// enough that `base + discovery` and the ZigZag delta of a packed array entry (§6.5)
        /// cannot overflow.
        static let base = 1 << 48
        /// Each object's index, by discovery number.
        let indexOfDiscovery: [Int]

        func newIndex(of old: Int) -> Int {
            old < Self.base ? old : indexOfDiscovery[old - Self.base]
        }
    }

    /// Copies a writer's top section and its `objectCount` records (back to back, in index
    /// order), rewriting forward references (see ``ForwardNumbering``) to real indexes.
    /// Records stay in their order: only the numbers in references change, so the result is
    /// the shortest form of the same archive (FORMAT.md §2.2).
    static func numberForwardReferences(
        top: borrowing ByteWriter,
        topCount: Int,
        objects: borrowing ByteWriter,
        objectCount: Int,
        shapeValueCounts: [Int],
        numbering: ForwardNumbering
    ) throws(GraphArchiveError) -> Result {
        // References above `objectCount` are the forward ones this renumbers.
        let scanner = ValueScanner(shapeValueCounts: shapeValueCounts, objectCount: Int.max, maximumDepth: Int.max)
        var translator = Translator(mapping: numbering, reservingCapacity: objects.count)
        try objects.withReader { (reader: inout ByteReader) throws(GraphArchiveError) in
            for _ in 0..<objectCount {
                try scanner.walkRecord(&reader, depth: 0, &translator)
            }
        }
        let newObjects = translator.takeOutput()
        let newTop = try translator.copyTopSection(top, count: topCount, scanner: scanner)
        return Result(
            top: newTop,
            objects: newObjects,
            objectCount: objectCount,
            referenceCount: translator.referenceCount
        )
    }
}
