// Sources/GraphArchive/Archiving/ArchiveAssembler.swift - turns finished encoding state into archive bytes

/// One piece of a finished archive, owning its bytes.
final class OutputChunk {
    private(set) var writer: ByteWriter

    init(_ writer: consuming ByteWriter) {
        self.writer = writer
    }

    convenience init(_ bytes: [UInt8]) {
        var writer = ByteWriter(reservingCapacity: bytes.count)
        writer.writeBytes(bytes)
        self.init(writer)
    }

    var count: Int { writer.count }

    /// Takes the bytes out, leaving this chunk empty.
    func take() -> ByteWriter {
        var taken = ByteWriter()
        swap(&taken, &writer)
        return taken
    }
}

/// An archive as stored: the 64-byte header and the stored payload in pieces, so a file can be
/// written, and `Data` filled, without first gluing the pieces into one more copy.
struct StoredArchive {
    var header: [UInt8]
    var payload: [OutputChunk]

    var count: Int { payload.reduce(header.count) { $0 + $1.count } }

    /// The archive in one buffer, built in the buffer of its largest piece: that piece's bytes
    /// move up in place and the header and the other pieces are copied around them. Copying
    /// every piece into a new buffer instead would allocate the archive's size once more and
    /// copy it all. The pieces are left empty.
    func joinedInPlace() -> ByteWriter {
        guard let largest = payload.indices.max(by: { payload[$0].count < payload[$1].count }) else {
            var joined = ByteWriter(reservingCapacity: header.count)
            joined.writeBytes(header)
            return joined
        }
        // What goes before it is gathered first, so its bytes move once.
        var before = ByteWriter(reservingCapacity: payload[..<largest].reduce(header.count) { $0 + $1.count })
        before.writeBytes(header)
        for piece in payload[..<largest] { before.writeBytes(of: piece.writer) }
        var joined = payload[largest].take()
        joined.insertBytes(of: before, at: 0)
        for piece in payload[(largest + 1)...] { joined.writeBytes(of: piece.writer) }
        return joined
    }

    func contiguousBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        bytes.append(contentsOf: header)
        for piece in payload { bytes.append(contentsOf: piece.writer) }
        return bytes
    }
}

/// A finished archive: its sealed header and its stored payload, in memory or already in the
/// file it was saved to.
final class ArchiveOutput {
    private let archive: StoredArchive
    /// True when the payload went straight into the file of a save while it was encoded: only
    /// the header, which goes over the placeholder at the file's start, is left to write.
    let payloadIsInFile: Bool

    /// An uncompressed archive of the payload `storedPayload`.
    ///
    /// - Parameter header: Every field but the lengths and the payload checksum, which are
    ///   computed here (uncompressed, the payload length is the stored length).
    /// - Parameter checksummed: false for an archive only loaded in this process, which such a
    ///   load does not check: its payload checksum is left 0 (the keyed reader's transcoded
    ///   payload, where hashing it was about 1% of a read).
    init(header: ArchiveHeader, storedPayload: [OutputChunk], checksummed: Bool = true) {
        var header = header
        if checksummed {
            var checksum = XXH64()
            for piece in storedPayload { checksum.update(piece.writer) }
            header.payloadChecksum = checksum.finalize()
        }
        header.storedLength = UInt64(storedPayload.reduce(0) { $0 + $1.count })
        header.payloadLength = header.storedLength
        archive = StoredArchive(header: header.encoded(), payload: storedPayload)
        payloadIsInFile = false
    }

    /// A compressed archive, its header complete: the frame is `frame`, or already in the file
    /// when nil.
    init(sealedHeader header: ArchiveHeader, frame: OutputChunk?) {
        archive = StoredArchive(header: header.encoded(), payload: frame.map { [$0] } ?? [])
        payloadIsInFile = frame == nil
    }

    /// The sealed 64-byte header.
    var header: [UInt8] { archive.header }

