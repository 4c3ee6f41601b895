// Sources/GraphArchive/Unarchiving/DecodingState+Values.swift - tagged value readers (FORMAT.md §6)

extension DecodingState {
    @inline(__always)
    mutating func readNilIfPresent() throws(GraphArchiveError) -> Bool {
        if try reader.peekByte() == ValueTag.null {
            reader.offset += 1
            return true
        }
        return false
    }

    @inline(__always)
    mutating func readBool() throws(GraphArchiveError) -> Bool {
        let start = reader.offset
        switch try reader.readByte() {
        case ValueTag.trueValue: return true
        case ValueTag.falseValue: return false
        default: throw typeMismatch(expected: "Bool", tagOffset: start)
        }
    }

    @inline(__always)
    mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws(GraphArchiveError) -> T {
        let start = reader.offset
        // With nine bytes left, the tag and its number are read with one check of the input's
        // end, not three (callgrind: about 7 instructions an integer less).
        let peeked = reader.peekTagAndWord()
        let tag: UInt8
        if let peeked {
            tag = peeked.tag
            reader.offset &+= 1
        } else {
            tag = try reader.readByte()
        }
        if tag >= ValueTag.smallIntegerBase && tag < ValueTag.shortStringBase {
            // 0...63 fits every integer type.
            return T(truncatingIfNeeded: tag &- ValueTag.smallIntegerBase)
        }
        guard tag >= ValueTag.unsignedBase && tag < ValueTag.negativeBase + 8 else {
            throw typeMismatch(expected: String(describing: T.self), tagOffset: start)
        }
        let width = Int(tag & 7) &+ 1
        let magnitude: UInt64
        if let peeked {
            magnitude = ByteReader.littleEndian(peeked.word, width: width)
            reader.offset &+= width
        } else {
            magnitude = try reader.readLittleEndian(width: width)
        }
        if tag < ValueTag.negativeBase {
            guard let value = T(exactly: magnitude) else { throw outOfRange(T.self, "\(magnitude)", start) }
            return value
        }
        // Stored ~value; the value fits T when the magnitude is at most T.max.
        guard T.isSigned, magnitude <= UInt64(T.max) else {
            throw outOfRange(T.self, "-\(magnitude)-1", start)
        }
        return T(truncatingIfNeeded: ~magnitude)
    }

    /// The value for `key` when it is the record's next value stored and an integer that fits
    /// `Int` within the input's next nine bytes, read and finished as `locate`, `readInteger`
    /// and `finishValue` would; nil, with nothing changed, for anything else, which the caller
    /// then reads their way (for its errors).
    @inlinable @inline(__always)
    mutating func nextInteger(forKey key: String) -> Int? {
        guard let (start, tag, word) = peekNextValue(forKey: key) else { return nil }
        let value: Int
        var end = start &+ 1
        if tag >= ValueTag.smallIntegerBase && tag < ValueTag.shortStringBase {
            value = Int(tag &- ValueTag.smallIntegerBase)
        } else if tag >= ValueTag.unsignedBase && tag < ValueTag.negativeBase + 8 {
            let width = Int(tag & 7) &+ 1
            let magnitude = ByteReader.littleEndian(word, width: width)
            guard magnitude <= UInt64(Int.max) else { return nil }
            value = Int(truncatingIfNeeded: tag < ValueTag.negativeBase ? magnitude : ~magnitude)
            end &+= width
        } else {
            return nil
        }
        finishNextValue(end: end)
        return value
    }

    @inline(never)
    private func outOfRange<T>(_: T.Type, _ value: String, _ offset: Int) -> GraphArchiveError {
        GraphArchiveError(
            .valueOutOfRange,
            "stored integer \(value) does not fit \(T.self)",
            offset: offset,
            keyPath: keyPath()
        )
    }

