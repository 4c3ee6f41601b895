// Sources/GraphArchive/Codable/CodableDecodingState.swift - the state of one archive being read into Decodable values
//
// Decoding is statically typed: no registry is needed, because the caller names every type.
// Objects are therefore built on first reference, not up front: the record of object i is
// located by index (offsets are learned as records are read, and found by a forward scan when
// a reference jumps ahead), built with the type that reference asks for, and cached by index
// so that every later reference returns the same instance.

/// Where a value to decode is.
struct CodableValueSource {
    /// Offset of the value's tag; for an object's body, of its first value (after the shape).
    var offset: Int
    /// For an object's body, its index (else -1) and shape.
    var objectIndex = -1
    var shape = 0
    /// For an element of a packed reference array, the object it refers to (else -1): no tag.
    var referenceElement = -1
}

/// One container handed to a `Decodable` initializer, or a value not yet asked for one (a slot).
struct CodableDecodingFrame {
    enum Kind: UInt8 { case pending, keyed, unkeyed, single }

    var kind = Kind.pending
    let serial: Int
    let parent: Int
    let step: CodingPathStep
    let source: CodableValueSource
    /// For a value slot, the slot that was current before it; `notASlot` otherwise.
    let enclosingSlot: Int
    static let notASlot = -2

    /// Keyed containers: read with the engine's own key lookup (in order, or by search).
    var record = DecodingContainer(kind: .record)

    // Unkeyed containers.
    var count = 0
    var index = 0
    var cursor = 0
    var packed = false
    var previousReference = -1

    /// Where the value ends, once a container has read it to its end (-1 until then).
    var end = -1
}

extension CodableDecodingFrame {
    /// A slot whose keyed container, once opened, reads `record`.
    init(
        serial: Int,
        parent: Int,
        step: CodingPathStep,
        source: CodableValueSource,
        enclosingSlot: Int,
        record: DecodingContainer
    ) {
        self.init(serial: serial, parent: parent, step: step, source: source, enclosingSlot: enclosingSlot)
        self.record = record
    }
}

extension DecodingContainer {
    /// Sets up this keyed container (as made, `kind` `.record`) for a record of `shape` whose
    /// values start at `start`. Field by field: the rest keep the values of a container not
    /// read yet.
    @inline(__always)
    mutating func open(shape: Int, keyStart: Int, keyCount: Int, start: Int, objectIndex: Int) {
        self.shape = shape
        self.keyStart = keyStart
        self.keyCount = keyCount
        // Value 0 next, as `DecodingState.openRecord` has it: `locate`, which this record's
        // reads turn to for a key not next, tests the key of `expectedSlot` first.
        firstSlot = Self.firstSlot(keyStart: keyStart, shape: shape)
        expectedSlot = firstSlot
        cursor = start
        valueStart = start
        self.objectIndex = objectIndex
    }
}

/// What the Codable decoder learned of an object record's shape: where its keys are and, once
/// known, what an instance of the class built for it costs and which class that is.
struct KnownObjectShape {
    var shape = -1
    var keyStart = 0
    var keyCount = 0
    var instanceCost = 0
    var type: ObjectIdentifier?
}

// Each change of a frame in `frames` is one access (one uniqueness check of the array, which
// callgrind counted about 19 times per decoded object when every field was set on its own).
extension CodableDecodingFrame {
    /// Sets up the keyed container of a record of `shape` whose values start at `start`.
    mutating func openRecord(shape: Int, keyStart: Int, keyCount: Int, start: Int, objectIndex: Int) {
        record.open(shape: shape, keyStart: keyStart, keyCount: keyCount, start: start, objectIndex: objectIndex)
    }

    /// The keyed value being read ends at `offset`.
    mutating func finishValue(endingAt offset: Int) {
        let position = record.current + 1
        record.position = position
        record.cursor = offset
        if position == record.keyCount { end = offset }
    }

    /// The element being read ends at `next`; `reference` is its object index, or -1.
    mutating func finishElement(next: Int, reference: Int) {
        index += 1
        cursor = next
        if reference >= 0 { previousReference = reference }
        if index == count { end = next }
    }
}

