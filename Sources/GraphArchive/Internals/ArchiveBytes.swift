// Sources/GraphArchive/Internals/ArchiveBytes.swift - immutable input bytes and their reader
//
// All raw-pointer reading in GraphArchive lives in this file. `ArchiveBytes` owns one
// allocation for its whole life, or refers to bytes a caller lends for one call (the one-call
// decodes, which close their readers before the call ends); `ByteReader` values are made from
// it, bounds-check every read against the reader's own end, and must never outlive the
// `ArchiveBytes` they came from (every holder of a reader also holds its owner).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Immutable archive bytes: a heap-allocated copy, freed when the last holder lets go, or bytes
/// lent by a caller for the length of one call (`init(borrowing:)`).
final class ArchiveBytes: @unchecked Sendable {
    // @unchecked: the memory is written only inside the initializers, then never mutated; or,
    // reserved for a stream (`init(reservingMapped:)`), by the one owner that fills it before
    // any reader's range covers what it writes.
    private let storage: UnsafeMutableRawBufferPointer
    /// Bytes in use; `storage` may be larger (never smaller than one byte, to have an address).
    let count: Int
    /// True for bytes lent by a caller (`init(borrowing:)`), which are not freed here.
    let isLent: Bool
    /// True for pages reserved with `mmap` (`init(reservingMapped:)`), unmapped when freed.
    let isMapped: Bool
    /// For a slice of reserved bytes (`slice(from:count:)`): the bytes that own its pages,
    /// kept alive by it, and where in them it starts. Nil for bytes of their own.
    private let owner: (bytes: ArchiveBytes, start: Int)?
    /// For a buffer taken over from a writer (`init(takingOver:)`): 0 if it came from `malloc`,
    /// else the bytes of its own mapping. Nil for every other kind of bytes.
    private let takenMappedBytes: Int?