    @inline(__always)
    mutating func readDouble() throws(GraphArchiveError) -> Double {
        let start = reader.offset
        switch try reader.readByte() {
        case ValueTag.float64:
            return Double(bitPattern: try reader.readLittleEndian(width: 8))
        case ValueTag.float32:
            return Double(Float(bitPattern: UInt32(try reader.readLittleEndian(width: 4))))
        default:
            throw typeMismatch(expected: "Double", tagOffset: start)
        }
    }

    mutating func readFloat() throws(GraphArchiveError) -> Float {
        let start = reader.offset
        switch try reader.readByte() {
        case ValueTag.float32:
            return Float(bitPattern: UInt32(try reader.readLittleEndian(width: 4)))
        case ValueTag.float64:
            // Only when no precision is lost.
            let double = Double(bitPattern: try reader.readLittleEndian(width: 8))
            let float = Float(double)
            guard double.isNaN || Double(float) == double else {
                throw GraphArchiveError(
                    .valueOutOfRange,
                    "stored Double \(double) is not exactly representable as Float",
                    offset: start,
                    keyPath: keyPath()
                )
            }
            return float
        default:
            throw typeMismatch(expected: "Float", tagOffset: start)
        }
    }

    mutating func readDate() throws(GraphArchiveError) -> Double {
        let start = reader.offset
        guard try reader.readByte() == ValueTag.date else {
            throw typeMismatch(expected: "Date", tagOffset: start)
        }
        return Double(bitPattern: try reader.readLittleEndian(width: 8))
    }

    @inline(__always)
    mutating func readString() throws(GraphArchiveError) -> String {
        let start = reader.offset
        let tag = try reader.readByte()
        let length: Int
        if tag >= ValueTag.shortStringBase && tag < ValueTag.shortStringBase + 64 {
            length = Int(tag &- ValueTag.shortStringBase)
        } else if tag == ValueTag.string {
            length = try reader.readCount()
            try options.checkStringLength(length, of: "string", at: start, keyPath: { keyPath() })
        } else {
            throw typeMismatch(expected: "String", tagOffset: start)
        }
        let storage = MemoryBudget.string(length)
        guard memory.tryCharge(storage) else { throw outOfMemory(storage, "a string of \(length) bytes", start) }
        return try reader.readString(count: length)
    }

    @inline(never)
    func outOfMemory(_ bytes: Int, _ what: String, _ offset: Int) -> GraphArchiveError {
        memory.exceeded(bytes, what, offset: offset, keyPath: keyPath())
    }

    /// Charges the memory budget `bytes` for `what`, at the value starting at `offset`.
    @inline(__always)
    mutating func charge(_ bytes: Int, for what: @autoclosure () -> String, at offset: Int) throws(GraphArchiveError) {
        guard memory.tryCharge(bytes) else { throw outOfMemory(bytes, what(), offset) }
    }

    mutating func readByteArray() throws(GraphArchiveError) -> [UInt8] {
        let start = reader.offset
        guard try reader.readByte() == ValueTag.bytes else {
            throw typeMismatch(expected: "bytes", tagOffset: start)
        }
        let length = try reader.readCount()
        try options.checkStringLength(length, of: "byte string", at: start, keyPath: { keyPath() })
        guard length <= reader.remaining else { throw reader.truncated("a byte string") }
        try charge(MemoryBudget.array(length, stride: 1), for: "a byte string of \(length) bytes", at: start)
        return try reader.readBytes(count: length)
    }

    /// Reads a collection header's count, enforcing the limit; returns a safe capacity too.
    mutating func readCollectionCount(at start: Int) throws(GraphArchiveError) -> (count: Int, capacity: Int) {
        let count = try reader.readCount()
        try options.checkCollectionCount(count, at: start, keyPath: { keyPath() })
        // Each element takes at least one byte: never reserve more than the input can fill.
        return (count, min(count, reader.remaining))
    }

    /// Reads an object reference tag and index.
    @inline(__always)
    mutating func readObjectIndex(expected: @autoclosure () -> String) throws(GraphArchiveError) -> Int {
        let (index, start) = try readUncheckedObjectIndex(expected: expected())
        try scanner.checkObjectIndex(index, at: start)
        return Int(index)
    }

