// Sources/GraphArchive/Internals/ByteWriter.swift - growable little-endian output buffer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only byte buffer with the primitive writes the format needs.
///
/// It owns one raw allocation, grown geometrically. A `[UInt8]` pays a uniqueness check and a
/// capacity check in every `append`; callgrind put those at over 10% of the 1M-record encode, so
/// this buffer is noncopyable (no sharing, so no uniqueness to check) and its writes reserve
/// once and then store through the pointer. A small buffer grows with `realloc`; a large one is
/// a mapping of its own that grows by remapping its pages (see `largeCapacity`). All multi-byte
/// values are little endian (FORMAT.md §2).
///
/// Usable from inline, with its small writes: the archiver's inlinable `encode` forms write a
/// value through it.
@usableFromInline
struct ByteWriter: ~Copyable {
    /// A buffer growing past `largeThreshold` jumps to `largeCapacity` at once; one growing past
    /// `largeCapacity` moves into a mapping of its own (`ZeroedMemory.growMapping`).
    ///
    /// glibc gives a request above 32 MiB (the highest its mmap threshold goes) pages of its
    /// own, or extends the block in place at the top of a heap that kept its freed memory: a
    /// program that keeps coding graphs writes into pages it already has. A smaller block may
    /// come from the heap's holes instead, where each doubling copies the bytes and leaves the
    /// old block resident: saving 1M grid-state slots peaked 14 MB higher after the benchmark
    /// harness had freed a dictionary. Past `largeCapacity`, `realloc` would copy at every
    /// doubling, since the huge-page advice splits glibc's mapping and `mremap` cannot move a
    /// split one (for 10M tree nodes, 448 MB copied into fresh pages); the buffer's own
    /// mapping, advised whole, is copied into once and then grows by remapping (as is one
    /// reserved that large from the start, `init(reservingMapped:)`). Capacity is address
    /// space; only written pages become resident, and while a mapping is populated
    /// (`startPopulating`), up to `PagePopulator.lead` bytes past them.
    static let largeThreshold = 1 << 20
    static let largeCapacity = 64 << 20

    @usableFromInline private(set) var base: UnsafeMutablePointer<UInt8>
    /// How far writes go before `grow` is called: the end of the allocation, or while a mapping
    /// is populated, a step past the offset last reported to its populator (the mapping's size
    /// is then in its `Population`).
    @usableFromInline private(set) var capacity: Int
    @usableFromInline private(set) var count = 0
    /// Whether `base` is a mapping of its own (a large buffer) rather than a block from `malloc`.
    private var isMapping = false

    init(reservingCapacity capacity: Int = 0) {
        self.capacity = max(capacity, 64)
        guard let memory = malloc(self.capacity) else { fatalError("out of memory allocating \(self.capacity) bytes") }
        base = memory.assumingMemoryBound(to: UInt8.self)
    }

    /// A buffer of `capacity` bytes that, past `largeCapacity`, is a mapping of its own from the
    /// start (advised whole), for a copy whose final size is only estimated: outgrowing the
    /// estimate then remaps the buffer rather than copying it whole. The reordered bodies of
    /// 10M tree nodes came out longer than the 308 MB reserved for them, and were copied once
    /// more into fresh pages (peak 170 MB higher).
    init(reservingMapped capacity: Int) {
        guard capacity > Self.largeCapacity, let memory = ZeroedMemory.mapGrowable(byteCount: capacity) else {
            self.init(reservingCapacity: capacity)
            return
        }
        self.init(mapping: memory.assumingMemoryBound(to: UInt8.self), capacity: capacity)
    }

    private init(mapping: UnsafeMutablePointer<UInt8>, capacity: Int) {
        base = mapping
        self.capacity = capacity
        isMapping = true
        startPopulating()
    }

    // Inlinable, and only a call, for the same reason as `PlainList`'s: the encoding state's
    // `out` is usable from inline.
    @inlinable deinit {
        freeBuffer()
    }