    /// Refers to `bytes` without copying them. The caller keeps them valid and unchanged until
    /// nothing reads through this object or its readers any more (the one-call decodes close
    /// their unarchiver's input before the bytes go: `ByteReader.closed()`). Copying a large
    /// archive cost a decode of 1M grid-state slots its size in fresh pages and a memcpy.
    init(borrowing bytes: UnsafeRawBufferPointer) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else {
            storage = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 16)
            count = 0
            isLent = false
            isMapped = false
            owner = nil
            takenMappedBytes = nil
            return
        }
        storage = UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(mutating: start), count: bytes.count)
        count = bytes.count
        isLent = true
        isMapped = false
        owner = nil
        takenMappedBytes = nil
    }

    /// Copies `bytes`.
    init(copying bytes: some Collection<UInt8>) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            buffer.copyMemory(from: UnsafeRawBufferPointer(source))
        }
        if copied == nil {
            for (index, byte) in bytes.enumerated() {
                buffer[index] = byte
            }
        }
        storage = buffer
        count = bytes.count
        isLent = false
        isMapped = false
        owner = nil
        takenMappedBytes = nil
    }

    /// Allocates `count` bytes and lets `fill` write them (file reads, decompression).
    /// `fill` returns how many bytes it wrote, at most `count`.
    init<E: Error>(
        count: Int,
        fill: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        // Written whole, front to back, into fresh pages: one fault per 2 MiB rather than per
        // 4 KiB (the 38.6 MB payload of 1M grid states, decompressed and then rebuilt row-wise,
        // took about 19,000 faults a decode, a few microseconds each on the VM the benchmarks
        // run on; decompressing into a buffer made beforehand, as zstd's floor does, takes none).
        if count >= Self.hugePageMinimum { ZeroedMemory.adviseHugePages(buffer.baseAddress!, byteCount: count) }
        do {
            let written = try fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            precondition(written >= 0 && written <= count, "fill wrote outside the buffer")
            storage = buffer
            self.count = written
            isLent = false
            isMapped = false
            owner = nil
            takenMappedBytes = nil
        } catch {
            buffer.deallocate()
            throw error
        }
    }

    /// Takes over the buffer `writer` wrote (its spare capacity given back), with no copy: a
    /// finished archive read where it was assembled (the keyed reader's transcoded archive,
    /// which was copied into fresh pages of its size before).
    init(takingOver writer: consuming ByteWriter) {
        let (bytes, count, mappedBytes) = writer.takeBuffer()
        storage = UnsafeMutableRawBufferPointer(start: bytes, count: mappedBytes > 0 ? mappedBytes : max(count, 1))
        self.count = count
        isLent = false
        // Not `isMapped`: that marks reserved pages a decoder may fill and give back.
        isMapped = false
        owner = nil
        takenMappedBytes = mappedBytes
    }

    /// Reserves `count` bytes of address space, none of it resident until `fill` writes it, for
    /// a payload read piece by piece as it is decoded (`FilePayloadStream`), or given back as
    /// it is (`PayloadWindow`): only the pieces written and not yet given back (`discard`)
    /// take memory. Pages are private and anonymous,
    /// never a mapping of the file, which another process could cut short under the reader.
    ///
    /// - Parameter hugePages: Whether to ask for huge pages (for bytes written whole at once;
    ///   a file read a piece at a time would make each piece's huge page resident whole).
    /// - Throws: `.limitExceeded` when the address space cannot be reserved (`RLIMIT_AS`).
    init(reservingMapped count: Int, hugePages: Bool = true) throws(GraphArchiveError) {
        guard let memory = ZeroedMemory.map(byteCount: max(count, 1)) else {
            throw GraphArchiveError(
                .limitExceeded,
                "cannot reserve \(count) bytes of address space to read the archive"
            )
        }
        storage = UnsafeMutableRawBufferPointer(start: memory, count: max(count, 1))
        self.count = count
        isLent = false
        isMapped = true
        owner = nil
        takenMappedBytes = nil
        if hugePages { ZeroedMemory.adviseHugePages(memory, byteCount: count) }
    }

    /// `count` bytes of reserved bytes `owner`, from `start`, as bytes of their own.
    private init(slicing owner: ArchiveBytes, from start: Int, count: Int) {
        precondition(owner.isMapped && owner.owner == nil && start >= 0 && count > 0 && start + count <= owner.count)
        storage = UnsafeMutableRawBufferPointer(rebasing: owner.storage[start..<(start + count)])
        self.count = count
        isLent = false
        isMapped = true
        self.owner = (owner, start)
        takenMappedBytes = nil
    }

    /// Reserves `count` bytes as `init(reservingMapped:)` does, with `room` bytes of address space
    /// before them, resident only once written, that `slice(from:count:)` hands out at negative
    /// offsets (a payload rebuilt into the bytes it is rebuilt from, once they are read).
    ///
    /// - Throws: `.limitExceeded` when the address space cannot be reserved.
    static func reservingMapped(_ count: Int, roomBefore room: Int) throws(GraphArchiveError) -> ArchiveBytes {
        precondition(room >= 0 && count > 0)
        let whole = try ArchiveBytes(reservingMapped: room + count)
        return ArchiveBytes(slicing: whole, from: room, count: count)
    }

    /// `count` bytes of the reservation these bytes are part of (`reservingMapped(_:roomBefore:)`),
    /// from `start`, relative to these bytes' first and negative before it; nil unless these
    /// are such a part and the reservation holds all of them (at least one). The two share
    /// their pages.
    func slice(from start: Int, count: Int) -> ArchiveBytes? {
        guard let owner, count > 0 else { return nil }
        let first = owner.start + start
        guard first >= 0, count <= owner.bytes.count - first else { return nil }
        return ArchiveBytes(slicing: owner.bytes, from: first, count: count)
    }

    /// The offset, relative to these bytes' first, of the start of the huge page
    /// (`ZeroedMemory.adviseHugePages`) that holds the byte at `offset`: a slice that starts
    /// there shares no huge page with the bytes before it, which then never become resident.
    func hugePageStart(of offset: Int) -> Int {
        ZeroedMemory.hugePageStart(of: offset, in: UnsafeRawPointer(storage.baseAddress!))
    }

    /// Gives back the pages of these reserved bytes past the end of `rows`, a slice of the same
    /// reservation, or all of them when `rows` are elsewhere: what is left of a payload once
    /// it is rebuilt into `rows` (`reservingMapped(_:roomBefore:)`). Bytes not reserved so are
    /// kept.
    func discard(pastEndOf rows: ArchiveBytes) {
        guard isMapped else { return }
        var from = 0
        if let owner, let other = rows.owner, owner.bytes === other.bytes {
            from = min(max(other.start + rows.count - owner.start, 0), count)
        }
        _ = discard(from..<count)
    }

    deinit {
        if let takenMappedBytes {
            // As `ByteWriter.takeBuffer()` says.
            if takenMappedBytes > 0 {
                ZeroedMemory.unmap(storage.baseAddress!, byteCount: takenMappedBytes)
            } else {
                free(storage.baseAddress!)
            }
        } else if owner != nil {
            // The owner's pages, unmapped with it.
        } else if isMapped {
            ZeroedMemory.unmap(storage.baseAddress!, byteCount: storage.count)
        } else if !isLent {
            storage.deallocate()
        }
    }

    /// Lets `fill` write `range` of bytes reserved with `init(reservingMapped:)`; returns what
    /// it returns (how many bytes it wrote, from the start of `range`). The caller makes sure
    /// no reader's range covers `range` while it is written.
    func fill<E: Error>(
        _ range: Range<Int>,
        _ fill: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) -> Int {
        precondition(isMapped && range.lowerBound >= 0 && range.upperBound <= count)
        let written = try fill(UnsafeMutableRawBufferPointer(rebasing: storage[range]))
        precondition(written >= 0 && written <= range.count, "fill wrote outside its range")
        return written
    }

    /// Gives the pages wholly inside `range` of reserved bytes back to the system; returns the
    /// range given back (empty if none), whose bytes now read as zero until written again.
    /// The range is rounded inwards to whole pages.
    func discard(_ range: Range<Int>) -> Range<Int> {
        precondition(isMapped && range.lowerBound >= 0 && range.upperBound <= count)
        return ZeroedMemory.discardPages(storage.baseAddress!, range: range)
    }

    /// Makes the pages `range` of reserved bytes touches resident ahead of `fill` writing them
    /// (`PagePopulator`); false when the system cannot. Their bytes stay as they were.
    func populate(_ range: Range<Int>) -> Bool {
        precondition(isMapped && range.lowerBound >= 0 && range.upperBound <= count)
        return ZeroedMemory.populatePages(storage.baseAddress!, range: range)
    }

    /// Buffers from this size on are asked for huge pages.
    static let hugePageMinimum = 4 << 20

    /// A reader over `range` of these bytes.
    func reader(_ range: Range<Int>? = nil) -> ByteReader {
        let range = range ?? 0..<count
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return ByteReader(base: UnsafeRawPointer(storage.baseAddress!), offset: range.lowerBound, end: range.upperBound)
    }

    /// Calls `body` with the bytes in `range`.
    /// - Warning: Do not escape the pointer.
    func withUnsafeBytes<R, E: Error>(
        _ range: Range<Int>,
        _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= count)
        return try body(UnsafeRawBufferPointer(rebasing: storage[range]))
    }

    /// The bytes in `range`, copied out.
    func copyBytes(_ range: Range<Int>) -> [UInt8] {
        withUnsafeBytes(range) { Array($0) }
    }

    /// Allocates `count` bytes and lets `fill` write them in order through a writer that never
    /// writes past them (rebuilding a payload from another one's pieces). From
    /// `PayloadWindow.minimumSize` bytes on they are pages of their own
    /// (`init(reservingMapped:)`), which a decoder can give back as it passes them.
    ///
    /// - Throws: what `fill` throws; `.corrupt` if it writes more or fewer than `count` bytes;
    ///   `.limitExceeded` if the address space cannot hold them.
    static func filled(
        count: Int,
        _ fill: (inout ArchiveBytesWriter) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) -> ArchiveBytes {
        let write = { (buffer: UnsafeMutableRawBufferPointer) throws(GraphArchiveError) -> Int in
            var writer = ArchiveBytesWriter(buffer: buffer)
            try fill(&writer)
            guard writer.count == count else {
                throw GraphArchiveError(.corrupt, "rebuilt payload has \(writer.count) bytes, expected \(count)")
            }
            return count
        }
        guard count >= PayloadWindow.minimumSize else { return try ArchiveBytes(count: count, fill: write) }
        let bytes = try ArchiveBytes(reservingMapped: count)
        _ = try bytes.fill(0..<count, write)
        return bytes
    }

    /// A writer over all of these bytes, reserved with `init(reservingMapped:)`, that fills them
    /// in order while readers read what it has written (a payload rebuilt on another thread
    /// while it is decoded). The caller hands each reader only bytes the writer has passed (its
    /// `count` when last published), and keeps these bytes alive as long as the writer.
    func sequentialWriter() -> ArchiveBytesWriter {
        precondition(isMapped)
        return ArchiveBytesWriter(buffer: UnsafeMutableRawBufferPointer(rebasing: storage[0..<count]))
    }
}

