// Sources/GraphArchive/Unarchiving/PendingAssignments.swift - decodeLater requests waiting for their objects

/// One `decodeLater` request: decodes the value at `offset` as `T` and passes it to `assign`.
///
/// A struct of the caller's closure alone, so that as an `any DeferredAssignment` it sits in
/// the existential's inline buffer: queuing a request allocates nothing beyond the caller's
/// closure (a closure wrapping it would be one more allocation and release per request).
struct DeferredRead<T: GraphValue>: DeferredAssignment {
    let assign: (T) throws -> Void

    func run(_ unarchiver: GraphUnarchiver, at offset: Int, copy: CopiedValue, place: DeferredPlace) throws {
        let value: T
        do {
            value = try unarchiver.readDeferred(at: offset, copy: copy) { try T._decodeGraphValue(from: unarchiver) }
        } catch var error as GraphArchiveError {
            error.keyPath = unarchiver.state.recordPath(shape: place.shape, objectIndex: place.object, key: place.key)
            throw error
        }
        try assign(value)
    }
}

/// What a queued `decodeLater` request does once its objects exist (see ``DeferredRead``).
protocol DeferredAssignment {
    func run(_ unarchiver: GraphUnarchiver, at offset: Int, copy: CopiedValue, place: DeferredPlace) throws
}

/// Where a deferred value sits, kept as three numbers: the key path is built only for an error.
struct DeferredPlace {
    var shape: Int
    var key: Int
    var object: Int
}

/// The `decodeLater` assignments of a decode that wait for objects not built yet, each run as
/// soon as the last object its value refers to exists.
///
/// Kept until the end of the decode, every back link of a graph would be held at once: the
/// cycles benchmark's tree of 1,000,000 nodes kept 2,000,000 closures, 290 MB, ten times its
/// archive. Run as soon as they can, only the back links whose targets are still to come wait.
/// Those waiting for the same object run in the order they were requested.
///
/// One queue per object, of assignments in slots reused as they run: adding and taking one
/// are a few array accesses, and nothing moves but into and out of its slot.
struct PendingAssignments {
    /// One waiting request: what runs, and where its value is: at `offset` in the payload, or
    /// when `copy` holds bytes, those bytes, copied from there (nil and single references,
    /// which then need not keep the payload until the assignment runs).
    struct Entry {
        var assignment: any DeferredAssignment
        var offset: Int
        var copy: CopiedValue
        var place: DeferredPlace
    }

    /// Per object, the first and last slot waiting for it (-1: none); empty until the first
    /// assignment waits.
    private var queues: [(first: Int32, last: Int32)] = []
    /// Per slot, the request, and the next slot in its object's queue (or in the free list).
    private var entries: [Entry?] = []
    private var nextSlot: [Int32] = []
    private var firstFree: Int32 = -1

    /// Bytes `prepare(objectCount:)` allocates.
    static func tableBytes(objectCount: Int) -> Int {
        MemoryBudget.array(objectCount, stride: MemoryLayout<(first: Int32, last: Int32)>.stride)
    }

    var isPrepared: Bool { !queues.isEmpty }

    /// Makes a queue for each of `objectCount` objects (at most 2^31, the archiver's limit).
    mutating func prepare(objectCount: Int) {
        queues = Array(repeating: (-1, -1), count: objectCount)
    }

    /// Adds a request that can run once object `object` is built.
    mutating func add(after object: Int, _ entry: Entry) {
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
        let last = queues[object].last
        if last >= 0 { nextSlot[Int(last)] = slot } else { queues[object].first = slot }
        queues[object].last = slot
    }

    /// Whether a request waits for object `object`.
    func hasWaiting(for object: Int) -> Bool {
        object < queues.count && queues[object].first >= 0
    }

    /// Removes and returns the first request waiting for object `object`, if any.
    mutating func next(waitingFor object: Int) -> Entry? {
        guard object < queues.count else { return nil }
        let slot = queues[object].first
        guard slot >= 0 else { return nil }
        let following = nextSlot[Int(slot)]
        queues[object].first = following
        if following < 0 { queues[object].last = -1 }
        nextSlot[Int(slot)] = firstFree
        firstFree = slot
        return entries[Int(slot)].take()
    }
}
