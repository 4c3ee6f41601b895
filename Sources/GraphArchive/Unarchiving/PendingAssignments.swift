// Sources/GraphArchive/Unarchiving/PendingAssignments.swift - decodeLater requests waiting for their objects

extension GraphValue {
    /// Decodes a deferred value of this type at `offset` (or held in `copy`) and passes it to
    /// `assign`, the closure its `decodeLater` request gave: with the object that asked
    /// (`place.owner`) as an `owner`, for `decodeLater(_:forKey:into:)`.
    fileprivate static func runDeferredRead(
        _ assign: consuming QueuedAssignment,
        _ unarchiver: GraphUnarchiver,
        at offset: Int,
        copy: CopiedValue,
        place: DeferredPlace,
        owner: (any (GraphCoding & AnyObject).Type)?
    ) throws {
        let value = try readDeferred(unarchiver, at: offset, copy: copy, place: place)
        if let owner {
            try owner.assignDeferred(value, with: assign, unarchiver, at: offset, place: place)
        } else {
            try assign.assignment(as: Self.self)(value)
        }
    }

    /// The deferred value of this type at `offset`, or held in `copy`.
    private static func readDeferred(
        _ unarchiver: GraphUnarchiver,
        at offset: Int,
        copy: CopiedValue,
        place: DeferredPlace
    ) throws -> Self {
        try unarchiver.readingDeferred(at: offset, copy: copy, place: place) {
            try Self._decodeGraphValue(from: unarchiver)
        }
    }
}

extension GraphUnarchiver {
    /// What `read` reads from the deferred value at `offset` (or held in `copy`), errors placed
    /// where the value sits; then the reader goes back where it was.
    fileprivate func readingDeferred<Value>(
        at offset: Int,
        copy: CopiedValue,
        place: DeferredPlace,
        _ read: () throws -> Value
    ) throws -> Value {
        let payloadReader = readerForDeferred(at: offset, copy: copy)
        do {
            defer { state.reader = payloadReader }
            return try read()
        } catch var error as GraphArchiveError {
            // Read from a copy: offsets in the payload, as if read there.
            if !copy.isEmpty { error.offset = error.offset.map { $0 + offset } }
            throw state.placing(error, at: place)
        }
    }
}

extension GraphCoding where Self: AnyObject {
    /// Passes `value` to `assign`, with the object whose request it is (`place.owner`) as `Self`.
    fileprivate static func assignDeferred<T>(
        _ value: consuming T,
        with assign: consuming QueuedAssignment,
        _ unarchiver: GraphUnarchiver,
        at offset: Int,
        place: DeferredPlace
    ) throws {
        let owner = try unarchiver.state.owner(Self.self, at: offset, place: place)
        let assign = assign.assignment(as: Self.self, T.self)
        try owner.with { try assign($0, value) }
    }

    /// Passes object `target` as a `Target` (nil for -1), with the object whose request it is
    /// (`place.owner`) as `Self`, to `assign`: a deferred reference read when it was requested,
    /// so that only its object is looked up now; or for `Entry.readLater`, the value at
    /// `offset` (or held in `copy`) read as a `Target?`.
    fileprivate static func assignDeferredReference<Target: GraphCoding & AnyObject>(
        _: Target.Type,
        target: Int,
        with assign: consuming QueuedAssignment,
        _ unarchiver: GraphUnarchiver,
        at offset: Int,
        copy: CopiedValue,
        place: DeferredPlace
    ) throws {
        // The closure made in each case, so that one of no context is a constant nil context
        // throughout, which nothing releases. Made once after the switch (as the value forms
        // do), the cycles benchmark's decode took 2.6M more instructions at 100k nodes.
        switch consume assign {
        case .plain(let plain):
            try assignReference(
                ErasedAssignment.referenceAssignment(plain, as: Self.self, Target.self),
                target: target,
                unarchiver,
                at: offset,
                copy: copy,
                place: place
            )
        case .closure(let closure):
            try assignReference(
                closure.referenceAssignment(as: Self.self, Target.self),
                target: target,
                unarchiver,
                at: offset,
                copy: copy,
                place: place
            )
        }
    }

