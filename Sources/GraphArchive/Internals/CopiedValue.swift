// Sources/GraphArchive/Internals/CopiedValue.swift - a short tagged value copied out of the payload

/// The bytes of a short tagged value (at most ``capacity``), copied out of the payload so that
/// a deferred assignment can read it after the payload's bytes there are given back: nil or one
/// object reference, the value of nearly every back link, is at most 11 bytes. Held in two
/// words, so that keeping one allocates nothing.
struct CopiedValue {
    static let capacity = 16

    /// The bytes in memory order (little endian).
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    /// Bytes held; 0 for none.
    private(set) var count = 0

    /// No bytes.
    init() {}

    /// Copies the bytes `range` of `reader`'s input; nil if they are more than ``capacity`` or
    /// not all within the reader's bytes.
    init?(_ range: Range<Int>, of reader: ByteReader) {
        guard range.count <= Self.capacity, range.lowerBound >= 0 else { return nil }
        var walker = reader
        walker.offset = range.lowerBound
        for position in 0..<range.count {
            guard let byte = try? walker.readByte() else { return nil }
            if position < 8 {
                low |= UInt64(byte) << (8 * UInt64(position))
            } else {
                high |= UInt64(byte) << (8 * UInt64(position - 8))
            }
        }
        count = range.count
    }

    var isEmpty: Bool { count == 0 }

    /// Runs `body` with a reader over the bytes, at offsets from 0.
    /// - Warning: Do not let the reader escape `body`.
    func withReader<R>(_ body: (inout ByteReader) throws -> R) rethrows -> R {
        var words = (low.littleEndian, high.littleEndian)
        let count = count
        return try withUnsafeBytes(of: &words) { bytes in
            try ByteReader.withReader(over: UnsafeRawBufferPointer(rebasing: bytes[0..<count]), body)
        }
    }
}