/// The references of a packed array being decoded, read a batch at a time and once, for both
/// the prefetch of their objects and the decoding of their elements: handed out one by one by
/// `CodableDecodingState.nextReference(in:)`.
struct PackedReferenceBatch {
    /// One value per reference. Inline, so that a batch lives on its loop's stack: an array of
    /// a few elements (an object's field) allocates nothing for it.
    typealias Slots = ReferenceLookAhead.Slots
    /// The object index of each reference of the batch, and where each one ends (where the
    /// next starts).
    var indexes = Slots(repeating: 0)
    var ends = Slots(repeating: 0)
    var count = 0
    /// The batch's next reference to hand out.
    var slot = 0
    /// The element of the reference handed out last, or of the one that could not be read.
    private(set) var position: Int
    let elementCount: Int
    /// Where the reference after the batch starts, and the object the batch's last refers to.
    var cursor: Int
    var previous: Int
    /// Why the reference after the batch could not be read: thrown once the batch is used up.
    var unread: GraphArchiveError?

    /// The references of `frame`'s packed array from its next element on.
    init(_ frame: CodableDecodingFrame) {
        position = frame.index - 1
        elementCount = frame.count
        cursor = frame.cursor
        previous = frame.previousReference
    }

    /// Moves on to the next element; false past the last.
    @inline(__always)
    mutating func advance() -> Bool {
        position += 1
        return position < elementCount
    }
}

/// An assignment `decodeLater` asked for.
struct CodableDeferredAssignment {
    /// Decodes the value and assigns it; nil once run, or cancelled.
    var run: ((CodableDecoder) throws -> Void)?
    /// The object whose initializer asked (the innermost one being built), or -1.
    let owner: Int
    /// The decoder's next frame serial when it was asked for: how `cancelAssignments` tells
    /// what was asked during a construction.
    let serial: Int
}

/// Marks an object whose initializer is running: meeting it again is a cycle.
private final class ObjectUnderConstruction: Sendable {
    static let marker = ObjectUnderConstruction()
}

struct CodableDecodingState: ~Copyable {
    /// Reader, tables, limits and the tagged-value readers.
    var engine: DecodingState
    /// Start offset of each object record known so far; one past the count means the section's end.
    var objectOffsets: PlainStack<Int>
    var objects: ObjectSlots
    /// Type ids whose archived name was checked against the class asked for.
    var verifiedClasses: [ObjectIdentifier?]
    /// Per type id, what an instance of the class built for it costs the memory budget; 0 until known.
    private var instanceCosts: [Int]
    /// The shape of the last object built as its record's own class (see `knownObjectShape`).
    private var lastObjectShape = KnownObjectShape()
    let rootOffset: Int?

    var frames = PlainStack<CodableDecodingFrame>()
    /// While the root value is decoded: true until an array at the root takes it up.
    var rootMayHandOver = false
    /// The frame of the root array whose elements take the table's references, or -1.
    var handOverFrame = -1
    var currentSlot = -1
    private var slotDepth = 0
    private var nextSerial = 0
    var kinds = CodableTypeKinds()
    var keyedContainers = CodableKeyedContainerCache()
    /// What `readReferences` loaded, kept so that the loads stay.
    private(set) var prefetchSink: UInt = 0
    /// The assignments `decodeLater` asked for, run after the root value in request order.
    /// Position `i` is entry `i` of `deferredPaths`.
    var deferred: [CodableDeferredAssignment] = []
    /// Where each assignment was asked for; `current` is the one running.
    var deferredPaths = DeferredCodingPaths()

