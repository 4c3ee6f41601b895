// Sources/GraphArchive/Archiving/ObjectOrdering.swift - puts objects in construction order (FORMAT.md §5.4)

/// Renumbers objects so that each one comes after everything it refers to, except through
/// back links (see ``ReferenceGraph``), and drops conditional-only objects.
///
/// Bodies are written in discovery order, which is already such an order for flat collections
/// (the common case, which skips this pass). Deeper graphs, cycles and conditional references
/// come here: the order is worked out from the references bodies made (no recursion), then
/// every body is copied once with its references translated. Graphs whose bodies refer only to
/// objects met after them (chains, trees without back links) need no working out: their order
/// is the reverse of the numbering.
///
/// Bodies already compressed into blocks (`bodiesInBlocks`, FORMAT.md §5.6) keep their numbers:
/// they were in construction order, so each refers only to bodies before it, all of which have
/// one, and the DFS, starting from the bodies in written order, would number them 0, 1, 2, ...
/// anyway. The pass orders the bodies after them.
enum ObjectOrdering {
    struct Result: ~Copyable {
        var top: ByteWriter
        var objects: ByteWriter
        var objectCount: Int
        var referenceCount: Int
    }

    /// Orders the `objectCount` objects `state` numbered (its identity table may be gone);
    /// `roomBefore`: about what the archive puts before the object section (header, tables, top
    /// section), room a chain's copy keeps for it (see `StoredArchive.joinedInPlace()`).
    static func reorder(
        state: borrowing EncodingState,
        objectCount count: Int,
        top: borrowing ByteWriter,
        objects: borrowing ByteWriter,
        roomBefore: Int = 0
    ) throws(GraphArchiveError) -> Result {
        let fixed = state.bodiesInBlocks
        let scanner = ValueScanner(
            shapeValueCounts: state.shapes.map(\.keyIDs.count),
            objectCount: count,
            maximumDepth: Int.max
        )
        if state.bodyReferencesPointForward && state.bodyOwner.isEmpty && state.bodyCount == count {
            return try reverse(state: state, top: top, objects: objects, scanner: scanner, roomBefore: roomBefore)
        }
        if state.bodyOwner.isEmpty && state.bodyCount == count {
            return try reorderInIndexOrder(state: state, top: top, objects: objects, scanner: scanner)
        }
        // Each body's object, edges and start (see `bodyStarts`).
        var bodyStart = [Int](repeating: -1, count: count)
        var edgeRange = [Range<Int>](repeating: 0..<0, count: count)
        var bodyOwners: [Int] = []
        bodyOwners.reserveCapacity(state.bodyCount - fixed)
        for position in fixed..<state.bodyCount {
            let owner = state.owner(ofBody: position)
            bodyOwners.append(owner)
            edgeRange[owner] = state.edgeRange(ofBody: position)
        }
        try withBodyStarts(state: state, objects: objects, scanner: scanner) { starts in
            for (owner, start) in zip(bodyOwners, starts) { bodyStart[owner] = start }
        }

        var isNode = [Bool](repeating: false, count: count)
        for object in bodyOwners { isNode[object] = true }
        return try state.withEdges { (edges, places) throws(GraphArchiveError) -> Result in
            let ranges = ListedReferenceRanges(ranges: edgeRange)
            let graph = ReferenceGraph(edges: edges, edgeRange: ranges, nodes: ReferenceGraphNodes(listed: isNode))
            let order = try constructionOrder(of: graph, roots: bodyOwners, state: state, objects: objects) {
                bodyStart
            }
            // Bodies lie back to back in written order: each ends where the next one starts.
            var bodyEnd = [Int](repeating: objects.count, count: places == nil ? 0 : count)
            if places != nil {
                for (owner, next) in zip(bodyOwners, bodyOwners.dropFirst()) { bodyEnd[owner] = bodyStart[next] }
            }
            let bodies = Bodies(edges: edges, places: places, references: ranges, objectCount: count, scanner: scanner)
            return try order.withView { (order) throws(GraphArchiveError) -> Result in
                try bodies.renumbered(order, fixed: fixed, top: top, objects: objects, state: state) {
                    bodyStart[$0]..<bodyEnd[$0]
                } startTable: {
                    bodyStart
                }
            }
        }
    }