/// Appends bytes to the fixed buffer of an ``ArchiveBytes`` being filled; refuses to go past its end.
struct ArchiveBytesWriter: ~Copyable {
    private let buffer: UnsafeMutableRawBufferPointer
    /// Bytes written so far.
    private(set) var count = 0

    fileprivate init(buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    /// Appends the bytes `range` of the input `reader` reads from (the reader does not move).
    ///
    /// - Throws: `.truncated` if `range` is not within the reader's bytes, `.corrupt` if it does
    ///   not fit in what is left of the buffer.
    mutating func write(_ range: Range<Int>, of reader: ByteReader) throws(GraphArchiveError) {
        guard range.count <= buffer.count - count else {
            throw GraphArchiveError(
                .corrupt,
                "rebuilt payload would exceed its \(buffer.count) bytes",
                offset: range.lowerBound
            )
        }
        guard range.lowerBound >= 0 else { throw reader.truncated("a copied range") }
        var source = reader
        source.offset = range.lowerBound
        let start = count
        let target = buffer
        try source.readUnsafeBytes(count: range.count) { bytes in
            UnsafeMutableRawBufferPointer(rebasing: target[start..<(start + bytes.count)]).copyMemory(from: bytes)
        }
        count += range.count
    }

    /// Appends the bytes from `start` to the position of `reader`, which has just passed them.
    ///
    /// For the cells of a columnar table, mostly a few bytes each: up to 16 bytes are moved as
    /// two overlapping words (or halves, or single bytes) of their own, without a call to
    /// `memcpy`.
    ///
    /// - Throws: `.corrupt` if they do not fit in what is left of the buffer.
    @inline(__always)
    mutating func writePassed(from start: Int, of reader: ByteReader) throws(GraphArchiveError) {
        precondition(start >= 0 && start <= reader.offset)
        let length = reader.offset &- start
        guard length <= buffer.count &- count else {
            throw GraphArchiveError(.corrupt, "rebuilt payload would exceed its \(buffer.count) bytes", offset: start)
        }
        let source = reader.base + start
        let target = buffer.baseAddress! + count
        if length >= 8 && length <= 16 {
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: length &- 8, as: UInt64.self)
        } else if length >= 4 && length < 8 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: length &- 4, as: UInt32.self)
        } else if length > 0 && length < 4 {
            let first = source.load(as: UInt8.self)
            let middle = source.load(fromByteOffset: length >> 1, as: UInt8.self)
            let last = source.load(fromByteOffset: length &- 1, as: UInt8.self)
            target.storeBytes(of: first, as: UInt8.self)
            target.storeBytes(of: middle, toByteOffset: length >> 1, as: UInt8.self)
            target.storeBytes(of: last, toByteOffset: length &- 1, as: UInt8.self)
        } else if length > 16 {
            target.copyMemory(from: source, byteCount: length)
        }
        count &+= length
    }
}

/// A cursor over archive bytes. Every read checks the bounds and throws `.truncated` past the end.
///
/// Usable from inline, with its peeks: the unarchiver's inlinable `decode` forms read through it.
@usableFromInline
struct ByteReader: BitwiseCopyable {
    /// Internal rather than file-private only to be usable from inline (see above).
    @usableFromInline let base: UnsafeRawPointer
    /// Position of the next read, relative to the start of the owning `ArchiveBytes`.
    @usableFromInline var offset: Int
    /// One past the last readable byte.
    @usableFromInline let end: Int
    /// The last offset with nine bytes from it readable (`end - 9`, negative when fewer are):
    /// `peekTagAndWord`'s test is then one comparison with a field, not a subtraction and a
    /// comparison (callgrind: about 2 instructions a peek less).
    @usableFromInline let lastNineByteOffset: Int

    fileprivate init(base: UnsafeRawPointer, offset: Int, end: Int) {
        self.base = base
        self.offset = offset
        self.end = end
        self.lastNineByteOffset = end &- 9  // `end` is at least 0: no overflow
    }