    /// Reads an object reference's tag and index, not yet checked against the archive's
    /// objects; returns the index and where the reference starts.
    @inline(__always)
    private mutating func readUncheckedObjectIndex(
        expected: @autoclosure () -> String
    ) throws(GraphArchiveError) -> (index: UInt64, start: Int) {
        let start = reader.offset
        guard try reader.readByte() == ValueTag.objectReference else {
            throw typeMismatch(expected: expected(), tagOffset: start)
        }
        return (try reader.readVarint(), start)
    }

    /// Reads an object reference (tag and index) and returns its object as `T`: what
    /// `readObjectIndex` then `object(at:as:offset:)` do, the index checked once on the way of a
    /// reference to an object built already (every reference an initializer reads directly),
    /// since below the objects built it is below the archive's too. Same errors, same order.
    @inline(__always)
    mutating func readObjectReference<T: AnyObject>(
        _: T.Type,
        expected: @autoclosure () -> String
    ) throws(GraphArchiveError) -> T {
        let (index, start) = try readUncheckedObjectIndex(expected: expected())
        guard index < UInt64(truncatingIfNeeded: objects.count) else {
            try scanner.checkObjectIndex(index, at: start)
            throw unresolvedCycle(Int(index), T.self, start)
        }
        guard objects.handsOverFirstReferences else {
            return try object(at: Int(truncatingIfNeeded: index), as: T.self, offset: start)
        }
        return try takenObject(at: Int(truncatingIfNeeded: index), as: T.self, offset: start)
    }

    /// The object, or nil when `allowingNil`, for `key` when it is the record's next value
    /// stored, and nil or a reference (within the input's next nine bytes, its index of at
    /// most three bytes) to an object built already of exactly class `T`: read and finished as
    /// `locate`, `readObjectReference` and `finishValue` would. Nil, with nothing changed, for
    /// anything else, which the caller then reads their way (for its errors).
    @inlinable @inline(__always)
    mutating func nextObject<T: AnyObject>(forKey key: String, as _: T.Type, allowingNil: Bool) -> T?? {
        guard let (start, tag, word) = peekNextValue(forKey: key) else { return nil }
        if tag == ValueTag.null && allowingNil {
            finishNextValue(end: start &+ 1)
            return .some(nil)
        }
        guard tag == ValueTag.objectReference, let (index, length) = ByteReader.shortVarint(in: word),
            index < objects.count, objectClasses.holds(ObjectIdentifier(T.self), checkedAt: index)
        else { return nil }
        // The table's form picks the way with one test for a chain's or a tree's table (compact,
        // handing objects over), tested first, and two for another, as many as a test of each
        // flag took (the optimizer, left to itself, tested the plain compact form first).
        let object: AnyObject
        if _fastPath(objects.form == .compactTakingFirst) {
            // One taken already is the slow way's to report (`takenObject(at:as:offset:)`).
            guard let taken = objects.takeFirstCompact(checkedAt: index) else { return nil }
            object = taken
        } else if objects.form == .compact {
            object = objects.compactObject(checkedAt: index)
        } else if objects.handsOverFirstReferences {
            guard let taken = objects.takeFirst(checkedAt: index) else { return nil }
            object = taken
        } else {
            object = objects.object(checkedAt: index)
        }
        finishNextValue(end: start &+ 1 &+ length)
        return .some(classInstance(object, as: T.self))
    }

    /// The next reference of the packed array being read, read ahead in batches
    /// (`readReferences`); `unread` counts those of the array not read yet.
    ///
    /// Here rather than in the unarchiver: reached through its `state` accessor, the batch's
    /// inline arrays were read from the accessor's frame after it ended (AddressSanitizer, in a
    /// debug build).
    @inline(__always)
    mutating func nextArrayReference(unread: inout Int, handingOver: Bool) throws(GraphArchiveError)
        -> (index: Int, offset: Int)
    {
        if referenceBatch.isEmpty {
            try readReferences(limit: unread, handingOver: handingOver)
            unread -= referenceBatch.count
        }
        return referenceBatch.next()
    }