    /// ``reorder(state:objectCount:top:objects:)`` for bodies written in index order, one for every
    /// object (a tree with parent links, most graphs with back links): body `i` is object `i`'s,
    /// so the recorded starts serve as they are, each body ending where the next starts, and no
    /// table of owners, starts, ends or reference ranges is made (four arrays of the object
    /// count, filled and read).
    private static func reorderInIndexOrder(
        state: borrowing EncodingState,
        top: borrowing ByteWriter,
        objects: borrowing ByteWriter,
        scanner: ValueScanner
    ) throws(GraphArchiveError) -> Result {
        let count = state.bodyCount
        let fixed = state.bodiesInBlocks
        var ordered: Result?
        try withBodyStarts(state: state, objects: objects, scanner: scanner) { (starts) throws(GraphArchiveError) in
            let objectsEnd = objects.count
            ordered = try state.withEdges { (edges, places) throws(GraphArchiveError) -> Result in
                try state.edgeStart.withView { (edgeStarts) throws(GraphArchiveError) -> Result in
                    // Body `i` is object `i`'s: its references are those `edgeRange(ofBody:)` gives.
                    let ranges = WrittenReferenceRanges(starts: edgeStarts, objects: count, edgeCount: edges.count)
                    let nodes = ReferenceGraphNodes(from: fixed, count: count)
                    let graph = ReferenceGraph(edges: edges, edgeRange: ranges, nodes: nodes)
                    let order = try constructionOrder(of: graph, roots: fixed..<count, state: state, objects: objects) {
                        [Int](repeating: -1, count: fixed) + starts
                    }
                    let bodies = Bodies(
                        edges: edges,
                        places: places,
                        references: ranges,
                        objectCount: count,
                        scanner: scanner
                    )
                    return try order.withView { (order) throws(GraphArchiveError) -> Result in
                        try bodies.renumbered(order, fixed: fixed, top: top, objects: objects, state: state) {
                            starts[$0 - fixed]..<($0 + 1 < count ? starts[$0 + 1 - fixed] : objectsEnd)
                        } startTable: {
                            [Int](repeating: -1, count: fixed) + starts
                        }
                    }
                }
            }
        }
        guard let ordered = ordered.take() else { preconditionFailure("the body starts were not given") }
        return ordered
    }

    /// The construction order of `graph` from `roots`, or the error naming the cycle of plain
    /// references that has none (`bodyStart`: where each object's body starts, to read it).
    private static func constructionOrder<Ranges: ReferenceRanges>(
        of graph: ReferenceGraph<Ranges>,
        roots: some Collection<Int>,
        state: borrowing EncodingState,
        objects: borrowing ByteWriter,
        bodyStart: () -> [Int]
    ) throws(GraphArchiveError) -> GrowableBuffer<Int> {
        do throws(UnmarkedCycle) {
            return try graph.constructionOrder(roots: roots)
        } catch {
            throw unmarkedCycleError(error, in: graph, state: state, objects: objects, bodyStart: bodyStart())
        }
    }

    /// The bodies written, as the reordering copies them: the references each made
    /// (`edges[references[o]]` for object `o`) and, while noted, their places.
    private struct Bodies<Ranges: ReferenceRanges> {
        let edges: BufferView<Int>
        let places: BufferView<ReferencePlace>?
        let references: Ranges
        /// Objects numbered, those without a body included.
        let objectCount: Int
        let scanner: ValueScanner

        /// Numbers the objects of `order` after the `fixed` ones and returns the payload: their
        /// bodies (object `o`'s at `body(o)` of `objects`; `startTable()`, where each starts by
        /// object, for a copy that reads the values) copied in that order, renumbered, and the
        /// top section renumbered alike. Inlined, so that `body` is too.
        @inline(__always)
        func renumbered(
            _ order: BufferView<Int>,
            fixed: Int,
            top: borrowing ByteWriter,
            objects: borrowing ByteWriter,
            state: borrowing EncodingState,
            at body: (_ object: Int) -> Range<Int>,
            startTable: () -> [Int]
        ) throws(GraphArchiveError) -> Result {
            var newIndex = [Int](repeating: -1, count: objectCount)
            for object in 0..<fixed { newIndex[object] = object }
            for (position, object) in order.enumerated() { newIndex[object] = fixed + position }
            let mapping = Reordering(newIndex: newIndex)
            var newObjects = ByteWriter(reservingMapped: objects.count)
            var bodyReferences = 0
            if let places {
                let copier = BodyCopier(edges: edges, places: places, mapping: mapping)
                for object in order {
                    bodyReferences += copier.copy(
                        body(object),
                        references: references[object],
                        of: objects,
                        into: &newObjects
                    )
                }
            } else {
                bodyReferences = try Translator.copyBodies(
                    order,
                    at: startTable(),
                    of: objects,
                    scanner: scanner,
                    mapping: mapping,
                    into: &newObjects
                )
            }
            return try ObjectOrdering.result(
                objects: newObjects,
                count: fixed + order.count,
                bodyReferences: bodyReferences,
                top: top,
                state: state,
                scanner: scanner,
                mapping: mapping
            )
        }
    }