    /// A reader with nothing to read, for an input that is gone: every read throws, and none
    /// touches memory.
    func closed() -> ByteReader {
        ByteReader(base: base, offset: 0, end: 0)
    }

    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset >= end }

    @inline(never)
    func truncated(_ what: String) -> GraphArchiveError {
        GraphArchiveError(.truncated, "archive ends inside \(what)", offset: offset)
    }

    @inline(__always)
    mutating func readByte() throws(GraphArchiveError) -> UInt8 {
        guard offset < end else { throw truncated("a value") }
        let byte = base.load(fromByteOffset: offset, as: UInt8.self)
        offset &+= 1  // cannot overflow: offset < end <= Int.max
        return byte
    }

    @inline(__always)
    func peekByte() throws(GraphArchiveError) -> UInt8 {
        guard offset < end else { throw truncated("a value") }
        return base.load(fromByteOffset: offset, as: UInt8.self)
    }

    /// The next byte, or nil at the end; the reader does not move.
    @inline(__always)
    func nextByte() -> UInt8? {
        guard offset < end else { return nil }
        return base.load(fromByteOffset: offset, as: UInt8.self)
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes (FORMAT.md §2.2).
    ///
    /// Up to three bytes (values below 2^21: object indexes and reference deltas of graphs up
    /// to two million objects) are read inline from one four-byte load: an object reference's
    /// index of three bytes, read out of line, cost about 26 instructions a reference more
    /// (callgrind, the chain benchmark's links).
    @inline(__always)
    mutating func readVarint() throws(GraphArchiveError) -> UInt64 {
        if end &- offset >= 4 {
            let word = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            if word & 0x80 == 0 {
                offset &+= 1
                return UInt64(word & 0x7F)
            }
            if word & 0x8000 == 0 {
                offset &+= 2
                return UInt64(word & 0x7F | (word >> 1) & 0x3F80)
            }
            if word & 0x80_0000 == 0 {
                offset &+= 3
                return UInt64(word & 0x7F | (word >> 1) & 0x3F80 | (word >> 2) & 0x1F_C000)
            }
        } else if offset < end {
            let first = base.load(fromByteOffset: offset, as: UInt8.self)
            if first < 0x80 {
                offset &+= 1
                return UInt64(first)
            }
        }
        return try readVarintSlow()
    }

    @inline(never)
    private mutating func readVarintSlow() throws(GraphArchiveError) -> UInt64 {
        // Two and three bytes (indexes and reference deltas up to 2^21) without the loop: the
        // shared slots of a large array are three-byte deltas, each read once when the top
        // section is checked and twice more when decoded (callgrind: about 80 instructions
        // each through the loop). The first byte is known to have its high bit set, or to
        // be missing, in which case the loop reports the truncation.
        if end &- offset >= 3 {
            let first = UInt64(base.load(fromByteOffset: offset, as: UInt8.self))
            let second = UInt64(base.load(fromByteOffset: offset &+ 1, as: UInt8.self))
            if second < 0x80 {
                offset &+= 2
                return first & 0x7F | second << 7
            }
            let third = UInt64(base.load(fromByteOffset: offset &+ 2, as: UInt8.self))
            if third < 0x80 {
                offset &+= 3
                return first & 0x7F | (second & 0x7F) << 7 | third << 14
            }
        }
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw truncated("a varint") }
            let byte = base.load(fromByteOffset: offset, as: UInt8.self)
            offset &+= 1
            if shift == 63 && byte > 1 {
                throw GraphArchiveError(.corrupt, "varint overflows 64 bits", offset: start)
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// Reads a varint that counts or indexes something and must fit `Int`.
    @inline(__always)
    mutating func readCount() throws(GraphArchiveError) -> Int {
        let value = try readVarint()
        guard value <= UInt64(Int.max) else {
            throw GraphArchiveError(.corrupt, "count \(value) is out of range", offset: offset)
        }
        return Int(value)
    }

    /// The byte at the reader and the eight after it, when nine remain (nil otherwise), none
    /// of them read yet: a tag and at most eight bytes of its value, checked once rather than
    /// tag and value each.
    @inlinable @inline(__always)
    func peekTagAndWord() -> (tag: UInt8, word: UInt64)? {
        guard offset <= lastNineByteOffset else { return nil }
        return (
            base.load(fromByteOffset: offset, as: UInt8.self),
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 1, as: UInt64.self))
        )
    }

    /// The varint of at most three bytes at the start of `word` (bytes read little-endian, as
    /// `peekTagAndWord` gives those after a tag) and its length; nil for a longer one.
    @inlinable @inline(__always)
    static func shortVarint(in word: UInt64) -> (value: Int, length: Int)? {
        let word = UInt32(truncatingIfNeeded: word)
        if word & 0x80 == 0 { return (Int(word & 0x7F), 1) }
        if word & 0x8000 == 0 { return (Int(word & 0x7F | (word >> 1) & 0x3F80), 2) }
        guard word & 0x80_0000 == 0 else { return nil }
        return (Int(word & 0x7F | (word >> 1) & 0x3F80 | (word >> 2) & 0x1F_C000), 3)
    }

    /// The first `width` (1...8) bytes of `word` (bytes read little-endian), the rest masked
    /// off: one mask for every width, eight included (shifted by 0).
    @inlinable @inline(__always)
    static func littleEndian(_ word: UInt64, width: Int) -> UInt64 {
        word & UInt64.max &>> (UInt64(truncatingIfNeeded: 8 &- width) &* 8)
    }

    /// Reads `width` (1...8) bytes as a little-endian unsigned integer.
    @inline(__always)
    mutating func readLittleEndian(width: Int) throws(GraphArchiveError) -> UInt64 {
        // `&-`: the offset never passes the end.
        guard width <= end &- offset else { throw truncated("a number") }
        var value: UInt64 = 0
        if UInt(bitPattern: width &- 1) < 8 && end &- offset >= 8 {
            // One load of eight readable bytes, those past the number masked off: no loop per
            // byte (a 32-bit field cost about 20 instructions through it), and one mask for
            // every width.
            value = Self.littleEndian(
                UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                width: width
            )
        } else {
            for index in 0..<width {
                value |= UInt64(base.load(fromByteOffset: offset &+ index, as: UInt8.self)) << (8 * UInt64(index))
            }
        }
        offset &+= width
        return value
    }

    mutating func readLittleEndian<T: FixedWidthInteger>(_: T.Type) throws(GraphArchiveError) -> T {
        T(truncatingIfNeeded: try readLittleEndian(width: MemoryLayout<T>.size))
    }

    /// Skips `count` bytes, checking they exist.
    @inline(__always)
    mutating func skip(_ count: Int) throws(GraphArchiveError) {
        guard count >= 0, count <= end - offset else { throw truncated("a value") }
        offset &+= count
    }

    /// Reads `count` bytes as UTF-8, throwing `.invalidUTF8` if they are not.
    @inline(__always)
    mutating func readString(count: Int) throws(GraphArchiveError) -> String {
        guard count >= 0, count <= end - offset else { throw truncated("a string") }
        let buffer = UnsafeRawBufferPointer(start: base + offset, count: count).assumingMemoryBound(to: UInt8.self)
        let string: String
        // ASCII is always valid UTF-8 and takes the fast constructor; `String(validating:)`
        // costs hundreds of instructions per string (measured with callgrind). The bytes were
        // just checked, so they are handed over as known ASCII: `String(decoding:as:)` checked
        // them twice more (its UTF-8 validation, then its own ASCII scan): 3.7% of the
        // instructions of decoding grid states (callgrind).
        if Self.isASCII(buffer) {
            string = String(copying: UTF8Span(unchecked: buffer.span, isKnownASCII: true))
        } else {
            guard let validated = String(validating: buffer, as: UTF8.self) else {
                throw GraphArchiveError(.invalidUTF8, "string is not valid UTF-8", offset: offset)
            }
            string = validated
        }
        offset &+= count
        return string
    }

    /// True if no byte of `buffer` has its high bit set.
    ///
    /// Whole words, with no loop over single bytes: the last word overlaps the ones before it
    /// (and under 8 bytes, two 4-byte halves overlap; under 4, the first, middle and last byte
    /// cover them all). A byte loop for the 0-7 bytes after the last whole word was a quarter of
    /// the decode's time in reading a string (perf, 1M grid-state slots): names and dates of
    /// 5-40 bytes end that loop at a different count every time, a mispredicted branch each.
    @inline(__always)
    static func isASCII(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = buffer.baseAddress, !buffer.isEmpty else { return true }
        let raw = UnsafeRawPointer(start)
        let count = buffer.count
        var bits: UInt64
        if count >= 8 {
            bits = raw.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
            var index = 0
            while index < count &- 8 {
                bits |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index &+= 8
            }
        } else if count >= 4 {
            let halves =
                raw.loadUnaligned(as: UInt32.self) | raw.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
            bits = UInt64(halves)
        } else {
            bits = UInt64(start[0] | start[count >> 1] | start[count &- 1])
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    mutating func readBytes(count: Int) throws(GraphArchiveError) -> [UInt8] {
        guard count >= 0, count <= end - offset else { throw truncated("a byte string") }
        let buffer = UnsafeRawBufferPointer(start: base + offset, count: count)
        offset &+= count
        return Array(buffer)
    }

    /// Calls `body` with the next `count` bytes and moves past them.
    /// - Warning: Do not escape the pointer.
    mutating func readUnsafeBytes<R>(count: Int, _ body: (UnsafeRawBufferPointer) -> R) throws(GraphArchiveError) -> R {
        guard count >= 0, count <= end - offset else { throw truncated("a byte string") }
        let result = body(UnsafeRawBufferPointer(start: base + offset, count: count))
        offset &+= count
        return result
    }
}

extension ByteReader {
    /// The `count` bytes (at most 16) from `start`, as two little-endian words, zero past
    /// `count`; nil unless they are all within the reader's bytes.
    func words(from start: Int, count: Int) -> (low: UInt64, high: UInt64)? {
        guard count >= 0, count <= 16, start >= 0, start <= end &- count else { return nil }
        var words: (low: UInt64, high: UInt64) = (0, 0)
        for index in 0..<count {
            let byte = UInt64(base.load(fromByteOffset: start &+ index, as: UInt8.self))
            if index < 8 {
                words.low |= byte << UInt64(8 &* index)
            } else {
                words.high |= byte << UInt64(8 &* (index &- 8))
            }
        }
        return words
    }

    /// A reader over the `count` bytes at `bytes`, which the caller keeps valid and unchanged
    /// while anything reads through it (``CopiedValueBuffer``).
    static func reading(_ bytes: UnsafeRawPointer, count: Int) -> ByteReader {
        ByteReader(base: bytes, offset: 0, end: count)
    }

    /// The `count` bytes at the reader's position, which does not move; nil if fewer are left.
    /// - Warning: Do not let the buffer outlive the bytes the reader reads.
    @inline(__always)
    func peekBytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, count <= end &- offset else { return nil }
        return UnsafeRawBufferPointer(start: base + offset, count: count)
    }

    /// Runs `body` with a reader over `bytes`.
    /// - Warning: Do not let the reader escape `body`.
    static func withReader<R, E: Error>(
        over bytes: UnsafeRawBufferPointer,
        _ body: (inout ByteReader) throws(E) -> R
    ) throws(E) -> R {
        // A non-nil base even for empty input, so the reader's pointer is always valid.
        var reader = ByteReader(
            base: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 0x10)!,
            offset: 0,
            end: bytes.count
        )
        return try body(&reader)
    }
}

