// Sources/GraphArchive/Format/TablesFrameIndex.swift - the frame index that ends a payload stored in two frames (FORMAT.md §3.3)

/// The last bytes of a payload stored with `tablesFrame` (FORMAT.md §3.3): a zstd skippable
/// frame saying how long the tables frame before it is, and how many bytes the object blocks'
/// lengths and record counts take, so that a reader decompresses the tables first and sizes
/// the row-wise payload before it decompresses a block.
struct TablesFrameIndex: Equatable {
    /// zstd's first skippable-frame magic number (RFC 8878 §3.1.2), stored little endian.
    static let magic: UInt32 = 0x184D_2A50
    /// The index's content: two 8-byte numbers.
    static let contentSize: UInt32 = 16
    /// Bytes of the whole frame: magic, content size, content.
    static let size = 8 + Int(contentSize)

    /// Stored bytes of the tables frame, which ends where the index starts.
    var tablesFrameLength: UInt64
    /// Bytes of the blocks' `length` and `recordCount` fields (§5.6): the decompressed payload
    /// less these is the row-wise payload's length.
    var blockFieldBytes: UInt64

    /// The index's ``size`` bytes.
    func encoded() -> ByteWriter {
        var writer = ByteWriter(reservingCapacity: Self.size)
        writer.writeLittleEndian(Self.magic)
        writer.writeLittleEndian(Self.contentSize)
        writer.writeLittleEndian(tablesFrameLength)
        writer.writeLittleEndian(blockFieldBytes)
        return writer
    }

    /// Reads the index from the last ``size`` stored bytes, `bytes`, which start at `offset`
    /// in the archive.
    ///
    /// - Throws: `.corrupt` unless they are a skippable frame of ``magic`` holding 16 bytes.
    static func decode(_ bytes: [UInt8], offset: Int) throws(GraphArchiveError) -> TablesFrameIndex {
        precondition(bytes.count == size)
        func number(at start: Int, width: Int) -> UInt64 {
            (0..<width).reduce(0) { $0 | UInt64(bytes[start + $1]) << (8 * $1) }
        }
        guard number(at: 0, width: 4) == magic, number(at: 4, width: 4) == contentSize else {
            throw GraphArchiveError(
                .corrupt,
                "compressed payload does not end with its frame index (a 16-byte skippable frame, FORMAT.md §3.3)",
                offset: offset
            )
        }
        return TablesFrameIndex(tablesFrameLength: number(at: 8, width: 8), blockFieldBytes: number(at: 16, width: 8))
    }
}

/// Where the frames of a payload stored with `tablesFrame` lie (offsets in the stored payload)
/// and what they decompress to, checked against each other and the header before anything is
/// allocated for them.
struct StoredFrames {
    /// The frame of the object blocks, from the payload's start.
    let blocksFrame: Range<Int>
    /// The frame of the tables and the top section, after the blocks' frame.
    let tablesFrame: Range<Int>
    /// Bytes the blocks' frame decompresses to: where the tables start in the payload.
    let blocksLength: Int
    /// Bytes of the blocks' lengths and record counts (``TablesFrameIndex/blockFieldBytes``).
    let blockFieldBytes: Int

    /// Bytes of the row-wise payload rebuilt from the decompressed one.
    func rowCount(payloadLength: Int) -> Int { payloadLength - blockFieldBytes }
}