    /// Frees the buffer (a mapping's after its populator stops).
    @usableFromInline
    func freeBuffer() {
        if isMapping {
            ZeroedMemory.unmap(base, byteCount: Self.endPopulation(of: base) ?? capacity)
        } else {
            free(base)
        }
    }

    /// Makes room for `extra` more bytes.
    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) {
        if capacity - count < extra { grow(extra) }
    }

    @usableFromInline @inline(never)
    mutating func grow(_ extra: Int) {
        var allocated = capacity
        if isMapping, let population = Self.population(of: base) {
            if population.allocated - count >= extra {
                // Room is left: the writer has only reached its next report to the populator.
                population.populator.advance(to: count)
                capacity = min(population.allocated, count + max(extra, Self.populationStep))
                return
            }
            Self.endPopulation(of: base)
            allocated = population.allocated
        }
        var newCapacity = allocated * 2
        while newCapacity - count < extra { newCapacity *= 2 }
        if newCapacity > Self.largeThreshold { newCapacity = max(newCapacity, Self.largeCapacity) }
        if newCapacity > Self.largeCapacity {
            let grown = ZeroedMemory.growMapping(
                base,
                byteCount: allocated,
                isMapping: isMapping,
                keeping: count,
                to: newCapacity
            )
            guard let grown else { fatalError("out of memory mapping \(newCapacity) bytes") }
            base = grown.assumingMemoryBound(to: UInt8.self)
            isMapping = true
        } else {
            guard let memory = realloc(base, newCapacity) else {
                fatalError("out of memory growing to \(newCapacity) bytes")
            }
            if newCapacity == Self.largeCapacity { ZeroedMemory.adviseHugePages(memory, byteCount: newCapacity) }
            base = memory.assumingMemoryBound(to: UInt8.self)
        }
        capacity = newCapacity
        if isMapping { startPopulating() }
    }

    // MARK: Populating a mapping ahead of the writer

    /// A mapping's populator and the mapping's size, while its writer's `capacity` is a report
    /// point. Kept aside, by the mapping's address, rather than in the writer: only buffers of
    /// more than `largeCapacity` have one, and two more fields in every writer, of which the
    /// encoder's state holds two, made a 1M-slot encode 2–3% slower.
    private struct Population {
        let populator: PagePopulator
        let allocated: Int
    }

    private static let populations = Locked<[UInt: Population]>([:])

    /// Bytes written between two reports to the populator: one call of `grow` each.
    static let populationStep = 1 << 20

    /// Starts making the pages from `count` to the end of the mapping resident on another
    /// thread, at most `PagePopulator.lead` bytes ahead of the writer, which reports where it
    /// is every `populationStep` bytes. A mapping's pages are fresh: the first write to each
    /// takes a fault that zeroes it, and encoding 10M grid-state slots (388 MB) spent two
    /// thirds of its time zeroing pages, all on the encoding thread. A smaller buffer, a heap
    /// block, is left alone: its pages are mostly ones the process freed a moment before.
    ///
    /// The mapping is on base pages (`ZeroedMemory.mapGrowable`), so pieces need not line up
    /// with huge pages: they start where the writer is.
    private mutating func startPopulating() {
        guard count < capacity else { return }
        let address = UInt(bitPattern: base)
        let populator = PagePopulator(range: count..<capacity, boundary: count) { range in
            guard let memory = UnsafeMutableRawPointer(bitPattern: address) else { return false }
            return ZeroedMemory.populatePages(memory, range: range)
        }
        let population = Population(populator: populator, allocated: capacity)
        Self.populations.withLock { $0[address] = population }
        capacity = min(capacity, count + Self.populationStep)
    }

    private static func population(of base: UnsafeMutablePointer<UInt8>) -> Population? {
        populations.withLock { $0[UInt(bitPattern: base)] }
    }

    /// Stops the populator of the mapping at `base`, if any, and waits for its thread: before
    /// the mapping is moved or freed. Returns the mapping's size, or nil if none ran.
    @discardableResult
    private static func endPopulation(of base: UnsafeMutablePointer<UInt8>) -> Int? {
        guard let population = populations.withLock({ $0.removeValue(forKey: UInt(bitPattern: base)) }) else {
            return nil
        }
        population.populator.stop()
        population.populator.wait()
        return population.allocated
    }

    /// Whether a populator runs ahead of the writer.
    var isPopulating: Bool { isMapping && Self.population(of: base) != nil }

    @inlinable @inline(__always)
    mutating func writeByte(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count &+= 1
    }

    /// Writes `tag`, then `value` as a varint: a tagged value such as a reference, with one
    /// capacity check for the two.
    @inline(__always)
    mutating func writeTag(_ tag: UInt8, varint value: UInt64) {
        reserve(Self.referenceBytesLimit)
        base[count] = tag
        let length = Self.storeVarint(value, at: base + (count &+ 1))
        count &+= 1 &+ length
    }

    /// Writes an unsigned LEB128 varint (FORMAT.md §2.2).
    @inline(__always)
    mutating func writeVarint(_ value: UInt64) {
        reserve(10)
        storeVarint(value)
    }

    /// Stores `value` as a varint at `target`, in room the caller made (up to 10 bytes), and
    /// returns its length.
    ///
    /// Two and three bytes (indexes from 128 to about two million: most references of a large
    /// graph) go in one store, without a loop: callgrind, a reference of a chain of 100,000
    /// links, 22 instructions by the loop and 16 so. (The loop stays where varints are mostly
    /// one byte, or where this form did not pay: the reordering's copy of cycles' bodies.)
    @inline(__always)
    private static func storeVarint(_ value: UInt64, at target: UnsafeMutablePointer<UInt8>) -> Int {
        if value < 0x80 {
            target[0] = UInt8(truncatingIfNeeded: value)
            return 1
        }
        if value < 1 << 21 {
            // Each 7-bit group in a byte of its own, the continuation bit on all but the last; the
            // fourth byte stored (a zero) lies in the room past the varint.
            let bits = UInt32(truncatingIfNeeded: value)
            let groups = bits & 0x7F | (bits << 1) & 0x7F00 | (bits << 2) & 0x7F_0000
            let isShort = bits < 1 << 14
            let marks: UInt32 = isShort ? 0x80 : 0x8080
            UnsafeMutableRawPointer(target).storeBytes(of: (groups | marks).littleEndian, as: UInt32.self)
            return isShort ? 2 : 3
        }
        var rest = value
        var length = 0
        while rest >= 0x80 {
            target[length] = UInt8(truncatingIfNeeded: rest) | 0x80
            length &+= 1
            rest >>= 7
        }
        target[length] = UInt8(truncatingIfNeeded: rest)
        return length &+ 1
    }

    /// Stores `value` as a varint into capacity the caller reserved (up to 10 bytes).
    @inline(__always)
    private mutating func storeVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            base[count] = UInt8(truncatingIfNeeded: rest) | 0x80
            count &+= 1
            rest >>= 7
        }
        base[count] = UInt8(truncatingIfNeeded: rest)
        count &+= 1
    }

    /// Where the tagged reference to object `index` whose tag is at `tag` ends, at most `end`:
    /// its varint is the index itself, so its length needs no scan of the bytes.
    @inline(__always)
    static func endOfTaggedReference(at tag: Int, to index: Int, within end: Int) -> Int {
        min(tag &+ 1 &+ varintLength(UInt64(truncatingIfNeeded: index)), end)
    }

    /// The bytes `writeVarint(value)` writes.
    @inline(__always)
    static func varintLength(_ value: UInt64) -> Int {
        max(1, (64 - value.leadingZeroBitCount + 6) / 7)
    }

    @inline(__always)
    mutating func writeVarint(_ value: Int) {
        writeVarint(UInt64(truncatingIfNeeded: value))
    }

    /// Writes the low `width` (1...8) bytes of `value`, little endian.
    @inline(__always)
    mutating func writeLittleEndian(_ value: UInt64, width: Int) {
        reserve(8)
        // Store all eight bytes, then count only `width`: the spare bytes are overwritten later.
        UnsafeMutableRawPointer(base + count).storeBytes(of: value.littleEndian, as: UInt64.self)
        count &+= width
    }

    /// Writes `tag`, then the low `width` (1...8) bytes of `value`, little endian: a tagged
    /// number, with one capacity check for the two.
    @inlinable @inline(__always)
    mutating func writeTag(_ tag: UInt8, littleEndian value: UInt64, width: Int) {
        reserve(9)
        base[count] = tag
        UnsafeMutableRawPointer(base + (count &+ 1)).storeBytes(of: value.littleEndian, as: UInt64.self)
        count &+= 1 &+ width
    }

    mutating func writeLittleEndian<T: FixedWidthInteger>(_ value: T) {
        writeLittleEndian(UInt64(truncatingIfNeeded: value), width: MemoryLayout<T>.size)
    }

    @inline(__always)
    mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count &+= bytes.count
    }

    mutating func writeBytes(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { writeBytes(UnsafeRawBufferPointer($0)) }
        if done == nil {
            reserve(bytes.count)
            for byte in bytes {
                base[count] = byte
                count &+= 1
            }
        }
    }

    /// Appends the UTF-8 of `string`, taking the contiguous fast path for native strings.
    @inline(__always)
    mutating func writeUTF8(_ string: String) {
        let bits = StringBits(string)
        if let length = bits.smallUTF8Count {
            reserve(Self.smallStringBytes)
            storeSmallString(bits, length: length)
            return
        }
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { writeBytes(UnsafeRawBufferPointer($0)) }
        if done == nil { writeNoncontiguousUTF8(string) }
    }

    /// Writes a small string (see ``StringBits/smallUTF8Count``), after the tag `tagBase` plus
    /// its length, with one capacity check, and returns true; writes nothing for any other
    /// string, and returns false.
    @inline(__always)
    mutating func writeSmallString(_ string: String, tagBase: UInt8) -> Bool {
        let bits = StringBits(string)
        guard let length = bits.smallUTF8Count else { return false }
        reserve(1 + Self.smallStringBytes)
        base[count] = tagBase | UInt8(truncatingIfNeeded: length)
        count &+= 1
        storeSmallString(bits, length: length)
        return true
    }

    /// The words of a small string, whose code units they are: two stores into capacity the
    /// caller reserved, instead of a copy of the string to the stack and a `memcpy` from there
    /// (about 60 instructions for a short name).
    @inline(__always)
    private mutating func storeSmallString(_ bits: StringBits, length: Int) {
        let target = UnsafeMutableRawPointer(base + count)
        target.storeBytes(of: bits.low, as: UInt64.self)
        (target + MemoryLayout<UInt64>.size).storeBytes(of: bits.high, as: UInt64.self)
        count &+= length
    }

    /// The bytes `storeSmallString` stores.
    private static let smallStringBytes = 2 * MemoryLayout<UInt64>.size

    /// The UTF-8 of a string not stored as contiguous UTF-8 (a bridged `NSString`). Out of line:
    /// inlined, its copy of the string made the compiler retain and release every string
    /// written, on the fast path too (callgrind: 600,000 of each for 200,000 grid states).
    @inline(never)
    private mutating func writeNoncontiguousUTF8(_ string: String) {
        writeBytes(Array(string.utf8))
    }

    /// Overwrites one byte already written (the record placeholder of FORMAT.md §5.3).
    @inline(__always)
    mutating func setByte(_ byte: UInt8, at index: Int) {
        precondition(index >= 0 && index < count)
        base[index] = byte
    }

    /// Inserts `extra` bytes at `index`, moving what follows; used only when a record's shape id
    /// outgrows its one-byte placeholder.
    mutating func insert(_ extra: [UInt8], at index: Int) {
        extra.withUnsafeBytes { insert($0, at: index) }
    }

    /// Inserts `bytes` at `index`, moving what follows up in place.
    mutating func insert(_ bytes: UnsafeRawBufferPointer, at index: Int) {
        precondition(index >= 0 && index <= count)
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + index + bytes.count).update(from: base + index, count: count - index)
        UnsafeMutableRawPointer(base + index).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Stores `value` as a varint in the one-byte placeholder at `index`, inserting bytes after
    /// it when the varint needs more than one (a count or id only known at the end).
    mutating func patchVarint(_ value: Int, atPlaceholder index: Int) {
        if value < 0x80 {
            setByte(UInt8(value), at: index)
            return
        }
        var varint = ByteWriter(reservingCapacity: 10)
        varint.writeVarint(value)
        let bytes = varint.bytes
        setByte(bytes[0], at: index)
        insert(Array(bytes[1...]), at: index + 1)
    }

    /// Inserts everything `other` holds at `index`, moving what follows up in place.
    mutating func insertBytes(of other: borrowing ByteWriter, at index: Int) {
        other.withUnsafeBytes { insert($0, at: index) }
    }

    /// The byte at `index`, written before.
    @inline(__always)
    func byte(at index: Int) -> UInt8 {
        precondition(index >= 0 && index < count)
        return base[index]
    }

    /// The offset just past the varint written at `index` (FORMAT.md §2.2), at most `count`.
    @inline(__always)
    func endOfVarint(at index: Int) -> Int {
        precondition(index >= 0 && index < count)
        let last = count &- 1
        var end = index
        while end < last && base[end] & 0x80 != 0 { end &+= 1 }
        return end &+ 1
    }

    /// Appends the bytes `range` of `other`: spans of a few bytes in fixed moves of the whole
    /// limit, where a `memcpy` call would cost more than the copy.
    @inline(__always)
    mutating func writeBytes(of other: borrowing ByteWriter, in range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= other.count)
        guard !range.isEmpty else { return }
        guard range.count > Self.wordCopyLimit || range.lowerBound + Self.wordCopyLimit > other.capacity else {
            // The whole limit, which both buffers have room for: the bytes past the range are
            // overwritten by later writes.
            reserve(Self.wordCopyLimit)
            copyShortSpan(of: other, from: range.lowerBound, count: range.count)
            return
        }
        writeBytes(UnsafeRawBufferPointer(start: other.base + range.lowerBound, count: range.count))
    }

    /// Appends the bytes `range` of `other` as ``writeBytes(of:in:)`` does, then `tag` unless it
    /// is nil, then `value` as a varint: a span of an object body and the renumbered reference
    /// after it (`ObjectOrdering.BodyCopier`), with one capacity check for the three.
    @inline(__always)
    mutating func writeBytes(
        of other: borrowing ByteWriter,
        in range: Range<Int>,
        thenTag tag: UInt8?,
        varint value: UInt64
    ) {
        precondition(range.lowerBound >= 0 && range.upperBound <= other.count)
        let length = range.count
        if length <= Self.wordCopyLimit && range.lowerBound + Self.wordCopyLimit <= other.capacity {
            reserve(Self.wordCopyLimit + Self.referenceBytesLimit)
            copyShortSpan(of: other, from: range.lowerBound, count: length)
        } else {
            writeBytes(UnsafeRawBufferPointer(start: other.base + range.lowerBound, count: length))
            reserve(Self.referenceBytesLimit)
        }
        if let tag {
            base[count] = tag
            count &+= 1
        }
        storeVarint(value)
    }

    /// Appends the bodies `positions` of `other`, last to first, for as long as each makes one
    /// reference, tagged: a chain's links (`ObjectOrdering.reverse`). Body `p` starts at
    /// `starts[p - positions.lowerBound]` and ends where body `p + 1` starts (the last one at
    /// `end`); its reference, to `ReferenceEdge.target(of: edges[p])`, has its tag at offset
    /// `places[p].offset` and is written renumbered by `mapping`. Returns the first body copied:
    /// the bodies before it are left to the caller, the first of them not a link as above.
    ///
    /// Each body costs a few dozen instructions: the lists are checked once for the whole run,
    /// each body's bounds once, and the varint replaced is skipped by its length, known from
    /// the index it holds, instead of read (callgrind, 100,000 links: 176 instructions a body
    /// copied one call at a time through checked lists).
    mutating func writeLinksReversed<Mapping: ObjectIndexMapping>(
        _ positions: Range<Int>,
        of other: borrowing ByteWriter,
        starts: BufferView<Int>,
        end: Int,
        edges: BufferView<Int>,
        places: BufferView<ReferencePlace>,
        mapping: Mapping
    ) -> Int {
        precondition(
            positions.lowerBound >= 0 && positions.count <= starts.count && positions.upperBound <= edges.count
                && positions.upperBound <= places.count && end <= other.count
        )
        let source = other.base
        // A span starting at or before this offset of `other` can be read in fixed moves.
        let wordsEnd = other.capacity &- Self.wordCopyLimit
        // The buffer, its length and its room in locals, stored back once: stores to `self`
        // after each step cost as much as the copy.
        var target = base
        var written = count
        var room = capacity
        var end = end
        let first = positions.lowerBound
        var position = positions.upperBound
        while position > first {
            let place = places.element(checkedAt: position &- 1)
            guard place.isTagged else { break }
            position &-= 1
            let start = starts.element(checkedAt: position &- first)
            let tag = start &+ place.offset
            // The tag and the varint after it lie inside the body, which lies inside `other`.
            precondition(start >= 0 && tag < end)
            let old = ReferenceEdge.target(of: edges.element(checkedAt: position))
            let after = Self.endOfTaggedReference(at: tag, to: old, within: end)
            assert(after == endOfVarint(in: other, at: tag &+ 1, end: end), "the varint holds the reference's index")
            let needed = end &- start &+ (Self.wordCopyLimit &+ Self.referenceBytesLimit)
            if room &- written < needed {
                count = written
                grow(needed)
                target = base
                room = capacity
            }
            // The body up to its reference, the tag included, then the renumbered index, then
            // the rest of the body, if any (none when the reference is its last value).
            written &+= Self.copyShortSpan(
                from: source + start,
                to: target + written,
                count: tag &- start &+ 1,
                wordsReadable: start <= wordsEnd
            )
            written &+= Self.storeVarint(
                UInt64(truncatingIfNeeded: mapping.newIndex(of: old)),
                at: target + written
            )
            if after < end {
                written &+= Self.copyShortSpan(
                    from: source + after,
                    to: target + written,
                    count: end &- after,
                    wordsReadable: after <= wordsEnd
                )
            }
            end = start
        }
        count = written
        return position
    }

    /// Where the varint at `index` of `other` ends, at most `end`.
    private func endOfVarint(in other: borrowing ByteWriter, at index: Int, end: Int) -> Int {
        var after = index
        while after < end && other.base[after] & 0x80 != 0 { after &+= 1 }
        return min(after &+ 1, end)
    }

    /// Copies `length` bytes of `other` from `start` into capacity the caller reserved (at
    /// least `length` plus ``wordCopyLimit``), as `copyShortSpan(from:count:wordsReadable:)`
    /// does where `other` has room for the spare bytes read.
    @inline(__always)
    private mutating func copyShortSpan(of other: borrowing ByteWriter, from start: Int, count length: Int) {
        copyShortSpan(
            from: UnsafeRawPointer(other.base + start),
            count: length,
            wordsReadable: start &+ Self.wordCopyLimit <= other.capacity
        )
    }

    /// Appends `length` bytes from `source`, of which at least `readable` can be read: a short
    /// run (a key, a name) in fixed moves when the limit's bytes can be read, else `memcpy`
    /// (about 60 instructions a call for a 20-byte name, through its dispatch).
    @inline(__always)
    mutating func writeBytes(from source: UnsafeRawPointer, count length: Int, readable: Int) {
        reserve(length &+ Self.wordCopyLimit)
        copyShortSpan(from: source, count: length, wordsReadable: readable >= Self.wordCopyLimit)
    }

    /// Copies `length` bytes from `source` into capacity the caller reserved (at least `length`
    /// plus ``wordCopyLimit``): the whole limit in fixed moves when the span is short and
    /// `wordsReadable` says the spare bytes read past it exist, else `memcpy`.
    @inline(__always)
    private mutating func copyShortSpan(from source: UnsafeRawPointer, count length: Int, wordsReadable: Bool) {
        count &+= Self.copyShortSpan(from: source, to: base + count, count: length, wordsReadable: wordsReadable)
    }

    /// ``copyShortSpan(from:count:wordsReadable:)`` to `target`; returns `length`.
    @inline(__always)
    private static func copyShortSpan(
        from source: UnsafeRawPointer,
        to target: UnsafeMutablePointer<UInt8>,
        count length: Int,
        wordsReadable: Bool
    ) -> Int {
        let target = UnsafeMutableRawPointer(target)
        if length <= wordCopyLimit && wordsReadable {
            // All of the limit, whatever the length: a loop's trip count varies with the span,
            // and its branch is mispredicted where spans of several lengths alternate.
            let low = source.loadUnaligned(as: SIMD16<UInt8>.self)
            let high = source.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self)
            target.storeBytes(of: low, as: SIMD16<UInt8>.self)
            target.storeBytes(of: high, toByteOffset: 16, as: SIMD16<UInt8>.self)
        } else {
            target.copyMemory(from: source, byteCount: length)
        }
        return length
    }

    /// The most bytes a tag and a varint take.
    private static let referenceBytesLimit = 11

    /// Spans up to this long are copied as this many bytes, in two 16-byte moves.
    private static let wordCopyLimit = 32

    /// Appends everything `other` holds.
    mutating func writeBytes(of other: borrowing ByteWriter) {
        other.withUnsafeBytes { writeBytes($0) }
    }

    /// Drops the bytes from `newCount` on, keeping the capacity (to reuse a scratch buffer).
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        count = newCount
    }

    /// Calls `body` with the bytes written so far.
    /// - Warning: Do not escape the pointer.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// The writer's buffer and its length, handed over: the caller now owns the memory and
    /// frees it with `free` when `mappedBytes` is 0, else with `ZeroedMemory.unmap` given
    /// `mappedBytes`. The spare capacity is given back first.
    consuming func takeBuffer() -> (bytes: UnsafeMutableRawPointer, count: Int, mappedBytes: Int) {
        var memory = UnsafeMutableRawPointer(base)
        var mappedBytes = 0
        if isMapping {
            let allocated = Self.endPopulation(of: base) ?? capacity
            mappedBytes = ZeroedMemory.trimMapping(memory, byteCount: allocated, keeping: count)
        } else if let shrunk = realloc(base, max(count, 1)) {
            memory = shrunk
        }
        let taken = (bytes: memory, count: count, mappedBytes: mappedBytes)
        discard self
        return taken
    }

    /// A copy of the bytes written so far.
    var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Hands the bytes over as an array, leaving this writer empty.
    mutating func take() -> [UInt8] {
        defer { count = 0 }
        return bytes
    }
}
