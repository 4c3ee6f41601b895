// Sources/GraphArchive/Internals/IdentityTable.swift - object identity → object index

internal import CPages

/// An open-addressing hash map from an object to its index in the archive, which also keeps
/// every object it numbered alive (so no address is reused while the archive is written).
///
/// `Dictionary<ObjectIdentifier, Int>` hashes every key with SipHash and scatters neighbours;
/// this table is hit once per encoded reference, so it is built for that:
/// - The slot is the address divided by 16 (allocations are 16-byte aligned). Objects
///   allocated one after another, the usual case for a model array, land in neighbouring
///   slots, so the probes walk memory in order and the hardware prefetcher hides the latency
///   that random slots pay on every lookup of a large graph.
/// - Should addresses ever collide in long runs under that mapping, the table rehashes itself
///   with a multiplicative (Fibonacci) hash of each address's 512-byte block, keeping its
///   place in the block. Runs form when objects sit in blocks that alias under the plain
///   mapping (a heap with holes spread over more than the table spans, as after a large graph
///   was freed): hashing the block spreads those, while objects allocated one after another
///   still land in neighbouring slots (hashing whole addresses would make every probe a cache
///   miss). The block is small because the stretches of slots that blocks claim overlap at
///   random, and where several partly filled stretches overlap their keys overflow into one
///   probe run: with 4 KiB blocks (256 slots each), a chain of a million links left in runs
///   over 680 MB by a freed graph averaged 63 probes an insertion, against 1.8 with 512 bytes
///   (a simulation of the table over the links' addresses), whose stretch of 32 slots still
///   holds the next ten or so objects of a run.
/// - A graph's first few hundred objects may alias where the rest follow one another (the
///   cycles benchmark's first 730, made before the bulk of it): each ordinary growth while
///   scrambled checks whether the keys would now fit the address order, and returns to it if
///   so (a tree of a million nodes then encodes 12% faster). A table that leaves the address
///   order a second time stays scrambled, so no graph moves every key twice at each growth.
/// - Keys and values live in two blocks from `ZeroedMemory` (8 + 4 bytes a slot, no padding)
///   at a load factor of up to three quarters: the table is most of what an encode holds
///   besides its output (12.6 MB for 750,000 objects), and probes read only the keys until they hit.
/// - The keys are the objects' addresses, retained: holding them here spares a second array of
///   references. They are released when the table ends. A caller that keeps an object alive by
///   other means (the archiver holding the array it came from) inserts it without a retain:
///   its key carries a set low bit (addresses are 16-byte aligned), and is not released. On a
///   large graph that spares a retain and a release, each a cache miss, per object.
struct IdentityTable: ~Copyable {
    /// Slot keys (0: empty) and values, `capacity` of each, from `ZeroedMemory`.
    private var keys: UnsafeMutablePointer<UInt>
    private var values: UnsafeMutablePointer<UInt32>
    private var capacity: Int
    private var mask: Int
    /// The most keys `capacity` slots take (three quarters of them): one comparison per
    /// insertion instead of checked multiplications.
    private var limit: Int
    private(set) var count = 0
    /// Keys inserted without a retain (`heldElsewhere`). The others, which `deinit` releases,
    /// are the rest of `count`: its scan of the slots stops once it has met them all. A graph
    /// reached through arrays the archiver keeps (a tree's children, a list of records) is
    /// numbered with next to none, and its table is not read through again at the end
    /// (callgrind: 2.6M instructions of 247M for a tree of 100,000). Counted on that side so
    /// that a chain, every link retained, pays nothing more per object.
    private var heldElsewhereCount = 0
    /// False until a long probe run shows the address-order mapping clusters.
    private var scrambles = false
    /// Times the table may still leave the address-order mapping: 2 at the start, 0 when made
    /// scrambled. An ordinary growth while scrambled checks whether the keys would now fit that
    /// mapping (`addressOrderFits`), and returns to it if so, only while one is left: a table
    /// that leaves it twice stays scrambled.
    private var addressOrderLeavesLeft: Int
    /// True while the next growth changes the mapping (to the scrambled one): every key then
    /// moves anywhere, and is copied to a new table rather than rehashed in place.
    private var remapsOnGrowth = false
    /// The block (`prefetchNextStretch`) of the last key inserted while scrambled, and the step
    /// from it to the block expected next: 1 or -1 (wrapping), the last one seen.
    private var lastInsertedBlock: UInt64 = 0
    private var blockStep: UInt64 = 1
    /// Probes beyond which the address-order mapping is abandoned.
    private static let longProbe = 48

