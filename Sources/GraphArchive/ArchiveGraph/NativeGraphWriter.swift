// Sources/GraphArchive/ArchiveGraph/NativeGraphWriter.swift - any archive graph written as a gridstore archive
//
// Every object of the graph becomes an object record named by its class, with its fields in
// stored order; values stay values, references stay references, so sharing and cycles are
// kept. Records are numbered in construction order (FORMAT.md §5.4: what an object refers to
// comes first, except references that close a cycle), so the typed reader builds them with
// no recursion; objects the top level does not reach follow. How a keyed archive stored each
// value (by UID or in place, NSMutableString or plain, …) where a keyed writer would not store
// it so by default, and each class's `$classes`, go into the `$keyedArchive` entry (§12).

/// Writes one graph as a gridstore archive, from visitor events. (A class: it holds the
/// noncopyable tables and output.)
final class NativeGraphWriter: GraphObjectVisitor {
    private enum Frame {
        /// An object's, a record's or the top level's fields: their key ids so far, and where
        /// the record's values start (its shape id goes there once the keys are known).
        case fields(keys: [Int], start: Int, typeName: String?, isObject: Bool)
        /// An array: where its tag starts, its elements so far, and while every element is an
        /// object, their indexes (it is then packed, FORMAT.md §6.5).
        case array(start: Int, count: Int, objects: [Int]?)
        case dictionary
    }

    private var state: EncodingState
    private let classes: [ArchiveGraph.GraphClass]
    /// Per object id: its record's index.
    private let nativeIndex: [Int32]
    private var referenceCount = 0
    private var frames: [Frame] = []
    /// Where the value being written lies in its field's value (FORMAT.md §12 paths).
    private var path: [Int] = []
    private var currentObject = ConversionNotes.topLevel
    private var currentKey = ""
    private(set) var notes = ConversionNotes()
    private var typeIDs: [String: Int] = [:]
    private var valueTypeIDs: [String: Int] = [:]
    private var topKeys: Set<Int> = []

    private init(classes: [ArchiveGraph.GraphClass], nativeIndex: [Int32], maximumDepth: Int) {
        self.classes = classes
        self.nativeIndex = nativeIndex
        state = EncodingState(maximumDepth: maximumDepth)
    }

    /// `graph` as a gridstore archive.
    ///
    /// - Throws: What walking the graph throws.
    static func write(_ graph: ArchiveGraph, compression: ArchiveCompression) throws(GraphArchiveError) -> ArchiveOutput
    {
        try PayloadCompression.validate(compression)
        let order = try constructionOrder(of: graph)
        var nativeIndex = [Int32](repeating: -1, count: graph.objectIDLimit)
        for (position, id) in order.enumerated() { nativeIndex[id] = Int32(truncatingIfNeeded: position) }
        var writer = NativeGraphWriter(
            classes: graph.classes,
            nativeIndex: nativeIndex,
            maximumDepth: graph.options.maximumDepth
        )
        var budget = graph.walkBudget()
        writer.frames = [.fields(keys: [], start: 0, typeName: nil, isObject: false)]
        for position in graph.topLevelKeys.indices { try graph.walkTopEntry(position, &writer, budget: &budget) }
        var top = ByteWriter()
        swap(&top, &writer.state.out)
        for id in order {
            writer.beginObject(id: id, classIndex: 0)
            let classIndex = try graph.walkObject(id, &writer, budget: &budget)
            try writer.endObject(classIndex: classIndex)
        }
        var objects = ByteWriter()
        swap(&objects, &writer.state.out)
        // What a keyed archive kept besides its values: each class's $classes (nil: none
        // listed) and the notes made while writing.
        for graphClass in graph.classes {
            if let listed = graphClass.listedClasses { writer.notes.classChains[graphClass.name] = listed }
        }
        if !writer.notes.isEmpty {
            swap(&top, &writer.state.out)
            writer.writeTopKey(ConversionNotes.topLevelKey)
            writer.writeValue(writer.notes.value)
            swap(&top, &writer.state.out)
        }
        return try ArchiveAssembler.assemble(
            tablesOf: writer.state,
            sections: [OutputChunk(top), OutputChunk(objects)],
            objectCount: order.count,
            referenceCount: writer.referenceCount,
            compression: compression
        )
    }

