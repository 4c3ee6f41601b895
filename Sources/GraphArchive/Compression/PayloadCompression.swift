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
    /// - Parameters:
    ///   - roomBefore: When above 0, the output is reserved pages
    ///     (`ArchiveBytes.reservingMapped(_:roomBefore:)`) with this much address space before
    ///     them, for rows rebuilt from it (`RebuiltPayloadWindow`).
    ///   - feed: Passes the stored frame, in order and in pieces, to the function it is given.
    /// - Throws: `.corrupt` when the frame and the header disagree, `.compressionFailed` with
    ///   zstd's message for a damaged frame, `.compressionUnavailable` without the `Zstd` trait,
    ///   `.limitExceeded` when the address space cannot hold the reservation, or what `feed`
    ///   throws.
    static func decompress(
        payloadLength: Int,
        storedLength: Int,
        frameStart: [UInt8],
        roomBefore: Int = 0,
        check: ((UnsafeRawBufferPointer, _ isComplete: Bool) throws(GraphArchiveError) -> Void)? = nil,
        feed: ((UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) -> ArchiveBytes {
        #if Zstd
        try checkClaim(payloadLength: payloadLength, storedLength: storedLength, frameStart: frameStart)
        var populator: PagePopulator?
        func fill(_ output: UnsafeMutableRawBufferPointer) throws(GraphArchiveError) -> Int {
            var decompressor = try ZstdDecompressor(outputCount: payloadLength)
            // What the frame produced so far, checked before more is decoded.
            let checkProduced = { (produced: UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void in
                populator?.advance(to: produced.count)
                try check?(produced, false)
            }
            try feed { (piece) throws(GraphArchiveError) in
                try decompressor.decompress(piece, into: output, produced: checkProduced)
            }
            try decompressor.finish(outputCount: payloadLength)
            try check?(decompressor.producedBytes(of: output), true)
            return decompressor.produced
        }
        guard roomBefore > 0 else { return try ArchiveBytes(count: payloadLength, fill: fill) }
        let output = try ArchiveBytes.reservingMapped(payloadLength, roomBefore: roomBefore)
        // Its fresh pages made resident on another thread, ahead of zstd, which then writes
        // into them as into a buffer made beforehand.
        populator = PagePopulator(output, range: 0..<payloadLength)
        defer { populator?.stop() }
        // `finish` has checked that the frame filled all of it.
        _ = try output.fill(0..<payloadLength, fill)
        return output
        #else
        throw unavailable("cannot read this zstd-compressed archive")
        #endif
    }

    /// Refuses, before anything is allocated for it, a payload length that no zstd frame of
    /// `storedLength` bytes can decompress to, or that the frame header (`frameStart`)
    /// contradicts.
    ///
    /// - Throws: `.corrupt`; `.compressionUnavailable` without the `Zstd` trait.
    static func checkClaim(payloadLength: Int, storedLength: Int, frameStart: [UInt8]) throws(GraphArchiveError) {
        #if Zstd
        // A forged header must not make us allocate: refuse sizes no frame of this length has.
        guard payloadLength <= Zstd.maximumContentSize(storedLength: storedLength) else {
            throw GraphArchiveError(
                .corrupt,
                "header claims \(payloadLength) payload bytes, more than \(storedLength) bytes of zstd frame can hold",
                offset: 16
            )
        }
        if let recorded = try Zstd.contentSize(frameStart: frameStart), recorded != UInt64(payloadLength) {
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