    /// - Parameter scrambled: keeps to the scrambled mapping from the start (tests; the table
    ///   otherwise switches to it when it sees a long probe run).
    init(minimumCapacity: Int = 512, scrambled: Bool = false) {
        scrambles = scrambled
        addressOrderLeavesLeft = scrambled ? 0 : 2
        capacity = Self.capacity(for: minimumCapacity)
        (keys, values) = Self.allocateSlots(capacity)
        mask = capacity - 1
        limit = Self.limit(for: capacity)
    }

    deinit {
        releaseRetainedKeys()
        Self.deallocateSlots(keys, values, capacity)
    }

    /// Releases the keys inserted with a retain: reads the slots four at a time (the capacity
    /// is a power of two of at least 16), and stops once it has met all of them.
    private func releaseRetainedKeys() {
        var left = count &- heldElsewhereCount
        var slot = 0
        while left > 0 && slot < capacity {
            let first = Self.retainedAddress(keys[slot])
            let second = Self.retainedAddress(keys[slot &+ 1])
            let third = Self.retainedAddress(keys[slot &+ 2])
            let fourth = Self.retainedAddress(keys[slot &+ 3])
            if first | second | third | fourth != 0 {
                left &-= Self.release(first) &+ Self.release(second) &+ Self.release(third) &+ Self.release(fourth)
            }
            slot &+= 4
        }
    }

    /// Releases the object at `address` unless it is 0; returns the objects released (1 or 0).
    @inline(__always)
    private static func release(_ address: UInt) -> Int {
        guard let object = UnsafeRawPointer(bitPattern: address) else { return 0 }
        Unmanaged<AnyObject>.fromOpaque(object).release()
        return 1
    }

    /// The address a slot's key holds when the table retained it, else 0 (an empty slot, or an
    /// object inserted with `heldElsewhere`): one test a slot instead of two.
    @inline(__always)
    private static func retainedAddress(_ key: UInt) -> UInt {
        key & ((key & heldElsewhere) &- 1)
    }

    private static func allocateSlots(_ capacity: Int) -> (UnsafeMutablePointer<UInt>, UnsafeMutablePointer<UInt32>) {
        (
            ZeroedMemory.allocateTable(UInt.self, count: capacity),
            ZeroedMemory.allocateTable(UInt32.self, count: capacity)
        )
    }

    private static func deallocateSlots(
        _ keys: UnsafeMutablePointer<UInt>,
        _ values: UnsafeMutablePointer<UInt32>,
        _ capacity: Int
    ) {
        ZeroedMemory.deallocate(keys, count: capacity)
        ZeroedMemory.deallocate(values, count: capacity)
    }

    /// Slots moved between discards of the old table's pages when it grows.
    private static let moveChunk = 1 << 14

    /// The key bit of an object inserted without a retain.
    private static let heldElsewhere: UInt = 1

    /// Slots for `count` keys at a load factor of at most three quarters.
    private static func capacity(for count: Int) -> Int {
        var capacity = 16
        while capacity * 3 < count * 4 { capacity <<= 1 }
        return capacity
    }

    /// Keys `capacity` slots hold at a load factor of at most three quarters.
    private static func limit(for capacity: Int) -> Int {
        capacity / 4 * 3
    }

    private func isFull(adding added: Int) -> Bool {
        added > limit &- count
    }

    /// The home slot of `key`, from its address bits only (not the `heldElsewhere` bit).
    @inline(__always)
    private func slot(for key: UInt) -> Int {
        scrambles ? Self.scrambledSlot(for: key, mask: mask) : Self.plainSlot(for: key, mask: mask)
    }

    /// The home slot of `key` under the address-order mapping, in a table of `mask + 1` slots.
    @inline(__always)
    private static func plainSlot(for key: UInt, mask: Int) -> Int {
        Int(truncatingIfNeeded: key >> 4) & mask
    }

    /// The home slot of `key` under the scrambled mapping, in a table of `mask + 1` slots.
    @inline(__always)
    private static func scrambledSlot(for key: UInt, mask: Int) -> Int {
        let address = UInt64(key >> 4)
        // The 512-byte block hashed to any slot, the 16-byte unit inside it added (see the
        // type's comment). Not to a slot a multiple of 32: blocks whose objects sit at the same
        // places in them (a model allocated in a pattern) would all claim the same slots of the
        // blocks' shared stretch, in runs that grow with the graph.
        let spread = stretchStart(ofBlock: address >> unitsPerBlockShift) &+ (address & unitInBlock)
        return Int(truncatingIfNeeded: spread) & mask
    }