extension ByteReader {
    /// Moves past the next value if its tag says how long it is (``ValueTag/plainLength(_:)``:
    /// nil, booleans, numbers, dates and strings under 64 bytes, the values of most records).
    /// Returns false without moving for any other tag or a value cut short, which the walk of
    /// `ValueWalk.swift` then reads and checks.
    @inline(__always)
    mutating func skipPlainValue() -> Bool {
        guard offset < end else { return false }
        let length = ValueTag.plainLength(base.load(fromByteOffset: offset, as: UInt8.self))
        // 0 < length <= end - offset in one comparison: 0 wraps round to the largest UInt.
        guard UInt(bitPattern: length &- 1) < UInt(bitPattern: end &- offset) else { return false }
        offset &+= length
        return true
    }

    /// Appends the bytes from `start` to the reader's position, already passed, to `writer`.
    @inline(__always)
    func copyPassed(from start: Int, into writer: inout ByteWriter) {
        precondition(start >= 0 && start <= offset)
        writer.writeBytes(UnsafeRawBufferPointer(start: base + start, count: offset &- start))
    }

    /// Appends the bytes from `start` to the reader's position, already passed, to buffer
    /// `index` of `writers`.
    @inline(__always)
    func copyPassed(from start: Int, into writers: inout ByteWriters, at index: Int) {
        precondition(start >= 0 && start <= offset)
        writers.append(UnsafeRawBufferPointer(start: base + start, count: offset &- start), to: index)
    }

    /// Appends the `count` bytes at `start` to `writer`, checked to lie within the reader's.
    @inline(__always)
    func copyBytes(from start: Int, count: Int, into writer: inout ByteWriter) throws(GraphArchiveError) {
        guard count >= 0, start >= 0, start <= end &- count else {
            var cursor = self
            cursor.offset = start
            throw cursor.truncated("a byte string")
        }
        writer.writeBytes(from: base + start, count: count, readable: end &- start)
    }
}

