// Sources/GraphArchive/Format/ColumnarObjects.swift - the column-wise object table of compressed archives (FORMAT.md §5.5, §5.6)

/// Turns row-wise records (FORMAT.md §5.1) into the blocked columnar object table of compressed
/// archives (§5.6) and back.
///
/// Compressed archives store their records column by column: the shape ids first, then, per
/// shape and key, that key's values of all the shape's records. Names next to names and dates
/// next to dates compress better than whole records one after another (1M grid states at zstd
/// level 3: 17.10 bytes per slot row-wise, 14.8 column-wise). The columns are cut into blocks
/// of about ``blockBytes``, so a writer holds one block, not the whole table, before it
/// compresses: an archive is saved while it is encoded. The same bytes, reordered, plus a few
/// bytes of block headers.
enum ColumnarObjects {
    /// A block is cut at the first record boundary at or after this many bytes of records.
    /// Longer blocks compress better and cost a writer more memory (1M grid states, 25% shared,
    /// level 3: 15.01 bytes a slot at 1 MiB, 14.93 at 2 MiB, 14.89 at 4 MiB; saving them peaked
    /// 21.3 MiB above the graph at 2 MiB and 23.8 MiB at 4 MiB).
    static let blockBytes = 2 << 20

    /// The encoder hands its finished bodies to the block writer in batches of about this many
    /// bytes. A compressed encode holds two besides the block being built: the batch it is
    /// writing, and a copy of the last one, which another thread lays out and compresses
    /// (`BlockedPayload`); each handing over waits for the last to be done.
    static let rowBatchBytes = 128 << 10

    /// The buffers a ``BlockWriter`` collects a block in: the shape stream and one per column.
    struct BlockBuffers: ~Copyable {
        var shapeStream = ByteWriter(reservingCapacity: 1 << 12)
        var columns = ByteWriters()
    }

    /// Cuts row-wise records into blocks (§5.6) and compresses each block once it is complete.
    ///
    /// Records arrive in batches of any size (the encoder hands over its bodies every
    /// ``ColumnarObjects/rowBatchBytes``); their cells collect in one buffer per column until
    /// the block reaches ``ColumnarObjects/blockBytes``. One writer serves a whole archive, so
    /// its buffers are allocated once and reused from block to block.
    ///
    /// Its buffers are its unchecked ``UncheckedCell/value``, fields of the writer itself (a
    /// cell of their own would cost a load per cell): every record and cell is appended to them
    /// in place. Only `append` and `emitBlock` touch them, never both at once.
    final class BlockWriter: UncheckedCell<BlockBuffers> {
        private var blockHeader = ByteWriter(reservingCapacity: 32)
        /// Records and bytes collected for the block being built.
        private var blockRecords = 0
        private var collectedBytes = 0
        /// Records taken so far, over all calls.
        private(set) var recordCount = 0

        init() {
            super.init(BlockBuffers())
        }

        /// Takes the whole records `rows`, compressing every block they complete; returns how
        /// many records there were.
        ///
        /// - Parameter shapeValueCounts: Values per record of each shape, indexed by shape id
        ///   (at least every shape the records use).
        @discardableResult
        func append(
            rows: borrowing ByteWriter,
            in range: Range<Int>,
            shapeValueCounts: [Int],
            to payload: CompressedPayload
        ) throws(GraphArchiveError) -> Int {
            // The writer's own bytes: references may point at objects not yet written.
            let scanner = ValueScanner(shapeValueCounts: shapeValueCounts, objectCount: Int.max, maximumDepth: Int.max)
            let firstColumn = ColumnarObjects.firstColumns(shapeValueCounts)
            value.columns.extend(to: firstColumn[firstColumn.count - 1])
            var taken = 0
            try rows.withReader(in: range) { (reader: inout ByteReader) throws(GraphArchiveError) in
                while !reader.isAtEnd {
                    let recordStart = reader.offset
                    let shape = try scanner.readShape(&reader)
                    reader.copyPassed(from: recordStart, into: &value.shapeStream)
                    for column in firstColumn[shape]..<firstColumn[shape + 1] {
                        let start = reader.offset
                        try scanner.skipValue(&reader)
                        reader.copyPassed(from: start, into: &value.columns, at: column)
                    }
                    taken += 1
                    blockRecords += 1
                    collectedBytes += reader.offset - recordStart
                    if collectedBytes >= ColumnarObjects.blockBytes { try emitBlock(to: payload, moreFollow: true) }
                }
            }
            recordCount += taken
            return taken
        }

