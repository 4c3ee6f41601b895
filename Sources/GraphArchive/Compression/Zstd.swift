// Sources/GraphArchive/Compression/Zstd.swift - facts about the linked libzstd, and its one error conversion

#if Zstd
internal import CZstd

/// The linked libzstd: its level range, its frame bounds, and the conversion of its error codes.
enum Zstd {
    /// The one conversion of a zstd result into the public error: a zstd error code becomes
    /// `.compressionFailed` carrying zstd's own message; any other value is returned as is.
    static func check(_ result: Int) throws(GraphArchiveError) -> Int {
        guard ZSTD_isError(result) != 0 else { return result }
        throw GraphArchiveError(.compressionFailed, "zstd: \(String(cString: ZSTD_getErrorName(result)))")
    }

    /// The levels the library accepts: negative levels are its fast modes, 0 means its default.
    static var levels: ClosedRange<Int> { Int(ZSTD_minCLevel())...Int(ZSTD_maxCLevel()) }

    /// The most worker threads the library compresses on (``ZstdCompressor/useWorkers(_:)``):
    /// 0 when it was built without multithreading.
    static let maximumWorkers: Int = {
        let bounds = ZSTD_cParam_getBounds(ZSTD_c_nbWorkers)
        return ZSTD_isError(bounds.error) != 0 ? 0 : Int(max(bounds.upperBound, 0))
    }()

    /// The most a zstd frame can expand: every block takes at least 4 stored bytes (a 3-byte
    /// header and one byte, the run-length block) and regenerates at most ZSTD_BLOCKSIZE_MAX
    /// (128 KiB). A payload length beyond this for the stored length cannot be a real frame.
    static func maximumContentSize(storedLength: Int) -> Int {
        let blocks = storedLength / 4 + 1
        let (bound, overflow) = blocks.multipliedReportingOverflow(by: Int(ZSTD_BLOCKSIZE_MAX))
        return overflow ? Int.max : bound
    }

    /// The content size recorded in the frame header at the start of `frameStart`, nil if the
    /// frame does not record it.
    ///
    /// - Throws: `.corrupt` if `frameStart` does not begin with a zstd frame header.
    static func contentSize(frameStart: [UInt8]) throws(GraphArchiveError) -> UInt64? {
        let size = ZSTD_getFrameContentSize(frameStart, frameStart.count)
        if size == ZSTD_CONTENTSIZE_UNKNOWN { return nil }
        guard size != ZSTD_CONTENTSIZE_ERROR else {
            throw GraphArchiveError(
                .corrupt,
                "compressed payload does not start with a zstd frame header",
                offset: ArchiveHeader.size
            )
        }
        return size
    }
}
#endif
