// Sources/GraphArchive/Internals/ByteWriter+Data.swift - a finished buffer handed to Data

import FoundationEssentials

extension ByteWriter {
    /// The bytes written, as a `Data` that takes over the buffer: no copy, and no second
    /// allocation of the archive's size (for 1M grid-state slots, 38.6 MB the encode no longer
    /// copies, into pages it would have had to fault in).
    consuming func takeData() -> Data {
        let (bytes, count, mappedBytes) = takeBuffer()
        guard mappedBytes > 0 else { return Data(bytesNoCopy: bytes, count: count, deallocator: .free) }
        return Data(
            bytesNoCopy: bytes,
            count: count,
            deallocator: .custom { memory, _ in
                ZeroedMemory.unmap(memory, byteCount: mappedBytes)
            }
        )
    }
}

extension Data {
    /// Appends the bytes `writer` has written so far, in one copy.
    mutating func append(_ writer: borrowing ByteWriter) {
        writer.withUnsafeBytes { append($0.assumingMemoryBound(to: UInt8.self)) }
    }
}

extension Array where Element == UInt8 {
    /// Appends the bytes `writer` has written so far.
    mutating func append(contentsOf writer: borrowing ByteWriter) {
        writer.withUnsafeBytes { append(contentsOf: $0) }
    }
}
