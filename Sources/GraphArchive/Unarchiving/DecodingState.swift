// Sources/GraphArchive/Unarchiving/DecodingState.swift - the mutable state of one archive being read
//
// Like EncodingState, one struct so each public `decode` call costs one access to the
// unarchiver's storage.

/// Usable from inline, with the fields the inlinable `decode` forms read (see
/// `GraphUnarchiver.decode(_:forKey:)` for `Int`).
@usableFromInline
struct DecodingContainer: BitwiseCopyable {
    enum Kind { case top, record }
    var kind: Kind
    var shape = 0
    @usableFromInline var keyStart = 0
    @usableFromInline var keyCount = 0
    /// Where the key of value `position` sits in `DecodingState.shapeKeyBits`, or, once every
    /// value was read, the slot after the record's keys, which matches no key; the top level's
    /// is slot 0, which matches none either. So a read in stored order tests its key without
    /// testing `position` against `keyCount` first.
    @usableFromInline var expectedSlot = 0
    /// The slot of value 0's key (`DecodingState.keyBitsSlot(0)`; the top level's 0, as its
    /// `expectedSlot`): `position` is kept as `expectedSlot` less it.
    var firstSlot = 0
    /// Offset of value `position`.
    @usableFromInline var cursor = 0
    /// Offset of value 0.
    var valueStart = 0
    /// Where this record's value offsets start in `DecodingState.offsets` (every value's, then
    /// the record's end), computed on the first out-of-order read; -1 until then.
    var offsetsStart = -1
    /// `position - current`, which is how `current` is kept: 1 once a value is read (or none),
    /// so that a read in stored order moves `expectedSlot` alone, not `position` and `current`
    /// beside it (callgrind: about 8 instructions a chain link less).
    @usableFromInline var currentLag = 1
    /// The object this record belongs to, or -1 for an inline value.
    var objectIndex = -1

    /// Index of the value expected next when keys are read in the order they were written.
    /// Setting it leaves `current` as it was.
    var position: Int {
        get { expectedSlot &- firstSlot }
        set {
            let current = self.current
            expectedSlot = firstSlot &+ newValue
            currentLag = newValue &- current
        }
    }

    /// Value being read (for `finishValue` and error messages), or -1 before the first.
    /// Setting it leaves `position` as it was.
    var current: Int {
        get { position &- currentLag }
        set { currentLag = position &- newValue }
    }

    /// The `firstSlot` of a record of `shape` whose keys start at `keyStart` (see
    /// `DecodingState.keyBitsSlot`), below the key table's size: where both kinds of record,
    /// the engine's and the Codable bridge's, start reading.
    @inline(__always)
    static func firstSlot(keyStart: Int, shape: Int) -> Int {
        keyStart &+ shape &+ 1
    }
}

/// Whether a decode whose object table hands each object to its first reference met an
/// object referenced again (see `DecodedObjects.handOverFirstReferences()`): the
/// one-call decode then decodes again, retaining as usual.
final class HandOverConflict {
    var happened = false
}

/// Where a shape's keys are in `ArchiveTables.shapeKeys`, and how many.
struct RecordKeys {
    var start: Int
    var count: Int
}