    /// Reads the next references of a packed array (FORMAT.md §6.5) into `referenceBatch`, at
    /// most `limit`, each checked as it is read, and brings the objects taking them will retain
    /// into cache together.
    ///
    /// An array whose slots share objects refers back to objects built long before, at random:
    /// perf put the root array's retains of its 250,000 shared slots at a quarter of the decode
    /// of 1,000,000 grid-state slots, one cache miss after another. Loaded a batch at a time,
    /// the misses overlap (see `touchObjects`).
    mutating func readReferences(limit: Int, handingOver: Bool) throws(GraphArchiveError) {
        referenceBatch.startRefill()
        for _ in 0..<min(limit, ReferenceLookAhead.count) {
            let offset = reader.offset
            let index = try ValueScanner.nextReferenceIndex(&reader, previous: referenceBatch.previous)
            try scanner.checkObjectIndex(UInt64(index), at: offset)
            referenceBatch.append(index, offset: offset)
        }
        // The class table is read per reference too (`object(at:as:)`), another miss.
        let count = referenceBatch.count
        let classes = objectClasses.touch(referenceBatch.indexes.span, count: count, tableCount: objects.count)
        prefetchSink ^= classes ^ objects.touch(referenceBatch.indexes.span, count: count, handingOver: handingOver)
    }

    /// The constructed object at `index`, as `T`; `handingOver`: taking the table's reference
    /// where it still has one (only for the one-call decode's root array, see `DecodedObjects`).
    @inline(__always)
    mutating func object<T: AnyObject>(
        at index: Int,
        as _: T.Type,
        offset: Int,
        handingOver: Bool = false
    ) throws(GraphArchiveError) -> T {
        // Unsigned, so that the check also keeps out a negative index.
        guard UInt(bitPattern: index) < UInt(bitPattern: objects.count) else {
            throw unresolvedCycle(index, T.self, offset)
        }
        // Exact class match first, from the class table: no read of the object's header, and no
        // generic `as? T`, which looks up Optional<T> metadata per call.
        if objectClasses.holds(ObjectIdentifier(T.self), checkedAt: index) {
            return classInstance(handingOver ? objects.handOver(index) : objects.object(checkedAt: index), as: T.self)
        }
        return try object(ofAnotherClassAt: index, as: T.self, offset: offset)
    }

    /// What `object(at:as:offset:)` returns, while the table hands each object to its first
    /// reference: the object with the table's reference, or a conflict if it was taken before.
    /// Apart from `object(at:as:offset:)`, whose exact-class branch would otherwise choose among
    /// three ways to get the object: that choice cost gridstate's and cycles' decode 0.1-0.2%.
    @inline(__always)
    mutating func takenObject<T: AnyObject>(at index: Int, as _: T.Type, offset: Int) throws(GraphArchiveError) -> T {
        guard UInt(bitPattern: index) < UInt(bitPattern: objects.count) else {
            throw unresolvedCycle(index, T.self, offset)
        }
        guard objectClasses.holds(ObjectIdentifier(T.self), checkedAt: index) else {
            return try object(ofAnotherClassAt: index, as: T.self, offset: offset)
        }
        guard let object = objects.takeFirst(checkedAt: index) else {
            throw noteHandOverConflict(index, offset: offset)
        }
        return classInstance(object, as: T.self)
    }

    /// Throws when object `index` (checked by the caller: below the objects built) was taken by
    /// a reference read before (see `DecodedObjects.handOverFirstReferences()`): the table no
    /// longer holds it, and whoever took it may have dropped it. Noted in `handOverConflict`,
    /// for the one-call decode to decode again without taking, even if an initializer catches
    /// the error.
    @inline(__always)
    mutating func checkNotTaken(_ index: Int, offset: Int) throws(GraphArchiveError) {
        guard objects.handsOverFirstReferences && objects.isTaken(checkedAt: index) else { return }
        throw noteHandOverConflict(index, offset: offset)
    }