    // MARK: - Construction order

    /// Every object's id in construction order: a depth-first post-order from the top level,
    /// then from each object it does not reach, in stored order.
    private static func constructionOrder(of graph: ArchiveGraph) throws(GraphArchiveError) -> [Int] {
        let unvisited: UInt8 = 0
        let inProgress: UInt8 = 1
        let done: UInt8 = 2
        var marks = [UInt8](repeating: unvisited, count: graph.objectIDLimit)
        var collector = ReferenceCollector()
        var budget = graph.walkBudget()
        for position in graph.topLevelKeys.indices { try graph.walkTopEntry(position, &collector, budget: &budget) }
        let roots = collector.references + graph.objectIDs
        var order: [Int] = []
        order.reserveCapacity(graph.objectCount)
        // Each frame is an object and the range of `edges` holding what it refers to.
        var edges: [Int] = []
        var stack: [(id: Int, start: Int, next: Int)] = []
        func push(_ id: Int) throws(GraphArchiveError) {
            marks[id] = inProgress
            collector.references.removeAll(keepingCapacity: true)
            try graph.walkObject(id, &collector, budget: &budget)
            stack.append((id, edges.count, edges.count))
            edges.append(contentsOf: collector.references)
        }
        for root in roots where marks[root] == unvisited {
            try push(root)
            while let frame = stack.last {
                if frame.next < edges.count {
                    stack[stack.count - 1].next = frame.next + 1
                    if marks[edges[frame.next]] == unvisited { try push(edges[frame.next]) }
                } else {
                    stack.removeLast()
                    if edges.count > frame.start { edges.removeSubrange(frame.start...) }
                    marks[frame.id] = done
                    order.append(frame.id)
                }
            }
        }
        return order
    }

    // MARK: - Objects and fields

    func beginObject(id: Int, classIndex: Int) {
        currentObject = Int(nativeIndex[id])
        // A one-byte placeholder for the shape id, known once the keys are (FORMAT.md §5.3).
        frames = [.fields(keys: [], start: state.out.count, typeName: nil, isObject: true)]
        state.out.writeByte(0)
    }

    /// Records are ended with their class once the walk returns it (see `write`).
    func endObject(storedBytes: Int) {}

    private func endObject(classIndex: Int) throws(GraphArchiveError) {
        guard case .fields(let keys, let start, _, _) = frames.removeLast() else { return }
        insertShape(type: typeID(classes[classIndex].name, isObject: true), keys: keys, at: start)
    }

    func field(_ key: String, keyID: Int) throws(GraphArchiveError) {
        guard case .fields(var keys, let start, let typeName, let isObject) = frames.last else { return }
        let native = state.keyID(key)
        if frames.count == 1 && !isObject {
            // The top level: key, then value, entry by entry.
            guard topKeys.insert(native).inserted else {
                throw GraphArchiveError(.corrupt, "the top level lists key \"\(key)\" twice")
            }
            writeTopKey(key)
        } else {
            guard !keys.contains(native) else {
                throw GraphArchiveError(.corrupt, "\(typeName ?? "an object") lists key \"\(key)\" twice")
            }
        }
        if frames.count == 1 {
            currentKey = key
            path = []
        } else {
            path[path.count - 1] = keys.count
        }
        keys.append(native)
        frames[frames.count - 1] = .fields(keys: keys, start: start, typeName: typeName, isObject: isObject)
    }

    fileprivate func writeTopKey(_ key: String) {
        state.out.writeVarint(state.keyID(key))
        state.topCount += 1
    }