    /// `assignDeferredReference` with its closure made.
    @inline(__always)
    private static func assignReference<Target: GraphCoding & AnyObject>(
        _ assign: (Self, Target?) throws -> Void,
        target: Int,
        _ unarchiver: GraphUnarchiver,
        at offset: Int,
        copy: CopiedValue,
        place: DeferredPlace
    ) throws {
        if target == Int(PendingAssignments.Entry.readLater) {
            let value = try unarchiver.readingDeferred(at: offset, copy: copy, place: place) {
                try Target._decodeOptional(from: unarchiver)
            }
            let owner = try unarchiver.state.owner(Self.self, at: offset, place: place)
            try owner.with { try assign($0, value) }
        } else if target < 0 {
            let owner = try unarchiver.state.owner(Self.self, at: offset, place: place)
            try owner.with { try assign($0, nil) }
        } else {
            let value: LentObject<Target>
            do throws(GraphArchiveError) {
                value = try unarchiver.state.lentObject(at: target, as: Target.self, offset: offset)
            } catch {
                throw unarchiver.state.placing(error, at: place)
            }
            let owner = try unarchiver.state.owner(Self.self, at: offset, place: place)
            try owner.with { owner in try value.with { try assign(owner, $0) } }
        }
    }
}

extension DecodingState {
    /// `error`, raised reading a deferred value, with the key path of where the value sits.
    func placing(_ error: GraphArchiveError, at place: DeferredPlace) -> GraphArchiveError {
        var error = error
        error.keyPath = recordPath(shape: Int(place.shape), objectIndex: Int(place.object), key: Int(place.key))
        return error
    }

    /// The object that asked for a deferred value with `decodeLater(_:forKey:into:)`, built
    /// by now, as the `Owner` its closure takes.
    mutating func owner<Owner: AnyObject>(_: Owner.Type, at offset: Int, place: DeferredPlace)
        throws(GraphArchiveError) -> LentObject<Owner>
    {
        do throws(GraphArchiveError) {
            return try lentObject(at: Int(place.owner), as: Owner.self, offset: offset)
        } catch {
            throw placing(error, at: place)
        }
    }
}

/// Where a deferred value sits, kept as numbers: the key path is built only for an error.
struct DeferredPlace {
    var shape: Int32
    var key: Int32
    /// The record's object (-1 for a value record).
    var object: Int32
    /// The object whose initializer asked for the value.
    var owner: Int32
}

/// The `decodeLater` assignments of a decode that wait for objects not built yet, each run as
/// soon as the last object its value refers to exists.
///
/// Kept until the end of the decode, every back link of a graph would be held at once: the
/// cycles benchmark's tree of 1,000,000 nodes kept 2,000,000 closures, 290 MB, ten times its
/// archive. Run as soon as they can, only the back links whose targets are still to come wait.
/// Those waiting for the same object run in the order they were requested.
///
/// One queue per awaited object, of assignments in slots reused as they run, the queues found
/// by object in a small open-addressing table (`WaitingQueues`): adding and taking one are a few
/// array accesses, and nothing moves but into and out of its slot. A queue per object of the
/// archive took 8 bytes an object whether it waited or not: 8 MB for the million nodes, more
/// than their compressed archive.
struct PendingAssignments: ~Copyable {
    /// One waiting request: the type to decode and the closure to pass it to, and where its
    /// value is: at `offset` in the payload, or when `copy` holds bytes, those bytes, copied
    /// from there (nil, single references and short reference arrays, which then need not keep
    /// the payload until the assignment runs).
    ///
    /// No generic wrapper in an existential: making one looked up its metadata for every
    /// request (see ``ErasedAssignment``). Trivially copied: a closure that captures nothing is
    /// held as its code (`plain`), any other in the queue's `closures`; with the closure in the
    /// entry, copying and destroying entries took about a tenth of the cycles benchmark's decode.
    struct Entry: BitwiseCopyable {
        /// What a request gives its closure (see `decodeLater`'s forms).
        enum Form: UInt8 {
            /// The value, decoded as `type`; first the object that asked, as an `owner`, if any.
            case value
            /// The object that asked (as `owner`) and object `target` (nil for -1) as a
            /// `reference?`, read when it was requested; or for `readLater` (damage, or another
            /// value than nil or one reference), read then as one.
            case ownedReference
        }

        /// The `target` of an `ownedReference` that is read when the assignment runs.
        static let readLater: Int32 = -2

