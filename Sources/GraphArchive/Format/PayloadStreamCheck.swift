// Sources/GraphArchive/Format/PayloadStreamCheck.swift - a payload's structure, checked while it is decompressed

/// Checks the structure of a decompressed payload as the decompressor produces it, so that a
/// frame that inflates to garbage (a few KB of zstd can claim gigabytes of zeros) fails in its
/// first blocks instead of after it has filled the whole buffer.
///
/// What is checked as soon as its bytes exist, in the payload's order:
/// - each object block's length and record count (FORMAT.md §5.6): the block must end inside
///   the payload, and hold 1 to the records left of the header's `objectCount`;
/// - the tables and the top section (§4), parsed on the bytes produced so far, again each time
///   the output doubles: their errors are thrown as soon as they are certain (a count larger
///   than the payload, a bad id, a bad tag); only running out of produced bytes waits. After
///   object blocks, which leave them the rest of the payload, they are first parsed when it is
///   complete if no more is left than has been produced: the doubling would not look again
///   before then, and a parse of part of them is wasted (the 1M references of the top section
///   of 1M grid states: 25M instructions);
/// - where the top section ends the payload (§5.6, or no objects), that nothing follows it.
///
/// The complete payload is checked again in full when it is rebuilt row-wise
/// (`ColumnarObjects`); this check is the early part of that one, with the same messages.
struct PayloadStreamCheck {
    private enum Phase {
        case blocks
        case tables
        case done
    }

    private let header: ArchiveHeader
    private let options: GraphUnarchiver.Options
    private let payloadLength: Int
    private var phase: Phase
    /// Where the next unchecked structure starts.
    private var cursor = 0
    private var recordsLeft: Int
    /// The produced size at which the tables are parsed again.
    private var nextTablesAttempt = 0
    /// The tables and the top section, once parsed, for the rebuild of a columnar payload,
    /// which then does not parse them again (``ColumnarObjects/Rebuild``).
    private(set) var head: ColumnarObjects.Head?
    /// Where the top section ends, once the tables and it have been parsed: for a row-wise
    /// payload, where its object table starts.
    var tablesEnd: Int? { head?.topEnd }

    init(header: ArchiveHeader, options: GraphUnarchiver.Options) {
        self.header = header
        self.options = options
        payloadLength = Int(header.payloadLength)
        recordsLeft = Int(header.objectCount)
        phase = header.flags.contains(.objectBlocks) ? .blocks : .tables
    }

    /// Checks what `produced` (the payload's first bytes, all of them once `isComplete`) holds
    /// beyond what was checked before.
    ///
    /// - Throws: `.corrupt`, `.invalidUTF8`, `.limitExceeded`, `.badObjectReference`, with the
    ///   offset in the decompressed payload.
    mutating func check(_ produced: UnsafeRawBufferPointer, isComplete: Bool) throws(GraphArchiveError) {
        if phase == .blocks { try checkBlocks(produced) }
        if phase == .tables && (isComplete || produced.count >= nextTablesAttempt) {
            try checkTables(produced, isComplete: isComplete)
        }
    }

    /// Steps over the object blocks whose headers have been produced (§5.6).
    private mutating func checkBlocks(_ produced: UnsafeRawBufferPointer) throws(GraphArchiveError) {
        try ByteReader.withReader(over: produced) { (reader: inout ByteReader) throws(GraphArchiveError) in
            while recordsLeft > 0 {
                // Wait for the block's length and record count (at most 20 bytes).
                guard cursor < produced.count else { return }
                reader.offset = cursor
                let length: Int
                let records: UInt64
                do throws(GraphArchiveError) {
                    length = try reader.readCount()
                    records = try reader.readVarint()
                } catch  where error.code == .truncated {
                    return
                }
                let bodyStart = cursor + ByteWriter.varintLength(UInt64(length))
                guard length <= payloadLength - bodyStart else {
                    throw GraphArchiveError(
                        .corrupt,
                        "object block of \(length) bytes runs past the end of the payload",
                        offset: cursor
                    )
                }
                guard records >= 1, records <= UInt64(recordsLeft), reader.offset <= bodyStart + length else {
                    throw GraphArchiveError(
                        .corrupt,
                        "object block claims \(records) records; 1 to \(recordsLeft) are left of the header's objectCount",
                        offset: bodyStart
                    )
                }
                recordsLeft -= Int(records)
                cursor = bodyStart + length
            }
            phase = .tables
        }
    }

    /// Parses the tables and the top section on what is produced; waits (until the output has
    /// doubled) when they run past it.
    private mutating func checkTables(_ produced: UnsafeRawBufferPointer, isComplete: Bool) throws(GraphArchiveError) {
        guard cursor <= produced.count else {
            nextTablesAttempt = cursor
            return
        }
        // After object blocks the tables and the top section run to the payload's end.
        if header.flags.contains(.objectBlocks) && !isComplete && 2 * produced.count >= payloadLength {
            nextTablesAttempt = payloadLength
            return
        }
        let tablesStart = cursor
        let parsed: ColumnarObjects.Head
        do {
            parsed = try ByteReader.withReader(over: produced) {
                (reader: inout ByteReader) throws(GraphArchiveError) -> ColumnarObjects.Head in
                reader.offset = tablesStart
                // Charged to a budget of their own: nothing parsed here is kept.
                var memory = MemoryBudget(options)
                let tables = try ArchiveTables.parse(
                    &reader,
                    header: header,
                    options: options,
                    memory: &memory,
                    bytesBeyond: payloadLength - produced.count
                )
                let scanner = ValueScanner(
                    shapeValueCounts: tables.shapeKeyCount,
                    objectCount: Int(header.objectCount),
                    maximumDepth: options.maximumDepth
                )
                for _ in 0..<tables.topCount {
                    _ = try reader.readCount()
                    try scanner.skipValue(&reader)
                }
                return ColumnarObjects.Head(tablesStart: tablesStart, tables: tables, topEnd: reader.offset)
            }
        } catch let error where error.code == .truncated && !isComplete {
            nextTablesAttempt = max(2 * produced.count, produced.count + 1)
            return
        }
        phase = .done
        head = parsed
        let end = parsed.topEnd
        guard header.flags.contains(.objectBlocks) || header.objectCount == 0, end < payloadLength else { return }
        // The messages of the full checks: the columnar rebuild's, or the row-wise reader's.
        guard header.flags.contains(.columnarObjects) else {
            throw GraphArchiveError(.trailingGarbage, "unexpected bytes after the last object", offset: end)
        }
        throw GraphArchiveError(.corrupt, "\(payloadLength - end) bytes left over after the top section", offset: end)
    }
}
