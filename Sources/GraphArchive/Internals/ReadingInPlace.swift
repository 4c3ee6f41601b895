// Sources/GraphArchive/Internals/ReadingInPlace.swift - bytes read where they are: a caller's Data, a writer's output

import FoundationEssentials

extension ArchiveBytes {
    /// Calls `body` with `data`'s bytes lent as ``ArchiveBytes`` (`init(borrowing:)`), not
    /// copied: decoding an archive handed over as `Data` costs no second buffer of its size.
    ///
    /// - Warning: Everything that reads the lent bytes must be done, or closed
    ///   (`ByteReader.closed()`), before `body` returns; the bytes may be gone after.
    static func lending<R, E: Error>(_ data: Data, _ body: (ArchiveBytes) throws(E) -> R) throws(E) -> R {
        // Data.withUnsafeBytes rethrows untyped errors; carry the typed result out instead.
        let result = data.withUnsafeBytes { raw in
            Result { () throws(E) -> R in try body(ArchiveBytes(borrowing: raw)) }
        }
        return try result.get()
    }
}

extension ByteWriter {
    /// Calls `body` with a reader over the bytes written so far, without copying them (to read
    /// back what was just written).
    ///
    /// - Warning: Do not let the reader escape `body`.
    func withReader<R, E: Error>(_ body: (inout ByteReader) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytes { (raw) throws(E) -> R in try ByteReader.withReader(over: raw, body) }
    }

    /// Calls `body` with a reader over the bytes `range` written so far (offsets count from
    /// `range`'s start), without copying them.
    ///
    /// - Warning: Do not let the reader escape `body`.
    func withReader<R, E: Error>(
        in range: Range<Int>,
        _ body: (inout ByteReader) throws(E) -> R
    ) throws(E) -> R {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of the written bytes")
        return try withUnsafeBytes { (raw) throws(E) -> R in
            try ByteReader.withReader(over: UnsafeRawBufferPointer(rebasing: raw[range]), body)
        }
    }
}
