// Sources/GraphArchive/Internals/CopiedValue.swift - a short tagged value copied out of the payload

/// The bytes of a short tagged value (at most ``capacity``), copied out of the payload so that
/// a deferred assignment can read it after the payload's bytes there are given back: nil or one
/// object reference, the value of nearly every back link, is at most 11 bytes, and a packed
/// array of a few references fits too (up to 14 of neighbouring objects). Held in two words, so
/// that keeping one allocates nothing; a longer array is read where it is.
struct CopiedValue {
    static let capacity = 16

    /// The bytes, little endian.
    fileprivate var low: UInt64 = 0
    fileprivate var high: UInt64 = 0
    /// Bytes held; 0 for none.
    private var held: UInt8 = 0

    var count: Int { Int(held) }

    /// No bytes.
    init() {}

    /// Copies the bytes `range` of `reader`'s input; nil if they are more than ``capacity`` or
    /// not all within the reader's bytes.
    init?(_ range: Range<Int>, of reader: ByteReader) {
        guard let words = reader.words(from: range.lowerBound, count: range.count) else { return nil }
        (low, high) = words
        held = UInt8(range.count)
    }

    var isEmpty: Bool { held == 0 }
}

/// The buffer a ``CopiedValue`` is read from: one per decode, written before each read.
final class CopiedValueBuffer {
    private let storage = UnsafeMutableRawPointer.allocate(
        byteCount: CopiedValue.capacity,
        alignment: MemoryLayout<UInt64>.alignment
    )

    deinit {
        storage.deallocate()
    }

    /// A reader over `value`'s bytes, at offsets from 0, valid until the next call (or until
    /// this buffer goes, which its owner holds while anything reads through the reader).
    func reader(holding value: CopiedValue) -> ByteReader {
        storage.storeBytes(of: value.low.littleEndian, as: UInt64.self)
        storage.storeBytes(of: value.high.littleEndian, toByteOffset: 8, as: UInt64.self)
        return ByteReader.reading(storage, count: value.count)
    }
}