    /// Where the stretch of slots of a 512-byte block (`address >> 4 >> unitsPerBlockShift`)
    /// starts under the scrambled mapping, before masking.
    @inline(__always)
    private static func stretchStart(ofBlock block: UInt64) -> UInt64 {
        (block &* 0x9E37_79B9_7F4A_7C15) >> 32
    }

    /// Asks for the cache lines of the stretch of slots that the next block of addresses
    /// claims under the scrambled mapping, once an insertion reaches a new block.
    ///
    /// Each block's stretch lies at random in the table, so the first object met in a block
    /// misses the cache on its key and its value. Inserting one object after another, each
    /// found in the body of the one before (a chain), the processor cannot start the next miss
    /// early, and waits out each in turn. In the benchmark suite a freed graph leaves the
    /// chain's links in runs over 580 MB and the table scrambled: perf put 39% of the
    /// insertions' time on that load, and fetching ahead took the encode from about 62 ms to
    /// 57 (44 run alone). The run's direction (objects allocated one after another ascend; a
    /// freed heap is often reused from the top down) says which block comes next; its lines
    /// load while this block's objects are inserted.
    @inline(__always)
    private mutating func prefetchNextStretch(after key: UInt) {
        let block = UInt64(key >> 4) >> Self.unitsPerBlockShift
        if block == lastInsertedBlock { return }
        let step = block &- lastInsertedBlock
        if step == 1 || step == UInt64.max { blockStep = step }
        lastInsertedBlock = block
        let start = Int(truncatingIfNeeded: Self.stretchStart(ofBlock: block &+ blockStep))
        // 32 slots from any 8-byte boundary: keys over up to 5 cache lines, values up to 3.
        for slot in [0, 8, 16, 24, 31] { gridstore_prefetch_for_write(keys + ((start &+ slot) & mask)) }
        for slot in [0, 16, 31] { gridstore_prefetch_for_write(values + ((start &+ slot) & mask)) }
    }

    /// 16-byte units in a block of the scrambled mapping (32: 512 bytes), as a shift and a mask.
    private static let unitsPerBlockShift: UInt64 = 5
    private static let unitInBlock: UInt64 = (1 << unitsPerBlockShift) - 1

    /// How an object the table inserts stays alive until the table ends.
    enum Keeping {
        /// The table retains it, and releases it when it ends.
        case retained
        /// The caller keeps it alive by other means: neither retained nor released here.
        case heldByCaller
        /// The caller's own strong reference becomes the table's, released when it ends: the
        /// caller gives it up if the object was inserted (see `OwnedReference`).
        case givenByCaller
    }

    /// The index stored for `object`; if there is none, stores `next`, keeps `object` as
    /// `keeping` says and returns `next` with `inserted` true. One probe sequence serves both.
    @inline(__always)
    mutating func indexOrInsert(
        _ object: AnyObject,
        next: UInt32,
        keeping: Keeping = .retained
    ) -> (index: UInt32, inserted: Bool) {
        indexOrInsert(LentReference(object), next: next, keeping: keeping)
    }

    /// ``indexOrInsert(_:next:keeping:)`` for an object lent, which the caller keeps alive
    /// for the call: one of an array's, borrowed without a retain.
    @inline(__always)
    mutating func indexOrInsert<Object: AnyObject>(
        _ object: LentReference<Object>,
        next: UInt32,
        keeping: Keeping = .retained
    ) -> (index: UInt32, inserted: Bool) {
        indexOrInsert(address: object.address, next: next, keeping: keeping, retain: object.retain)
    }

    /// ``indexOrInsert(_:next:keeping:)`` for an address that no object need be behind,
    /// which the table neither retains nor releases (tests: addresses laid out at will).
    mutating func indexOrInsert(heldAddress address: UInt, next: UInt32) -> (index: UInt32, inserted: Bool) {
        indexOrInsert(address: address, next: next, keeping: .heldByCaller) {}
    }

    /// Whether the table maps keys to slots in address order (else scrambled).
    var mapsInAddressOrder: Bool { !scrambles }

    /// Slots the table has.
    var slotCount: Int { capacity }

    @inline(__always)
    private mutating func indexOrInsert(
        address key: UInt,
        next: UInt32,
        keeping: Keeping,
        retain: () -> Void
    ) -> (index: UInt32, inserted: Bool) {
        if isFull(adding: 1) { grow(to: count + 1) }
        var slot = slot(for: key)
        var probes = 0
        while true {
            let found = keys[slot]
            if found & ~Self.heldElsewhere == key { return (values[slot], false) }
            if found == 0 {
                switch keeping {
                case .retained:
                    retain()
                    keys[slot] = key
                case .heldByCaller:
                    keys[slot] = key | Self.heldElsewhere
                    heldElsewhereCount &+= 1
                case .givenByCaller:
                    keys[slot] = key
                }
                values[slot] = next
                count += 1
                if scrambles { prefetchNextStretch(after: key) }
                if probes > Self.longProbe && !scrambles { leaveAddressOrder() }
                return (next, true)
            }
            slot = (slot &+ 1) & mask
            probes &+= 1
        }
    }