    /// Checks `bytes` (header, checksum, tables, top section) and prepares to decode.
    ///
    /// - Throws: what ``GraphUnarchiver`` throws for a damaged or unsupported archive.
    init(loaded: LoadedArchive, options: GraphUnarchiver.Options) throws(GraphArchiveError) {
        var reader = loaded.payload.reader(loaded.payloadRange)
        var memory = loaded.memory
        let tables = try ArchiveTables.parse(&reader, header: loaded.header, options: options, memory: &memory)
        let objectCount = try loaded.header.checkedObjectCount(bytesLeft: reader.remaining, options: options)
        // The object table and the offsets of the records (`objectOffsets`, `objects` below),
        // before anything is reserved.
        try memory.charge(
            MemoryBudget.table(objectCount + 1, stride: MemoryLayout<Int>.stride)
                + MemoryBudget.table(max(objectCount, 1), stride: MemoryLayout<AnyObject?>.stride),
            for: "the table of \(objectCount) objects",
            offset: 32
        )
        var state = DecodingState(
            reader: reader,
            tables: tables,
            objectCount: objectCount,
            options: options,
            memory: memory
        )
        var root: Int?
        for _ in 0..<tables.topCount {
            let offset = state.reader.offset
            if try tables.readTopKey(&state.reader) == GraphArchiver.rootKey {
                guard root == nil else {
                    throw GraphArchiveError(
                        .corrupt,
                        "top-level key \"\(GraphArchiver.rootKey)\" appears twice",
                        offset: offset
                    )
                }
                root = state.reader.offset
            }
            try state.scanner.skipValue(&state.reader)
        }
        let objectSectionStart = state.reader.offset
        state.objectSectionStart = objectSectionStart
        engine = state
        rootOffset = root
        // One entry per record plus the section's end; bounded by the input like the count itself.
        objectOffsets = PlainStack(capacity: objectCount + 1)
        objectOffsets.append(objectSectionStart)
        objects = ObjectSlots(count: objectCount, mark: ObjectUnderConstruction.marker)
        verifiedClasses = Array(repeating: nil, count: tables.typeNames.count)
        instanceCosts = Array(repeating: 0, count: tables.typeNames.count)
    }

    // MARK: - Paths

    /// The coding path of frame `frame` (for -1, the root: empty, or while a deferred
    /// assignment runs, the path where it was asked for).
    func codingPath(to frame: Int) -> [any CodingKey] {
        guard deferredPaths.current >= 0 else { return localCodingPath(to: frame) }
        return deferredPaths.prefix + localCodingPath(to: frame)
    }

