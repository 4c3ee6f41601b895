// Sources/GraphArchive/Compression/PayloadCompression.swift - compressing and decompressing payloads

/// What this build supports, and the one place the engine decompresses a payload, within the
/// limits a reader sets (compressing is `CompressedPayload`).
enum PayloadCompression {
    /// Whether this build can read and write zstd archives (the `Zstd` package trait).
    static var isZstdAvailable: Bool {
        #if Zstd
        true
        #else
        false
        #endif
    }

    /// A zstd frame header is at most this long (ZSTD_FRAMEHEADERSIZE_MAX, a static-linking-only
    /// constant): the leading stored bytes ``decompress(payloadLength:storedLength:frameStart:feed:)`` needs.
    static let frameHeaderMaximumSize = 18

    /// Throws unless this build can write archives with `compression`; called before any work.
    ///
    /// - Throws: `.compressionUnavailable` without the `Zstd` trait, `.invalidValue` for a level
    ///   outside the library's range.
    static func validate(_ compression: ArchiveCompression) throws(GraphArchiveError) {
        guard case .zstd(let level) = compression else { return }
        #if Zstd
        try ArchiveCompression.checkZstdLevel(level)
        #else
        throw unavailable("cannot write zstd-compressed archives")
        #endif
    }

    /// Decompresses a stored zstd frame into exactly `payloadLength` bytes.
    ///
    /// Before allocating anything it checks that a frame of `storedLength` bytes can expand to
    /// `payloadLength` at all, and that the frame header (in `frameStart`: the first
    /// ``frameHeaderMaximumSize`` stored bytes, or all of them) records that same size if it
    /// records one; the caller has already checked `payloadLength` against the reader's
    /// `maximumDecompressedBytes`. The output is then one allocation of `payloadLength` bytes
    /// that the frame cannot write past.
    ///
    /// - Parameter feed: Passes the stored frame, in order and in pieces, to the function it is given.
    /// - Throws: `.corrupt` when the frame and the header disagree, `.compressionFailed` with
    ///   zstd's message for a damaged frame, `.compressionUnavailable` without the `Zstd` trait,
    ///   or what `feed` throws.
    static func decompress(
        payloadLength: Int,
        storedLength: Int,
        frameStart: [UInt8],
        check: ((UnsafeRawBufferPointer, _ isComplete: Bool) throws(GraphArchiveError) -> Void)? = nil,
        feed: ((UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) -> ArchiveBytes {
        try checkClaim(payloadLength: payloadLength, storedLength: storedLength, frameStart: frameStart)
        return try ArchiveBytes(count: payloadLength) { (output) throws(GraphArchiveError) -> Int in
            try decompressFrame(
                into: output,
                range: 0..<payloadLength,
                check: check,
                feed: feed
            )
            return payloadLength
        }
    }

    /// Decompresses one stored zstd frame into `range` of `output`, which it must fill exactly.
    /// Call it with the same `output` and `range` for no other frame while it runs; `output`
    /// outside `range` is not touched.
    ///
    /// - Parameters:
    ///   - check: Called after each step of zstd with the bytes of `range` produced so far
    ///     (`isComplete` once the frame has ended and filled it), to check them, or use them,
    ///     before more is decoded.
    ///   - feed: Passes the stored frame, in order and in pieces, to the function it is given.
    /// - Throws: what ``decompress(payloadLength:storedLength:frameStart:check:feed:)`` throws.
    static func decompressFrame(
        into output: UnsafeMutableRawBufferPointer,
        range: Range<Int>,
        check: ((UnsafeRawBufferPointer, _ isComplete: Bool) throws(GraphArchiveError) -> Void)? = nil,
        feed: ((UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        #if Zstd
        let target = UnsafeMutableRawBufferPointer(rebasing: output[range])
        var decompressor = try ZstdDecompressor(outputCount: range.count)
        // What the frame produced so far, checked before more is decoded.
        let checkProduced = { (produced: UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void in
            try check?(produced, false)
        }
        try feed { (piece) throws(GraphArchiveError) in
            try decompressor.decompress(piece, into: target, produced: checkProduced)
        }
        try decompressor.finish(outputCount: range.count)
        try check?(decompressor.producedBytes(of: target), true)
        #else
        throw unavailable("cannot read this zstd-compressed archive")
        #endif
    }

    /// Where the frames of a payload stored with `tablesFrame` (FORMAT.md §3.3) lie, from its
    /// frame index (`index`, the last ``TablesFrameIndex/size`` stored bytes) and the first
    /// stored bytes of each frame (`blocksFrameStart`, `tablesFrameStart`: up to
    /// ``frameHeaderMaximumSize`` each, see ``tablesFrameStart(index:storedLength:)``), checked
    /// against each other and the header before anything is allocated for them.
    ///
    /// - Throws: `.corrupt` for a tables frame that does not fit before the index or records no
    ///   size, sizes that no frame of its length can hold or that do not add up to the header's
    ///   `payloadLength`; `.compressionUnavailable` without the `Zstd` trait.
    static func frames(
        payloadLength: Int,
        storedLength: Int,
        index: TablesFrameIndex,
        blocksFrameStart: [UInt8],
        tablesFrameStart: [UInt8]
    ) throws(GraphArchiveError) -> StoredFrames {
        #if Zstd
        let tablesFrame = try tablesFrameRange(index: index, storedLength: storedLength)
        let tablesOffset = ArchiveHeader.size + tablesFrame.lowerBound
        guard let tablesLength = try Zstd.contentSize(frameStart: tablesFrameStart, offset: tablesOffset) else {
            throw GraphArchiveError(.corrupt, "the tables frame does not record its size", offset: tablesOffset)
        }
        guard tablesLength <= UInt64(payloadLength),
            tablesLength <= Zstd.maximumContentSize(storedLength: tablesFrame.count)
        else {
            throw GraphArchiveError(
                .corrupt,
                "tables frame of \(tablesFrame.count) bytes claims \(tablesLength) bytes of the \(payloadLength)-byte payload",
                offset: tablesOffset
            )
        }
        let blocksLength = payloadLength - Int(tablesLength)
        let blocksFrame = 0..<tablesFrame.lowerBound
        try checkClaim(payloadLength: blocksLength, storedLength: blocksFrame.count, frameStart: blocksFrameStart)
        guard index.blockFieldBytes <= UInt64(blocksLength) else {
            throw GraphArchiveError(
                .corrupt,
                "frame index claims \(index.blockFieldBytes) bytes of block fields in \(blocksLength) bytes of blocks",
                offset: ArchiveHeader.size + storedLength - TablesFrameIndex.size
            )
        }
        return StoredFrames(
            blocksFrame: blocksFrame,
            tablesFrame: tablesFrame,
            blocksLength: blocksLength,
            blockFieldBytes: Int(index.blockFieldBytes)
        )
        #else
        throw unavailable("cannot read this zstd-compressed archive")
        #endif
    }

    /// The stored bytes of the tables frame the frame index points at: between the blocks'
    /// frame, which takes at least one byte, and the index.
    ///
    /// - Throws: `.corrupt` if the index does not fit, or the tables frame does not fit before it.
    static func tablesFrameRange(index: TablesFrameIndex, storedLength: Int) throws(GraphArchiveError) -> Range<Int> {
        let indexStart = storedLength - TablesFrameIndex.size
        guard indexStart > 0, index.tablesFrameLength > 0, index.tablesFrameLength < UInt64(indexStart) else {
            throw GraphArchiveError(
                .corrupt,
                "frame index claims a tables frame of \(index.tablesFrameLength) bytes in \(storedLength) stored bytes",
                offset: ArchiveHeader.size + max(indexStart, 0)
            )
        }
        return (indexStart - Int(index.tablesFrameLength))..<indexStart
    }

    /// Refuses, before anything is allocated for it, a payload length that no zstd frame of
    /// `storedLength` bytes can decompress to, or that the frame header (`frameStart`)
    /// contradicts.
    ///
    /// - Throws: `.corrupt`; `.compressionUnavailable` without the `Zstd` trait.
    static func checkClaim(payloadLength: Int, storedLength: Int, frameStart: [UInt8]?) throws(GraphArchiveError) {
        #if Zstd
        // A forged header must not make us allocate: refuse sizes no frame of this length has.
        guard payloadLength <= Zstd.maximumContentSize(storedLength: storedLength) else {
            throw GraphArchiveError(
                .corrupt,
                "header claims \(payloadLength) payload bytes, more than \(storedLength) bytes of zstd frame can hold",
                offset: 16
            )
        }
        if let frameStart, let recorded = try Zstd.contentSize(frameStart: frameStart),
            recorded != UInt64(payloadLength)
        {
            throw GraphArchiveError(
                .corrupt,
                "zstd frame records \(recorded) bytes, but the header's payload length is \(payloadLength)",
                offset: ArchiveHeader.size
            )
        }
        #else
        throw unavailable("cannot read this zstd-compressed archive")
        #endif
    }

    static func unavailable(_ action: String) -> GraphArchiveError {
        GraphArchiveError(
            .compressionUnavailable,
            "\(action): this build of gridstore has no zstd support (built without the Zstd trait)"
        )
    }
}