    /// Switches to the scrambled mapping, moving every key into a larger table.
    private mutating func leaveAddressOrder() {
        addressOrderLeavesLeft -= 1
        scrambles = true
        remapsOnGrowth = true
        grow(to: count)
    }

    /// Loads, changing nothing, the home slot's key and value of each object whose address is
    /// in `addresses`, and returns their XOR for the caller to keep (so the loads stay).
    ///
    /// A reference to an object met before lands on a random slot (a quarter of the slots of
    /// the benchmark's 1M-slot array repeat records at random): its key and its value are two
    /// cache misses, and the lookup waits on them before the next lookup can start. Loading the
    /// home slots of the next few references first, independent of each other, lets the
    /// processor overlap those misses.
    @inline(__always)
    func touchHomeSlots(of addresses: UnsafeBufferPointer<UInt>) -> UInt {
        var sink: UInt = 0
        for address in addresses {
            let slot = slot(for: address)
            sink ^= keys[slot] ^ UInt(values[slot])
        }
        return sink
    }

    /// Asks for the cache lines of the home slot (key and value) of the object at `address`,
    /// without waiting for them, when the mapping is the scrambled one: there a slot lies at
    /// random in the table, and the lookup that needs it would wait out the miss. (In address
    /// order, slots of objects met one after another follow each other, and the hardware
    /// fetches them ahead by itself.)
    @inline(__always)
    func prefetchHomeSlot(ofAddress address: UInt) {
        guard scrambles else { return }
        let slot = Self.scrambledSlot(for: address, mask: mask)
        gridstore_prefetch_for_write(keys + slot)
        gridstore_prefetch_for_write(values + slot)
    }

    /// Makes room for `total` keys without further growth.
    mutating func reserve(_ total: Int) {
        if total > count && isFull(adding: total - count) { grow(to: total) }
    }

    /// Sizes the table ahead of `references` references about to be inserted, some of which
    /// may repeat: the slots they would fill at a load factor of 1 (at most `referenceLimit`).
    /// Growing by doubling on the way would allocate and fill every smaller table first (for
    /// 750,000 objects: 12.6 MB of tables before the last); if the references turn out all
    /// distinct the table grows once more, as it would have. Untouched slots cost only address
    /// space: the blocks are zero pages until written.
    mutating func reserve(forReferences references: Int) {
        reserve((count + min(references, Self.referenceLimit)) * 3 / 4)
    }

    /// Most references `reserve(forReferences:)` sizes for: a table of 2^24 slots, 200 MB of
    /// address space.
    private static let referenceLimit = 1 << 24

    /// A table growing from fewer slots than this quadruples rather than doubles: every growth
    /// moves each key, and a graph met one object at a time (a chain) grows the table from its
    /// first size, so quartering the growths of its small sizes saves a move per object for
    /// at most 3 MB of slots more than doubling (12 bytes a slot).
    private static let quadruplingLimit = 1 << 18

