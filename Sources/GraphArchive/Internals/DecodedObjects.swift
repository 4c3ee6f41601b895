// Sources/GraphArchive/Internals/DecodedObjects.swift - the objects an unarchiver has built, by index

/// The unarchiver's object table: one reference to each object it built, in archive order.
///
/// The table holds its references unmanaged so that it can give one away. The one-call decode
/// (`unarchivedObject(ofType:from:)`) ends with the root array and then drops the unarchiver,
/// so the first time that array takes an object it is handed the table's own reference: no
/// retain then, and no release when the table goes. On a large graph the objects were built
/// long before the root array is filled and are out of cache, so each of those was a cache
/// miss: two per object (callgrind and perf on 1,000,000 grid-state slots).
///
/// Only a caller that runs no user code between the hand-over and the end of the table may
/// hand objects over: user code could drop the array and then ask the table for the object.
///
/// The references are kept in 4 bytes each while they can be: an object's address less a base
/// near the first one, divided by 16 (allocations are 16-byte aligned), which reaches 32 GiB
/// either side of it. The table is the largest thing a decode holds besides the graph (a chain
/// of a million links: 8 MB in words, against a 10 MB archive, 7 MB compressed). An object
/// outside that reach, or not aligned so, turns the table into words for the rest of the decode.
///
/// The memory budget pays for the compact form up front (``compactBytes(capacity:)``, charged
/// by the decoder before it reserves the table), and for the words when the table turns to them
/// (`append` charges them, then gives back the compact form once it is freed).
///
/// The table holds as many objects as were reserved (``reserveCapacity(_:)``), and `append`
/// does not test for room: the decoder reserves one place per object the archive declares and
/// builds no more (callgrind: 3 instructions an object less).
///
/// Usable from inline, with its lookups: the unarchiver's inlinable `decode` forms read it.
@usableFromInline
struct DecodedObjects: ~Copyable {
    /// While `isCompact`: per object, (address - base) / 16, below `takenEntry`, or that once
    /// the object was taken (``takeFirst(checkedAt:)``). As many places as reserved, of which
    /// the first `count` are written: `count` alone counts the objects. On the heap, which a
    /// process that keeps decoding reuses, rather than pages mapped for each decode, which the
    /// kernel zeroes as the appends first touch them: no entry is read before it is appended.
    @usableFromInline private(set) var compact = GrowableBuffer<UInt32>(unwrittenCount: 0)
    /// Otherwise: per object, its reference's address, or 0 once the object was taken.
    @usableFromInline private(set) var words = PlainStack<UInt>(capacity: 1)
    @usableFromInline private(set) var isCompact = true
    /// `isCompact` and `handsOverFirstReferences` in one byte (see `Form`), kept beside them:
    /// as tests of its bits, their other tests compiled longer (callgrind: gridstate's decode
    /// 0.1% more).
    @usableFromInline private(set) var form = Form.compact
    /// Where an appended object's reference moves to become the table's (see `append`); it
    /// holds nothing in between.
    private let landing = UnsafeMutablePointer<AnyObject>.allocate(capacity: 1)
    /// Set by the first object: 32 GiB below its address (or 0).
    @usableFromInline private(set) var base: UInt = 0
    private var capacity = 0
    @usableFromInline private(set) var count = 0
    /// Bit `i` set: object `i`'s table reference now belongs to a decoded array. Empty until
    /// the first hand-over. Not an `Array`, whose write checked its buffer's uniqueness, a
    /// runtime call, for every element of a root array handed over.
    private var handedOver = PlainStack<UInt64>(capacity: 1)
    /// Whether each object's table reference goes to the first reference read to it; its
    /// entry then says it was taken (`takenEntry`, or 0 in words).
    @usableFromInline private(set) var handsOverFirstReferences = false

    /// The table's form (compact or words) and whether it hands each object over to its first
    /// reference: one byte, so that a chain's or a tree's every reference chooses its way with
    /// one test rather than one of each (callgrind: 2 instructions a reference less).
    @usableFromInline
    enum Form: UInt8 {
        case compact = 0
        case compactTakingFirst = 1
        case words = 2
        case wordsTakingFirst = 3
    }

    /// How far either side of the first object a compact entry reaches (at most 32 GiB).
    private let reach: UInt
    /// `2 * reach / 16`, less the one `takenEntry` keeps, once the base is set and while the
    /// table is compact, else 0: the entries the compact form holds are those below it (see
    /// `entry(atOffset:)`).
    private var entryLimit: UInt = 0

    /// The compact entry of an object taken by its first reference: the last one, which the
    /// compact form holds no object at (`entryLimit`). Its mark is the entry itself, rather than
    /// a bit beside it: the take reads the entry anyway (callgrind: 6 instructions a reference
    /// less).
    @inlinable static var takenEntry: UInt32 { .max }

