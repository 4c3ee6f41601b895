// Sources/GraphArchive/Internals/ByteWriter.swift - growable little-endian output buffer

/// An append-only byte buffer with the primitive writes the format needs.
///
/// One `[UInt8]` grown geometrically by the standard library, so a large archive is
/// reallocated only O(log n) times. All multi-byte values are little endian (FORMAT.md §2).
struct ByteWriter {
    private(set) var bytes: [UInt8]

    init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

    @inline(__always)
    mutating func writeByte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Writes an unsigned LEB128 varint (FORMAT.md §2.2).
    @inline(__always)
    mutating func writeVarint(_ value: UInt64) {
        if value < 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value))
            return
        }
        writeVarintSlow(value)
    }

    @inline(never)
    private mutating func writeVarintSlow(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: rest))
    }

    @inline(__always)
    mutating func writeVarint(_ value: Int) {
        writeVarint(UInt64(truncatingIfNeeded: value))
    }

    /// Writes the low `width` bytes of `value`, little endian.
    @inline(__always)
    mutating func writeLittleEndian(_ value: UInt64, width: Int) {
        var rest = value
        for _ in 0..<width {
            bytes.append(UInt8(truncatingIfNeeded: rest))
            rest >>= 8
        }
    }

    mutating func writeLittleEndian<T: FixedWidthInteger>(_ value: T) {
        writeLittleEndian(UInt64(truncatingIfNeeded: value), width: MemoryLayout<T>.size)
    }

    mutating func writeBytes(_ other: some Sequence<UInt8>) {
        bytes.append(contentsOf: other)
    }

    /// Appends the UTF-8 of `string`, taking the contiguous fast path for native strings.
    @inline(__always)
    mutating func writeUTF8(_ string: String) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes.append(contentsOf: $0) }
        if done == nil {
            bytes.append(contentsOf: string.utf8)
        }
    }

    /// Overwrites one byte already written (the record placeholder of FORMAT.md §5.3).
    @inline(__always)
    mutating func setByte(_ byte: UInt8, at index: Int) {
        bytes[index] = byte
    }

    /// Inserts `extra` bytes at `index`, moving what follows; used only when a record's shape id
    /// outgrows its one-byte placeholder.
    mutating func insert(_ extra: [UInt8], at index: Int) {
        bytes.insert(contentsOf: extra, at: index)
    }

    mutating func removeAll(keepingCapacity: Bool) {
        bytes.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Hands the bytes over, leaving this writer empty.
    mutating func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    /// Number of bytes `writeVarint(value)` produces.
    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        let bits = 64 - (value | 1).leadingZeroBitCount
        return (bits + 6) / 7
    }
}
