// Sources/GraphArchive/Compression/ZstdDecompressor.swift - a zstd decompression context reading one frame

#if Zstd
internal import CZstd

/// A zstd decompression context that decodes one frame, fed in pieces, into a fixed output
/// buffer; freed when the value ends.
///
/// The output buffer is the whole allowance: a frame that would write past its end is refused,
/// so a frame that expands without end costs no more memory than the buffer already took.
struct ZstdDecompressor: ~Copyable {
    private let context: OpaquePointer
    /// Bytes written to the output so far.
    private(set) var produced = 0
    /// Whether the frame's end (and its content checksum) has been read.
    private(set) var isFrameComplete = false

    /// - Parameter outputCount: The size of the output the frame must fill.
    /// - Throws: `.compressionFailed` if zstd cannot allocate its context.
    init(outputCount: Int) throws(GraphArchiveError) {
        guard let context = ZSTD_createDCtx() else {
            throw GraphArchiveError(.compressionFailed, "zstd: cannot allocate a decompression context")
        }
        // zstd decodes straight into the output buffer (its "stable output buffer"), which is
        // the whole allowance: then no window is allocated, so a frame's window (which need
        // not fit its content: a frame compressed before its length was known, FORMAT.md §5.6)
        // costs no memory. zstd's own default cap on the window, 2^27, stays.
        do {
            _ = try Zstd.check(ZSTD_DCtx_setParameter(context, ZSTD_d_experimentalParam2, 1))
        } catch {
            ZSTD_freeDCtx(context)
            throw error
        }
        self.context = context
    }

    deinit {
        ZSTD_freeDCtx(context)
    }

    /// Input bytes handed to zstd in one call: the first calls get few, then twice as many each
    /// time up to a whole piece, so that what a call can produce (a 4-byte block regenerates up
    /// to 128 KiB) stays small until the output has been seen to be sound.
    private var step = 64

    /// Decodes `input`, the next piece of the frame, into `output` after the bytes produced so far.
    /// Pass the same `output` every time. `produced` is called after each call of zstd with
    /// the bytes of `output` produced so far, to check them before more is decoded.
    ///
    /// - Throws: `.compressionFailed` with zstd's message (a damaged frame, a failed content
    ///   checksum); `.corrupt` if the frame holds more than `output` or bytes follow the frame;
    ///   what `produced` throws.
    mutating func decompress(
        _ input: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer,
        produced check: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void = { _ in }
    ) throws(GraphArchiveError) {
        var consumed = 0
        while consumed < input.count {
            let count = min(step, input.count - consumed)
            try decompressAll(UnsafeRawBufferPointer(rebasing: input[consumed..<(consumed + count)]), into: output)
            consumed += count
            step = min(step * 2, 1 << 20)
            try check(producedBytes(of: output))
        }
    }

    /// The bytes of `output` written so far.
    func producedBytes(of output: UnsafeMutableRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: output[0..<produced])
    }

    private mutating func decompressAll(
        _ input: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(GraphArchiveError) {
        var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while source.pos < source.size {
            guard !isFrameComplete else {
                throw GraphArchiveError(.corrupt, "compressed payload has bytes after its zstd frame")
            }
            var sink = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: produced)
            let consumedBefore = source.pos
            let result = ZSTD_decompressStream(context, &sink, &source)
            // Decoding into the output buffer itself, zstd stops with this error where the
            // frame would go past its end.
            if ZSTD_isError(result) != 0 && ZSTD_getErrorCode(result) == ZSTD_error_dstSize_tooSmall {
                throw Self.overflow(output.count)
            }
            let hint = try Zstd.check(result)
            let progressed = sink.pos > produced || source.pos > consumedBefore
            produced = sink.pos
            if hint == 0 {
                isFrameComplete = true
            } else if !progressed {
                // zstd stops only when the output is full and it has more to write.
                throw Self.overflow(output.count)
            }
        }
    }

    /// Checks, after the last piece, that the frame ended and filled `output` exactly.
    ///
    /// - Throws: `.corrupt` naming what is wrong.
    func finish(outputCount: Int) throws(GraphArchiveError) {
        guard isFrameComplete else {
            // zstd may hold decoded bytes it had no room to write: then the frame is too big.
            if produced == outputCount { throw Self.overflow(outputCount) }
            throw GraphArchiveError(.corrupt, "compressed payload ends inside its zstd frame")
        }
        guard produced == outputCount else {
            throw GraphArchiveError(
                .corrupt,
                "zstd frame holds \(produced) bytes, but the header's payload length is \(outputCount)"
            )
        }
    }

    private static func overflow(_ outputCount: Int) -> GraphArchiveError {
        GraphArchiveError(.corrupt, "zstd frame holds more than the header's payload length of \(outputCount) bytes")
    }
}
#endif