    /// - Parameter reach: How far either side of the first object a compact entry reaches;
    ///   smaller only in tests, to reach the words.
    init(reach: UInt = 1 << 35) {
        precondition(reach <= 1 << 35)
        self.reach = reach
    }

    // Inlinable, and only a call, for the same reason as `PlainList`'s.
    @inlinable deinit {
        releaseAll()
    }

    /// Releases the table's references, and frees its landing (see `append`).
    @usableFromInline
    func releaseAll() {
        landing.deallocate()
        guard isCompact && handedOver.isEmpty else {
            for index in 0..<count where !isHandedOver(index) && !isTaken(index) {
                reference(index).release()
            }
            return
        }
        if handsOverFirstReferences {
            releaseCompactObjectsNotTaken()
            return
        }
        // The common case, compact and nothing handed over: one load, shift and add per object
        // rather than a test of the form and of the hand-over bits each (callgrind: about 8
        // instructions an object less).
        let base = self.base
        compact.withUnsafeBytes { entries in
            for entry in entries.assumingMemoryBound(to: UInt32.self).prefix(count) {
                Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: base &+ UInt(entry) << 4)!).release()
            }
        }
    }

    /// Releases the objects of the compact table that no reference took, 32 entries tested
    /// together: in a chain or a tree every object but the root was taken.
    private func releaseCompactObjectsNotTaken() {
        let base = self.base
        let count = self.count
        compact.withUnsafeBytes { bytes in
            let entries = bytes.assumingMemoryBound(to: UInt32.self)
            func releaseNotTaken(_ range: Range<Int>) {
                for entry in entries[range] where entry != Self.takenEntry {
                    Self.compactReference(entry, base: base).release()
                }
            }
            // Eight words of two entries each, and-ed: all ones only if all were taken. (A
            // comparison of `SIMD32` values compiled to a loop over their elements.)
            let wholeChunksEnd = count & ~31
            var start = 0
            while start < wholeChunksEnd {
                var together = UInt64.max
                for word in 0..<16 {
                    together &= bytes.loadUnaligned(fromByteOffset: start &* 4 &+ word &* 8, as: UInt64.self)
                }
                if together != .max { releaseNotTaken(start..<(start &+ 32)) }
                start &+= 32
            }
            releaseNotTaken(wholeChunksEnd..<count)
        }
    }

    /// What the table reserved for `capacity` objects allocates in its compact form.
    static func compactBytes(capacity: Int) -> Int {
        MemoryBudget.table(capacity, stride: MemoryLayout<UInt32>.stride)
    }

    /// What the table reserved for `capacity` objects allocates in words.
    static func wordBytes(capacity: Int) -> Int {
        MemoryBudget.table(capacity, stride: MemoryLayout<Unmanaged<AnyObject>>.stride)
    }

    /// What the bits of the hand-over allocate, once the first object of a table of `count`
    /// objects is handed over.
    static func handOverBytes(count: Int) -> Int {
        MemoryBudget.array((count + 63) / 64, stride: MemoryLayout<UInt64>.stride)
    }

    /// From now on, and before the first object, each object's table reference goes to the
    /// first reference read to it (``takeFirst(checkedAt:)``): no retain then, and no release when
    /// the table goes, for an object met only once (every object of a chain or a tree but the
    /// root). The table can no longer give out an object it gave away: the object may be gone
    /// (its taker may have dropped it). Whoever turns this on must decode again without it on a
    /// second reference, when ``takeFirst(checkedAt:)`` finds the object taken.
    mutating func handOverFirstReferences() {
        precondition(count == 0 && handedOver.isEmpty)
        handsOverFirstReferences = true
        form = .compactTakingFirst  // no object yet: still compact
    }

    /// Whether object `index` (a valid index) was taken (``takeFirst(checkedAt:)``).
    @inline(__always)
    func isTaken(_ index: Int) -> Bool {
        guard handsOverFirstReferences else { return false }
        precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
        return isTaken(checkedAt: index)
    }

    /// Whether object `index`, which the caller has just checked is below `count`, was taken,
    /// while the table hands objects over (`handsOverFirstReferences`): the index not checked
    /// again, on each object lent to a deferred assignment.
    @inline(__always)
    func isTaken(checkedAt index: Int) -> Bool {
        isCompact
            ? compact.element(checkedAt: index) == Self.takenEntry : words.element(checkedAt: index) == 0
    }

    /// Object `index`, which the caller has just checked is below `count`, carrying the table's
    /// reference, which the table no longer holds (see ``handOverFirstReferences()``); nil,
    /// with nothing changed, when it was taken before. One read of its entry, which is its
    /// mark, and the index not checked again: on every reference a chain's or a tree's
    /// initializer reads.
    @inlinable @inline(__always)
    mutating func takeFirst(checkedAt index: Int) -> AnyObject? {
        guard isCompact else {
            let address = words.element(checkedAt: index)
            guard address != 0 else { return nil }
            words.setElement(0, checkedAt: index)
            return Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
                .takeRetainedValue()
        }
        return takeFirstCompact(checkedAt: index)
    }

    /// ``takeFirst(checkedAt:)`` for a table in the form `.compactTakingFirst`, which the caller
    /// has just tested: no second test of the form.
    @inlinable @inline(__always)
    mutating func takeFirstCompact(checkedAt index: Int) -> AnyObject? {
        let entry = compact.element(checkedAt: index)
        guard entry != Self.takenEntry else { return nil }
        compact.setElement(Self.takenEntry, checkedAt: index)
        return Self.compactReference(entry, base: base).takeRetainedValue()
    }

    /// Makes room for `capacity` objects in all, in the form the table is in (charged by the
    /// caller: ``compactBytes(capacity:)`` before the first object): `append` needs it.
    mutating func reserveCapacity(_ capacity: Int) {
        self.capacity = max(self.capacity, capacity)
        if isCompact { compact.extend(unwrittenTo: capacity) } else { words.reserveCapacity(capacity) }
    }

    /// Appends `object`, for which ``reserveCapacity(_:)`` made room (not tested again). The
    /// first one the compact form cannot hold turns the table into words, which `memory` is
    /// charged for first.
    ///
    /// - Throws: `.limitExceeded` when the words do not fit the budget; the table is unchanged.
    @inline(__always)
    mutating func append(_ object: consuming AnyObject, memory: inout MemoryBudget) throws(GraphArchiveError) {
        // The caller's reference becomes the table's, moved rather than retained and then
        // released: `Unmanaged.passRetained` retained it and the caller's copy was released
        // later, a pair the optimizer did not cancel (callgrind: about 30 instructions an object).
        landing.initialize(to: consume object)
        let reference = Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(landing).load(as: UnsafeRawPointer.self))
        // Below the base, the difference wraps round past `2 * reach`.
        let entry = Self.entry(atOffset: UInt(bitPattern: reference.toOpaque()) &- base)
        if entry < entryLimit {
            compact.setElement(UInt32(truncatingIfNeeded: entry), checkedAt: count)
            count &+= 1
        } else {
            try appendSlowly(reference, memory: &memory)
        }
    }

    /// The compact entry of an object `offset` bytes past the base, if it is a multiple of 16:
    /// `offset / 16`, below `2^60`; otherwise, with its low four bits rotated to the top, at
    /// least `2^60`, above any `entryLimit`. One comparison then tests both.
    @inline(__always)
    private static func entry(atOffset offset: UInt) -> UInt {
        offset &>> 4 | offset &<< (UInt.bitWidth &- 4)
    }

    /// Appends the first object, which sets the base, or one the compact form cannot hold.
    @inline(never)
    private mutating func appendSlowly(_ reference: Unmanaged<AnyObject>, memory: inout MemoryBudget)
        throws(GraphArchiveError)
    {
        let address = UInt(bitPattern: reference.toOpaque())
        if isCompact && count == 0 {
            base = address > reach ? address - reach : 0
            entryLimit = max(2 * reach / 16, 1) - 1
            let offset = address - base
            // At most `reach / 16`: below `takenEntry`.
            if offset & 15 == 0 {
                compact.setElement(UInt32(truncatingIfNeeded: offset >> 4), checkedAt: count)
                count += 1
                return
            }
        }
        if isCompact {
            do throws(GraphArchiveError) {
                try widen(memory: &memory)
            } catch {
                reference.release()
                throw error
            }
        }
        words.append(UInt(bitPattern: reference.toOpaque()))
        count += 1
    }

    /// Moves the table to words, for an object the compact form cannot reach: charges the
    /// words, then gives back the compact form once it is freed.
    private mutating func widen(memory: inout MemoryBudget) throws(GraphArchiveError) {
        let wordCapacity = max(capacity, count + 1)
        try memory.charge(
            Self.wordBytes(capacity: wordCapacity),
            for: "the table of \(wordCapacity) objects in 8-byte words, for object #\(count), which 4-byte entries "
                + "cannot reach"
        )
        words.reserveCapacity(wordCapacity)
        for index in 0..<count {
            words.append(isTaken(index) ? 0 : UInt(bitPattern: reference(index).toOpaque()))
        }
        compact = GrowableBuffer<UInt32>(unwrittenCount: 0)
        isCompact = false
        form = handsOverFirstReferences ? .wordsTakingFirst : .words
        entryLimit = 0
        memory.release(Self.compactBytes(capacity: capacity))
    }

    /// The table's reference to object `index` (a valid index, not taken).
    @inline(__always)
    private func reference(_ index: Int) -> Unmanaged<AnyObject> {
        guard isCompact else { return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: words[index])!) }
        // The compact table's own check covers its places, written or not.
        precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
        let address = base &+ UInt(compact.element(checkedAt: index)) << 4
        return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: address)!)
    }

    /// The object at `index` (a valid index), for the caller to retain as usual.
    @inline(__always)
    subscript(index: Int) -> AnyObject {
        reference(index).takeUnretainedValue()
    }

    /// The object at `index`, which the caller has just checked is below `count`, without a
    /// second check of the index or of the address (on every reference an initializer reads).
    @inlinable @inline(__always)
    func object(checkedAt index: Int) -> AnyObject {
        reference(checkedAt: index).takeUnretainedValue()
    }

    /// The table's reference to object `index`, which the caller has just checked is below
    /// `count`: neither the index nor the address checked again.
    @inlinable @inline(__always)
    func reference(checkedAt index: Int) -> Unmanaged<AnyObject> {
        guard isCompact else {
            return Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: words.element(checkedAt: index)).unsafelyUnwrapped)
        }
        return compactReference(checkedAt: index)
    }

    /// ``object(checkedAt:)`` of a compact table, which the caller has just tested.
    @inlinable @inline(__always)
    func compactObject(checkedAt index: Int) -> AnyObject {
        compactReference(checkedAt: index).takeUnretainedValue()
    }

    /// ``reference(checkedAt:)`` of a compact table.
    @inlinable @inline(__always)
    func compactReference(checkedAt index: Int) -> Unmanaged<AnyObject> {
        Self.compactReference(compact.element(checkedAt: index), base: base)
    }

    /// The reference a compact `entry` stands for.
    @inlinable @inline(__always)
    static func compactReference(_ entry: UInt32, base: UInt) -> Unmanaged<AnyObject> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: base &+ UInt(entry) << 4).unsafelyUnwrapped)
    }

    /// The object at `index` (a valid index), carrying the table's reference the first time it
    /// is asked for (see the type's comment for who may call this).
    @inline(__always)
    mutating func handOver(_ index: Int) -> AnyObject {
        guard !isHandedOver(index) else { return reference(index).takeUnretainedValue() }
        if handedOver.isEmpty { handedOver.append(repeating: 0, count: (count + 63) / 64) }
        handedOver[index >> 6] |= Self.bit(index)
        return reference(index).takeRetainedValue()
    }

    /// Loads into cache together, without retaining them, the objects at `indexes[..<count]`
    /// that taking would retain (see `touchObjects`): each of them, or with `handingOver` only
    /// those already handed over, since a hand-over does not touch the object. The result is for
    /// the caller to keep, so the loads stay.
    ///
    /// Inlined: called out of line, once per batch of references, it cost gridstate's decode
    /// 0.2% (callgrind).
    @inline(__always)
    func touch(_ indexes: Span<Int>, count: Int, handingOver: Bool) -> UInt {
        touchObjects(indexes, count: count, tableCount: self.count) { index in
            handingOver && !isHandedOver(index) ? 0 : UInt(bitPattern: reference(index).toOpaque())
        }
    }

    @inline(__always)
    private func isHandedOver(_ index: Int) -> Bool {
        !handedOver.isEmpty && handedOver[index >> 6] & Self.bit(index) != 0
    }

    @inlinable @inline(__always)
    static func bit(_ index: Int) -> UInt64 {
        1 << UInt64(index & 63)
    }
}

