// Sources/GraphArchive/Compression/PayloadCompression.swift - compressing and decompressing payloads

/// The one place the engine calls a compressor.
enum PayloadCompression {
    /// Whether this build can read and write zstd archives.
    static var isZstdAvailable: Bool { false }

    static func compress(_ pieces: [OutputChunk], level: Int) throws(GraphArchiveError) -> ByteWriter {
        throw unavailable()
    }

    /// Decompresses `stored` into exactly `payloadLength` bytes.
    static func decompress(
        _ stored: UnsafeRawBufferPointer, payloadLength: Int, maximumBytes: Int
    ) throws(GraphArchiveError) -> ArchiveBytes {
        throw unavailable()
    }

    static func unavailable() -> GraphArchiveError {
        GraphArchiveError(.compressionUnavailable, "this build of gridstore has no zstd support (built without the Zstd trait)")
    }
}