    /// The ordered payload of `objects`, bodies copied in their new order holding
    /// `bodyReferences` references, and of the top section `top`, copied through `mapping`.
    private static func result<Mapping: ObjectIndexMapping>(
        objects: consuming ByteWriter,
        count: Int,
        bodyReferences: Int,
        top: borrowing ByteWriter,
        state: borrowing EncodingState,
        scanner: ValueScanner,
        mapping: Mapping
    ) throws(GraphArchiveError) -> Result {
        var topReferences = 0
        let newTop = try Translator.copyTopSection(
            top,
            count: state.topCount,
            scanner: scanner,
            mapping: mapping,
            references: &topReferences
        )
        return Result(
            top: newTop,
            objects: objects,
            objectCount: count,
            referenceCount: bodyReferences + topReferences
        )
    }

    /// The construction order of a graph whose bodies refer only to objects numbered after
    /// their own, every one with a body written in index order (a chain, a tree without back
    /// links): the bodies after the fixed ones (`bodiesInBlocks`, which then refer to nothing)
    /// last to first. No reference points forward in it, and no order needs working out: each
    /// body is copied once, its references renumbered.
    private static func reverse(
        state: borrowing EncodingState,
        top: borrowing ByteWriter,
        objects: borrowing ByteWriter,
        scanner: ValueScanner,
        roomBefore: Int
    ) throws(GraphArchiveError) -> Result {
        let fixed = state.bodiesInBlocks
        let mapping = Reversal(fixed: fixed, count: state.bodyCount)
        // A chain's copy is no longer than the bodies (its references' new indexes are the old
        // ones less one): room for them, a body's spare bytes and what goes before the section,
        // so that neither the last body copied nor the archive's join doubles a buffer of the
        // whole section (a copy of it, or a move to 64 MiB).
        var newObjects = ByteWriter(reservingMapped: objects.count + roomBefore + 64)
        var bodyReferences = 0
        try withBodyStarts(state: state, objects: objects, scanner: scanner) {
            (starts) throws(GraphArchiveError) in
            try state.withEdges { (edges, places) throws(GraphArchiveError) in
                if let places {
                    let copier = BodyCopier(edges: edges, places: places, mapping: mapping)
                    // Every body but the last made exactly one reference, its position's (see
                    // `EncodingState.edges`): a chain, whose links take the short way.
                    let oneEach = state.edgeStart.isEmpty && !edges.isEmpty
                    var end = objects.count
                    var position = state.bodyCount
                    while position > fixed {
                        if oneEach && position < state.bodyCount {
                            let first = newObjects.writeLinksReversed(
                                fixed..<position,
                                of: objects,
                                starts: starts,
                                end: end,
                                edges: edges,
                                places: places,
                                mapping: mapping
                            )
                            if first < position {
                                bodyReferences &+= position &- first
                                position = first
                                end = starts[first - fixed]
                                continue
                            }
                        }
                        position -= 1
                        let start = starts[position - fixed]
                        bodyReferences += copier.copy(
                            start..<end,
                            references: state.edgeRange(ofBody: position),
                            of: objects,
                            into: &newObjects
                        )
                        end = start
                    }
                } else {
                    // Bodies are indexed by object here, which is their position (written in order).
                    bodyReferences = try Translator.copyBodies(
                        Array((fixed..<state.bodyCount).reversed()),
                        at: [Int](repeating: 0, count: fixed) + starts,
                        of: objects,
                        scanner: scanner,
                        mapping: mapping,
                        into: &newObjects
                    )
                }
            }
        }
        return try result(
            objects: newObjects,
            count: state.bodyCount,
            bodyReferences: bodyReferences,
            top: top,
            state: state,
            scanner: scanner,
            mapping: mapping
        )
    }

