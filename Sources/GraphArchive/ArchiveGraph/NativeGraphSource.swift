// Sources/GraphArchive/ArchiveGraph/NativeGraphSource.swift - a gridstore archive's values, walked without its model types
//
// The archive is checked as every reader checks it (header, checksums, decompression, the
// tables, the top-level section) when it is opened; the object table is read when it is
// walked: in order for output that lists every object, through an index of record offsets
// (built by one pass on first use) for lookups by id.

/// The values of one gridstore archive, for ``ArchiveGraph``.
struct NativeGraphSource {
    let loaded: LoadedArchive
    let tables: ArchiveTables
    let scanner: ValueScanner
    let options: GraphUnarchiver.Options
    let objectCount: Int
    /// Top-level entries as stored: key id and where the value starts (`$keyedArchive` is not
    /// among them).
    let topEntries: [(keyID: Int, offset: Int)]
    /// Where the object table starts.
    let objectsStart: Int
    /// What a keyed archive converted to this one keeps beside its values.
    private(set) var notes = ConversionNotes()
    /// Where each object's record starts, once `indexObjects` ran.
    private var recordOffsets: [Int] = []

    /// Opens and checks `bytes` as a gridstore archive.
    ///
    /// - Throws: What reading any gridstore archive throws (``GraphUnarchiver/archiveInfo(from:options:)-(Data,_)``),
    ///   and `.corrupt` for a top-level section that is not well formed.
    init(bytes: ArchiveBytes, options: GraphUnarchiver.Options) throws(GraphArchiveError) {
        try self.init(loaded: LoadedArchive.load(bytes, options: options), options: options)
    }

    init(loaded: LoadedArchive, options: GraphUnarchiver.Options) throws(GraphArchiveError) {
        self.loaded = loaded
        self.options = options
        var reader = loaded.payload.reader(loaded.payloadRange)
        var memory = loaded.memory
        tables = try ArchiveTables.parse(&reader, header: loaded.header, options: options, memory: &memory)
        // Every record takes at least one byte.
        guard loaded.header.objectCount <= UInt64(min(reader.remaining, options.maximumObjectCount)) else {
            throw GraphArchiveError(
                .corrupt,
                "header claims \(loaded.header.objectCount) objects, more than the payload or maximumObjectCount allows",
                offset: 32
            )
        }
        objectCount = Int(loaded.header.objectCount)
        scanner = ValueScanner(
            shapeValueCounts: tables.shapeKeyCount,
            objectCount: objectCount,
            maximumDepth: options.maximumDepth
        )
        var entries: [(keyID: Int, offset: Int)] = []
        var seen = Set<Int>()
        var notesOffset: Int?
        for _ in 0..<tables.topCount {
            let offset = reader.offset
            let key = try reader.readCount()
            guard key < tables.keys.count, seen.insert(key).inserted else {
                throw GraphArchiveError(
                    .corrupt,
                    "top-level entry uses key \(key) twice or out of range",
                    offset: offset
                )
            }
            if tables.keys[key] == ConversionNotes.topLevelKey {
                notesOffset = reader.offset
            } else {
                entries.append((key, reader.offset))
            }
            try scanner.skipValue(&reader)
        }
        topEntries = entries
        objectsStart = reader.offset
        if let notesOffset {
            var builder = ValueBuilder()
            var cursor = reader
            cursor.offset = notesOffset
            var noNotes = FieldNotes()
            var path: [Int] = []
            try emit(&cursor, depth: 0, &builder, notes: &noNotes, path: &path)
            notes = try ConversionNotes(parsing: builder.fields.first?.value ?? .null)
        }
    }

    // MARK: - Objects

    /// The type name of object `id`'s record, and a reader at its first value.
    func record(at offset: Int) throws(GraphArchiveError) -> (shape: Int, reader: ByteReader) {
        var reader = loaded.payload.reader(loaded.payloadRange)
        reader.offset = offset
        let start = reader.offset
        let shape = try scanner.readShape(&reader)
        guard tables.typeIsObject[tables.shapeType[shape]] else {
            throw GraphArchiveError(.corrupt, "an object is recorded with a value type", offset: start)
        }
        return (shape, reader)
    }

    func typeName(ofShape shape: Int) -> String {
        tables.typeNames[tables.shapeType[shape]]
    }

    /// Builds the index of record offsets (one pass over the object table, checking every
    /// value) if it is not built yet.
    mutating func indexObjects() throws(GraphArchiveError) {
        guard recordOffsets.count < objectCount else { return }
        var offsets: [Int] = []
        offsets.reserveCapacity(objectCount)
        var reader = loaded.payload.reader(loaded.payloadRange)
        reader.offset = objectsStart
        for _ in 0..<objectCount {
            offsets.append(reader.offset)
            let shape = try scanner.readShape(&reader)
            for _ in 0..<tables.shapeKeyCount[shape] { try scanner.skipValue(&reader) }
        }
        guard reader.isAtEnd else {
            throw GraphArchiveError(.trailingGarbage, "unexpected bytes after the last object", offset: reader.offset)
        }
        recordOffsets = offsets
    }