    @inline(never)
    private func noteHandOverConflict(_ index: Int, offset: Int) -> GraphArchiveError {
        handOverConflict?.happened = true
        return GraphArchiveError(
            .invalidState,
            "object #\(index) is referenced a second time, which this decode did not expect; decoding again",
            offset: offset,
            keyPath: keyPath()
        )
    }

    /// The constructed object at `index` as `T`, lent without a retain (see `LentObject`); the
    /// same checks and errors as `object(at:as:offset:)`.
    @inline(__always)
    mutating func lentObject<T: AnyObject>(
        at index: Int,
        as _: T.Type,
        offset: Int
    ) throws(GraphArchiveError) -> LentObject<T> {
        if !objectClasses.holds(ObjectIdentifier(T.self), at: index, below: objects.count) {
            // Past the objects built, or of a subclass of `T` or another class.
            _ = try object(at: index, as: T.self, offset: offset)
        }
        try checkNotTaken(index, offset: offset)
        return objects.lent(checkedAt: index, as: T.self)
    }

    /// The object at `index`, whose class is not exactly `T`: an instance of a subclass of `T`
    /// (one dynamic cast), or else a type mismatch. Out of line, so the exact match stays small.
    @inline(never)
    private mutating func object<T: AnyObject>(ofAnotherClassAt index: Int, as _: T.Type, offset: Int)
        throws(GraphArchiveError) -> T
    {
        // Not taken while the table hands objects to their first references: a cast that fails
        // would drop the last one (`lentObject` checks its class through here).
        try checkNotTaken(index, offset: offset)
        let object = objects[index]
        if let typed = object as? T { return typed }
        throw GraphArchiveError(
            .typeMismatch,
            "expected \(T.self), found object #\(index), \(withIndefiniteArticle("\(type(of: object))")), which is neither \(T.self) nor a subclass of it",
            offset: offset,
            keyPath: keyPath()
        )
    }

    @inline(never)
    private func unresolvedCycle(_ index: Int, _ type: Any.Type, _ offset: Int) -> GraphArchiveError {
        guard index < objectCount else {
            return GraphArchiveError(
                .badObjectReference,
                "reference to object \(index), but the archive has \(objectCount)",
                offset: offset,
                keyPath: keyPath()
            )
        }
        return GraphArchiveError(
            .unresolvedCycle,
            "reference to object #\(index) (\(type)) that is not decoded yet: it closes a cycle; decode this key with decodeLater(_:forKey:assign:)",
            offset: offset,
            keyPath: keyPath()
        )
    }
}

/// References of a packed array read ahead of the elements they become (`readReferences`).
///
/// Inline arrays, not `Array`s, whose writes checked their buffer's uniqueness, a runtime call
/// per reference of the array (callgrind: the keyed read of 100,000 grid-state slots 1.2% less).
struct ReferenceBatch {
    private(set) var indexes = ReferenceLookAhead.Slots(repeating: 0)
    private var offsets = ReferenceLookAhead.Slots(repeating: 0)
    private(set) var count = 0
    private var position = 0
    /// The last index read: references are stored as deltas from it.
    private(set) var previous = -1

    var isEmpty: Bool { position == count }

    /// Empties the batch for a new array, whose first delta counts from -1.
    mutating func startArray() {
        startRefill()
        previous = -1
    }

    mutating func startRefill() {
        count = 0
        position = 0
    }

    mutating func append(_ index: Int, offset: Int) {
        indexes[count] = index
        offsets[count] = offset
        count += 1
        previous = index
    }

    /// The next reference read, and where it starts in the payload.
    mutating func next() -> (index: Int, offset: Int) {
        defer { position += 1 }
        return (indexes[position], offsets[position])
    }
}