        /// Compresses the records collected since the last block, if any.
        func finish(to payload: CompressedPayload) throws(GraphArchiveError) {
            if blockRecords > 0 { try emitBlock(to: payload, moreFollow: false) }
        }

        /// Compresses the collected block: its length, its record count, the shape stream and
        /// every column (those of shapes without records here are empty), each column starting a
        /// zstd block of its own; then empties the buffers. `moreFollow` is false for the last
        /// block (``CompressedPayload/beginBlock(moreFollow:)``).
        private func emitBlock(to payload: CompressedPayload, moreFollow: Bool) throws(GraphArchiveError) {
            payload.beginBlock(moreFollow: moreFollow)
            blockHeader.truncate(to: 0)
            blockHeader.writeVarint(ByteWriter.varintLength(UInt64(blockRecords)) + collectedBytes)
            blockHeader.writeVarint(blockRecords)
            try payload.write(blockHeader)
            try payload.write(value.shapeStream)
            value.shapeStream.truncate(to: 0)
            for column in 0..<value.columns.count where value.columns.bytesCount(column) > 0 {
                // Names after names, dates after dates: a zstd block of one column compresses
                // better than one straddling two (1M grid states: 15.39 → 15.22 bytes a slot
                // at 512 KiB blocks).
                try payload.endBlock()
                try value.columns.withWriter(column) { (cells) throws(GraphArchiveError) in try payload.write(cells) }
                value.columns.empty(column)
            }
            blockRecords = 0
            collectedBytes = 0
        }
    }

    /// The payload `stored` (decompressed, its object table columnar: §5.5, or in blocks: §5.6)
    /// rebuilt row-wise, as every reader expects it: the tables and top section, then the records.
    ///
    /// Checks the structure on the way: the block lengths and record counts, the shape stream's
    /// ids, that every column holds whole values, that each block's columns end exactly where
    /// the block ends, and that nothing follows the top section. Reserves nothing beyond one
    /// counter per shape and one position per column of the shape table, and the output (at
    /// most `stored.count` bytes); the work per block is bounded by the block's own bytes.
    ///
    /// - Parameter head: The tables and top section of `stored` as a check of the same bytes
    ///   parsed them (``PayloadStreamCheck/head``), which are then not parsed again.
    /// - Throws: `.corrupt` (with the offset in the decompressed payload) for a block length or
    ///   record count out of range, a shape id out of range, a shape stream or column that runs
    ///   past its block, bytes left over after a block's last column or after the top section, a
    ///   bad tag; what the tables and values throw (`.badObjectReference`, `.limitExceeded`,
    ///   `.invalidUTF8`, ...).
    static func rows(
        fromColumnar stored: ArchiveBytes,
        header: ArchiveHeader,
        options: GraphUnarchiver.Options,
        head: Head? = nil
    ) throws(GraphArchiveError) -> ArchiveBytes {
        var rebuild = try Rebuild(stored: stored, header: header, options: options, head: head)
        return try ArchiveBytes.filled(count: rebuild.rowCount) { (output) throws(GraphArchiveError) in
            try rebuild.writeHead(into: &output)
            while try rebuild.writeNextBlock(into: &output) > 0 {}
        }
    }

    /// The tables and the top section of a payload (FORMAT.md §4) as parsed and checked once:
    /// where they start and end, and the tables.
    struct Head {
        var tablesStart: Int
        var tables: ArchiveTables
        var topEnd: Int
    }