/// Usable from inline, with what the inlinable `decode` forms' common case reads (see
/// `GraphUnarchiver.decode(_:forKey:)` for `Int`).
@usableFromInline
struct DecodingState: ~Copyable {
    @usableFromInline var reader: ByteReader
    let tables: ArchiveTables
    let scanner: ValueScanner
    let options: GraphUnarchiver.Options
    let objectCount: Int
    @usableFromInline var objects = DecodedObjects()
    /// Set by the one-call decode once only its root value is left to read: a reference array
    /// at the top level then takes the table's references (see `DecodedObjects`).
    var handsOverObjects = false
    /// Set while `objects` hands each object to its first reference: noted there when an
    /// object is referenced again (see `checkNotTaken`).
    var handOverConflict: HandOverConflict?
    /// The packed reference array being read, its references read ahead (`readReferences`):
    /// one for the whole decode, since an array's elements are only looked up, never decoded,
    /// so no other array is read while one is.
    var referenceBatch = ReferenceBatch()
    /// What the loads of `readReferences` read, kept so they are not optimized away.
    var prefetchSink: UInt = 0
    /// True once the input, lent by a one-call decode, is gone (`closeInput`).
    private(set) var isInputClosed = false
    /// The class of each object in `objects` (see `ObjectClassTable`).
    @usableFromInline var objectClasses = ObjectClassTable()
    /// The object whose initializer runs (construction builds them in index order).
    var objectBeingBuilt = 0
    /// The `decodeLater` assignments waiting for objects still to be built (here rather than
    /// in the unarchiver, whose stored properties pay an exclusivity check per access).
    var pendingAssignments = PendingAssignments()
    @usableFromInline var container = DecodingContainer(kind: .top)
    /// The enclosing containers, innermost last (a `PlainStack`: no uniqueness check per change).
    var stack = PlainStack<DecodingContainer>()
    /// Value offsets of the open records that were read out of order, innermost last: one
    /// buffer for the whole archive, so that reading keys in another order than they were
    /// written (Foundation's keyed archives store them in hash order) allocates nothing per
    /// record. A `PlainStack`: an array checked its buffer's uniqueness at every value stored.
    var offsets = PlainStack<Int>()
    /// Entries of `offsets` in use (it keeps its size for the next record).
    var offsetsEnd = 0
    /// Top-level key → offset of its value.
    var topValues: [String: Int] = [:]
    /// Where the object table's first record starts, once known (-1 before); error messages
    /// walk it to name an object's class.
    var objectSectionStart = -1
    var currentTopKey: String?
    /// Words of the key last matched at each shape position (see `StringBits`): after one
    /// `==` match, a caller's literal key matches by identity from then on. Slot 0, then one
    /// slot after each shape's keys, hold `StringBits.none`, which no key matches (see
    /// `DecodingContainer.expectedSlot`): shape `s`'s keys start at slot `shapeKeyStart[s] + s
    /// + 1` (`keyBitsSlot`). A `PlainStack`, read without a second check of the slot where the
    /// record's own bounds have placed it (`keyBits(at:)`).
    @usableFromInline var shapeKeyBits: PlainStack<StringBits>
    /// The strings `shapeKeyBits` were taken from, kept alive.
    var matchKeys: [String]
    /// Value types checked to match their archived names, by type id.
    var verifiedValueTypes: [ObjectIdentifier?]
    /// The order initializers read records in another order than stored (keyed archives keep
    /// Foundation's hash order), learned from the last such read: per shape, the value read
    /// first, and per shape slot, the value read after it; -1 where not learned.
    var firstRead: [Int32]
    var readAfter: [Int32]
    /// Whether `firstRead` or `readAfter` learned anything: some record was read in another
    /// order than stored.
    var readRecordsOutOfOrder = false

    /// What decoding may still commit: charged before each object, string, array and
    /// dictionary is allocated (see ``MemoryBudget``).
    var memory: MemoryBudget
    /// Records before this index are wholly in the input: all of them, unless the input is a
    /// file read as it is decoded (`input`, `readRecords(from:)`).
    var recordsRead: Int
    /// The payload, while it is given back as construction passes it (a large file read as it
    /// is decoded, or a large decompressed payload); nil for one held whole or lent.
    var input: PayloadWindow?
    /// Input from this offset on is kept for values read later (deferred assignments other
    /// than nil, single references and short reference arrays, which are copied).
    var inputKeptFrom = Int.max
    /// Where deferred values copied out of such a payload are read from; nil until the first.
    var copiedValues: CopiedValueBuffer?
    /// True once input bytes of objects were given back (error paths cannot walk them).
    var objectInputDiscarded = false