    /// Calls `body` with where each body after the fixed ones starts in `objects`, in written
    /// order (they lie there back to back from offset 0): recorded from the first body out of
    /// construction order on, found by scanning before it.
    private static func withBodyStarts(
        state: borrowing EncodingState,
        objects: borrowing ByteWriter,
        scanner: ValueScanner,
        _ body: (BufferView<Int>) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        let fixed = state.bodiesInBlocks
        let firstTracked = state.firstTrackedBody >= 0 ? state.firstTrackedBody : state.bodyCount
        guard firstTracked > fixed else {
            try state.trackedBodyStarts.withView(body)
            return
        }
        var starts = GrowableBuffer<Int>(capacity: state.bodyCount - fixed)
        try objects.withReader { (reader: inout ByteReader) throws(GraphArchiveError) in
            for _ in fixed..<firstTracked {
                starts.append(reader.offset)
                try scanner.skipRecord(&reader, depth: 0)
            }
        }
        state.trackedBodyStarts.withView { tracked in
            for start in tracked { starts.append(start) }
        }
        try starts.withView(body)
    }

    /// Numbers the objects from `fixed` on last to first (see
    /// ``reverse(state:top:objects:scanner:roomBefore:)``).
    struct Reversal: ObjectIndexMapping {
        let fixed: Int
        let count: Int

        @inline(__always)
        func newIndex(of old: Int) -> Int { old < fixed ? old : count &- 1 &- old &+ fixed }
    }

    /// Copies bodies, renumbering their references where the encoder noted them
    /// (``ReferencePlace``): the bytes between references are copied as they are, unread.
    struct BodyCopier<Mapping: ObjectIndexMapping> {
        let edges: BufferView<Int>
        let places: BufferView<ReferencePlace>
        let mapping: Mapping

        /// Copies the body at `body` of `objects`, whose references are `edges[references]`,
        /// and returns how many references it holds now (one without a body, a
        /// conditional-only object, is nil).
        @inline(__always)
        func copy(
            _ body: Range<Int>,
            references: Range<Int>,
            of objects: borrowing ByteWriter,
            into writer: inout ByteWriter
        ) -> Int {
            // One check of the range; the loop then reads both lists unchecked.
            precondition(
                references.lowerBound >= 0 && references.upperBound <= edges.count
                    && references.upperBound <= places.count
            )
            var copied = body.lowerBound
            var previous = -1
            var count = 0
            for edge in references {
                let place = places.element(checkedAt: edge)
                let start = body.lowerBound + place.offset
                let old = ReferenceEdge.target(of: edges.element(checkedAt: edge))
                let index = mapping.newIndex(of: old)
                switch place.kind {
                case .tagged:
                    if index >= 0 {
                        writer.writeBytes(
                            of: objects,
                            in: copied..<start,
                            thenTag: ValueTag.objectReference,
                            varint: UInt64(index)
                        )
                        count += 1
                    } else {
                        writer.writeBytes(of: objects, in: copied..<start)
                        count += ObjectOrdering.writeReference(to: index, into: &writer)
                    }
                    copied = ByteWriter.endOfTaggedReference(at: start, to: old, within: body.upperBound)
                    assert(copied == objects.endOfVarint(at: start + 1), "the varint holds the reference's index")
                case .firstInArray, .inArray:
                    if place.kind == .firstInArray { previous = -1 }
                    writer.writeBytes(
                        of: objects,
                        in: copied..<start,
                        thenTag: nil,
                        varint: ByteWriter.referenceDelta(to: index, from: previous)
                    )
                    copied = objects.endOfVarint(at: start)
                    previous = index
                    count += 1
                }
            }
            writer.writeBytes(of: objects, in: copied..<body.upperBound)
            return count
        }
    }

    /// Writes a reference to the object now numbered `index`, or nil for -1 (an object without
    /// a body); returns the references written (1, or 0 for nil).
    @inline(__always)
    static func writeReference(to index: Int, into writer: inout ByteWriter) -> Int {
        guard index >= 0 else {
            writer.writeByte(ValueTag.null)
            return 0
        }
        writer.writeByte(ValueTag.objectReference)
        writer.writeVarint(index)
        return 1
    }

    /// The new index of each object, by old index; -1 for an object without a body (a
    /// conditional-only one), whose references become nil.
    struct Reordering: ObjectIndexMapping {
        let newIndex: [Int]

        @inline(__always)
        func newIndex(of old: Int) -> Int { newIndex[old] }
    }