extension ByteReader {
    /// Reads `count` big-endian unsigned numbers of `width` (1...8) bytes each from the
    /// reader's position into 32-bit values, stopping at the first outside `bounds`: the table
    /// read, and the position and value of the one outside if there was one. The reader does
    /// not move.
    ///
    /// One unaligned load per number where eight bytes are readable (a binary property list's
    /// offset table, read once per object: callgrind counted about 30 instructions per offset
    /// through `readBigEndian` and `append`).
    func bigEndianTable(count: Int, width: Int, within bounds: Range<UInt64>) throws(GraphArchiveError) -> (
        table: [UInt32], outside: (position: Int, value: UInt64)?
    ) {
        precondition((1...8).contains(width) && count >= 0, "table width must be 1...8")
        let (size, overflow) = count.multipliedReportingOverflow(by: width)
        guard !overflow, size <= end &- offset else { throw truncated("a number table") }
        precondition(bounds.upperBound <= UInt64(UInt32.max) + 1, "table values must fit 32 bits")
        let shift = UInt64(64 &- 8 &* width)
        let start = base + offset
        // Numbers whose eight-byte load stays within the reader's bytes.
        let loadable = end &- offset >= 8 ? min(count, (end &- offset &- 8) / width &+ 1) : 0
        var outside: (position: Int, value: UInt64)?
        let (low, high) = (bounds.lowerBound, bounds.upperBound)
        let table = [UInt32](unsafeUninitializedCapacity: count) { buffer, initialized in
            // Compared as one unsigned subtraction: value - low < high - low.
            let span = high &- low
            // The widths property list writers use, read as what they are: one load of the
            // number's own size, no shift (callgrind: 12 instructions per number the general
            // way, 10 so).
            switch width {
            case 4:
                (initialized, outside) = Self.fillTable(buffer, from: start, count: count, as: UInt32.self, low, span)
                return
            case 2:
                (initialized, outside) = Self.fillTable(buffer, from: start, count: count, as: UInt16.self, low, span)
                return
            case 1:
                (initialized, outside) = Self.fillTable(buffer, from: start, count: count, as: UInt8.self, low, span)
                return
            default:
                break
            }
            var position = 0
            var at = 0
            while position < loadable {
                let value = start.loadUnaligned(fromByteOffset: at, as: UInt64.self).bigEndian &>> shift
                guard value &- low < span else {
                    outside = (position, value)
                    initialized = position
                    return
                }
                buffer[position] = UInt32(truncatingIfNeeded: value)
                position &+= 1
                at &+= width
            }
            while position < count {
                var value: UInt64 = 0
                for index in 0..<width {
                    value = value << 8 | UInt64(start.load(fromByteOffset: at &+ index, as: UInt8.self))
                }
                guard value &- low < span else {
                    outside = (position, value)
                    break
                }
                buffer[position] = UInt32(truncatingIfNeeded: value)
                position &+= 1
                at &+= width
            }
            initialized = position
        }
        return (table, outside)
    }

    /// Fills `buffer` with `count` big-endian numbers of `Number`'s width at `start` (all
    /// readable): how many come before the first whose `value - low` is not below `span` (all,
    /// if none is), and the position and value of that one if there is one.
    @inline(__always)
    private static func fillTable<Number: FixedWidthInteger & UnsignedInteger>(
        _ buffer: UnsafeMutableBufferPointer<UInt32>,
        from start: UnsafeRawPointer,
        count: Int,
        as _: Number.Type,
        _ low: UInt64,
        _ span: UInt64
    ) -> (filled: Int, outside: (position: Int, value: UInt64)?) {
        guard let table = buffer.baseAddress else { return (0, nil) }
        let width = MemoryLayout<Number>.size
        guard span > 0 else {
            guard count > 0 else { return (0, nil) }
            return (0, (0, UInt64(Number(bigEndian: start.loadUnaligned(as: Number.self)))))
        }
        // Every number filled and checked in 32 bits, without a branch, so that the loop is
        // vectorized (about 4 times as fast as stopping at the first number outside); that one,
        // if any, is looked for after. The bounds fit 32 bits (`span` ≤ 2^32): a number below
        // `low` wraps above `last`, as in 64 bits.
        let low32 = UInt32(truncatingIfNeeded: low)
        let last = UInt32(truncatingIfNeeded: span &- 1)
        var outside: UInt32 = 0
        var position = 0
        while position < count {
            let number = start.loadUnaligned(fromByteOffset: position &* width, as: Number.self)
            let value = UInt32(Number(bigEndian: number))
            outside |= value &- low32 > last ? 1 : 0
            table[position] = value
            position &+= 1
        }
        guard outside != 0 else { return (count, nil) }
        // At most 32 bits wide, each number is in the table as it was read.
        position = 0
        while UInt64(table[position]) &- low < span { position &+= 1 }
        return (position, (position, UInt64(table[position])))
    }
}

extension ByteReader {
    /// The `count` (0...24) bytes at `start` as three little-endian words, zero past `count`;
    /// nil unless 24 bytes are readable from `start` (three loads, no loop: the short keys of
    /// a property list, whose offset table and trailer follow its objects). The reader does
    /// not move.
    @inline(__always)
    func paddedWords(at start: Int, count: Int) -> (UInt64, UInt64, UInt64)? {
        guard count >= 0 && count <= 24 && start >= 0 && start <= end &- 24 else { return nil }
        let bits = count &* 8
        return (
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: start, as: UInt64.self)) & Self.lowBits(bits),
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: start &+ 8, as: UInt64.self))
                & Self.lowBits(bits &- 64),
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: start &+ 16, as: UInt64.self))
                & Self.lowBits(bits &- 128)
        )
    }

    /// The `count` (0...64) bytes at `start` as eight little-endian words, zero past them, if
    /// the reader holds 64 bytes from `start`.
    @inline(__always)
    func eightWords(at start: Int, count: Int) -> EightWords? {
        eightWords(at: start, count: count, masks: EightWords.masks)
    }

    /// ``eightWords(at:count:)`` with ``EightWords/masks`` passed in: a caller that reads many
    /// keeps the table, as the global's every use checks that it was made (`swift_once`,
    /// callgrind: once per instance dictionary matched).
    @inline(__always)
    func eightWords(at start: Int, count: Int, masks: [EightWords]) -> EightWords? {
        guard start >= 0 && start <= end &- 64 && count >= 0 && count <= 64 else { return nil }
        // The masks from a table: working each out took about as long as the rest of the read.
        let mask = masks[count]
        func word(_ index: Int) -> UInt64 {
            UInt64(littleEndian: base.loadUnaligned(fromByteOffset: start &+ 8 &* index, as: UInt64.self))
        }
        return EightWords(
            word(0) & mask.words.0,
            word(1) & mask.words.1,
            word(2) & mask.words.2,
            word(3) & mask.words.3,
            word(4) & mask.words.4,
            word(5) & mask.words.5,
            word(6) & mask.words.6,
            word(7) & mask.words.7
        )
    }

    /// A mask of the low `bits` bits: none for `bits` ≤ 0, all from 64.
    @inline(__always)
    static func lowBits(_ bits: Int) -> UInt64 {
        bits <= 0 ? 0 : bits >= 64 ? ~0 : (1 &<< UInt64(bits)) &- 1
    }
}