    init(
        reader: ByteReader,
        tables: ArchiveTables,
        objectCount: Int,
        options: GraphUnarchiver.Options,
        memory: MemoryBudget
    ) {
        self.memory = memory
        self.recordsRead = objectCount
        self.reader = reader
        self.tables = tables
        self.objectCount = objectCount
        self.options = options
        self.scanner = ValueScanner(
            shapeValueCounts: tables.shapeKeyCount,
            objectCount: objectCount,
            maximumDepth: options.maximumDepth
        )
        self.verifiedValueTypes = Array(repeating: nil, count: tables.typeNames.count)
        self.shapeKeyBits = PlainStack(capacity: 1 + tables.shapeKeys.count + tables.shapeKeyStart.count)
        shapeKeyBits.append(.none)
        for (start, count) in zip(tables.shapeKeyStart, tables.shapeKeyCount) {
            for key in tables.shapeKeys[start..<(start + count)] { shapeKeyBits.append(StringBits(key)) }
            shapeKeyBits.append(.none)
        }
        self.matchKeys = tables.shapeKeys
        self.firstRead = Array(repeating: -1, count: tables.shapeKeyCount.count)
        self.readAfter = Array(repeating: -1, count: tables.shapeKeys.count)
    }

    /// Adds the object just built, of type id `typeID`, to the tables (`objects` charges its
    /// words to `memory` if it turns to them).
    @inline(__always)
    mutating func appendObject(_ object: consuming AnyObject, typeID: Int) throws(GraphArchiveError) {
        try objects.append(consume object, memory: &memory)
        objectClasses.append(typeID: typeID)
    }

    /// Ends reading: the bytes the reader points into are about to go (the one-call decode's
    /// lent input). Every later read throws, and none touches them.
    mutating func closeInput() {
        reader = reader.closed()
        isInputClosed = true
    }

    // MARK: - Locating keys

    /// Positions the reader on the value for `key`; false if the container has no such key.
    @inline(__always)
    mutating func locate(_ key: String) throws(GraphArchiveError) -> Bool {
        // The top level has no keys (`keyCount` 0): only a record's next value passes here,
        // without a test of the container's kind first.
        if isNextValue(key) {
            reader.offset = container.cursor
            container.currentLag = 0  // `current` is `position`
            return true
        }
        if container.kind == .record {
            // Not the next value stored: the one read next in the last record read this way?
            let predicted = Int(
                container.current < 0 ? firstRead[container.shape] : readAfter[container.keyStart + container.current]
            )
            if predicted >= 0 && shapeKeyBits[keyBitsSlot(predicted)] == StringBits(key) {
                try locateOutOfOrder(predicted)
                return true
            }
        }
        return try locateSlow(key)
    }

    /// Whether `key` is the current record's next value stored (at `container.cursor`): false
    /// at the top level and past the record's last value, whose slots match no key.
    @inlinable @inline(__always)
    func isNextValue(_ key: String) -> Bool {
        keyBits(at: container.expectedSlot) == StringBits(key)
    }

    /// Where the value for `key` starts when it is the current record's next value stored
    /// (`locate`'s first test), with its tag and the eight bytes after it
    /// (`ByteReader.peekTagAndWord`) when nine remain; nil otherwise. Changes nothing: the
    /// fast paths of `decode` start here, then read the value and `finishNextValue(end:)`, or
    /// leave it all to `locate`.
    @inlinable @inline(__always)
    func peekNextValue(forKey key: String) -> (start: Int, tag: UInt8, word: UInt64)? {
        guard isNextValue(key) else { return nil }
        var peek = reader
        peek.offset = container.cursor
        guard let (tag, word) = peek.peekTagAndWord() else { return nil }
        return (container.cursor, tag, word)
    }

    /// Finishes the record's next value stored, found by `peekNextValue(forKey:)` and read
    /// up to `end`: what `locate` and `finishValue` leave, but for the reader, which stays
    /// where it was. Only `cursor` says where the record's next value starts, and every read
    /// in a record starts from there: `locate` moves the reader there, `closeRecord` past
    /// the values not read (one store less a value, callgrind: 2 instructions a chain link).
    @inlinable @inline(__always)
    mutating func finishNextValue(end: Int) {
        // `current` becomes `position`, which moves on (below `keyCount`: its key matched).
        container.expectedSlot &+= 1
        container.currentLag = 1
        container.cursor = end
    }

    /// The words of the key at `slot` of `shapeKeyBits`, the current container's expected
    /// slot (`DecodingContainer.expectedSlot`, inside the table by construction) or the slot
    /// of one of its keys: not checked again.
    @inlinable @inline(__always)
    func keyBits(at slot: Int) -> StringBits {
        shapeKeyBits.element(checkedAt: slot)
    }

