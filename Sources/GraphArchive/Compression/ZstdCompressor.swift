// Sources/GraphArchive/Compression/ZstdCompressor.swift - a zstd compression context writing one frame

#if Zstd
internal import CZstd

/// A zstd compression context that writes one frame, fed in pieces; freed when the value ends.
///
/// Noncopyable, so the context has one owner and is freed exactly once. The frame ends with
/// zstd's content checksum, so zstd itself catches damage the archive checksum did not. It is
/// written while its content is still being produced, so it does not record the content's size
/// (FORMAT.md §3.2; the archive header does).
struct ZstdCompressor: ~Copyable {
    private let context: OpaquePointer
    /// Compressed bytes collect here before they are handed on (zstd's recommended size).
    private let scratch: UnsafeMutableRawBufferPointer

    /// - Parameters:
    ///   - level: A level within ``Zstd/levels``.
    ///   - windowLog: The window zstd matches within, as a power of two.
    /// - Throws: `.compressionFailed` with zstd's message.
    init(level: Int, windowLog: Int) throws(GraphArchiveError) {
        guard let context = ZSTD_createCCtx() else {
            throw GraphArchiveError(.compressionFailed, "zstd: cannot allocate a compression context")
        }
        do {
            _ = try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level)))
            _ = try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1))
            _ = try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, Int32(windowLog)))
        } catch {
            ZSTD_freeCCtx(context)
            throw error
        }
        self.context = context
        scratch = .allocate(byteCount: ZSTD_CStreamOutSize(), alignment: 16)
    }

    deinit {
        ZSTD_freeCCtx(context)
        scratch.deallocate()
    }

    /// Compresses on `count` worker threads of zstd's own, asynchronously: ``compress(_:emit:)``
    /// hands its input over and returns while the workers compress. Call it before the first
    /// byte is compressed. Returns the workers granted: at most the library's bound, and 0 when
    /// libzstd was built without multithreading (setting them then fails; the context stays
    /// single-threaded).
    mutating func useWorkers(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        let granted = min(count, Zstd.maximumWorkers)
        guard granted > 0, ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_nbWorkers, Int32(granted))) == 0 else {
            return 0
        }
        return granted
    }

    /// Compresses `input`, the next piece of the content, handing finished compressed bytes to `emit`.
    ///
    /// - Warning: Do not escape the pointer passed to `emit`.
    /// - Throws: `.compressionFailed` with zstd's message, or what `emit` throws.
    mutating func compress(
        _ input: UnsafeRawBufferPointer,
        emit: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        try compress(input, isLast: false, emit: emit)
    }

    /// Compresses the bytes `range` of `input`, the next piece of the content, handing finished
    /// compressed bytes to `emit`.
    ///
    /// - Warning: Do not escape the pointer passed to `emit`.
    /// - Throws: `.compressionFailed` with zstd's message, or what `emit` throws.
    mutating func compress(
        _ input: borrowing ByteWriter,
        in range: Range<Int>,
        emit: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        precondition(range.lowerBound >= 0 && range.upperBound <= input.count, "range out of the written bytes")
        try input.withUnsafeBytes { (raw) throws(GraphArchiveError) in
            try compress(UnsafeRawBufferPointer(rebasing: raw[range]), isLast: false, emit: emit)
        }
    }

    /// Ends the frame, handing the rest of it to `emit`.
    ///
    /// - Warning: Do not escape the pointer passed to `emit`.
    /// - Throws: `.compressionFailed` with zstd's message (also when fewer or more bytes than
    ///   the promised content size were fed), or what `emit` throws.
    mutating func finish(emit: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void) throws(GraphArchiveError) {
        try compress(UnsafeRawBufferPointer(start: nil, count: 0), isLast: true, emit: emit)
    }

    /// Ends the current zstd block, so the next input starts a block of its own (with entropy
    /// tables of its own); the frame goes on.
    mutating func endBlock(emit: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void) throws(GraphArchiveError) {
        try compress(UnsafeRawBufferPointer(start: nil, count: 0), directive: ZSTD_e_flush, emit: emit)
    }

    private mutating func compress(
        _ input: UnsafeRawBufferPointer,
        isLast: Bool,
        emit: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        try compress(input, directive: isLast ? ZSTD_e_end : ZSTD_e_continue, emit: emit)
    }

    private mutating func compress(
        _ input: UnsafeRawBufferPointer,
        directive: ZSTD_EndDirective,
        emit: (UnsafeRawBufferPointer) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            var sink = ZSTD_outBuffer(dst: scratch.baseAddress, size: scratch.count, pos: 0)
            let unflushed = try Zstd.check(ZSTD_compressStream2(context, &sink, &source, directive))
            if sink.pos > 0 {
                try emit(UnsafeRawBufferPointer(rebasing: scratch[0..<sink.pos]))
            }
            // Continuing, a piece is done once zstd took all of it; flushing or ending, once
            // nothing is left to flush.
            if directive == ZSTD_e_continue ? source.pos == source.size : unflushed == 0 { return }
        }
    }
}
#endif
