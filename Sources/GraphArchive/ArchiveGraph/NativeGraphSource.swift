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
        var emitter = Emitter(source: self, visitor: consume visitor)
        defer { visitor = emitter.visitor }
        try visitFields(of: id, shape: shape, reader: &reader, &emitter)
    }

    /// Walks every object in stored order: `beginObject`, its fields, `endObject`. One emitter
    /// serves the whole walk (making one copies this source, a dozen references).
    func visitObjects<V: GraphObjectVisitor>(_ visitor: inout V) throws(GraphArchiveError) {
        var emitter = Emitter(source: self, visitor: consume visitor)
        defer { visitor = emitter.visitor }
        try forEachRecord { (id, shape, start, reader) throws(GraphArchiveError) in
            try emitter.visitor.beginObject(id: id, classIndex: tables.shapeType[shape])
            try visitFields(of: id, shape: shape, reader: &reader, &emitter)
            try emitter.visitor.endObject(storedBytes: reader.offset - start)
        }
    }

    private func visitFields<V: GraphVisitor>(
        of id: Int,
        shape: Int,
        reader: inout ByteReader,
        _ emitter: inout Emitter<V>
    ) throws(GraphArchiveError) {
        let start = tables.shapeKeyStart[shape]
        let hasNotes = notes.hasNotes(object: id)
        for position in 0..<tables.shapeKeyCount[shape] {
            let keyID = tables.shapeKeyIDs[start + position]
            let key = tables.keys[keyID]
            try emitter.visitor.field(key, keyID: keyID)
            emitter.notes = hasNotes ? notes.notes(object: id, key: key) ?? FieldNotes() : FieldNotes()
            try scanner.walkValue(&reader, depth: 0, &emitter)
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
        // The emitter holds the visitor while it walks, so that the visitor's storage has one
        // owner and grows in place.
        var emitter = Emitter(source: self, visitor: consume visitor, notes: notes, path: consume path)
        defer {
            visitor = emitter.visitor
            path = emitter.path
        }
        try scanner.walkValue(&reader, depth: depth, &emitter)
    }

    /// Hands what the walk reports to a ``GraphVisitor``, with the forms the conversion notes
    /// give each value.
    private struct Emitter<V: GraphVisitor>: TaggedValueVisitor {
        let source: NativeGraphSource
        var visitor: V
        /// The notes of the field being walked, and where the walk is in its value (kept
        /// only while there are notes; empty between fields).
        var notes = FieldNotes()
        var path: [Int] = []

        /// The notes of the value at `path`.
        private var note: NoteForm { notes.isEmpty ? NoteForm() : notes.form(at: path) ?? NoteForm() }

        mutating func scalar(at start: Int, payload: Int, in reader: ByteReader) throws(GraphArchiveError) {
            let note = self.note
            let form = note.form
            var reader = reader
            switch try TaggedScalar(at: start, payload: payload, in: &reader) {
            case .null: try visitor.null(form)
            case .bool(let value): try visitor.bool(value, form)
            case .integer(let value): try visitor.integer(value, form)
            case .unsignedInteger(let value): try visitor.unsignedInteger(value, form)
            case .integerBelowInt64(let low): try visitor.integer128(high: -1, low: low, form)
            case .float(let value): try visitor.float(value, form)
            case .double(let value): try visitor.double(value, form)
            case .date(let seconds): try visitor.date(seconds, form)
            case .string(let count):
                try source.options.checkStringLength(count, of: "string", at: start)
                try visitor.string(utf8: reader, count: count, form)
            case .bytes(let count):
                try source.options.checkStringLength(count, of: "byte string", at: start)
                let bytes = try reader.readBytes(count: count)
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
            }
        }

        mutating func reference(_ index: Int, at start: Int) throws(GraphArchiveError) {
            try visitor.object(index, note.form)
        }

        mutating func beginReferenceArray(count: Int, at start: Int, in reader: ByteReader) throws(GraphArchiveError) {
            try source.options.checkCollectionCount(count, at: start)
            // Every entry takes at least one byte.
            guard count <= reader.remaining else { throw reader.truncated("a collection") }
            try visitor.beginArray(count: count, note.form)
        }

        mutating func referenceArrayEntry(_ index: Int, at offset: Int) throws(GraphArchiveError) {
            try visitor.object(index, .unspecified)
        }

        mutating func endReferenceArray() throws(GraphArchiveError) {
            try visitor.endArray()
        }

        mutating func begin(_ container: TaggedContainer, at start: Int) throws(GraphArchiveError) {
            switch container {
            case .array(let count):
                try source.options.checkCollectionCount(count, at: start)
                try visitor.beginArray(count: count, note.form)
            case .dictionary(let count):
                try source.options.checkCollectionCount(count, at: start)
                try visitor.beginDictionary(count: count, note.form)
            case .record(let shape, _):
                let tables = source.tables
                guard !tables.typeIsObject[tables.shapeType[shape]] else {
                    throw GraphArchiveError(.corrupt, "value record has an object type", offset: start)
                }
                let count = tables.shapeKeyCount[shape]
                try visitor.beginRecord(typeName: source.typeName(ofShape: shape), fieldCount: count, note.form)
            }
        }

        mutating func beginElement(_ position: Int, of container: TaggedContainer) throws(GraphArchiveError) {
            if case .record(let shape, _) = container {
                let keyID = source.tables.shapeKeyIDs[source.tables.shapeKeyStart[shape] + position]
                try visitor.field(source.tables.keys[keyID], keyID: keyID)
            }
            if !notes.isEmpty { path.append(position) }
        }

        mutating func endElement(of container: TaggedContainer) {
            if !notes.isEmpty { path.removeLast() }
        }

        mutating func end(_ container: TaggedContainer) throws(GraphArchiveError) {
            switch container {
            case .array: try visitor.endArray()
            case .dictionary: try visitor.endDictionary()
            case .record: try visitor.endRecord()
            }
        }
    }
}