/// An object of the table (see `DecodedObjects`), lent to a call without a retain: the table
/// holds it throughout, and nothing hands it over while the unarchiver's initializer runs.
///
/// The objects a deferred assignment is passed were each retained for the call and released
/// after it; once a weak reference to an object exists (a parent link), its count lives in a
/// side table, and each retain and release went the runtime's slow way there (callgrind: about
/// 200 instructions a request of the cycles benchmark).
struct LentObject<T: AnyObject> {
    fileprivate let reference: Unmanaged<AnyObject>

    /// Inlined: the memberwise initializer was called out of line, unspecialized, per request.
    @inline(__always)
    fileprivate init(reference: Unmanaged<AnyObject>) {
        self.reference = reference
    }

    /// Calls `body` with the object.
    @inline(__always)
    func with<Result>(_ body: (T) throws -> Result) rethrows -> Result {
        try Unmanaged<T>.fromOpaque(reference.toOpaque())._withUnsafeGuaranteedRef(body)
    }
}

extension DecodedObjects {
    /// Object `index`, which the caller has just checked is below `count`, as a `T`, which the
    /// caller has checked it is, lent.
    @inline(__always)
    func lent<T: AnyObject>(checkedAt index: Int, as _: T.Type) -> LentObject<T> {
        LentObject(reference: reference(checkedAt: index))
    }
}
