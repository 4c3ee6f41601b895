// Sources/GraphArchive/Format/ColumnarObjects.swift - the column-wise object section of compressed archives (FORMAT.md §5.5)

/// Turns the row-wise object section (FORMAT.md §5.1) into the columnar one (§5.5) and back.
///
/// Compressed archives store their records column by column: the shape ids first, then, per
/// shape and key, that key's values of all the shape's records. Names next to names and dates
/// next to dates compress better than whole records one after another (1M grid states at zstd
/// level 3: 17.10 bytes per slot row-wise, 14.81 column-wise). Both forms hold exactly the same
/// bytes, only in another order, so the payload length is the same either way.
enum ColumnarObjects {
    /// The top section and the columnar object section made from `sections`: the row-wise top
    /// section and object section, as the assembler or a transcoder wrote them, in pieces that
    /// each hold whole top-level entries and whole records.
    ///
    /// - Parameters:
    ///   - topCount: Entries of the top section, which comes first.
    ///   - objectCount: Records of the object section, which follows.
    ///   - shapeValueCounts: Values per record of each shape, indexed by shape id.
    /// - Returns: Pieces to compress one after another: the top section, the shape stream, then
    ///   every column in order.
    static func columnar(
        sections: [OutputChunk],
        topCount: Int,
        objectCount: Int,
        shapeValueCounts: [Int]
    ) throws(GraphArchiveError) -> [OutputChunk] {
        let scanner = ValueScanner(shapeValueCounts: shapeValueCounts, objectCount: objectCount, maximumDepth: Int.max)
        let firstColumn = firstColumns(shapeValueCounts)
        var top = ByteWriter()
        var shapeStream = ByteWriter(reservingCapacity: objectCount)
        let columns = (0..<(firstColumn.last ?? 0)).map { _ in Column() }
        var topLeft = topCount
        var recordsLeft = objectCount
        for section in sections {
            try section.withUnsafeBytes { (raw) throws(GraphArchiveError) in
                try ByteReader.withReader(over: raw) { (reader: inout ByteReader) throws(GraphArchiveError) in
                    while topLeft > 0 && !reader.isAtEnd {
                        _ = try reader.readVarint()
                        try scanner.skipValue(&reader)
                        topLeft -= 1
                    }
                    try ByteReader.copy(from: 0, to: reader.offset, of: &reader, into: &top)
                    while !reader.isAtEnd {
                        precondition(recordsLeft > 0, "object section holds more than objectCount records")
                        recordsLeft -= 1
                        let shapeStart = reader.offset
                        let shape = try scanner.readShape(&reader)
                        try ByteReader.copy(from: shapeStart, to: reader.offset, of: &reader, into: &shapeStream)
                        for column in firstColumn[shape]..<firstColumn[shape + 1] {
                            let start = reader.offset
                            try scanner.skipValue(&reader)
                            try ByteReader.copy(from: start, to: reader.offset, of: &reader, into: &columns[column].bytes)
                        }
                    }
                }
            }
        }
        precondition(topLeft == 0 && recordsLeft == 0, "sections hold fewer entries or records than counted")
        return [OutputChunk(top), OutputChunk(shapeStream)] + columns.map { $0.chunk() }
    }