    // MARK: - Values

    /// Notes how the value about to be written was stored, where that is not a keyed writer's
    /// default.
    private func note(_ form: ValueForm, _ kind: ValueKind, isInteger128: Bool = false) {
        var isInField = false
        if case .fields = frames.last { isInField = true }
        let defaults = ValueForm.keyedDefault(for: kind, inField: isInField)
        var noted = NoteForm(isInteger128: isInteger128)
        if form.storage != .unspecified && form.storage != defaults.storage { noted.form.storage = form.storage }
        if form.instance != .unspecified && form.instance != defaults.instance { noted.form.instance = form.instance }
        for word in noted.words { notes.add(word, object: currentObject, key: currentKey, path: path) }
    }

    /// After a value: the next position in its container, and a packed array's bookkeeping.
    private func advance(objectIndex: Int? = nil) {
        switch frames.last {
        case .array(let start, let count, var objects):
            if let objectIndex { objects?.append(objectIndex) } else { objects = nil }
            frames[frames.count - 1] = .array(start: start, count: count, objects: objects)
            path[path.count - 1] += 1
        case .dictionary:
            path[path.count - 1] += 1
        default:
            break
        }
    }

    /// A scalar: its note, its tagged value, then the next position.
    private func scalar(
        _ kind: ValueKind,
        _ form: ValueForm,
        isInteger128: Bool = false,
        _ write: (inout EncodingState) -> Void
    ) {
        note(form, kind, isInteger128: isInteger128)
        write(&state)
        advance()
    }

    func null(_ form: ValueForm) { scalar(.null, form) { $0.writeNil() } }
    func bool(_ value: Bool, _ form: ValueForm) { scalar(.number, form) { $0.writeBool(value) } }
    func integer(_ value: Int64, _ form: ValueForm) { scalar(.number, form) { $0.writeInteger(value) } }
    func unsignedInteger(_ value: UInt64, _ form: ValueForm) { scalar(.number, form) { $0.writeInteger(value) } }
    func float(_ value: Float, _ form: ValueForm) { scalar(.number, form) { $0.writeFloat(value) } }
    func double(_ value: Double, _ form: ValueForm) { scalar(.number, form) { $0.writeDouble(value) } }
    func string(_ value: String, _ form: ValueForm) { scalar(.string, form) { $0.writeString(value) } }
    func data(_ value: [UInt8], _ form: ValueForm) { scalar(.data, form) { $0.writeBytes(value) } }
    func date(_ seconds: Double, _ form: ValueForm) { scalar(.date, form) { $0.writeDate(seconds) } }