    /// Where object `id`'s record starts (``indexObjects()`` must have run).
    func recordOffset(_ id: Int) -> Int { recordOffsets[id] }

    /// Walks the object table's records in order: calls `body` with each object's id, shape,
    /// where its record starts and a reader at its values; `body` must leave the reader after
    /// the record.
    func forEachRecord(
        _ body: (_ id: Int, _ shape: Int, _ start: Int, _ reader: inout ByteReader) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        var reader = loaded.payload.reader(loaded.payloadRange)
        reader.offset = objectsStart
        for id in 0..<objectCount {
            let start = reader.offset
            let shape = try scanner.readShape(&reader)
            guard tables.typeIsObject[tables.shapeType[shape]] else {
                throw GraphArchiveError(.corrupt, "object #\(id) is recorded with a value type", offset: start)
            }
            try body(id, shape, start, &reader)
        }
        guard reader.isAtEnd else {
            throw GraphArchiveError(.trailingGarbage, "unexpected bytes after the last object", offset: reader.offset)
        }
    }

    /// Walks the fields of the record of object `id` (of `shape`), the reader at its first value.
    func visitFields<V: GraphVisitor>(
        of id: Int,
        shape: Int,
        reader: inout ByteReader,
        _ visitor: inout V
    ) throws(GraphArchiveError) {
        let start = tables.shapeKeyStart[shape]
        let hasNotes = notes.hasNotes(object: id)
        var path: [Int] = []
        for position in 0..<tables.shapeKeyCount[shape] {
            let keyID = tables.shapeKeyIDs[start + position]
            let key = tables.keys[keyID]
            try visitor.field(key, keyID: keyID)
            var fieldNotes = hasNotes ? notes.notes(object: id, key: key) ?? FieldNotes() : FieldNotes()
            try emit(&reader, depth: 0, &visitor, notes: &fieldNotes, path: &path)
        }
    }

    /// Walks top-level entry `index` (of ``topEntries``): its key, then its value.
    func visitTopEntry<V: GraphVisitor>(_ index: Int, _ visitor: inout V) throws(GraphArchiveError) {
        let entry = topEntries[index]
        let key = tables.keys[entry.keyID]
        try visitor.field(key, keyID: entry.keyID)
        var reader = loaded.payload.reader(loaded.payloadRange)
        reader.offset = entry.offset
        var fieldNotes = notes.notes(object: ConversionNotes.topLevel, key: key) ?? FieldNotes()
        var path: [Int] = []
        try emit(&reader, depth: 0, &visitor, notes: &fieldNotes, path: &path)
    }

    // MARK: - Values