    /// The archive as stored.
    func stored() -> StoredArchive {
        precondition(!payloadIsInFile, "the payload was written to a file")
        return archive
    }

    /// Writes the archive to `sink`.
    ///
    /// - Throws: the sink's `.ioError`.
    func write(to sink: inout AtomicFile.Sink) throws(GraphArchiveError) {
        let stored = stored()
        try sink.write(stored.header)
        for piece in stored.payload { try sink.write(piece.writer) }
    }
}

/// A zstd archive's payload while it is written (FORMAT.md §5.6): object blocks, compressed as
/// the records arrive, then the tables and the top section.
///
/// The records are laid out in blocks and compressed on a thread of their own
/// (``SerialWorker``), while the encoder goes on with the next ones: a batch of records handed
/// over is copied, and the encoder waits only if the last batch is not done yet. Compressing is
/// the slower half (1M grid states at level 3: about twice the encode), and comes a block at a
/// time, while the encoder is at most a batch ahead: so a payload of more than one block is
/// compressed on zstd's own workers where the archiver allows them
/// (``GraphArchiver/Options/zstdWorkers``), which take each block over at once and compress it
/// while the next one is laid out. The bytes are the same as compressed in line: one zstd
/// context takes the same input in the same order.
final class BlockedPayload {
    private let worker: SerialWorker<BlockCompression>
    /// Row-wise bytes still to be laid out on the caller's thread before the worker takes over:
    /// the first block's. Its column buffers grow to their size there, in the heap the caller's
    /// allocations come from; grown on the worker's thread, glibc gives them an arena of their
    /// own, whose outgrown pieces nothing reuses (a zstd save of 1M grid states peaked 0.3-0.5 MB
    /// higher, in the benchmark harness's child process).
    private var bytesBeforeHandingOver = ColumnarObjects.blockBytes

    /// - Parameters:
    ///   - file: Where the frame goes; nil keeps it in memory.
    ///   - workers: zstd workers for a payload of more than one block; nil lets
    ///     ``CompressedPayload/automaticWorkers(isSave:)`` choose.
    init(level: Int, file: AtomicFile.Appender?, workers: Int? = nil) throws(GraphArchiveError) {
        let compressed = try CompressedPayload(level: level, file: file, workers: workers)
        worker = SerialWorker(BlockCompression(compressed: compressed))
    }

    /// Row-wise bytes of at most this many bytes are copied and compressed beside the caller;
    /// more (a whole object table, handed over when the archive is finished) are compressed
    /// where they are, while the caller waits, as it has nothing left to do but wait.
    static let handOverLimit = 2 * ColumnarObjects.rowBatchBytes

    /// Compresses the whole row-wise records `range` of `rows` as blocks: a batch of the
    /// encoder's (at most ``handOverLimit`` bytes) beside the caller once the first block is
    /// done, anything larger before returning.
    ///
    /// - Throws: an error compressing these or earlier records, or writing them to the file.
    func writeRecords(
        _ rows: borrowing ByteWriter,
        in range: Range<Int>,
        shapeValueCounts: [Int]
    ) throws(GraphArchiveError) {
        guard range.count <= Self.handOverLimit && bytesBeforeHandingOver <= 0 else {
            bytesBeforeHandingOver -= range.count
            try worker.drained { (state) throws(GraphArchiveError) in
                try state.append(rows, in: range, shapeValueCounts: shapeValueCounts)
            }
            return
        }
        try worker.submit(
            preparing: { $0.takeCopy(of: rows, in: range, shapeValueCounts: shapeValueCounts) },
            { (state) throws(GraphArchiveError) in try state.appendCopy() }
        )
    }