    /// A columnar payload (§5.5, §5.6) being rebuilt row-wise: the tables and the top section
    /// first (``writeHead(into:)``), then a block of records at a time
    /// (``writeNextBlock(into:)``) or a few records at a time (``writeNextRecords(into:atMost:)``),
    /// so that a decoder can read the records already written while the next are
    /// (`RebuiltPayloadWindow`). Its checks are those of
    /// ``rows(fromColumnar:header:options:head:)``: the blocks' lengths and counts, the tables and
    /// the top section when it is made, each block's structure before its records are written.
    struct Rebuild: ~Copyable {
        /// The decompressed columnar payload.
        let stored: ArchiveBytes
        /// Bytes of the row-wise payload: the stored ones less the blocks' lengths and counts.
        let rowCount: Int
        /// Bytes of the tables and the top section, which start the row-wise payload.
        var headCount: Int { topEnd - tablesStart }
        /// How far before `stored`'s first byte, in the same memory, the rows can be written
        /// without overwriting a byte not read yet: a block's rows, as long as its body, come
        /// after the tables and the top section and the rows of the blocks before it, which
        /// are at most as long as those blocks; and a cell copied whole writes up to
        /// ``ColumnCursors/longestPlainCell`` bytes past its record.
        var rowsLead: Int { headCount + longestBlock + ColumnCursors.longestPlainCell }
        /// Bytes of the longest block's shape stream and columns.
        private let longestBlock: Int
        private let objectCount: Int
        private let isBlocked: Bool
        private let tablesStart: Int
        private let topEnd: Int
        private let scanner: ValueScanner
        private var columns: BlockColumns
        /// The blocks not started yet.
        private var blocks: ByteReader
        /// Records of the blocks not started yet.
        private var recordsLeft: Int
        /// The shape stream of the block being rebuilt, at its next record's id, and the
        /// records of that block still to write.
        private var shapes: ByteReader
        private var blockRecordsLeft = 0
        /// The shape stream and columns of the block being rebuilt, and where its records start
        /// in the output: they take as many bytes.
        private var blockRange = 0..<0
        private var blockOutputStart = 0

        /// Checks the block lengths and record counts, the tables and the top section.
        ///
        /// - Parameter head: The tables and top section of `stored` as parsed already (the check
        ///   of a decompressed payload parses them: ``PayloadStreamCheck/head``); they are then
        ///   taken as they are, when they start where the blocks end.
        /// - Throws: what ``rows(fromColumnar:header:options:head:)`` throws for them.
        init(
            stored: ArchiveBytes,
            header: ArchiveHeader,
            options: GraphUnarchiver.Options,
            head: Head? = nil
        ) throws(GraphArchiveError) {
            var reader = stored.reader()
            // Every record has at least its shape id's byte in a shape stream.
            guard header.objectCount <= UInt64(stored.count) else { throw tooManyObjects(header.objectCount) }
            let objectCount = Int(header.objectCount)
            let isBlocked = header.flags.contains(.objectBlocks)
            // §5.6: the blocks come first. Step over them to the tables, adding up their headers.
            var blockHeaderBytes = 0
            var longestBlock = 0
            if isBlocked {
                var recordsLeft = objectCount
                while recordsLeft > 0 {
                    let block = try Block.read(&reader, recordsLeft: recordsLeft)
                    blockHeaderBytes += block.headerBytes
                    longestBlock = max(longestBlock, block.range.count)
                    recordsLeft -= block.recordCount
                }
            }
            let tablesStart = reader.offset
            let parsed = head.flatMap { $0.tablesStart == tablesStart && $0.topEnd <= stored.count ? $0 : nil }
            let tables: ArchiveTables
            if let parsed {
                tables = parsed.tables
            } else {
                // Charged to a budget of its own: the tables parsed here are not kept.
                tables = try ArchiveTables.parse(&reader, header: header, options: options)
            }
            let scanner = ValueScanner(
                shapeValueCounts: tables.shapeKeyCount,
                objectCount: objectCount,
                maximumDepth: options.maximumDepth
            )
            if let parsed {
                reader.offset = parsed.topEnd
            } else {
                for _ in 0..<tables.topCount {
                    _ = try reader.readCount()
                    try scanner.skipValue(&reader)
                }
            }
            let topEnd = reader.offset
            // §5.6 and an empty §5.5 table: the top section ends the payload.
            if isBlocked || objectCount == 0 {
                guard reader.isAtEnd else {
                    throw GraphArchiveError(
                        .corrupt,
                        "\(reader.remaining) bytes left over after the top section",
                        offset: reader.offset
                    )
                }
            } else {
                // §5.5: one set of columns for every record follows the top section.
                guard objectCount <= reader.remaining else { throw tooManyObjects(header.objectCount) }
            }
            self.stored = stored
            rowCount = stored.count - blockHeaderBytes
            self.objectCount = objectCount
            self.isBlocked = isBlocked
            self.tablesStart = tablesStart
            self.topEnd = topEnd
            // §5.5: the one set of columns follows the top section.
            self.longestBlock = isBlocked ? longestBlock : stored.count - topEnd
            self.scanner = scanner
            columns = BlockColumns(tables: tables)
            blocks = stored.reader(0..<tablesStart)
            recordsLeft = objectCount
            shapes = blocks
        }