    /// The coding path of frame `frame` from where the running work began: the root value, or
    /// the value a deferred assignment reads.
    func localCodingPath(to frame: Int) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var walk = frame
        while walk >= 0 && walk < frames.count {
            if let key = codingKey(for: frames[walk].step, in: frames[walk].parent) { keys.append(key) }
            walk = frames[walk].parent
        }
        return keys.reversed()
    }

    func codingPath(to frame: Int, appending key: any CodingKey) -> [any CodingKey] {
        codingPath(to: frame) + [key]
    }

    /// The key of `step` in frame `parent`.
    func codingKey(for step: CodingPathStep, in parent: Int) -> (any CodingKey)? {
        switch step.kind {
        case .none:
            return nil
        case .index:
            return GraphArchiveCodingKey(index: step.value)
        case .key:
            guard parent >= 0 && parent < frames.count else { return nil }
            let name = engine.tables.shapeKeys[frames[parent].record.keyStart + step.value]
            return GraphArchiveCodingKey(stringValue: name)
        }
    }

    // MARK: - Frames

    /// Opens a slot for a value about to be decoded by its initializer and makes it current;
    /// `record`: what its keyed container, once opened, reads, when already known (an object's).
    @inline(__always)
    mutating func pushSlot(
        _ source: CodableValueSource,
        parent: Int,
        step: CodingPathStep,
        record: DecodingContainer = DecodingContainer(kind: .record)
    ) throws(GraphArchiveError) -> Int {
        // Decoding recurses once per slot (nested values and objects), so this bounds the stack.
        guard slotDepth < engine.options.maximumDepth else { throw tooDeep(at: source.offset) }
        slotDepth += 1
        let slot = frames.count
        nextSerial &+= 1
        frames.append(
            CodableDecodingFrame(
                serial: nextSerial,
                parent: parent,
                step: step,
                source: source,
                enclosingSlot: currentSlot,
                record: record
            )
        )
        currentSlot = slot
        return slot
    }

    @inline(never)
    private func tooDeep(at offset: Int) -> GraphArchiveError {
        GraphArchiveError(
            .limitExceeded,
            "values nest deeper than maximumDepth (\(engine.options.maximumDepth))",
            offset: offset
        )
    }

    /// Ends slot `slot` and everything opened in it; returns where its value ends (found by
    /// skipping it when no container read it to the end), or -1 when `needsEnd` is false.
    @inline(__always)
    mutating func closeSlot(_ slot: Int, needsEnd: Bool = true) throws(GraphArchiveError) -> Int {
        var end = frames[slot].end
        if end < 0 && needsEnd { end = try skippedValueEnd(of: slot) }
        abandonSlot(slot)
        return end
    }

    /// Where the value of slot `slot` ends, found by skipping it: no container read it to its end.
    @inline(never)
    private func skippedValueEnd(of slot: Int) throws(GraphArchiveError) -> Int {
        let source = frames[slot].source
        var walker = engine.reader
        walker.offset = source.offset
        if source.objectIndex >= 0 {
            for _ in 0..<engine.tables.shapeKeyCount[source.shape] { try engine.scanner.skipValue(&walker) }
        } else if source.referenceElement < 0 {
            try engine.scanner.skipValue(&walker)
        }
        return walker.offset
    }

    /// Drops slot `slot` and everything opened in it, as after a thrown error.
    mutating func abandonSlot(_ slot: Int) {
        guard slot < frames.count && frames[slot].enclosingSlot != CodableDecodingFrame.notASlot else { return }
        currentSlot = frames[slot].enclosingSlot
        frames.truncate(to: slot)
        slotDepth -= 1
    }

    /// The frame of a container, checked to still belong to a value being decoded.
    @inline(__always)
    func checkFrame(_ frame: Int, serial: Int) throws(GraphArchiveError) {
        guard isUsable(frame, serial: serial) else {
            throw GraphArchiveError(
                .invalidState,
                "a decoding container was used after the value it belongs to was decoded"
            )
        }
    }

    /// Whether `frame` is open with serial `serial`: a container over it may be used.
    @inline(__always)
    func isUsable(_ frame: Int, serial: Int) -> Bool {
        frame >= 0 && frame < frames.count && frames[frame].serial == serial
    }

    /// A container of `kind` for value slot `slot`: the slot itself while it has none, else a
    /// new frame over the same value (a subclass and its superclass each ask for one).
    mutating func openContainer(_ kind: CodableDecodingFrame.Kind, slot: Int) throws(GraphArchiveError) -> Int {
        guard frames[slot].kind != .pending else {
            try open(kind, frame: slot)
            return slot
        }
        return try openContainer(
            kind,
            source: frames[slot].source,
            parent: frames[slot].parent,
            step: frames[slot].step
        )
    }

    /// Opens the keyed container of object slot `slot` if that is what it is, a slot with no
    /// container yet, in one step: the container every object's `init(from:)` asks for first.
    /// False for anything else (no slot, another kind of value, a second container), which
    /// `openContainer(_:slot:)` handles (callgrind: its layers of calls cost about 100
    /// instructions a decoded object). The slot's record is set up already (`pushObjectSlot`).
    @inline(__always)
    mutating func openObjectRecord(_ slot: Int) -> Bool {
        guard slot >= 0 && frames[slot].kind == .pending && frames[slot].source.objectIndex >= 0 else {
            return false
        }
        frames[slot].kind = .keyed
        return true
    }

    /// A new frame with a container of `kind` over `source`.
    mutating func openContainer(
        _ kind: CodableDecodingFrame.Kind,
        source: CodableValueSource,
        parent: Int,
        step: CodingPathStep
    ) throws(GraphArchiveError) -> Int {
        nextSerial &+= 1
        frames.append(
            CodableDecodingFrame(
                serial: nextSerial,
                parent: parent,
                step: step,
                source: source,
                enclosingSlot: CodableDecodingFrame.notASlot
            )
        )
        let frame = frames.count - 1
        do {
            try open(kind, frame: frame)
        } catch {
            frames.removeLast()
            throw error
        }
        return frame
    }

    private mutating func open(_ kind: CodableDecodingFrame.Kind, frame: Int) throws(GraphArchiveError) {
        switch kind {
        case .keyed:
            try openRecord(frames[frame].source, frame: frame)
        case .unkeyed:
            try openArray(frames[frame].source, frame: frame)
        case .single, .pending:
            break
        }
        frames[frame].kind = kind
    }

    private mutating func openRecord(_ source: CodableValueSource, frame: Int) throws(GraphArchiveError) {
        guard source.objectIndex < 0 else {
            startRecord(in: frame, shape: source.shape, at: source.offset, objectIndex: source.objectIndex)
            return
        }
        try expectTagged(source, "a keyed container")
        engine.reader.offset = source.offset
        guard try engine.reader.readByte() == ValueTag.valueRecord else {
            throw engine.typeMismatch(expected: "a keyed container", tagOffset: source.offset)
        }
        let shape = try engine.scanner.readShape(&engine.reader)
        startRecord(in: frame, shape: shape, at: engine.reader.offset, objectIndex: -1)
    }

    /// Points keyed `frame` at a record of `shape` whose values start at `start`.
    @inline(__always)
    private mutating func startRecord(in frame: Int, shape: Int, at start: Int, objectIndex: Int) {
        frames[frame].openRecord(
            shape: shape,
            keyStart: engine.tables.shapeKeyStart[shape],
            keyCount: engine.tables.shapeKeyCount[shape],
            start: start,
            objectIndex: objectIndex
        )
    }

    private mutating func openArray(_ source: CodableValueSource, frame: Int) throws(GraphArchiveError) {
        let offset = try taggedValueOffset(source, "an unkeyed container")
        engine.reader.offset = offset
        let tag = try engine.reader.readByte()
        guard tag == ValueTag.array || tag == ValueTag.referenceArray else {
            throw engine.typeMismatch(expected: "an unkeyed container", tagOffset: offset)
        }
        frames[frame].count = try engine.readCollectionCount(at: offset).count
        frames[frame].packed = tag == ValueTag.referenceArray
        frames[frame].cursor = engine.reader.offset
        if frames[frame].count == 0 { frames[frame].end = engine.reader.offset }
    }

    /// Where the tagged value of `source` starts; an object's body holds one under "$value"
    /// when its class encoded an unkeyed or single value.
    /// `expected` is made only for an error: a type's name made per value cost about 300
    /// instructions (callgrind).
    mutating func taggedValueOffset(
        _ source: CodableValueSource,
        _ expected: @autoclosure () -> String
    ) throws(GraphArchiveError) -> Int {
        try expectTagged(source, expected())
        guard source.objectIndex >= 0 else { return source.offset }
        let start = engine.tables.shapeKeyStart[source.shape]
        guard
            engine.tables.shapeKeyCount[source.shape] == 1
                && engine.tables.shapeKeys[start] == CodableEncodingState.valueKey
        else {
            throw GraphArchiveError(
                .typeMismatch,
                "expected \(expected()), found an object record with keys",
                offset: source.offset
            )
        }
        return source.offset
    }

    private func expectTagged(
        _ source: CodableValueSource,
        _ expected: @autoclosure () -> String
    ) throws(GraphArchiveError) {
        guard source.referenceElement < 0 else {
            throw GraphArchiveError(
                .typeMismatch,
                "expected \(expected()), found \(engine.describeObject(source.referenceElement))",
                offset: source.offset
            )
        }
    }

    // MARK: - Keyed access

    /// Positions the reader on `key`'s value in keyed `frame`; false if the record has no such key.
    @inline(__always)
    mutating func locate(_ key: String, in frame: Int) throws(GraphArchiveError) -> Bool {
        // Keys read in the order they were written: the next one is at the cursor.
        let next = nextKeySlot(in: frame)
        if next >= 0 && engine.tables.shapeKeys[next] == key {
            takeNextKey(in: frame)
            return true
        }
        return try locateElsewhere(key, in: frame)
    }

    /// The slot of `engine.tables.shapeKeys` that holds the key keyed `frame` has next in
    /// order, or -1 past its last.
    @inline(__always)
    func nextKeySlot(in frame: Int) -> Int {
        let position = frames[frame].record.position
        return position < frames[frame].record.keyCount ? frames[frame].record.keyStart + position : -1
    }

    /// Positions the reader on the value of keyed `frame`'s next key in order (`nextKeySlot`).
    @inline(__always)
    mutating func takeNextKey(in frame: Int) {
        engine.reader.offset = frames[frame].record.cursor
        frames[frame].record.current = frames[frame].record.position
    }

    /// Any other order: the engine's own search, on the frame's record.
    @inline(never)
    mutating func locateElsewhere(_ key: String, in frame: Int) throws(GraphArchiveError) -> Bool {
        swap(&engine.container, &frames[frame].record)
        defer { swap(&engine.container, &frames[frame].record) }
        return try engine.locate(key)
    }

    /// Marks the value just read in keyed `frame` as done; the reader is right after it.
    /// Inlined: every keyed value decoded ends here, and the call outweighed its few stores.
    @inline(__always)
    mutating func finishValue(in frame: Int) {
        let offset = engine.reader.offset
        frames[frame].finishValue(endingAt: offset)
    }

    /// Moves the reader past the value it is on.
    mutating func skipValue() throws(GraphArchiveError) {
        try engine.scanner.skipValue(&engine.reader)
    }

    // MARK: - Unkeyed access

    /// Reads the object index of the next element of packed unkeyed `frame`, without consuming it.
    /// (Mutating only so the caller passes the state in place: a non-mutating call through the
    /// decoder's addressor copied the whole state, 432 bytes, for every element.)
    mutating func peekReference(in frame: Int) throws(GraphArchiveError) -> (index: Int, next: Int) {
        var cursor = frames[frame].cursor
        let index = try readReference(at: &cursor, previous: frames[frame].previousReference)
        return (index, cursor)
    }

    /// Reads the object index of the packed reference at `cursor`, which follows object
    /// `previous` (-1 for the first), and moves `cursor` past it.
    @inline(__always)
    mutating func readReference(at cursor: inout Int, previous: Int) throws(GraphArchiveError) -> Int {
        var reader = engine.reader
        reader.offset = cursor
        let index = try ValueScanner.nextReferenceIndex(&reader, previous: previous)
        try engine.scanner.checkObjectIndex(UInt64(index), at: cursor)
        cursor = reader.offset
        return index
    }

    /// Counts the element just read from unkeyed `frame`, which ends at `next`.
    mutating func finishElement(in frame: Int, next: Int, reference: Int = -1) {
        frames[frame].finishElement(next: next, reference: reference)
    }

    // MARK: - Objects

    /// The object index of the next element of the packed array `batch` reads, with the reader
    /// just after its reference (where `decodeElement` leaves it, so that errors point where
    /// they do when each element reads its own reference); nil past the last element.
    ///
    /// - Throws: why its reference could not be read; `batch.position` is then its element.
    @inline(__always)
    mutating func nextReference(in batch: inout PackedReferenceBatch) throws(GraphArchiveError) -> Int? {
        let more = batch.advance()
        if batch.slot == batch.count {
            if more && batch.unread == nil { readReferences(into: &batch) }
            if batch.slot == batch.count {
                if let unread = batch.unread { throw unread }
                return nil
            }
        }
        let slot = batch.slot
        batch.slot = slot + 1
        engine.reader.offset = batch.ends[slot]
        return batch.indexes[slot]
    }

    /// Reads the next batch of references of `batch`'s array (up to `ReferenceLookAhead.count`,
    /// and no further than its last element), each checked as one by one, and loads their
    /// objects into cache together (see `touchObjects`). A reference that cannot be read ends
    /// the batch; its error is kept in `batch.unread`.
    private mutating func readReferences(into batch: inout PackedReferenceBatch) {
        let wanted = min(ReferenceLookAhead.count, batch.elementCount - batch.position)
        batch.count = 0
        batch.slot = 0
        while batch.count < wanted {
            do {
                let index = try readReference(at: &batch.cursor, previous: batch.previous)
                batch.indexes[batch.count] = index
                batch.ends[batch.count] = batch.cursor
                batch.previous = index
                batch.count += 1
            } catch {
                batch.unread = error
                break
            }
        }
        prefetchSink ^= touchObjects(batch.indexes.span, count: batch.count, in: objects)
    }

    /// Marks packed unkeyed `frame` read to its end, by `batch`.
    mutating func finishElements(in frame: Int, readBy batch: PackedReferenceBatch) {
        frames[frame].index = batch.elementCount
        frames[frame].cursor = batch.cursor
        frames[frame].previousReference = batch.previous
        frames[frame].end = batch.cursor
    }

    /// Where object `index`'s record starts, scanning forward over records not met yet.
    @inline(__always)
    mutating func locateObject(_ index: Int) throws(GraphArchiveError) -> Int {
        if index < objectOffsets.count { return objectOffsets[index] }
        return try locateObjectAhead(index)
    }

    /// Where object `index`, past those met so far, starts: found by skipping the records before it.
    @inline(never)
    private mutating func locateObjectAhead(_ index: Int) throws(GraphArchiveError) -> Int {
        var walker = engine.reader
        walker.offset = objectOffsets[objectOffsets.count - 1]
        while objectOffsets.count <= index {
            try engine.scanner.skipRecord(&walker, depth: 0)
            objectOffsets.append(walker.offset)
        }
        return objectOffsets[index]
    }

    /// Throws for object `index` if its initializer is still running: the reference is a cycle.
    func checkBuilt(_ index: Int) throws(GraphArchiveError) {
        guard !objects.isMarked(index) else {
            throw GraphArchiveError(
                .unresolvedCycle,
                "object #\(index) refers back to itself through the objects it holds: "
                    + "a reference cycle, which a plain decode cannot restore "
                    + "(decode the reference that closes it with decodeLater(_:forKey:assign:))"
            )
        }
    }

    /// Opens the slot of object `index`, whose record of `shape` (`layout`) has its values at
    /// `start`, and marks the object as being built.
    ///
    /// The slot's keyed container is set up here, for `openObjectRecord` to open (a record's
    /// fields are written once either way, as the defaults of a slot that has none).
    @inline(__always)
    mutating func pushObjectSlot(
        _ index: Int,
        layout: KnownObjectShape,
        start: Int,
        parent: Int,
        step: CodingPathStep
    ) throws(GraphArchiveError) -> Int {
        var record = DecodingContainer(kind: .record)
        record.open(
            shape: layout.shape,
            keyStart: layout.keyStart,
            keyCount: layout.keyCount,
            start: start,
            objectIndex: index
        )
        let slot = try pushSlot(
            CodableValueSource(offset: start, objectIndex: index, shape: layout.shape),
            parent: parent,
            step: step,
            record: record
        )
        objects.mark(index)
        return slot
    }

    /// Ends an object's slot and caches the object, noting where its record ended if that was
    /// not known (the next record starts there). `handingOver`: the object is an element of the
    /// root array, whose reference the table uses rather than one of its own (see `ObjectSlots`).
    mutating func closeObjectSlot(_ slot: Int, object: AnyObject, handingOver: Bool) throws(GraphArchiveError) {
        let index = frames[slot].source.objectIndex
        let needsEnd = objectOffsets.count == index + 1
        let end = try closeSlot(slot, needsEnd: needsEnd)
        objects.replaceMark(at: index, with: object, handingOver: handingOver)
        if needsEnd { objectOffsets.append(end) }
    }

    /// Lets the root value's array (decoded by `decodeArray`, over frame `frame`) take the
    /// table's reference to each object built as one of its elements: the one-call decode
    /// holds that array until it returns and runs no user code that could drop it.
    mutating func handOverElements(of frame: Int) throws(GraphArchiveError) {
        try engine.charge(
            ObjectSlots.handOverBytes(count: objects.count),
            for: "marking the objects handed to the root",
            at: engine.reader.offset
        )
        handOverFrame = frame
    }

    /// Drops an object's slot after a thrown error; the object is not built.
    mutating func abandonObjectSlot(_ slot: Int) {
        guard slot < frames.count else { return }
        let index = frames[slot].source.objectIndex
        objects[index] = nil
        if !deferred.isEmpty { cancelAssignments(of: index, since: frames[slot].serial) }
        abandonSlot(slot)
    }

    /// What an instance of `type`, built for type id `typeID`, costs the memory budget.
    @inline(__always)
    mutating func instanceCost(of typeID: Int, as type: Any.Type) -> Int {
        let known = instanceCosts[typeID]
        return known != 0 ? known : learnInstanceCost(of: typeID, as: type)
    }

    @inline(never)
    private mutating func learnInstanceCost(of typeID: Int, as type: Any.Type) -> Int {
        if let objectType = type as? AnyClass {
            instanceCosts[typeID] = MemoryBudget.instance(classInstanceSize(objectType))
        }
        return instanceCosts[typeID]
    }

    // MARK: - Deferred assignments

    /// Queues `run`, an assignment asked for in keyed frame `frame` at `localPath` (from where
    /// the running work began).
    mutating func deferAssignment(
        _ run: @escaping (CodableDecoder) throws -> Void,
        in frame: Int,
        localPath: [any CodingKey]
    ) throws(GraphArchiveError) {
        try engine.charge(MemoryBudget.deferredAssignment, for: "a deferred assignment", at: engine.reader.offset)
        var owner = frame
        while owner >= 0 && frames[owner].source.objectIndex < 0 { owner = frames[owner].parent }
        deferred.append(
            CodableDeferredAssignment(
                run: run,
                owner: owner >= 0 ? frames[owner].source.objectIndex : -1,
                serial: nextSerial
            )
        )
        _ = deferredPaths.add(localPath)
    }

    /// Cancels the assignments object `index` asked for in a construction that threw (whose
    /// slot has serial `serial`): the object does not exist, and an assignment into it would
    /// reach a freed instance through the `[unowned self]` it typically captures (an error
    /// caught with `try?` lets decoding go on). What the objects it built meanwhile asked for
    /// stays: those objects exist. Everything asked since the slot opened is at the end.
    private mutating func cancelAssignments(of index: Int, since serial: Int) {
        var position = deferred.count - 1
        while position >= 0 && deferred[position].serial >= serial {
            if deferred[position].owner == index { deferred[position].run = nil }
            position -= 1
        }
    }

    /// Reads the shape at the start of object `index`'s record, leaving the reader on its first value.
    @inline(__always)
    mutating func readObjectShape(_ index: Int) throws(GraphArchiveError) -> Int {
        engine.reader.offset = try locateObject(index)
        return try engine.scanner.readShape(&engine.reader)
    }

    /// What the last object built as exactly the class asked for showed of `shape`, if it had
    /// that shape and `type` was that class: its record's type is then an object type, `type`
    /// is its class, and no subclass stands in. An object of a large graph mostly follows one
    /// of its shape, and this skips the checks of its record's type that `objectShape` makes
    /// (four table lookups and the class's). One shape, not a table of them: nothing to charge
    /// to the memory budget.
    @inline(__always)
    func knownObjectShape(_ shape: Int, as type: ObjectIdentifier) -> KnownObjectShape? {
        lastObjectShape.shape == shape && lastObjectShape.type == type ? lastObjectShape : nil
    }

    /// Checks that object `index`'s record, of `shape`, has an object type, and returns that
    /// type's id with what `shape` holds. `instanceCost` is left 0.
    mutating func objectShape(_ index: Int, shape: Int) throws(GraphArchiveError) -> (KnownObjectShape, typeID: Int) {
        let typeID = engine.tables.shapeType[shape]
        guard engine.tables.typeIsObject[typeID] else {
            throw GraphArchiveError(
                .corrupt,
                "object #\(index) is recorded with the value type \(engine.tables.typeNames[typeID])",
                offset: objectOffsets[index]
            )
        }
        let layout = KnownObjectShape(
            shape: shape,
            keyStart: engine.tables.shapeKeyStart[shape],
            keyCount: engine.tables.shapeKeyCount[shape]
        )
        return (layout, typeID)
    }

    /// Remembers `layout` (with its instance cost) as what objects of its shape built as
    /// exactly `type` show (see `knownObjectShape`).
    mutating func remember(_ layout: KnownObjectShape, as type: ObjectIdentifier) {
        lastObjectShape = layout
        lastObjectShape.type = type
    }

    /// After the root value: checks the records nothing referred to and that nothing follows them.
    mutating func finish() throws(GraphArchiveError) {
        let end = try locateObject(engine.objectCount)
        guard end == engine.reader.end else {
            throw GraphArchiveError(.trailingGarbage, "unexpected bytes after the last object", offset: end)
        }
    }
}
