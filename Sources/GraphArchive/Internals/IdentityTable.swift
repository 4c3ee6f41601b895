// Sources/GraphArchive/Internals/IdentityTable.swift - object identity → object index

/// An open-addressing hash map from an object's address to its index in the archive.
///
/// `Dictionary<ObjectIdentifier, Int>` hashes every key with SipHash and scatters neighbours;
/// this table is hit once per encoded reference, so it is built for that:
/// - Key and value share one 16-byte slot: a lookup touches one cache line.
/// - The slot is the address divided by 16 (allocations are 16-byte aligned). Objects
///   allocated one after another, the usual case for a model array, land in neighbouring
///   slots, so the probes walk memory in order and the hardware prefetcher hides the latency
///   that random slots pay on every lookup of a large graph.
/// - Should addresses ever collide in long runs under that mapping, the table rehashes itself
///   with a multiplicative (Fibonacci) hash, which spreads any address pattern.
/// Keys are only meaningful while their objects live: the archiver holds every object it has
/// numbered.
struct IdentityTable {
    private struct Slot {
        var key: UInt
        var value: UInt32
    }

    private var slots: [Slot]
    private var mask: Int
    private(set) var count = 0
    /// False until a long probe run shows the address-order mapping clusters.
    private var scrambles = false
    /// Probes beyond which the address-order mapping is abandoned.
    private static let longProbe = 48

    init(minimumCapacity: Int = 512) {
        let capacity = Self.capacity(for: minimumCapacity)
        slots = Array(repeating: Slot(key: 0, value: 0), count: capacity)
        mask = capacity - 1
    }

    /// Slots for `count` keys at a load factor of at most one half.
    private static func capacity(for count: Int) -> Int {
        var capacity = 16
        while capacity < count * 2 { capacity <<= 1 }
        return capacity
    }

    @inline(__always)
    private func slot(for key: UInt) -> Int {
        if scrambles {
            return Int(truncatingIfNeeded: (UInt64(key) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        }
        return Int(truncatingIfNeeded: key >> 4) & mask
    }

    /// The index stored for `object`, or nil.
    func index(of object: ObjectIdentifier) -> UInt32? {
        let key = UInt(bitPattern: object)
        var slot = slot(for: key)
        while true {
            let found = slots[slot]
            if found.key == key { return found.value }
            if found.key == 0 { return nil }
            slot = (slot &+ 1) & mask
        }
    }

    /// The index stored for `object`; if there is none, stores `next` and returns it with
    /// `inserted` true. One probe sequence serves both.
    @inline(__always)
    mutating func indexOrInsert(_ object: ObjectIdentifier, next: UInt32) -> (index: UInt32, inserted: Bool) {
        if (count + 1) * 2 > slots.count { grow(to: count + 1) }
        let key = UInt(bitPattern: object)
        var slot = slot(for: key)
        var probes = 0
        while true {
            let found = slots[slot]
            if found.key == key { return (found.value, false) }
            if found.key == 0 {
                slots[slot] = Slot(key: key, value: next)
                count += 1
                if probes > Self.longProbe && !scrambles {
                    scrambles = true
                    grow(to: count)
                }
                return (next, true)
            }
            slot = (slot &+ 1) & mask
            probes &+= 1
        }
    }

    /// Makes room for `total` keys without further growth.
    mutating func reserve(_ total: Int) {
        if total * 2 > slots.count { grow(to: total) }
    }

    private mutating func grow(to total: Int) {
        let old = slots
        let capacity = Self.capacity(for: max(total, count * 2))
        slots = Array(repeating: Slot(key: 0, value: 0), count: capacity)
        mask = capacity - 1
        for entry in old where entry.key != 0 {
            var slot = slot(for: entry.key)
            while slots[slot].key != 0 { slot = (slot &+ 1) & mask }
            slots[slot] = entry
        }
    }
}