        /// Writes the tables and the top section as they are: the start of the row-wise payload.
        func writeHead(into output: inout ArchiveBytesWriter) throws(GraphArchiveError) {
            try output.write(tablesStart..<topEnd, of: stored.reader())
        }

        /// Writes the records of the next block (each one's shape id and the next cell of each
        /// of its columns), after checking the block's structure; returns how many it wrote, 0
        /// once every block is rebuilt.
        ///
        /// - Throws: what ``rows(fromColumnar:header:options:head:)`` throws for a block.
        mutating func writeNextBlock(into output: inout ArchiveBytesWriter) throws(GraphArchiveError) -> Int {
            try writeNextRecords(into: &output, atMost: .max)
        }

        /// Writes the next records, at most `limit` (at least 1) and none past the end of their
        /// block, checking each block's structure before its first record; returns how many
        /// it wrote, 0 once every block is rebuilt. A reader beside it can then start on a
        /// block's first records while the rest are written.
        ///
        /// - Throws: what ``rows(fromColumnar:header:options:head:)`` throws for a block.
        mutating func writeNextRecords(
            into output: inout ArchiveBytesWriter,
            atMost limit: Int
        ) throws(GraphArchiveError) -> Int {
            if blockRecordsLeft == 0 {
                guard recordsLeft > 0 else { return 0 }
                let block =
                    isBlocked
                    ? try Block.read(&blocks, recordsLeft: recordsLeft)
                    : Block(range: topEnd..<stored.count, recordCount: objectCount, headerBytes: 0)
                recordsLeft -= block.recordCount
                let shapeStreamStart = try columns.locate(block, in: stored, scanner: scanner)
                shapes = stored.reader(shapeStreamStart..<block.range.upperBound)
                blockRecordsLeft = block.recordCount
                blockRange = block.range
                blockOutputStart = output.count
            }
            let count = min(max(limit, 1), blockRecordsLeft)
            // The block's structure is checked: its cells are copied without being read again.
            let scanner = scanner
            try output.writeRows(
                count,
                shapes: &shapes,
                within: stored.reader(),
                columns: &columns.cursors,
                readShape: { (reader) throws(GraphArchiveError) in try scanner.readShape(&reader) },
                skipValue: { (reader) throws(GraphArchiveError) in try scanner.skipValue(&reader) }
            )
            blockRecordsLeft -= count
            // The shape stream and the columns, checked whole, come out as the block's records.
            if blockRecordsLeft == 0 && output.count - blockOutputStart != blockRange.count {
                throw GraphArchiveError(
                    .corrupt,
                    "object block of \(blockRange.count) bytes makes \(output.count - blockOutputStart) bytes of records",
                    offset: blockRange.lowerBound
                )
            }
            return count
        }
    }

    /// One block of §5.6 (or the whole columnar table of §5.5): where its shape stream and
    /// columns lie, and how many records they hold.
    private struct Block {
        /// The shape stream and columns (after the block's length and record count).
        var range: Range<Int>
        var recordCount: Int
        /// Bytes of the block's length and record count, which the row-wise table does not have.
        var headerBytes: Int

        /// Reads a block's length and record count, and steps over its body.
        static func read(_ reader: inout ByteReader, recordsLeft: Int) throws(GraphArchiveError) -> Block {
            let start = reader.offset
            let length = try reader.readCount()
            let bodyStart = reader.offset
            guard length <= reader.remaining else {
                throw GraphArchiveError(
                    .corrupt,
                    "object block of \(length) bytes runs past the end of the payload",
                    offset: start
                )
            }
            let countOffset = reader.offset
            let records = try reader.readVarint()
            guard records >= 1, records <= UInt64(recordsLeft), reader.offset <= bodyStart + length else {
                throw GraphArchiveError(
                    .corrupt,
                    "object block claims \(records) records; 1 to \(recordsLeft) are left of the header's objectCount",
                    offset: countOffset
                )
            }
            let range = reader.offset..<(bodyStart + length)
            reader.offset = range.upperBound
            return Block(range: range, recordCount: Int(records), headerBytes: range.lowerBound - start)
        }
    }

