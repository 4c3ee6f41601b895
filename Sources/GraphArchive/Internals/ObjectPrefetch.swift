// Sources/GraphArchive/Internals/ObjectPrefetch.swift - bring a batch of decoded objects into cache together
//
// An array whose slots share objects refers back to objects built long before, at random: on
// the Codable benchmark (1,000,000 slots, 25% shared), `perf` put about a quarter of the decode
// on two loads per shared slot, the object's entry in the decoder's object table and the
// object's header (type check, then retain), each a cache miss that waits for the previous
// one. Loading the entries and headers of the next few references first, all independent of
// each other, lets the processor overlap those misses. These loads read raw words: copying a
// reference out of the table would retain it, an atomic write that serializes the misses again.

/// Loads, without retaining, the object table entry of each of the first `count` indexes of
/// `indexes` (those below `objects.count`) and the first word of each object found there;
/// returns their XOR, which the caller keeps so the loads are not optimized away.
///
/// An `AnyObject?` is one pointer-sized word, 0 for nil (a single-payload `Optional` of a class
/// reference), so the table's bytes are the objects' addresses.
func touchObjects(_ indexes: Span<Int>, count: Int, in objects: borrowing ObjectSlots) -> UInt {
    assert(MemoryLayout<AnyObject?>.size == MemoryLayout<UInt>.size)
    return objects.withUnsafeBytes { table in
        touchObjects(indexes, count: count, tableCount: objects.count) {
            table.load(fromByteOffset: $0 &* MemoryLayout<UInt>.stride, as: UInt.self)
        }
    }
}

/// The same over any object table: `address` gives the address of the object at an index below
/// `tableCount` (0 for none, which loads nothing), and reads only the table. Indexes outside the
/// table (-1 for "skip") load nothing. `indexes` is only read: the addresses go to a scratch on
/// the stack, so the caller needs no copy of its indexes for this call.
///
/// Two passes over each `touchChunk` indexes, so that the loads of each are independent of one
/// another: first every entry (its address into the scratch), then every object's first word.
@inline(__always)
func touchObjects(_ indexes: Span<Int>, count: Int, tableCount: Int, address: (Int) -> UInt) -> UInt {
    let used = min(count, indexes.count)
    return withUnsafeTemporaryAllocation(of: Int.self, capacity: touchChunk) { addresses in
        var sink: UInt = 0
        var start = 0
        // Wrapping arithmetic: `start + chunk <= used <= indexes.count`. Checked, it cost
        // gridstate's decode 0.15% (callgrind).
        while start < used {
            let chunk = min(touchChunk, used &- start)
            for position in 0..<chunk {
                let index = indexes[unchecked: start &+ position]
                addresses[position] = index >= 0 && index < tableCount ? Int(bitPattern: address(index)) : 0
            }
            for position in 0..<chunk {
                if let object = UnsafeRawPointer(bitPattern: addresses[position]) { sink ^= object.load(as: UInt.self) }
            }
            start &+= chunk
        }
        return sink
    }
}

/// The scratch's size, fixed: a scratch sized at run time kept the unarchiver's object table
/// copied to the stack for the address closure (callgrind: a 144-byte memcpy per batch). A
/// batch of either decode (`ReferenceLookAhead`) fits it.
private var touchChunk: Int { ReferenceLookAhead.count }

/// How many references the coders look at together, ahead of using them: an array's
/// identity-table slots when encoding, its objects when decoding. Enough cache misses to
/// overlap, few enough to stay in cache. One size for both coders and both directions.
enum ReferenceLookAhead {
    /// An inline array of one value per reference of a batch: a batch that lives on its
    /// loop's stack allocates nothing.
    typealias Slots = InlineArray<16, Int>
    static var count: Int { Slots.count }
}