    /// Positions the reader on value `index` of the current record, which is not the next
    /// value stored.
    private mutating func locateOutOfOrder(_ index: Int) throws(GraphArchiveError) {
        try computeOffsets()
        reader.offset = offsets[container.offsetsStart + index]
        container.current = index
    }

    /// Finds `key` in the top level, or in the current record when it is not the next value
    /// stored: by the key's words first (a caller's literal keys match so after their first
    /// use), then by `==`, which learns the caller's string for the next time.
    @inline(never)
    private mutating func locateSlow(_ key: String) throws(GraphArchiveError) -> Bool {
        guard !isInputClosed else {
            throw GraphArchiveError(
                .invalidState,
                "the archive of a finished one-call decode can no longer be read (key \"\(key)\")"
            )
        }
        switch container.kind {
        case .top:
            guard let offset = topValues[key] else { return false }
            reader.offset = offset
            currentTopKey = key
            return true
        case .record:
            let bits = StringBits(key)
            let keys = container.keyStart..<(container.keyStart + container.keyCount)
            let matched = keys.first(where: { shapeKeyBits[keyBitsSlot($0 - container.keyStart)] == bits })
            guard let slot = matched ?? learnedSlot(key, in: keys) else {
                return false
            }
            let index = slot - container.keyStart
            if index == container.position {
                reader.offset = container.cursor
                container.current = index
                return true
            }
            // Learned for the next record of this shape (see `locate`).
            readRecordsOutOfOrder = true
            if container.current < 0 {
                firstRead[container.shape] = Int32(index)
            } else {
                readAfter[container.keyStart + container.current] = Int32(index)
            }
            try locateOutOfOrder(index)
            return true
        }
    }

    /// The keys of `shape` in the order its records were read, as `firstRead` and `readAfter`
    /// learned it: from the first value read, each one's successor (the next stored where
    /// nothing else was learned), up to the record's end or a value met twice. Nil if its
    /// records were read in stored order.
    func learnedReadOrder(ofShape shape: Int) -> [String]? {
        let start = tables.shapeKeyStart[shape]
        let count = tables.shapeKeyCount[shape]
        guard firstRead[shape] >= 0 || readAfter[start..<(start + count)].contains(where: { $0 >= 0 }) else {
            return nil
        }
        var order: [String] = []
        var seen = Array(repeating: false, count: count)
        var index = firstRead[shape] >= 0 ? Int(firstRead[shape]) : 0
        while index < count && !seen[index] {
            seen[index] = true
            order.append(tables.shapeKeys[start + index])
            let after = readAfter[start + index]
            index = after >= 0 ? Int(after) : index + 1
        }
        return order
    }

    /// The slot among `keys` whose key equals `key` (the next one stored first), which then
    /// holds the caller's string so that its words, and so the fast comparison, match next time.
    private mutating func learnedSlot(_ key: String, in keys: Range<Int>) -> Int? {
        let next = container.keyStart + container.position
        guard
            let slot = keys.contains(next) && matchKeys[next] == key
                ? next : keys.first(where: { matchKeys[$0] == key })
        else { return nil }
        // Hold the caller's string so its storage, and so its words, stay unique.
        matchKeys[slot] = key
        shapeKeyBits[keyBitsSlot(slot - container.keyStart)] = StringBits(key)
        return slot
    }

    /// Where the key of value `index` of the current record sits in `shapeKeyBits` (past its
    /// slot 0 and the slot after each shape before the record's).
    @inline(__always)
    func keyBitsSlot(_ index: Int) -> Int {
        container.keyStart + container.shape + 1 + index
    }

    /// Records where each value of the current record starts (one walk, once per record).
    ///
    /// They go at the end of `offsets`: anything there after an open record's entries belongs
    /// to records nested in it, which are closed (and their entries dropped) before it is.
    private mutating func computeOffsets() throws(GraphArchiveError) {
        guard container.offsetsStart < 0 else { return }
        var walker = reader
        walker.offset = container.valueStart
        let start = offsetsEnd
        let end = start + container.keyCount + 1
        if offsets.count < end { offsets.append(repeating: 0, count: end - offsets.count) }
        for index in 0..<container.keyCount {
            offsets[start &+ index] = walker.offset
            try scanner.skipValue(&walker, depth: stack.count)
        }
        offsets[start &+ container.keyCount] = walker.offset
        offsetsEnd = start + container.keyCount + 1
        container.offsetsStart = start
    }