    /// Compresses the tables and the top section, which follow the blocks, and ends the frame.
    func finish(
        tables: borrowing ByteWriter,
        top: borrowing ByteWriter,
        header: ArchiveHeader
    ) throws(GraphArchiveError) -> ArchiveOutput {
        try worker.drained { (state) throws(GraphArchiveError) -> ArchiveOutput in
            precondition(
                UInt64(state.blocks.recordCount) == header.objectCount,
                "blocks hold \(state.blocks.recordCount) of \(header.objectCount) records"
            )
            let compressed = state.compressed
            try state.blocks.finish(to: compressed)
            try compressed.write(tables)
            try compressed.write(top)
            let (storedLength, checksum) = try compressed.finish()
            var header = header
            header.flags.insert([.zstdPayload, .columnarObjects, .objectBlocks])
            header.payloadLength = UInt64(compressed.payloadLength)
            header.storedLength = UInt64(storedLength)
            header.payloadChecksum = checksum
            return ArchiveOutput(sealedHeader: header, frame: compressed.isInMemory ? compressed.frameInMemory() : nil)
        }
    }
}

/// What ``BlockedPayload``'s worker holds: the blocks being built, the frame being compressed,
/// and the batch of records last handed over.
private final class BlockCompression {
    let compressed: CompressedPayload
    let blocks = ColumnarObjects.BlockWriter()
    private var batch = ByteWriter()
    private var batchShapeValueCounts: [Int] = []

    init(compressed: CompressedPayload) {
        self.compressed = compressed
    }

    func append(_ rows: borrowing ByteWriter, in range: Range<Int>, shapeValueCounts: [Int]) throws(GraphArchiveError) {
        try blocks.append(rows: rows, in: range, shapeValueCounts: shapeValueCounts, to: compressed)
    }

    /// Copies the bytes `range` of `rows`, which the caller is about to reuse, for
    /// ``appendCopy()``.
    func takeCopy(of rows: borrowing ByteWriter, in range: Range<Int>, shapeValueCounts: [Int]) {
        batch.truncate(to: 0)
        batch.writeBytes(of: rows, in: range)
        batchShapeValueCounts = shapeValueCounts
    }

    func appendCopy() throws(GraphArchiveError) {
        try append(batch, in: 0..<batch.count, shapeValueCounts: batchShapeValueCounts)
    }
}

enum ArchiveAssembler {
    static func assemble(state: inout EncodingState, compression: ArchiveCompression)
        throws(GraphArchiveError) -> ArchiveOutput
    {
        // Refuse a compression this build cannot write before doing any more work.
        try PayloadCompression.validate(compression)
        state.endObjects()
        var top = ByteWriter()
        swap(&top, &state.out)
        // The bodies not yet in blocks (all of them, unless the payload is compressed as it goes).
        var objects = ByteWriter()
        swap(&objects, &state.parked)
        var objectCount = state.identity.count
        var referenceCount = state.referenceCount
        // The objects are numbered: let go of the table (and of the objects it holds) before
        // any reordering copies the bodies and before the output is compressed or written
        // (a chain of 1M links held 76 MB at its reordering's end, 25 MB of it this table).
        state.identity = IdentityTable()
        state.keptAlive = []

        let tables = tables(of: state)
        let everyObjectHasBody = state.bodyCount == objectCount
        if !state.inConstructionOrder || !everyObjectHasBody {
            var reordered = try ObjectOrdering.reorder(
                state: state,
                objectCount: objectCount,
                top: top,
                objects: objects,
                roomBefore: ArchiveHeader.size + tables.count + top.count
            )
            swap(&top, &reordered.top)
            swap(&objects, &reordered.objects)
            objectCount = reordered.objectCount
            referenceCount = state.referencesInBlocks + reordered.referenceCount
        }
        let header = header(of: state, objectCount: objectCount, referenceCount: referenceCount)
        guard case .zstd(let level) = compression else {
            return ArchiveOutput(
                header: header,
                storedPayload: [OutputChunk(tables), OutputChunk(top), OutputChunk(objects)]
            )
        }
        let blocked = try state.blockedPayload(level: level)
        try blocked.writeRecords(objects, in: 0..<objects.count, shapeValueCounts: state.shapeKeyCount)
        return try blocked.finish(tables: tables, top: top, header: header)
    }