        /// The value's type, and the closure its request gave for that type if it captures
        /// nothing (nil: the closure is in the queue's `closures`, at the entry's slot).
        var type: any GraphValue.Type
        var plain: PlainAssignment? = nil
        var offset: Int
        var copy: CopiedValue
        var place: DeferredPlace
        var form = Form.value
        var target: Int32 = -1
        /// The class the closure takes the object that asked as (`decodeLater(_:forKey:into:)`).
        var owner: (any (GraphCoding & AnyObject).Type)? = nil
        /// The class of a reference read when requested (`ownedReference`).
        var reference: (any (GraphCoding & AnyObject).Type)? = nil

        /// Decodes the value and passes it to `assign`, the request's closure, which it then releases.
        func run(_ assign: consuming QueuedAssignment, _ unarchiver: GraphUnarchiver) throws {
            switch form {
            case .value:
                try type.runDeferredRead(consume assign, unarchiver, at: offset, copy: copy, place: place, owner: owner)
            case .ownedReference:
                try owner!.assignDeferredReference(
                    reference!,
                    target: Int(target),
                    with: consume assign,
                    unarchiver,
                    at: offset,
                    copy: copy,
                    place: place
                )
            }
        }
    }

    /// The first and last slot waiting for each awaited object.
    private var queues = WaitingQueues()
    /// Per slot, the request and the next slot in its object's queue (or in the free list):
    /// `PlainStack`s, changed without a uniqueness check (an array's cost about ten
    /// instructions a request).
    private var entries = PlainStack<Entry>()
    private var nextSlot = PlainStack<Int32>()
    /// Per slot up to the last whose closure captures something, that closure (else `.none`):
    /// a request of a closure that captures nothing (``decodeLater(_:forKey:into:)``'s) does
    /// not touch it.
    private var closures: [ErasedAssignment] = []
    private var firstFree: Int32 = -1
    /// The first and last slot of the queue of the object being built (-1: empty): its own
    /// requests for nil and for objects built before it, most back links of a graph, kept out
    /// of `queues`, where each would be added and then taken again for that one object.
    private var ownFirst: Int32 = -1
    private var ownLast: Int32 = -1
    /// Requests added and not yet taken: `isIdle`'s one test per object built.
    private var waiting = 0

    /// Adds a request that can run once object `object` is built; `isBeingBuilt`: `object` is
    /// the one being built, whose queue is taken next.
    /// `entry.plain` is set from `assign`.
    mutating func add(
        after object: Int,
        isBeingBuilt: Bool,
        _ entry: Entry,
        assign: consuming QueuedAssignment
    ) {
        var entry = entry
        entry.plain = assign.plainCode
        waiting &+= 1
        let slot: Int32
        if firstFree >= 0 {
            slot = firstFree
            firstFree = nextSlot[Int(slot)]
            entries[Int(slot)] = entry
            nextSlot[Int(slot)] = -1
        } else {
            slot = Int32(truncatingIfNeeded: entries.count)
            entries.append(entry)
            nextSlot.append(-1)
        }
        switch consume assign {
        case .plain: break
        case .closure(let closure): keep(closure, at: Int(slot))
        }
        if isBeingBuilt {
            if ownLast >= 0 { nextSlot[Int(ownLast)] = slot } else { ownFirst = slot }
            ownLast = slot
        } else if let position = queues.position(of: object) {
            nextSlot[Int(queues.last(at: position))] = slot
            queues.setLast(slot, at: position)
        } else {
            queues.insert(object, first: slot)
        }
    }

    /// Holds the closure, which captures something, of the request in `slot`.
    @inline(never)
    private mutating func keep(_ assign: consuming ErasedAssignment, at slot: Int) {
        if closures.count <= slot {
            closures.append(contentsOf: repeatElement(.none, count: slot + 1 - closures.count))
        }
        closures[slot] = assign
    }

    /// Whether no request waits, neither the object being built's own nor any queue: then
    /// there is no queue to take (one test per object built rather than a take). A count
    /// rather than a test of both (callgrind: about 6 instructions an object less).
    var isIdle: Bool {
        @inline(__always) get { waiting == 0 }
    }

    /// Takes the queue of requests waiting for object `object`, if any: its first slot, for
    /// `next(after:)`. Requests added later for the same object start a new queue.
    /// `object` must be the object being built when its own requests were added.
    @inline(__always)
    mutating func takeQueue(waitingFor object: Int) -> Int32? {
        let own = ownFirst
        ownFirst = -1
        ownLast = -1
        guard !queues.isEmpty, let position = queues.position(of: object) else { return own >= 0 ? own : nil }
        let first = queues.first(at: position)
        // The object's own requests were made after those of the objects built before it.
        if own >= 0 { nextSlot[Int(queues.last(at: position))] = own }
        queues.remove(at: position)
        return first
    }