    /// The payload `columnar` (a decompressed payload whose object section is columnar) with its
    /// object section rebuilt row-wise, as every reader expects it; the same length.
    ///
    /// Checks the structure on the way: the shape stream's ids, that every column holds whole
    /// values, and that the columns end exactly where the payload ends. Reserves nothing beyond
    /// one array per shape and one per column of the shape table, and the output of
    /// `columnar.count` bytes (already allocated once for decompression).
    ///
    /// - Throws: `.corrupt` (with the offset in the decompressed payload) for a shape id out of
    ///   range, a shape stream or column that runs past the payload, bytes left over after the
    ///   last column, a bad tag; what the tables and values throw (`.badObjectReference`,
    ///   `.limitExceeded`, `.invalidUTF8`, ...).
    static func rows(
        fromColumnar columnar: ArchiveBytes,
        header: ArchiveHeader,
        options: GraphUnarchiver.Options
    ) throws(GraphArchiveError) -> ArchiveBytes {
        var reader = columnar.reader()
        let tables = try ArchiveTables.parse(&reader, header: header, options: options)
        // Every record has at least its shape id's byte in the shape stream.
        guard header.objectCount <= UInt64(reader.remaining) else {
            throw tooManyObjects(header.objectCount)
        }
        let objectCount = Int(header.objectCount)
        let scanner = ValueScanner(
            shapeValueCounts: tables.shapeKeyCount, objectCount: objectCount, maximumDepth: options.maximumDepth)
        for _ in 0..<tables.topCount {
            _ = try reader.readCount()
            try scanner.skipValue(&reader)
        }
        let objectStart = reader.offset
        guard objectCount <= reader.remaining else {
            throw tooManyObjects(header.objectCount)
        }

        // Pass 1: count records per shape, then find where each column starts.
        var recordCount = [Int](repeating: 0, count: tables.shapeKeyCount.count)
        try runPastEndIsCorrupt("the shape stream of \(objectCount) ids") { () throws(GraphArchiveError) in
            for _ in 0..<objectCount {
                recordCount[try scanner.readShape(&reader)] += 1
            }
        }
        let firstColumn = firstColumns(tables.shapeKeyCount)
        var columnCursor = [Int](repeating: 0, count: firstColumn.last ?? 0)
        for shape in recordCount.indices where recordCount[shape] > 0 {
            for column in firstColumn[shape]..<firstColumn[shape + 1] {
                columnCursor[column] = reader.offset
                let key = tables.shapeKeys[tables.shapeKeyStart[shape] + column - firstColumn[shape]]
                try runPastEndIsCorrupt("the column of key \"\(key)\" of shape \(shape)") { () throws(GraphArchiveError) in
                    for _ in 0..<recordCount[shape] {
                        try scanner.skipValue(&reader)
                    }
                }
            }
        }
        guard reader.isAtEnd else {
            throw GraphArchiveError(
                .corrupt, "\(reader.remaining) bytes left over after the last column of the object section",
                offset: reader.offset)
        }

        // Pass 2: the tables and top section as they are, then each record: its shape id and
        // the next cell of each of its columns.
        return try ArchiveBytes.filled(count: columnar.count) { (output) throws(GraphArchiveError) in
            try output.write(0..<objectStart, of: reader)
            var shapes = columnar.reader(objectStart..<columnar.count)
            var cells = columnar.reader()
            for _ in 0..<objectCount {
                let shapeStart = shapes.offset
                let shape = try scanner.readShape(&shapes)
                try output.write(shapeStart..<shapes.offset, of: shapes)
                for column in firstColumn[shape]..<firstColumn[shape + 1] {
                    cells.offset = columnCursor[column]
                    try scanner.skipValue(&cells)
                    try output.write(columnCursor[column]..<cells.offset, of: cells)
                    columnCursor[column] = cells.offset
                }
            }
        }
    }

    /// For each shape, the index of its first column; one more entry holds the column count.
    private static func firstColumns(_ shapeValueCounts: [Int]) -> [Int] {
        var first = [0]
        first.reserveCapacity(shapeValueCounts.count + 1)
        for count in shapeValueCounts { first.append(first[first.count - 1] + count) }
        return first
    }

    /// Runs `body`, reporting a read past the end of the payload as a `.corrupt` `what`.
    private static func runPastEndIsCorrupt(
        _ what: @autoclosure () -> String,
        _ body: () throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        do {
            try body()
        } catch let error where error.code == .truncated {
            throw GraphArchiveError(
                .corrupt, "\(what()) runs past the end of the payload (\(error.message))", offset: error.offset)
        }
    }

    /// Points at the header's objectCount field, as the row-wise readers do.
    private static func tooManyObjects(_ count: UInt64) -> GraphArchiveError {
        GraphArchiveError(.corrupt, "header claims \(count) objects, more than the shape stream can hold", offset: 32)
    }

    /// One column being collected, in a class so an array can hold the noncopyable writer.
    private final class Column {
        var bytes = ByteWriter()

        func chunk() -> OutputChunk {
            var taken = ByteWriter(reservingCapacity: 0)
            swap(&taken, &bytes)
            return OutputChunk(taken)
        }
    }
}