    private mutating func grow(to total: Int) {
        let (oldKeys, oldValues, oldCapacity) = (keys, values, capacity)
        let factor = oldCapacity < Self.quadruplingLimit ? 4 : 2
        capacity = Self.capacity(for: max(total, count * factor))
        mask = capacity - 1
        limit = Self.limit(for: capacity)
        if scrambles && !remapsOnGrowth && addressOrderLeavesLeft > 0
            && Self.addressOrderFits(oldKeys, count: oldCapacity, inSlots: capacity)
        {
            scrambles = false
            remapsOnGrowth = true
        }
        if oldCapacity >= Self.inPlaceMinimum && !remapsOnGrowth {
            keys = ZeroedMemory.resize(oldKeys, count: oldCapacity, to: capacity)
            values = ZeroedMemory.resize(oldValues, count: oldCapacity, to: capacity)
            // One loop per mapping: the mapping is fixed during the move.
            let mask = mask
            if scrambles {
                Self.rehashInPlace(keys, values, from: oldCapacity, to: capacity) {
                    Self.scrambledSlot(for: $0, mask: mask)
                }
            } else {
                Self.rehashInPlace(keys, values, from: oldCapacity, to: capacity) {
                    Self.plainSlot(for: $0, mask: mask)
                }
            }
            return
        }
        remapsOnGrowth = false
        (keys, values) = Self.allocateSlots(capacity)
        // In address order, old slot s moves to new slot s or s + oldCapacity: the new table
        // fills from the same places the old one is read. Giving back each part of the old one
        // once read keeps the two from being resident whole at once (the peak of a save, with
        // the output written as it goes, would otherwise be here: 1.5 × the new table).
        var chunkStart = 0
        while chunkStart < oldCapacity {
            let chunk = chunkStart..<min(chunkStart + Self.moveChunk, oldCapacity)
            for oldSlot in chunk where oldKeys[oldSlot] != 0 {
                let key = oldKeys[oldSlot]
                var slot = slot(for: key)
                while keys[slot] != 0 { slot = (slot &+ 1) & mask }
                keys[slot] = key
                values[slot] = oldValues[oldSlot]
            }
            ZeroedMemory.discard(oldKeys, count: oldCapacity, range: chunk)
            ZeroedMemory.discard(oldValues, count: oldCapacity, range: chunk)
            chunkStart = chunk.upperBound
        }
        Self.deallocateSlots(oldKeys, oldValues, oldCapacity)
    }

    /// Whether the keys of the first `oldCapacity` slots of `keys` would keep short probe runs
    /// under the address-order mapping in a table of `capacity` slots, once it has filled to
    /// its limit with keys spread as they are.
    ///
    /// Counts the keys whose home is in each stretch of 16 slots, doubled (a grown table fills
    /// from about three eighths of its slots to three quarters before it grows again), and
    /// follows the keys each stretch overflows into the next: twice round, as runs wrap.
    private static func addressOrderFits(
        _ keys: UnsafeMutablePointer<UInt>,
        count oldCapacity: Int,
        inSlots capacity: Int
    ) -> Bool {
        let stretchShift = 4
        let mask = capacity - 1
        var homes = [UInt32](repeating: 0, count: capacity >> stretchShift)
        for slot in 0..<oldCapacity where keys[slot] != 0 {
            homes[plainSlot(for: keys[slot], mask: mask) >> stretchShift] &+= 1
        }
        var overflow = 0
        for _ in 0..<2 {
            for keysHome in homes {
                overflow = max(0, overflow + 2 * Int(keysHome) - (1 << stretchShift))
                if overflow > longProbe { return false }
            }
        }
        return true
    }

    /// Slots from which the table grows in place (`rehashInPlace`): its key block is then
    /// pages of its own (`ZeroedMemory.mappedMinimum`), which grow by remapping.
    private static let inPlaceMinimum = ZeroedMemory.mappedMinimum / MemoryLayout<UInt>.stride

    /// Moves the keys of the first `oldCapacity` slots of `keys` and `values`, a table grown
    /// to `capacity` slots (the slots after them zero), to where `home` now puts them under
    /// linear probing. Each key's new home must be its old one or that plus a multiple of
    /// `oldCapacity` (the same mapping under a wider mask), as the table's mappings give.
    ///
    /// The old slots are visited from just after an empty one, each key taken out and put back
    /// by probing from its new home, so that no key is placed past one not visited yet (which
    /// could still move out and leave a gap in its probe run). A key staying in the old part
    /// lands at or before the slot it left: every slot from its home there was visited already
    /// (the old run from its home to its slot held no empty one). A key moving up lands among
    /// keys moved up before it, without wrapping past the end of the table into old slots not
    /// visited yet: keys whose new homes lie from some slot on in the last `oldCapacity` slots
    /// had old homes from the matching slot on, and fitted before the end of the old table.
    @inline(__always)
    static func rehashInPlace(
        _ keys: UnsafeMutablePointer<UInt>,
        _ values: UnsafeMutablePointer<UInt32>,
        from oldCapacity: Int,
        to capacity: Int,
        home: (UInt) -> Int
    ) {
        let (oldMask, mask) = (oldCapacity - 1, capacity - 1)
        var start = 0
        while keys[start] != 0 { start &+= 1 }
        for step in 1..<oldCapacity {
            let oldSlot = (start &+ step) & oldMask
            let key = keys[oldSlot]
            if key == 0 { continue }
            var slot = home(key)
            if slot == oldSlot { continue }
            keys[oldSlot] = 0
            let value = values[oldSlot]
            while keys[slot] != 0 { slot = (slot &+ 1) & mask }
            assert(oldSlot < start || slot > start, "a key wrapped into slots not visited yet")
            keys[slot] = key
            values[slot] = value
        }
    }
}