    /// Removes and returns the request in `slot` of a taken queue, its closure, and the queue's
    /// next slot (-1 after the last).
    mutating func take(_ slot: Int32) -> (entry: Entry, assign: QueuedAssignment, next: Int32) {
        let following = nextSlot[Int(slot)]
        waiting &-= 1
        nextSlot[Int(slot)] = firstFree
        firstFree = slot
        let entry = entries[Int(slot)]
        if let plain = entry.plain { return (entry, .plain(plain), following) }
        // Swapped out rather than taken from an optional: destroying the optional a take leaves
        // went through the runtime's value witnesses (callgrind: about 40 instructions a request).
        var assign = ErasedAssignment.none
        swap(&assign, &closures[Int(slot)])
        return (entry, .closure(assign), following)
    }
}

/// Awaited object → the first and last slot of its queue: an open-addressing table with
/// linear probing and a multiplicative hash, at most half full, removing by shifting back the
/// entries after a hole (no tombstones). Sized by the objects awaited at once, not by the
/// archive.
struct WaitingQueues: ~Copyable {
    /// A queue's first and last slot.
    struct Ends {
        var first: Int32
        var last: Int32
    }

    /// Per position, the awaited object (-1: free) and its queue's ends: `PlainStack`s,
    /// changed without a uniqueness check. Empty (count 0) until the first insertion.
    private var keys = PlainStack<Int>(capacity: 1)
    private var ends = PlainStack<Ends>(capacity: 1)
    private var count = 0
    /// 64 less log2 of the capacity: the hash's top bits pick the position.
    private var shift: UInt64 = 64

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(of key: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: Int64(key)) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// Where `key` is, if it is in the table.
    @inline(__always)
    func position(of key: Int) -> Int? {
        guard !keys.isEmpty else { return nil }
        let mask = keys.count - 1
        var position = home(of: key)
        while true {
            let found = keys[position]
            if found == key { return position }
            if found < 0 { return nil }
            position = (position + 1) & mask
        }
    }

    func first(at position: Int) -> Int32 { ends[position].first }
    func last(at position: Int) -> Int32 { ends[position].last }
    mutating func setFirst(_ slot: Int32, at position: Int) { ends[position].first = slot }
    mutating func setLast(_ slot: Int32, at position: Int) { ends[position].last = slot }

    /// Adds `key`, not in the table, with a queue of one slot.
    mutating func insert(_ key: Int, first slot: Int32) {
        if (count + 1) * 2 > keys.count { grow() }
        let mask = keys.count - 1
        var position = home(of: key)
        while keys[position] >= 0 { position = (position + 1) & mask }
        keys[position] = key
        ends[position] = Ends(first: slot, last: slot)
        count += 1
    }

    /// Removes the key at `position`, moving back the entries after it that probed past it.
    mutating func remove(at position: Int) {
        let mask = keys.count - 1
        var hole = position
        var probe = (hole + 1) & mask
        while keys[probe] >= 0 {
            // An entry may fill the hole if the hole lies between its home and where it is.
            if (probe - home(of: keys[probe])) & mask >= (probe - hole) & mask {
                keys[hole] = keys[probe]
                ends[hole] = ends[probe]
                hole = probe
            }
            probe = (probe + 1) & mask
        }
        keys[hole] = -1
        count -= 1
    }

    private mutating func grow() {
        let capacity = max(16, keys.count * 2)
        var newKeys = PlainStack<Int>(capacity: capacity)
        var newEnds = PlainStack<Ends>(capacity: capacity)
        newKeys.append(repeating: -1, count: capacity)
        newEnds.append(repeating: Ends(first: -1, last: -1), count: capacity)
        let oldKeys = exchange(&keys, with: newKeys)
        let oldEnds = exchange(&ends, with: newEnds)
        shift = 64 - UInt64(capacity.trailingZeroBitCount)
        count = 0
        for position in 0..<oldKeys.count where oldKeys[position] >= 0 {
            let key = oldKeys[position]
            insert(key, first: oldEnds[position].first)
            ends[self.position(of: key)!].last = oldEnds[position].last
        }
    }
}