    /// Where each column of the block being rebuilt starts; its arrays are allocated once per
    /// payload and only the entries of the block's own shapes are touched per block.
    ///
    /// The counters and cursors, written for every record and every cell, are plain tables
    /// rather than arrays, whose copy-on-write check was a call per write (callgrind: 18M
    /// instructions of the 432M rebuilding 1M grid states).
    private struct BlockColumns: ~Copyable {
        let tables: ArchiveTables
        /// Where each shape's columns are and the next unread cell of each column.
        var cursors: ColumnCursors
        private var recordsOfShape: PlainStack<Int>
        private var shapesPresent: [Int] = []

        init(tables: ArchiveTables) {
            self.tables = tables
            cursors = ColumnCursors(shapeValueCounts: tables.shapeKeyCount, plainLength: ValueTag.plainLength)
            recordsOfShape = PlainStack(zeros: tables.shapeKeyCount.count)
        }

        /// Pass 1 over `block`: counts its records per shape from the shape stream, then steps
        /// over each column to find where it starts, checking that the last one ends where the
        /// block ends. Returns where the shape stream starts.
        mutating func locate(
            _ block: Block,
            in stored: ArchiveBytes,
            scanner: ValueScanner
        ) throws(GraphArchiveError) -> Int {
            for shape in shapesPresent { recordsOfShape[shape] = 0 }
            shapesPresent.removeAll(keepingCapacity: true)
            var reader = stored.reader(block.range)
            try runPastEndIsCorrupt("the shape stream of \(block.recordCount) ids") { () throws(GraphArchiveError) in
                for _ in 0..<block.recordCount {
                    let shape = try scanner.readShape(&reader)
                    if recordsOfShape[shape] == 0 { shapesPresent.append(shape) }
                    recordsOfShape[shape] += 1
                }
            }
            // Columns come in shape id order (§5.5); only the block's own shapes have any.
            shapesPresent.sort()
            for shape in shapesPresent {
                let columns = cursors.columns(ofShape: shape)
                for column in columns {
                    cursors[column] = reader.offset
                    let key = tables.shapeKeys[tables.shapeKeyStart[shape] + column - columns.lowerBound]
                    try runPastEndIsCorrupt("the column of key \"\(key)\" of shape \(shape)") {
                        () throws(GraphArchiveError) in
                        // Most cells are scalars their tag sizes, stepped over from a table.
                        var left = recordsOfShape[shape]
                        while left > 0 {
                            left -= reader.skipPlainValues(left, lengths: cursors)
                            if left > 0 {
                                try scanner.skipValue(&reader)
                                left -= 1
                            }
                        }
                    }
                }
            }
            guard reader.isAtEnd else {
                throw GraphArchiveError(
                    .corrupt,
                    "\(reader.remaining) bytes left over after the last column of the object table",
                    offset: reader.offset
                )
            }
            return block.range.lowerBound
        }
    }

    /// For each shape, the index of its first column; one more entry holds the column count.
    static func firstColumns(_ shapeValueCounts: [Int]) -> [Int] {
        var first = [0]
        first.reserveCapacity(shapeValueCounts.count + 1)
        for count in shapeValueCounts { first.append(first[first.count - 1] + count) }
        return first
    }

    /// Runs `body`, reporting a read past the end of a block as a `.corrupt` `what`.
    private static func runPastEndIsCorrupt(
        _ what: @autoclosure () -> String,
        _ body: () throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        do {
            try body()
        } catch let error where error.code == .truncated {
            throw GraphArchiveError(
                .corrupt,
                "\(what()) runs past the end of its object block (\(error.message))",
                offset: error.offset
            )
        }
    }

    /// Points at the header's objectCount field, as the row-wise readers do.
    private static func tooManyObjects(_ count: UInt64) -> GraphArchiveError {
        GraphArchiveError(.corrupt, "header claims \(count) objects, more than the shape stream can hold", offset: 32)
    }

}
