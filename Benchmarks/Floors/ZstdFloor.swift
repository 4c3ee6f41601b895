// Benchmarks/Floors/ZstdFloor.swift - zstd's own speed on the archive payload, outside the engine

#if Zstd
import CZstd
#endif

/// Compresses and decompresses with libzstd's one-shot calls into buffers made once, so a run
/// times zstd and nothing else: the floor for gridstore's zstd rows.
///
/// Arrays are passed to the C calls directly (Swift's array-to-pointer conversion), so no
/// pointer code lives here.
struct ZstdFloor {
    /// The last decompressed payload.
    private(set) var output: [UInt8]
    private var compressedBuffer: [UInt8]

    /// - Throws: ``Unavailable`` when the build has no zstd (`--disable-default-traits`).
    init(payloadSize: Int) throws {
        #if Zstd
        output = [UInt8](repeating: 0, count: payloadSize)
        compressedBuffer = [UInt8](repeating: 0, count: ZSTD_compressBound(payloadSize))
        #else
        throw Unavailable("built without the Zstd trait: no libzstd to measure")
        #endif
    }

    /// Compresses `payload` into the internal buffer; returns the compressed size.
    mutating func compress(_ payload: [UInt8], level: Int) throws -> Int {
        #if Zstd
        let size = ZSTD_compress(&compressedBuffer, compressedBuffer.count, payload, payload.count, Int32(level))
        return try Self.checked(size)
        #else
        throw Unavailable("built without the Zstd trait")
        #endif
    }

    /// The compressed form of `payload`, as its own array.
    mutating func compressed(_ payload: [UInt8], level: Int) throws -> [UInt8] {
        let size = try compress(payload, level: level)
        return Array(compressedBuffer[..<size])
    }

    /// Decompresses `compressed` into ``output``.
    mutating func decompress(_ compressed: [UInt8]) throws {
        #if Zstd
        let size = ZSTD_decompress(&output, output.count, compressed, compressed.count)
        try expect(try Self.checked(size) == output.count, "zstd decompressed \(size) bytes, expected \(output.count)")
        #else
        throw Unavailable("built without the Zstd trait")
        #endif
    }

    /// Decompresses the first `compressedSize` bytes of the internal buffer; returns ``output``.
    mutating func roundTrip(compressedSize: Int) throws -> [UInt8] {
        try decompress(Array(compressedBuffer[..<compressedSize]))
        return output
    }

    #if Zstd
    private static func checked(_ result: Int) throws -> Int {
        guard ZSTD_isError(result) == 0 else {
            throw VerificationError("zstd failed: \(String(cString: ZSTD_getErrorName(result)))")
        }
        return result
    }
    #endif
}
