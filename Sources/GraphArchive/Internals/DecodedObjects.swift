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
struct DecodedObjects: ~Copyable {
    private var references = PlainStack<Unmanaged<AnyObject>>()
    /// Bit `i` set: object `i`'s table reference now belongs to a decoded array. Empty until
    /// the first hand-over.
    private var handedOver: [UInt64] = []

    init() {}

    deinit {
        for index in 0..<references.count where !isHandedOver(index) {
            references[index].release()
        }
    }

    var count: Int { references.count }

    mutating func reserveCapacity(_ capacity: Int) {
        references.reserveCapacity(capacity)
    }

    mutating func append(_ object: AnyObject) {
        references.append(.passRetained(object))
    }

    /// The object at `index` (a valid index), for the caller to retain as usual.
    @inline(__always)
    subscript(index: Int) -> AnyObject {
        references[index].takeUnretainedValue()
    }

    /// The object at `index` (a valid index), carrying the table's reference the first time it
    /// is asked for (see the type's comment for who may call this).
    @inline(__always)
    mutating func handOver(_ index: Int) -> AnyObject {
        guard !isHandedOver(index) else { return references[index].takeUnretainedValue() }
        if handedOver.isEmpty {
            handedOver = Array(repeating: 0, count: (references.count + 63) / 64)
        }
        handedOver[index >> 6] |= Self.bit(index)
        return references[index].takeRetainedValue()
    }

    /// Loads into cache together, without retaining them, the objects at `indexes[..<count]`
    /// that taking would retain (see `touchObjects`): each of them, or with `handingOver` only
    /// those already handed over, since a hand-over does not touch the object. `indexes` is
    /// overwritten; the result is for the caller to keep, so the loads stay.
    func touch(_ indexes: inout [Int], count: Int, handingOver: Bool) -> UInt {
        if handingOver {
            for position in 0..<min(count, indexes.count) {
                let index = indexes[position]
                if index >= 0 && index < references.count && !isHandedOver(index) { indexes[position] = -1 }
            }
        }
        return references.withUnsafeBytes { touchObjects(&indexes, count: count, table: $0) }
    }

    @inline(__always)
    private func isHandedOver(_ index: Int) -> Bool {
        !handedOver.isEmpty && handedOver[index >> 6] & Self.bit(index) != 0
    }

    @inline(__always)
    private static func bit(_ index: Int) -> UInt64 {
        1 << UInt64(index & 63)
    }
}