    /// Puts the key, type and shape tables of `state` before `sections` (the top-level section,
    /// then the object section) and wraps the payload in a header. Used by writers that
    /// produce the sections themselves (the KeyedArchive transcoder, the Codable bridge).
    ///
    /// - Parameter sections: Pieces that each hold whole top-level entries and whole records:
    ///   the `state.topCount` entries of the top section, then `objectCount` records.
    static func assemble(
        tablesOf state: borrowing EncodingState,
        sections: [OutputChunk],
        objectCount: Int,
        referenceCount: Int,
        compression: ArchiveCompression,
        checksummed: Bool = true
    ) throws(GraphArchiveError) -> ArchiveOutput {
        try PayloadCompression.validate(compression)
        let header = header(of: state, objectCount: objectCount, referenceCount: referenceCount)
        let tables = tables(of: state)
        guard case .zstd(let level) = compression else {
            return ArchiveOutput(
                header: header,
                storedPayload: [OutputChunk(tables)] + sections,
                checksummed: checksummed
            )
        }
        // Compressed payloads store the objects in blocks first and the top section last (§5.6).
        let blocked = try BlockedPayload(level: level, file: nil)
        let shapeValueCounts = state.shapes.map(\.keyIDs.count)
        let scanner = ValueScanner(shapeValueCounts: shapeValueCounts, objectCount: Int.max, maximumDepth: Int.max)
        var top = ByteWriter()
        var topLeft = state.topCount
        for section in sections {
            let topEnd = try section.writer.withReader { (reader: inout ByteReader) throws(GraphArchiveError) in
                while topLeft > 0 && !reader.isAtEnd {
                    _ = try reader.readVarint()
                    try scanner.skipValue(&reader)
                    topLeft -= 1
                }
                return reader.offset
            }
            top.writeBytes(of: section.writer, in: 0..<topEnd)
            try blocked.writeRecords(section.writer, in: topEnd..<section.count, shapeValueCounts: shapeValueCounts)
        }
        precondition(topLeft == 0, "sections hold fewer top-level entries than given")
        return try blocked.finish(tables: tables, top: top, header: header)
    }

    /// The header fields an archive of `state` has whatever its compression (FORMAT.md §3).
    private static func header(
        of state: borrowing EncodingState,
        objectCount: Int,
        referenceCount: Int
    ) -> ArchiveHeader {
        var header = ArchiveHeader()
        header.typeCount = UInt32(state.types.count)
        header.objectCount = UInt64(objectCount)
        header.referenceCount = UInt64(referenceCount)
        return header
    }

    /// The key, type and shape tables (FORMAT.md §4.1-§4.3) and the top section's count (§4.4).
    private static func tables(of state: borrowing EncodingState) -> ByteWriter {
        var tables = ByteWriter(reservingCapacity: 256)
        tables.writeVarint(state.keys.count)
        for key in state.keys {
            tables.writeVarint(key.utf8.count)
            tables.writeUTF8(key)
        }
        tables.writeVarint(state.types.count)
        for type in state.types {
            tables.writeByte(type.isObject ? TypeKind.object : TypeKind.value)
            tables.writeVarint(type.name.utf8.count)
            tables.writeUTF8(type.name)
        }
        tables.writeVarint(state.shapes.count)
        for shape in state.shapes {
            tables.writeVarint(shape.typeID)
            tables.writeVarint(shape.keyIDs.count)
            for key in shape.keyIDs { tables.writeVarint(key) }
        }
        tables.writeVarint(state.topCount)
        return tables
    }
}

/// Type table kinds (FORMAT.md §4.2).
enum TypeKind {
    static let object: UInt8 = 0
    static let value: UInt8 = 1
}