    /// Marks the value just read as done; the reader is right after it. The top level's
    /// position and cursor are never read (it has no keys): no test of the container's kind.
    @inlinable @inline(__always)
    mutating func finishValue() {
        // `position` becomes `current + 1` (`current` is a key's index, or -1), which stays
        // `current`. The top level's stays 0: its `current` and `position` stay -1 and 0.
        container.expectedSlot = container.expectedSlot &+ 1 &- container.currentLag
        container.currentLag = 1
        container.cursor = reader.offset
    }

    func containsKey(_ key: String) -> Bool {
        switch container.kind {
        case .top:
            return topValues[key] != nil
        case .record:
            return tables.shapeKeys[container.keyStart..<(container.keyStart + container.keyCount)].contains(key)
        }
    }

    // MARK: - Records

    /// Reads a record's shape and makes it the current container.
    mutating func beginRecord(objectIndex: Int) throws(GraphArchiveError) -> Int {
        try beginNested()
        return try openRecord(objectIndex: objectIndex)
    }

    /// Moves past the values the initializer did not read (keys newer code wrote) and closes
    /// the record.
    mutating func endRecord() throws(GraphArchiveError) {
        try closeRecord()
        endNested()
    }

    /// Reads a record's shape and makes it the current container, in place of the current one
    /// (which `beginRecord`, or for the object section `beginNested`, saved).
    @inline(__always)
    mutating func openRecord(objectIndex: Int) throws(GraphArchiveError) -> Int {
        let shape = try readShape()
        openRecord(
            shape: shape,
            keys: RecordKeys(start: tables.shapeKeyStart[shape], count: tables.shapeKeyCount[shape]),
            objectIndex: objectIndex
        )
        return shape
    }

    /// Reads a record's shape id (checked against the shape table).
    ///
    /// Called on the state rather than as `state.scanner.readShape(&state.reader)`, which
    /// copied the scanner, retaining and releasing its array once per record.
    @inline(__always)
    mutating func readShape() throws(GraphArchiveError) -> Int {
        try scanner.readShape(&reader)
    }

    /// Reads a record's shape id, as `readShape()` does, with one test when it is one byte
    /// below `limit`: the table's shape count, or 128 when it has more (ids of 128 on take
    /// two bytes or more).
    @inline(__always)
    mutating func readShape(oneByteBelow limit: Int) throws(GraphArchiveError) -> Int {
        if let byte = reader.nextByte(), Int(byte) < limit {
            reader.offset &+= 1
            return Int(byte)
        }
        return try readShape()
    }

    /// Makes the record of `shape`, whose id was just read and whose keys are `keys`, the
    /// current container (see `openRecord(objectIndex:)`): for a caller that keeps each
    /// shape's keys beside what else it needs per shape, one lookup per record.
    @inline(__always)
    mutating func openRecord(shape: Int, keys: RecordKeys, objectIndex: Int) {
        let firstSlot = DecodingContainer.firstSlot(keyStart: keys.start, shape: shape)
        container = DecodingContainer(
            kind: .record,
            shape: shape,
            keyStart: keys.start,
            keyCount: keys.count,
            expectedSlot: firstSlot,
            firstSlot: firstSlot,
            cursor: reader.offset,
            valueStart: reader.offset,
            objectIndex: objectIndex
        )
    }

    /// `openRecord(shape:keys:objectIndex:)` for a record of the shape of the one just closed
    /// in the container by `closeRecord(endSlot:)`, which left it no offsets: its shape and
    /// keys stay, and only what reading it moved is set back (callgrind: 5 instructions an
    /// object of a run of one shape less).
    @inline(__always)
    mutating func reopenRecord(objectIndex: Int) {
        container.expectedSlot = container.firstSlot
        container.cursor = reader.offset
        container.valueStart = reader.offset
        container.currentLag = 1
        container.objectIndex = objectIndex
    }