/// 64 bytes as eight words: an instance's keys, compared and hashed whole (`KeyLayout`).
struct EightWords: Equatable {
    var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    init(
        _ w0: UInt64 = 0,
        _ w1: UInt64 = 0,
        _ w2: UInt64 = 0,
        _ w3: UInt64 = 0,
        _ w4: UInt64 = 0,
        _ w5: UInt64 = 0,
        _ w6: UInt64 = 0,
        _ w7: UInt64 = 0
    ) {
        words = (w0, w1, w2, w3, w4, w5, w6, w7)
    }

    /// For each count of bytes from 0 to 64, the words that keep that many.
    static let masks: [EightWords] = (0...64).map { count in
        let bits = 8 * count
        return EightWords(
            ByteReader.lowBits(bits),
            ByteReader.lowBits(bits - 64),
            ByteReader.lowBits(bits - 128),
            ByteReader.lowBits(bits - 192),
            ByteReader.lowBits(bits - 256),
            ByteReader.lowBits(bits - 320),
            ByteReader.lowBits(bits - 384),
            ByteReader.lowBits(bits - 448)
        )
    }

    /// Without a branch per word: equal words, the common case, are all compared anyway.
    @inline(__always)
    static func == (lhs: EightWords, rhs: EightWords) -> Bool {
        let (a, b) = (lhs.words, rhs.words)
        return (a.0 ^ b.0) | (a.1 ^ b.1) | (a.2 ^ b.2) | (a.3 ^ b.3) | (a.4 ^ b.4) | (a.5 ^ b.5) | (a.6 ^ b.6)
            | (a.7 ^ b.7) == 0
    }

    /// Every word mixed in, starting from `seed`.
    @inline(__always)
    func hash(seed: UInt64) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var mixed = (seed ^ words.0) &* multiplier
        mixed = (mixed ^ words.1) &* multiplier
        mixed = (mixed ^ words.2) &* multiplier
        mixed = (mixed ^ words.3) &* multiplier
        mixed = (mixed ^ words.4) &* multiplier
        mixed = (mixed ^ words.5) &* multiplier
        mixed = (mixed ^ words.6) &* multiplier
        return (mixed ^ words.7) &* multiplier
    }
}

/// The columns of a columnar object table (FORMAT.md §5.5, §5.6) being rebuilt row-wise: where
/// each shape's columns are, the next unread cell of each column, and a value's length by its
/// tag, in tables of their own that ``ArchiveBytesWriter/writeRows(_:shapes:within:columns:readShape:skipValue:)``
/// reads without checking each index: a record's shape id is checked against the shape count,
/// and every column index then lies within the cursors (the first columns, checked once here,
/// never decrease).
struct ColumnCursors: ~Copyable {
    /// For each shape, the index of its first column; one more entry holds the column count.
    fileprivate let firstColumn: UnsafeMutablePointer<Int>
    /// The next unread cell of each column: an offset in the payload, never negative.
    fileprivate let cursor: UnsafeMutablePointer<Int>
    /// For each tag byte, the length of a value it starts when the tag alone (or with a short
    /// string's length) says it and the value is at most ``longestPlainCell`` bytes; 0 for the
    /// rest, which take the checked path.
    fileprivate let lengthOfTag: UnsafeMutablePointer<UInt8>
    let shapeCount: Int
    let columnCount: Int

    /// - Parameters:
    ///   - shapeValueCounts: Values per record of each shape (none negative).
    ///   - plainLength: The length of a value from its tag (0: the tag does not say). A length
    ///     above ``longestPlainCell`` counts as 0: the fast path copies no more than that.
    init(shapeValueCounts: [Int], plainLength: (UInt8) -> Int) {
        shapeCount = shapeValueCounts.count
        firstColumn = .allocate(capacity: shapeCount + 1)
        var columns = 0
        for (shape, count) in shapeValueCounts.enumerated() {
            precondition(count >= 0, "a shape has a negative value count")
            firstColumn[shape] = columns
            columns += count
        }
        firstColumn[shapeCount] = columns
        columnCount = columns
        cursor = .allocate(capacity: max(columns, 1))
        cursor.initialize(repeating: 0, count: max(columns, 1))
        lengthOfTag = .allocate(capacity: 256)
        for tag in 0..<256 {
            let length = plainLength(UInt8(tag))
            precondition(length >= 0, "a tag's value length is never negative")
            lengthOfTag[tag] = length <= Self.longestPlainCell ? UInt8(length) : 0
        }
    }

    /// The longest cell the fast path copies whole, as up to four 16-byte words.
    static let longestPlainCell = 64

    deinit {
        firstColumn.deallocate()
        cursor.deallocate()
        lengthOfTag.deallocate()
    }

    /// The columns of `shape`, which must be below ``shapeCount``.
    func columns(ofShape shape: Int) -> Range<Int> {
        precondition(shape >= 0 && shape < shapeCount, "shape \(shape) out of range (\(shapeCount))")
        return firstColumn[shape]..<firstColumn[shape + 1]
    }

    /// The next unread cell of `column`.
    subscript(column: Int) -> Int {
        get {
            precondition(column >= 0 && column < columnCount, "column \(column) out of range (\(columnCount))")
            return cursor[column]
        }
        set {
            precondition(column >= 0 && column < columnCount, "column \(column) out of range (\(columnCount))")
            precondition(newValue >= 0, "a column cursor is an offset in the payload")
            cursor[column] = newValue
        }
    }
}

extension ArchiveBytesWriter {
    /// Bytes copied whole for a cell of up to 32 (or 64) bytes: what must be readable from
    /// where it starts and writable from where it goes.
    private static let cellCopyBytes = ColumnCursors.longestPlainCell

