// Sources/GraphArchive/Compression/CompressedPayload.swift - a zstd payload compressed as it is produced

/// The payload of a zstd archive (FORMAT.md §3.2), compressed piece by piece as the writer
/// produces it: the object blocks (§5.6) while objects are still being encoded, then the tables
/// and the top section. The frame goes on to the temporary file of a save as zstd emits it, or
/// collects in memory; either way the stored length and checksum the header needs are counted
/// on the way, so no uncompressed payload and no second pass over the frame are needed.
final class CompressedPayload {
    #if Zstd
    private var compressor: ZstdCompressor
    #endif
    private let file: AtomicFile.Appender?
    /// The frame, when it is kept in memory.
    private var frame = ByteWriter()
    private var checksum = XXH64()
    static let windowLog = 19

    /// Uncompressed bytes fed so far: the header's `payloadLength` once finished.
    private(set) var payloadLength = 0
    /// Compressed bytes produced so far: the header's `storedLength` once finished.
    private(set) var storedLength = 0

    /// - Parameters:
    ///   - level: A level within ``Zstd/levels`` (checked by ``PayloadCompression/validate(_:)``).
    ///   - file: Where the frame goes; nil to keep it in memory (``frameInMemory()``).
    /// - Throws: `.compressionFailed`, or `.compressionUnavailable` without the `Zstd` trait.
    init(level: Int, file: AtomicFile.Appender?) throws(GraphArchiveError) {
        #if Zstd
        // No zstd workers: each holds a job of several MiB of input and output, which would
        // cost a save more memory than the blocks it compresses one at a time, and a flush at
        // each column (`endBlock`) waits for them all. `BlockedPayload` compresses on a thread
        // of its own instead, beside the encoder. A 512 KiB
        // window: the columns of a 2 MiB block find their matches close by, and a longer window
        // mostly reaches other columns (1M grid states, level 3: 14.93 bytes a slot at 2^19,
        // 14.98 at the level's own 2^21, which also takes 1.5 MiB more).
        compressor = try ZstdCompressor(level: level, windowLog: Self.windowLog)
        self.file = file
        #else
        throw PayloadCompression.unavailable("cannot write zstd-compressed archives")
        #endif
    }

    /// Compresses the bytes `range` of `piece`, the next piece of the payload.
    ///
    /// - Throws: `.compressionFailed`, or the file's `.ioError`.
    func write(_ piece: borrowing ByteWriter, in range: Range<Int>) throws(GraphArchiveError) {
        payloadLength += range.count
        #if Zstd
        try compressor.compress(piece, in: range, emit: emit)
        #endif
    }

    /// Compresses all of `piece`, the next piece of the payload.
    ///
    /// - Throws: `.compressionFailed`, or the file's `.ioError`.
    func write(_ piece: borrowing ByteWriter) throws(GraphArchiveError) {
        try write(piece, in: 0..<piece.count)
    }

    /// Ends the current zstd block: what follows is compressed with statistics of its own.
    func endBlock() throws(GraphArchiveError) {
        #if Zstd
        try compressor.endBlock(emit: emit)
        #endif
    }

    /// Ends the frame; returns the header's `storedLength` and `payloadChecksum`.
    ///
    /// - Throws: `.compressionFailed`, or the file's `.ioError`.
    func finish() throws(GraphArchiveError) -> (storedLength: Int, checksum: UInt64) {
        #if Zstd
        try compressor.finish(emit: emit)
        #endif
        return (storedLength, checksum.finalize())
    }

    /// True when the frame is kept in memory rather than written to a file.
    var isInMemory: Bool { file == nil }

    /// The finished frame, when it was kept in memory.
    func frameInMemory() -> OutputChunk {
        precondition(file == nil, "the frame went to a file")
        var taken = ByteWriter(reservingCapacity: 0)
        swap(&taken, &frame)
        return OutputChunk(taken)
    }

    private func emit(_ stored: UnsafeRawBufferPointer) throws(GraphArchiveError) {
        checksum.update(stored)
        storedLength += stored.count
        if let file {
            try file.write(stored)
        } else {
            frame.writeBytes(stored)
        }
    }
}