    /// Copies the values it visits to its output, rewriting object indexes through `mapping`
    /// (-1: no body, becomes nil).
    struct Translator<Mapping: ObjectIndexMapping>: TaggedValueVisitor, ~Copyable {
        let mapping: Mapping
        private var output: ByteWriter
        private(set) var referenceCount = 0
        /// The new index of the previous entry of the reference array being copied.
        private var previousEntry = -1

        init(mapping: Mapping, reservingCapacity capacity: Int) {
            self.mapping = mapping
            output = ByteWriter(reservingCapacity: capacity)
        }

        /// What was copied so far; the output starts again empty.
        mutating func takeOutput(reservingCapacity capacity: Int = 0) -> ByteWriter {
            var taken = ByteWriter(reservingCapacity: capacity)
            swap(&taken, &output)
            return taken
        }

        /// Copies the bodies of `objects` at `starts[object]` of each object of `order`, in that
        /// order, to `writer`; returns how many references they hold now.
        @inline(never)
        static func copyBodies(
            _ order: some Sequence<Int>,
            at starts: [Int],
            of objects: borrowing ByteWriter,
            scanner: ValueScanner,
            mapping: Mapping,
            into writer: inout ByteWriter
        ) throws(GraphArchiveError) -> Int {
            var translator = Translator(mapping: mapping, reservingCapacity: 0)
            swap(&translator.output, &writer)
            defer { swap(&translator.output, &writer) }
            try objects.withReader { (reader: inout ByteReader) throws(GraphArchiveError) in
                for object in order {
                    reader.offset = starts[object]
                    try scanner.walkRecord(&reader, depth: 0, &translator)
                }
            }
            return translator.referenceCount
        }

        /// Copies a top section (see ``copyTopSection(_:count:scanner:)``), adding the references
        /// it holds to `references`.
        @inline(never)
        static func copyTopSection(
            _ top: borrowing ByteWriter,
            count: Int,
            scanner: ValueScanner,
            mapping: Mapping,
            references: inout Int
        ) throws(GraphArchiveError) -> ByteWriter {
            var translator = Translator(mapping: mapping, reservingCapacity: 0)
            let section = try translator.copyTopSection(top, count: count, scanner: scanner)
            references += translator.referenceCount
            return section
        }

        /// Copies a top section of `count` entries (key id, then a value, FORMAT.md §4.4) to an
        /// output of its own, and returns it (an output not taken before is dropped).
        mutating func copyTopSection(
            _ top: borrowing ByteWriter,
            count: Int,
            scanner: ValueScanner
        ) throws(GraphArchiveError) -> ByteWriter {
            output = ByteWriter(reservingCapacity: top.count)
            try top.withReader { (reader: inout ByteReader) throws(GraphArchiveError) in
                for _ in 0..<count {
                    output.writeVarint(try reader.readVarint())
                    try scanner.walkValue(&reader, depth: 0, &self)
                }
            }
            return takeOutput()
        }

        @inline(__always)
        mutating func scalar(at start: Int, payload: Int, in reader: ByteReader) {
            reader.copyPassed(from: start, into: &output)
        }

        @inline(__always)
        mutating func reference(_ index: Int, at start: Int) {
            referenceCount += ObjectOrdering.writeReference(to: mapping.newIndex(of: index), into: &output)
        }

        @inline(__always)
        mutating func beginReferenceArray(count: Int, at start: Int, in reader: ByteReader) {
            output.writeByte(ValueTag.referenceArray)
            output.writeVarint(count)
            previousEntry = -1
        }

        @inline(__always)
        mutating func referenceArrayEntry(_ index: Int, at offset: Int) {
            let index = mapping.newIndex(of: index)
            output.writeReferenceDelta(to: index, from: previousEntry)
            previousEntry = index
            referenceCount += 1
        }

        @inline(__always)
        mutating func begin(_ container: TaggedContainer, at start: Int) {
            switch container {
            case .array(let count):
                output.writeByte(ValueTag.array)
                output.writeVarint(count)
            case .dictionary(let count):
                output.writeByte(ValueTag.dictionary)
                output.writeVarint(count)
            case .record(let shape, let nested):
                if nested { output.writeByte(ValueTag.valueRecord) }
                output.writeVarint(shape)
            }
        }
    }
}

/// How ``ObjectOrdering/Translator`` renumbers the objects a copied value refers to.
protocol ObjectIndexMapping {
    /// The index written for a reference to `old`; -1 writes nil instead of the reference.
    func newIndex(of old: Int) -> Int
}