    /// Appends `records` records of a columnar block row-wise, each its shape id (read from
    /// `shapes`) and the next cell of each of the shape's columns (read where `columns` point,
    /// each cursor moved past its cell).
    ///
    /// For a block whose shape stream and columns have been checked whole (the rebuild's first
    /// pass): a record whose id is one byte is copied without its bytes being checked again,
    /// each cell whose tag gives its length as whole 16-byte words (up to 64 bytes, the bytes
    /// past its end written over by the next cell), when that many are readable from it within
    /// `payload` and the buffer has room for the whole record so copied. Every other cell goes
    /// through `skipValue` and `writePassed`, and every other shape id through `readShape`, on
    /// a reader over `shapes`'s bytes, with their checks. Bytes are read only within `payload`,
    /// and written only within the buffer; the caller checks that a block comes out as long as
    /// it is.
    ///
    /// - Parameters:
    ///   - shapes: The block's shape stream at the next record's id; its end is the block's.
    ///   - payload: A reader over all the bytes `shapes` reads (and the cells around them).
    ///   - readShape: Reads a shape id, checking it; returns one below `columns.shapeCount`.
    ///   - skipValue: Steps over a value, checking it.
    /// - Throws: what `readShape` and `skipValue` throw; `.corrupt` if the records do not fit
    ///   in what is left of the buffer.
    mutating func writeRows(
        _ records: Int,
        shapes: inout ByteReader,
        within payload: ByteReader,
        columns: inout ColumnCursors,
        readShape: (inout ByteReader) throws(GraphArchiveError) -> Int,
        skipValue: (inout ByteReader) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        precondition(shapes.base == payload.base && shapes.end <= payload.end && payload.offset == 0)
        var left = records
        while left > 0 {
            var shapeAt = shapes.offset
            var written = count
            let (done, unwritten) = Self.copyRecords(
                left,
                shapes: payload.base,
                at: &shapeAt,
                end: shapes.end,
                // A cell from an offset at most this (cursors are never negative) has 64 bytes readable.
                readLimit: payload.end &- Self.cellCopyBytes,
                into: buffer.baseAddress,
                at: &written,
                capacity: buffer.count,
                columns: columns
            )
            shapes.offset = shapeAt
            count = written
            left -= done
            guard left > 0 else { break }
            // The next record, or the cells of it not copied, the checked way.
            var rest = unwritten
            if rest == nil {
                let shapeStart = shapes.offset
                let shape = try readShape(&shapes)
                try writePassed(from: shapeStart, of: shapes)
                rest = columns.columns(ofShape: shape)
            }
            for column in rest! {
                var cell = shapes
                cell.offset = columns[column]
                try skipValue(&cell)
                try writePassed(from: columns[column], of: cell)
                columns[column] = cell.offset
            }
            left -= 1
        }
    }

    /// The fast path of ``writeRows(_:shapes:within:columns:readShape:skipValue:)``: copies up
    /// to `records` records whose ids are one byte below the shape count and whose cells'
    /// tags give their lengths, from the shape stream at `shapeAt` (its end `shapesEnd`) into
    /// `target` at `written`, while each has room for every cell copied whole and each cell
    /// has 64 bytes readable (starts at or before `readLimit`). Returns how many records it
    /// copied whole and, if it stopped inside a record (its id and first cells copied), the
    /// columns of that record not copied.
    @inline(never)
    private static func copyRecords(
        _ records: Int,
        shapes source: UnsafeRawPointer,
        at shapeAt: inout Int,
        end shapesEnd: Int,
        readLimit: Int,
        into buffer: UnsafeMutableRawPointer?,
        at written: inout Int,
        capacity: Int,
        columns: borrowing ColumnCursors
    ) -> (done: Int, unwritten: Range<Int>?) {
        guard let target = buffer else { return (0, nil) }
        let firstColumn = columns.firstColumn
        let cursor = columns.cursor
        let lengthOfTag = columns.lengthOfTag
        let shapeCount = columns.shapeCount
        var at = shapeAt
        var out = written
        var done = 0
        var unwritten: Range<Int>?
        records: while done < records && at < shapesEnd {
            let id = source.load(fromByteOffset: at, as: UInt8.self)
            guard id < 0x80 && Int(id) < shapeCount else { break }
            var column = firstColumn[Int(id)]
            let end = firstColumn[Int(id) &+ 1]
            guard (end &- column) &* Self.cellCopyBytes &+ 1 <= capacity &- out else { break }
            target.storeBytes(of: id, toByteOffset: out, as: UInt8.self)
            out &+= 1
            at &+= 1
            while column < end {
                let cellStart = cursor[column]
                let length =
                    cellStart <= readLimit
                    ? Int(lengthOfTag[Int(source.load(fromByteOffset: cellStart, as: UInt8.self))]) : 0
                guard length != 0 else {
                    unwritten = column..<end
                    break records
                }
                let from = source + cellStart
                let to = target + out
                to.storeBytes(of: from.loadUnaligned(as: SIMD16<UInt8>.self), as: SIMD16<UInt8>.self)
                to.storeBytes(
                    of: from.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self),
                    toByteOffset: 16,
                    as: SIMD16<UInt8>.self
                )
                if length > 32 {
                    to.storeBytes(
                        of: from.loadUnaligned(fromByteOffset: 32, as: SIMD16<UInt8>.self),
                        toByteOffset: 32,
                        as: SIMD16<UInt8>.self
                    )
                    to.storeBytes(
                        of: from.loadUnaligned(fromByteOffset: 48, as: SIMD16<UInt8>.self),
                        toByteOffset: 48,
                        as: SIMD16<UInt8>.self
                    )
                }
                out &+= length
                cursor[column] = cellStart &+ length
                column &+= 1
            }
            done &+= 1
        }
        shapeAt = at
        written = out
        return (done, unwritten)
    }
}

extension ByteReader {
    /// Moves past up to `count` values whose tags give their lengths (by `columns`' table, as
    /// ``ValueTag/plainLength(_:)`` does), stopping before the first other one or one that runs
    /// past the end; returns how many it passed. The values after it are for the walk of
    /// `ValueWalk.swift` to read and check, as ``skipPlainValue()`` leaves them.
    mutating func skipPlainValues(_ count: Int, lengths columns: borrowing ColumnCursors) -> Int {
        let lengthOfTag = columns.lengthOfTag
        var at = offset
        var passed = 0
        while passed < count && at < end {
            let length = Int(lengthOfTag[Int(base.load(fromByteOffset: at, as: UInt8.self))])
            // 0 < length <= end - at in one comparison: 0 wraps round to the largest UInt.
            guard UInt(bitPattern: length &- 1) < UInt(bitPattern: end &- at) else { break }
            at &+= length
            passed &+= 1
        }
        offset = at
        return passed
    }
}