    /// Moves past the values of the current record the initializer did not read.
    @inline(__always)
    mutating func closeRecord() throws(GraphArchiveError) {
        if container.position == container.keyCount {
            reader.offset = container.cursor
        } else if container.offsetsStart >= 0 {
            reader.offset = offsets[container.offsetsStart + container.keyCount]
        } else {
            reader.offset = container.cursor
            for _ in container.position..<container.keyCount {
                try scanner.skipValue(&reader, depth: stack.count)
            }
        }
        releaseOffsets()
    }

    /// `closeRecord()` for a caller that knows where the record's keys end, `endSlot` (its
    /// `firstSlot` plus its `keyCount`): a record read wholly in stored order, the common case,
    /// closes with one test of the position and one of the offsets, instead of the position
    /// worked out from two fields first (callgrind: 2 instructions an object less).
    @inline(__always)
    mutating func closeRecord(endSlot: Int) throws(GraphArchiveError) {
        guard container.expectedSlot == endSlot && container.offsetsStart < 0 else {
            try closeRecord()
            container.offsetsStart = -1  // as `reopenRecord` expects
            return
        }
        reader.offset = container.cursor
    }

    /// Gives the offsets table's slots that the current record took (`computeOffsets`) back
    /// for the next record to take.
    @inline(__always)
    private mutating func releaseOffsets() {
        if container.offsetsStart >= 0 { offsetsEnd = container.offsetsStart }
    }

    mutating func beginNested() throws(GraphArchiveError) {
        guard stack.count < options.maximumDepth else {
            throw GraphArchiveError(
                .limitExceeded,
                "values nest deeper than maximumDepth (\(options.maximumDepth))",
                offset: reader.offset,
                keyPath: keyPath()
            )
        }
        stack.append(container)
    }

    mutating func endNested() {
        container = stack.removeLast()
    }

    /// Closes, after an error, every container a nested read opened since the stack was
    /// `depth` deep, so that a caller who catches the error reads on in its own container (an
    /// initializer falling back to a default when a nested value cannot be read). Without
    /// this, the next key was looked up in the failed value's record: a wrong error, or that
    /// record's value for a key of the same name.
    mutating func unwind(toDepth depth: Int) {
        while stack.count > depth {
            releaseOffsets()
            container = stack.removeLast()
        }
    }

    // MARK: - Errors

    /// Where the value being decoded sits, e.g. `["root", "GridState#12", "kEncodeKeyName"]`.
    func keyPath() -> [String] {
        var path: [String] = []
        for level in (0..<stack.count).map({ stack[$0] }) + [container] {
            switch level.kind {
            case .top:
                if let currentTopKey { path.append(currentTopKey) }
            case .record:
                let type = tables.typeNames[tables.shapeType[level.shape]]
                path.append(level.objectIndex >= 0 ? "\(type)#\(level.objectIndex)" : type)
                if level.current >= 0 { path.append(tables.shapeKeys[level.keyStart + level.current]) }
            }
        }
        return path
    }

    /// The key path of one value of a record, e.g. `["Node#12", "parent"]`.
    func recordPath(shape: Int, objectIndex: Int, key: Int) -> [String] {
        guard shape >= 0 && shape < tables.shapeType.count else { return [] }
        let type = tables.typeNames[tables.shapeType[shape]]
        var path = [objectIndex >= 0 ? "\(type)#\(objectIndex)" : type]
        if key >= 0 && key < tables.shapeKeyCount[shape] {
            path.append(tables.shapeKeys[tables.shapeKeyStart[shape] + key])
        }
        return path
    }

    @inline(never)
    func typeMismatch(expected: String, tagOffset: Int) -> GraphArchiveError {
        let found = describeValue(at: tagOffset) ?? "nothing"
        return GraphArchiveError(
            .typeMismatch,
            "expected \(expected), found \(found)",
            offset: tagOffset,
            keyPath: keyPath()
        )
    }

    @inline(never)
    func keyNotFound(_ key: String, expected: String) -> GraphArchiveError {
        var path = keyPath()
        path.append(key)
        let owner: String
        switch container.kind {
        case .top: owner = "the archive's top level"
        case .record: owner = tables.typeNames[tables.shapeType[container.shape]]
        }
        return GraphArchiveError(.keyNotFound, "no value for key \"\(key)\" (\(expected)) in \(owner)", keyPath: path)
    }
}
