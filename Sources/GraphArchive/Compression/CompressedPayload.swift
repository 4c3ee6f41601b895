// Sources/GraphArchive/Compression/CompressedPayload.swift - a zstd payload compressed as it is produced

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

    /// zstd workers for a payload of more than one object block, asked for at its first block.
    private let workersIfLarge: Int
    /// zstd worker threads the frame is compressed on; 0 while it is compressed on the calling
    /// thread.
    private(set) var workers = 0

    /// - Parameters:
    ///   - level: A level within ``Zstd/levels`` (checked by ``PayloadCompression/validate(_:)``).
    ///   - file: Where the frame goes; nil to keep it in memory (``frameInMemory()``).
    ///   - workers: zstd worker threads for a payload of more than one object block, as
    ///     ``GraphArchiver/Options/zstdWorkers`` says (nil: ``automaticWorkers(isSave:)``).
    /// - Throws: `.compressionFailed`, or `.compressionUnavailable` without the `Zstd` trait.
    init(level: Int, file: AtomicFile.Appender?, workers: Int? = nil) throws(GraphArchiveError) {
        workersIfLarge = max(workers ?? Self.automaticWorkers(isSave: file != nil), 0)
        #if Zstd
        // A 512 KiB window: the columns of a 2 MiB block find their matches close by, and a
        // longer window mostly reaches other columns (1M grid states, level 3: 14.93 bytes a
        // slot at 2^19, 14.98 at the level's own 2^21, which also takes 1.5 MiB more).
        compressor = try ZstdCompressor(level: level, windowLog: Self.windowLog)
        self.file = file
        #else
        throw PayloadCompression.unavailable("cannot write zstd-compressed archives")
        #endif
    }

    /// The zstd workers of an archiver left to choose: none for a save, which holds one block
    /// at a time (zstd's workers hold jobs of several MiB of input and output besides); for an
    /// archive made in memory, which holds its output whole anyway, one on two cores and two
    /// on more, so that compressing overlaps encoding.
    static func automaticWorkers(isSave: Bool) -> Int {
        guard !isSave else { return 0 }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return cores >= 3 ? 2 : cores == 2 ? 1 : 0
    }

    /// Called before each object block is compressed; the first decides the frame's threads. A
    /// payload of one block (cut short: `moreFollow` false) is compressed on the calling
    /// thread, where starting workers would cost more than they save; a longer one on the
    /// workers asked for, when libzstd has them (Debian's is built with them; without, the
    /// frame stays on the calling thread).
    func beginBlock(moreFollow: Bool) {
        #if Zstd
        guard payloadLength == 0, moreFollow, workersIfLarge > 0 else { return }
        workers = compressor.useWorkers(workersIfLarge)
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

    /// Ends the current zstd block: what follows is compressed with statistics of its own. Not
    /// with workers, where a flush waits for every job in flight and so would undo the overlap
    /// (1M grid states, level 3: 14.99 bytes a slot with workers, 14.93 without).
    func endBlock() throws(GraphArchiveError) {
        #if Zstd
        guard workers == 0 else { return }
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
