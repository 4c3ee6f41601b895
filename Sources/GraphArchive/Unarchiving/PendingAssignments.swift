// Sources/GraphArchive/Unarchiving/PendingAssignments.swift - decodeLater requests waiting for their objects

/// The `decodeLater` assignments of a decode that wait for objects not built yet, each run as
/// soon as the last object its value refers to exists.
///
/// Kept until the end of the decode, every back link of a graph would be held at once: the
/// cycles benchmark's tree of 1,000,000 nodes kept 2,000,000 closures, 290 MB, ten times its
/// archive. Run as soon as they can, only the back links whose targets are still to come wait.
/// Those waiting for the same object run in the order they were requested.
///
/// One queue per object, of assignments in slots reused as they run: adding and taking one
/// are a few array accesses, and no closure moves but into and out of its slot.
struct PendingAssignments {
    /// Per object, the first and last slot waiting for it (-1: none); empty until the first
    /// assignment waits.
    private var queues: [(first: Int32, last: Int32)] = []
    /// Per slot, the assignment, and the next slot in its object's queue (or in the free list).
    private var assignments: [(() throws -> Void)?] = []
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

    /// Adds an assignment that can run once object `object` is built.
    mutating func add(after object: Int, _ run: @escaping () throws -> Void) {
        let slot: Int32
        if firstFree >= 0 {
            slot = firstFree
            firstFree = nextSlot[Int(slot)]
            assignments[Int(slot)] = run
            nextSlot[Int(slot)] = -1
        } else {
            slot = Int32(truncatingIfNeeded: assignments.count)
            assignments.append(run)
            nextSlot.append(-1)
        }
        let last = queues[object].last
        if last >= 0 { nextSlot[Int(last)] = slot } else { queues[object].first = slot }
        queues[object].last = slot
    }

    /// Whether an assignment waits for object `object`.
    func hasWaiting(for object: Int) -> Bool {
        object < queues.count && queues[object].first >= 0
    }

    /// Removes and returns the first assignment waiting for object `object`, if any.
    mutating func next(waitingFor object: Int) -> (() throws -> Void)? {
        guard object < queues.count else { return nil }
        let slot = queues[object].first
        guard slot >= 0 else { return nil }
        let following = nextSlot[Int(slot)]
        queues[object].first = following
        if following < 0 { queues[object].last = -1 }
        nextSlot[Int(slot)] = firstFree
        firstFree = slot
        return assignments[Int(slot)].take()
    }
}
