// Sources/GraphArchive/Internals/ObjectPrefetch.swift - bring a batch of decoded objects into cache together
//
// An array whose slots share objects refers back to objects built long before, at random: on
// the Codable benchmark (1,000,000 slots, 25% shared), `perf` put about a quarter of the decode
// on two loads per shared slot, the object's entry in the decoder's object table and the
// object's header (type check, then retain), each a cache miss that waits for the previous
// one. Loading the entries and headers of the next few references first, all independent of
// each other, lets the processor overlap those misses. These loads read raw words: copying a
// reference out of the table would retain it, an atomic write that serializes the misses again.

/// Loads, without retaining, the object table entry of each index in `indexes` (below
/// `objects.count`) and the first word of each object found there; returns their XOR, which
/// the caller keeps so the loads are not optimized away. `indexes` is overwritten.
///
/// An `AnyObject?` is one pointer-sized word, 0 for nil (a single-payload `Optional` of a class
/// reference), so the table's bytes are the objects' addresses.
func touchObjects(_ indexes: inout [Int], count: Int, in objects: borrowing ObjectSlots) -> UInt {
    assert(MemoryLayout<AnyObject?>.size == MemoryLayout<UInt>.size)
    return objects.withUnsafeBytes { touchObjects(&indexes, count: count, table: $0) }
}

/// The same over a table of object addresses given as its bytes, one word per object (the
/// Codable decoder's `ObjectSlots`, the unarchiver's `DecodedObjects`). Indexes outside the
/// table (-1 for "skip") load nothing.
func touchObjects(_ indexes: inout [Int], count: Int, table: UnsafeRawBufferPointer) -> UInt {
    let tableCount = table.count / MemoryLayout<UInt>.stride
    let used = min(count, indexes.count)
    return indexes.withUnsafeMutableBufferPointer { slots in
        for position in 0..<used {
            let index = slots[position]
            slots[position] =
                index >= 0 && index < tableCount
                ? Int(bitPattern: table.load(fromByteOffset: index &* MemoryLayout<UInt>.stride, as: UInt.self))
                : 0
        }
        var sink: UInt = 0
        for position in 0..<used {
            if let object = UnsafeRawPointer(bitPattern: slots[position]) { sink ^= object.load(as: UInt.self) }
        }
        return sink
    }
}