    /// Reads one tagged value (FORMAT.md §6) and hands it to `visitor`, containers recursively
    /// (depth-checked). `notes` are the field's conversion notes, `path` where this value
    /// lies in the field's value (kept only while there are notes). Values are stored once each
    /// here (only objects are shared), so walking them costs what reading them does.
    func emit<V: GraphVisitor>(
        _ reader: inout ByteReader,
        depth: Int,
        _ visitor: inout V,
        notes: inout FieldNotes,
        path: inout [Int]
    ) throws(GraphArchiveError) {
        let note = notes.isEmpty ? NoteForm() : notes.form(at: path) ?? NoteForm()
        let form = note.form
        let start = reader.offset
        let tag = try reader.readByte()
        switch tag {
        case ValueTag.null:
            try visitor.null(form)
        case ValueTag.falseValue, ValueTag.trueValue:
            try visitor.bool(tag == ValueTag.trueValue, form)
        case ValueTag.float32:
            try visitor.float(
                Float(bitPattern: UInt32(truncatingIfNeeded: try reader.readLittleEndian(width: 4))),
                form
            )
        case ValueTag.float64:
            try visitor.double(Double(bitPattern: try reader.readLittleEndian(width: 8)), form)
        case ValueTag.date:
            try visitor.date(Double(bitPattern: try reader.readLittleEndian(width: 8)), form)
        case ValueTag.shortStringBase..<(ValueTag.shortStringBase + 64):
            try visitor.string(try reader.readString(count: Int(tag - ValueTag.shortStringBase)), form)
        case ValueTag.string:
            let length = try reader.readCount()
            try checkLength(length, at: start, what: "string")
            try visitor.string(try reader.readString(count: length), form)
        case ValueTag.bytes:
            let length = try reader.readCount()
            try checkLength(length, at: start, what: "byte string")
            let bytes = try reader.readBytes(count: length)
            if note.isInteger128 && bytes.count == 16 {
                var high: UInt64 = 0
                var low: UInt64 = 0
                for index in 0..<8 {
                    high = high << 8 | UInt64(bytes[index])
                    low = low << 8 | UInt64(bytes[8 + index])
                }
                try visitor.integer128(high: Int64(bitPattern: high), low: low, form)
            } else {
                try visitor.data(bytes, form)
            }
        case ValueTag.objectReference:
            let index = try reader.readVarint()
            try scanner.checkObjectIndex(index, at: start)
            try visitor.object(Int(index), form)
        case ValueTag.referenceArray:
            let count = try collectionCount(&reader, at: start)
            try visitor.beginArray(count: count, form)
            var previous = -1
            for _ in 0..<count {
                let offset = reader.offset
                previous = try ValueScanner.nextReferenceIndex(&reader, previous: previous)
                try scanner.checkObjectIndex(UInt64(previous), at: offset)
                try visitor.object(previous, .unspecified)
            }
            try visitor.endArray()
        case ValueTag.array:
            let count = try collectionCount(&reader, at: start)
            try scanner.checkDepth(depth, at: start)
            try visitor.beginArray(count: count, form)
            for position in 0..<count {
                if !notes.isEmpty { path.append(position) }
                try emit(&reader, depth: depth + 1, &visitor, notes: &notes, path: &path)
                if !notes.isEmpty { path.removeLast() }
            }
            try visitor.endArray()
        case ValueTag.dictionary:
            let count = try collectionCount(&reader, at: start)
            try scanner.checkDepth(depth, at: start)
            try visitor.beginDictionary(count: count, form)
            for position in 0..<(2 * count) {
                if !notes.isEmpty { path.append(position) }
                try emit(&reader, depth: depth + 1, &visitor, notes: &notes, path: &path)
                if !notes.isEmpty { path.removeLast() }
            }
            try visitor.endDictionary()
        case ValueTag.valueRecord:
            try scanner.checkDepth(depth, at: start)
            let shape = try scanner.readShape(&reader)
            guard !tables.typeIsObject[tables.shapeType[shape]] else {
                throw GraphArchiveError(.corrupt, "value record has an object type", offset: start)
            }
            let count = tables.shapeKeyCount[shape]
            try visitor.beginRecord(typeName: typeName(ofShape: shape), fieldCount: count, form)
            let keyStart = tables.shapeKeyStart[shape]
            for position in 0..<count {
                let keyID = tables.shapeKeyIDs[keyStart + position]
                try visitor.field(tables.keys[keyID], keyID: keyID)
                if !notes.isEmpty { path.append(position) }
                try emit(&reader, depth: depth + 1, &visitor, notes: &notes, path: &path)
                if !notes.isEmpty { path.removeLast() }
            }
            try visitor.endRecord()
        case ValueTag.smallIntegerBase..<ValueTag.shortStringBase:
            try visitor.integer(Int64(tag - ValueTag.smallIntegerBase), form)
        case ValueTag.unsignedBase..<ValueTag.negativeBase:
            let value = try reader.readLittleEndian(width: Int(tag & 7) + 1)
            if value <= UInt64(Int64.max) {
                try visitor.integer(Int64(value), form)
            } else {
                try visitor.unsignedInteger(value, form)
            }
        case ValueTag.negativeBase..<(ValueTag.negativeBase + 8):
            // Stored ~value: -1 - magnitude, below Int64.min when the magnitude passes Int64.max.
            let magnitude = try reader.readLittleEndian(width: Int(tag & 7) + 1)
            if magnitude <= UInt64(Int64.max) {
                try visitor.integer(Int64(bitPattern: ~magnitude), form)
            } else {
                try visitor.integer128(high: -1, low: ~magnitude, form)
            }
        default:
            throw GraphArchiveError(.corrupt, "unknown value tag 0x\(String(tag, radix: 16))", offset: start)
        }
    }

    private func collectionCount(_ reader: inout ByteReader, at start: Int) throws(GraphArchiveError) -> Int {
        let count = try reader.readCount()
        guard count <= options.maximumCollectionCount else {
            throw GraphArchiveError(
                .limitExceeded,
                "collection of \(count) elements exceeds maximumCollectionCount (\(options.maximumCollectionCount))",
                offset: start
            )
        }
        // Every element takes at least one byte.
        guard count <= reader.remaining else { throw reader.truncated("a collection") }
        return count
    }

    private func checkLength(_ length: Int, at start: Int, what: String) throws(GraphArchiveError) {
        guard length <= options.maximumStringLength else {
            throw GraphArchiveError(
                .limitExceeded,
                "\(what) of \(length) bytes exceeds maximumStringLength (\(options.maximumStringLength))",
                offset: start
            )
        }
    }
}
