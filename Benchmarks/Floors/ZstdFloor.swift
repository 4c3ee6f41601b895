// Benchmarks/Floors/ZstdFloor.swift - zstd's own speed on the archive payload, outside the engine

import Foundation

#if Zstd
internal import CZstd
#endif

/// Compresses and decompresses with libzstd alone, with the engine's settings (level, frame
/// checksum, one thread, a 2^19 window) and buffers made once, so a run times zstd and
/// nothing else: the floor of gridstore's zstd rows.
///
/// Arrays are passed to the C calls directly (Swift's array-to-pointer conversion), so no
/// pointer code lives here.
final class ZstdFloor {
    /// The last decompressed payload.
    private(set) var output: [UInt8]
    private var compressedBuffer: [UInt8]
    #if Zstd
    private let context: OpaquePointer
    #endif

    /// - Throws: ``Unavailable`` when the build has no zstd (`--disable-default-traits`).
    init(payloadSize: Int, level: Int) throws {
        #if Zstd
        guard let context = ZSTD_createCCtx() else { throw VerificationError("zstd: cannot create a context") }
        self.context = context
        output = [UInt8](repeating: 0, count: payloadSize)
        compressedBuffer = [UInt8](repeating: 0, count: ZSTD_compressBound(payloadSize))
        try Self.checked(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level)))
        try Self.checked(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1))
        // As the engine does (CompressedPayload): one thread, a 2^19 window.
        try Self.checked(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, 19))
        #else
        throw Unavailable("built without the Zstd trait: no libzstd to measure")
        #endif
    }

    #if Zstd
    deinit { ZSTD_freeCCtx(context) }
    #endif

    /// Compresses `payload` into the internal buffer; returns the compressed size.
    @discardableResult
    func compress(_ payload: [UInt8]) throws -> Int {
        #if Zstd
        try Self.checked(ZSTD_compress2(context, &compressedBuffer, compressedBuffer.count, payload, payload.count))
        #else
        throw Unavailable("built without the Zstd trait")
        #endif
    }

    /// The compressed form of `payload`, as its own array.
    func compressed(_ payload: [UInt8]) throws -> [UInt8] {
        let size = try compress(payload)
        return Array(compressedBuffer[..<size])
    }

    /// Decompresses `compressed` into ``output``.
    func decompress(_ compressed: [UInt8]) throws {
        #if Zstd
        let size = try Self.checked(ZSTD_decompress(&output, output.count, compressed, compressed.count))
        try expect(size == output.count, "zstd decompressed \(size) bytes, expected \(output.count)")
        #else
        throw Unavailable("built without the Zstd trait")
        #endif
    }

    /// Decompresses the first `compressedSize` bytes of the internal buffer; returns ``output``.
    func roundTrip(compressedSize: Int) throws -> [UInt8] {
        try decompress(Array(compressedBuffer[..<compressedSize]))
        return output
    }

    /// The content of one zstd frame of `contentSize` bytes (the archive header's
    /// payloadLength: the engine compresses while it encodes, so the frame does not record its
    /// size): what the engine compressed, taken from its archive (the blocked columnar layout of
    /// compressed archives, FORMAT.md §5.6, is not the row-wise payload of an uncompressed one).
    static func content(ofFrame frame: [UInt8], contentSize: Int) throws -> [UInt8] {
        #if Zstd
        var content = [UInt8](repeating: 0, count: contentSize)
        let written = try checked(ZSTD_decompress(&content, content.count, frame, frame.count))
        try expect(written == content.count, "zstd decompressed \(written) bytes, expected \(content.count)")
        return content
        #else
        throw Unavailable("built without the Zstd trait")
        #endif
    }

    #if Zstd
    @discardableResult
    private static func checked(_ result: Int) throws -> Int {
        guard ZSTD_isError(result) == 0 else {
            throw VerificationError("zstd failed: \(String(cString: ZSTD_getErrorName(result)))")
        }
        return result
    }
    #endif
}