    /// Outside both 64-bit ranges: 16 big-endian bytes, noted as such (FORMAT.md §12).
    func integer128(high: Int64, low: UInt64, _ form: ValueForm) {
        var bytes: [UInt8] = []
        for half in [UInt64(bitPattern: high), low] {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: half >> UInt64(shift)))
            }
        }
        scalar(.number, form, isInteger128: true) { $0.writeBytes(bytes) }
    }

    func object(_ id: Int, _ form: ValueForm) {
        note(form, .object)
        let index = Int(nativeIndex[id])
        state.out.writeByte(ValueTag.objectReference)
        state.out.writeVarint(index)
        referenceCount += 1
        advance(objectIndex: index)
    }

    func beginArray(count: Int, _ form: ValueForm) {
        note(form, .array)
        let start = state.out.count
        state.out.writeByte(ValueTag.array)
        state.out.writeVarint(count)
        frames.append(.array(start: start, count: count, objects: []))
        path.append(0)
    }

    func endArray() {
        path.removeLast()
        guard case .array(let start, let count, let objects) = frames.removeLast() else { return }
        if let objects, count > 0 {
            // Every element an object: the packed form the engine writes (FORMAT.md §6.5).
            state.out.truncate(to: start)
            state.out.writeByte(ValueTag.referenceArray)
            state.out.writeVarint(count)
            var previous = -1
            for index in objects {
                state.out.writeReferenceDelta(to: index, from: previous)
                previous = index
            }
        }
        advance()
    }

    func beginDictionary(count: Int, _ form: ValueForm) {
        note(form, .dictionary)
        state.out.writeByte(ValueTag.dictionary)
        state.out.writeVarint(count)
        frames.append(.dictionary)
        path.append(0)
    }

    func endDictionary() {
        path.removeLast()
        frames.removeLast()
        advance()
    }

    func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) {
        note(form, .record)
        state.out.writeByte(ValueTag.valueRecord)
        frames.append(.fields(keys: [], start: state.out.count, typeName: typeName, isObject: false))
        state.out.writeByte(0)
        path.append(0)
    }

    func endRecord() {
        path.removeLast()
        guard case .fields(let keys, let start, let typeName, _) = frames.removeLast() else { return }
        insertShape(type: typeID(typeName ?? "", isObject: false), keys: keys, at: start)
        advance()
    }

    // MARK: - Tables

    /// The type id of `name`, as an object type or a value type.
    private func typeID(_ name: String, isObject: Bool) -> Int {
        if let known = isObject ? typeIDs[name] : valueTypeIDs[name] { return known }
        let id = state.types.count
        state.types.append(EncodedType(name: name, isObject: isObject, objectType: nil))
        if isObject { typeIDs[name] = id } else { valueTypeIDs[name] = id }
        return id
    }

    /// Puts the shape id of (`type`, `keys`) in the record's placeholder at `start`.
    private func insertShape(type: Int, keys: [Int], at start: Int) {
        state.out.patchVarint(state.shapeID(EncodedShape(typeID: type, keyIDs: keys)), atPlaceholder: start)
    }

    /// Writes `value` (the notes entry) as a tagged value.
    fileprivate func writeValue(_ value: ArchiveValue) {
        switch value {
        case .null: state.writeNil()
        case .integer(let integer): state.writeInteger(integer)
        case .string(let string): state.writeString(string)
        case .array(let elements):
            state.out.writeByte(ValueTag.array)
            state.out.writeVarint(elements.count)
            for element in elements { writeValue(element) }
        case .dictionary(let entries):
            state.out.writeByte(ValueTag.dictionary)
            state.out.writeVarint(entries.count)
            for entry in entries {
                writeValue(entry.key)
                writeValue(entry.value)
            }
        default:
            // The notes hold nothing else.
            state.writeNil()
        }
    }
}

/// Collects the object ids a walk refers to.
struct ReferenceCollector: GraphObjectVisitor {
    var references: [Int] = []

    mutating func object(_ id: Int, _ form: ValueForm) { references.append(id) }
    mutating func beginObject(id: Int, classIndex: Int) {}
    mutating func endObject(storedBytes: Int) {}
    mutating func field(_ key: String, keyID: Int) {}
    mutating func null(_ form: ValueForm) {}
    mutating func bool(_ value: Bool, _ form: ValueForm) {}
    mutating func integer(_ value: Int64, _ form: ValueForm) {}
    mutating func unsignedInteger(_ value: UInt64, _ form: ValueForm) {}
    mutating func integer128(high: Int64, low: UInt64, _ form: ValueForm) {}
    mutating func float(_ value: Float, _ form: ValueForm) {}
    mutating func double(_ value: Double, _ form: ValueForm) {}
    mutating func string(_ value: String, _ form: ValueForm) {}
    mutating func data(_ value: [UInt8], _ form: ValueForm) {}
    mutating func date(_ seconds: Double, _ form: ValueForm) {}
    mutating func beginArray(count: Int, _ form: ValueForm) {}
    mutating func endArray() {}
    mutating func beginDictionary(count: Int, _ form: ValueForm) {}
    mutating func endDictionary() {}
    mutating func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) {}
    mutating func endRecord() {}
}
