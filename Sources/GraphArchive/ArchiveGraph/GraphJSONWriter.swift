// Sources/GraphArchive/ArchiveGraph/GraphJSONWriter.swift - the whole graph as JSON, streamed
//
// The shape (docs/CLI.md, "inspect --json"):
//   {"format": "gridstore" | "keyed-archive", "top": {KEY: VALUE, …},
//    "objects": [{"id": ID, "class": NAME, "classes": [NAME, …], "fields": {KEY: VALUE, …}}, …]}
// A VALUE is a JSON scalar or array, {"$ref": ID}, or a tagged object: {"$data": BASE64},
// {"$date": ISO8601}, {"$integer": DECIMAL} (beyond Int64), {"$real": "nan" | "inf" | "-inf"},
// {"$dictionary": [[KEY, VALUE], …]} (keys that are not strings, or start with "$"), and
// {"$record": TYPE, "fields": {…}} (a struct). Output is handed on in pieces as it is made;
// only a dictionary being written is held (its form depends on all its keys).

/// Writes a graph's JSON from visitor events.
struct GraphJSONWriter: GraphObjectVisitor {
    private enum Frame {
        /// An object's, a record's or the top level's fields (`field` writes the keys).
        case fields(count: Int)
        case array(count: Int)
        case dictionary(DictionaryState)
    }

    /// A dictionary being written in the pair form, and whether it may become a plain object.
    private struct DictionaryState {
        /// Where its `[[k, v], …]` list starts in `buffer`.
        var start: Int
        var count = 0
        /// Per entry: where its key's JSON string and its value start and end.
        var keys: [Range<Int>] = []
        var values: [Range<Int>] = []
        var keyNames: Set<String> = []
        /// All keys so far are strings not starting with "$", each once.
        var isPlain = true
        /// Where the entry being written started (its key, then its value).
        var entryStart = 0
    }

    private(set) var buffer: [UInt8] = []
    private var stack: [Frame] = []
    /// Dictionaries open: output is held until none is.
    private var openDictionaries = 0
    private let classes: [ArchiveGraph.GraphClass]
    /// The JSON of each class's `"class"` and `"classes"` members, made on first use.
    private var classJSON: [[UInt8]?]
    /// Each key's JSON string, by key id, made on first use.
    private var keyJSON: [[UInt8]?] = []
    private let chunkSize: Int
    private let output: ([UInt8]) throws -> Void
    /// What `output` threw, which stops the walk.
    private(set) var outputError: (any Error)?

    init(classes: [ArchiveGraph.GraphClass], chunkSize: Int, output: @escaping ([UInt8]) throws -> Void) {
        self.classes = classes
        self.chunkSize = chunkSize
        self.output = output
        classJSON = Array(repeating: nil, count: classes.count)
        buffer.reserveCapacity(chunkSize + 4_096)
    }

    // MARK: - Document

    mutating func beginDocument(format: ArchiveGraph.Format) {
        append("{\"format\":")
        GraphText.appendJSONString(format.rawValue, to: &buffer)
        append(",\"top\":{")
        stack.append(.fields(count: 0))
    }

    mutating func beginObjects() throws(GraphArchiveError) {
        stack.removeLast()
        append("},\n\"objects\":[")
        stack.append(.array(count: 0))
        try flushIfFull()
    }

    mutating func endDocument() throws(GraphArchiveError) {
        stack.removeLast()
        append("\n]}\n")
        try flush()
    }

    mutating func beginObject(id: Int, classIndex: Int) {
        if case .array(let count) = stack.last, count > 0 { buffer.append(UInt8(ascii: ",")) }
        if case .array(let count) = stack.last { stack[stack.count - 1] = .array(count: count + 1) }
        append("\n{\"id\":")
        append(String(id))
        if classJSON[classIndex] == nil {
            var json: [UInt8] = Array(",\"class\":".utf8)
            GraphText.appendJSONString(classes[classIndex].name, to: &json)
            json.append(contentsOf: Array(",\"classes\":[".utf8))
            for (position, name) in classes[classIndex].chain.enumerated() {
                if position > 0 { json.append(UInt8(ascii: ",")) }
                GraphText.appendJSONString(name, to: &json)
            }
            json.append(contentsOf: Array("],\"fields\":{".utf8))
            classJSON[classIndex] = json
        }
        buffer.append(contentsOf: classJSON[classIndex]!)
        stack.append(.fields(count: 0))
    }

    mutating func endObject(storedBytes: Int) throws(GraphArchiveError) {
        stack.removeLast()
        append("}}")
        try flushIfFull()
    }

    // MARK: - Output

    private mutating func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    private mutating func flushIfFull() throws(GraphArchiveError) {
        if buffer.count >= chunkSize && openDictionaries == 0 { try flush() }
    }

    private mutating func flush() throws(GraphArchiveError) {
        guard !buffer.isEmpty else { return }
        do {
            try output(buffer)
        } catch {
            outputError = error
            throw GraphArchiveError(.ioError, "output stopped: \(error)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: - Fields and values

    mutating func field(_ key: String, keyID: Int) {
        guard case .fields(let count) = stack.last else { return }
        if count > 0 { buffer.append(UInt8(ascii: ",")) }
        stack[stack.count - 1] = .fields(count: count + 1)
        if keyID >= 0 {
            if keyID >= keyJSON.count {
                keyJSON.append(contentsOf: repeatElement(nil, count: keyID + 1 - keyJSON.count))
            }
            if keyJSON[keyID] == nil {
                var json: [UInt8] = []
                GraphText.appendJSONString(key, to: &json)
                keyJSON[keyID] = json
            }
            buffer.append(contentsOf: keyJSON[keyID]!)
        } else {
            GraphText.appendJSONString(key, to: &buffer)
        }
        buffer.append(UInt8(ascii: ":"))
    }

    /// Before a value: the separator its container needs, and a dictionary's bookkeeping.
    private mutating func beginValue() {
        switch stack.last {
        case .array(let count):
            if count > 0 { buffer.append(UInt8(ascii: ",")) }
            stack[stack.count - 1] = .array(count: count + 1)
        case .dictionary(var state):
            let isKey = state.count % 2 == 0
            if isKey {
                if state.count > 0 { buffer.append(UInt8(ascii: ",")) }
                buffer.append(UInt8(ascii: "["))
                state.entryStart = buffer.count
            } else {
                buffer.append(UInt8(ascii: ","))
                state.entryStart = buffer.count
            }
            stack[stack.count - 1] = .dictionary(state)
        default:
            break
        }
    }

    /// After a value: a dictionary entry's ranges, and output once a piece is full.
    private mutating func endValue(plainKey: String? = nil) throws(GraphArchiveError) {
        if case .dictionary(var state) = stack.last {
            let range = state.entryStart..<buffer.count
            if state.count % 2 == 0 {
                state.keys.append(range)
                if let plainKey, !plainKey.hasPrefix("$"), state.keyNames.insert(plainKey).inserted {
                } else {
                    state.isPlain = false
                }
            } else {
                state.values.append(range)
                buffer.append(UInt8(ascii: "]"))
            }
            state.count += 1
            stack[stack.count - 1] = .dictionary(state)
            return
        }
        try flushIfFull()
    }

    mutating func null(_ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        append("null")
        try endValue()
    }

    mutating func bool(_ value: Bool, _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        append(value ? "true" : "false")
        try endValue()
    }

    mutating func integer(_ value: Int64, _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        append(String(value))
        try endValue()
    }

    mutating func unsignedInteger(_ value: UInt64, _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        append("{\"$integer\":\"\(value)\"}")
        try endValue()
    }

    mutating func integer128(high: Int64, low: UInt64, _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        append("{\"$integer\":\"\(GraphText.decimal(high: high, low: low))\"}")
        try endValue()
    }

    mutating func float(_ value: Float, _ form: ValueForm) throws(GraphArchiveError) {
        try real(Double(value), text: value.description)
    }

    mutating func double(_ value: Double, _ form: ValueForm) throws(GraphArchiveError) {
        try real(value, text: value.description)
    }

    private mutating func real(_ value: Double, text: String) throws(GraphArchiveError) {
        beginValue()
        if value.isFinite {
            append(text)
        } else {
            append("{\"$real\":\"\(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf")\"}")
        }
        try endValue()
    }

    mutating func string(_ value: String, _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        GraphText.appendJSONString(value, to: &buffer)
        try endValue(plainKey: value)
    }

    mutating func data(_ value: [UInt8], _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        append("{\"$data\":\"")
        GraphText.appendBase64(value, to: &buffer)
        append("\"}")
        try endValue()
    }

    mutating func date(_ seconds: Double, _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        if let text = GraphText.iso8601(seconds) {
            append("{\"$date\":\"\(text)\"}")
        } else {
            // Outside years 1…9999: the seconds since 2001 themselves.
            append("{\"$date\":\(seconds.isFinite ? GraphText.decimal(seconds) : "null")}")
        }
        try endValue()
    }

    mutating func object(_ id: Int, _ form: ValueForm) throws(GraphArchiveError) {
        beginValue()
        append("{\"$ref\":")
        append(String(id))
        buffer.append(UInt8(ascii: "}"))
        try endValue()
    }

    mutating func beginArray(count: Int, _ form: ValueForm) {
        beginValue()
        buffer.append(UInt8(ascii: "["))
        stack.append(.array(count: 0))
    }

    mutating func endArray() throws(GraphArchiveError) {
        stack.removeLast()
        buffer.append(UInt8(ascii: "]"))
        try endValue()
    }

    mutating func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) {
        beginValue()
        append("{\"$record\":")
        GraphText.appendJSONString(typeName, to: &buffer)
        append(",\"fields\":{")
        stack.append(.fields(count: 0))
    }

    mutating func endRecord() throws(GraphArchiveError) {
        stack.removeLast()
        append("}}")
        try endValue()
    }

    mutating func beginDictionary(count: Int, _ form: ValueForm) {
        beginValue()
        append("{\"$dictionary\":[")
        stack.append(.dictionary(DictionaryState(start: buffer.count)))
        openDictionaries += 1
    }

    mutating func endDictionary() throws(GraphArchiveError) {
        guard case .dictionary(let state) = stack.removeLast() else { return }
        openDictionaries -= 1
        if state.isPlain {
            // Every key a plain string: the ordinary JSON object, made from the pairs written.
            let prefixLength = "{\"$dictionary\":[".utf8.count
            var plain: [UInt8] = [UInt8(ascii: "{")]
            plain.reserveCapacity(buffer.count - state.start + 2)
            for (position, key) in state.keys.enumerated() {
                if position > 0 { plain.append(UInt8(ascii: ",")) }
                plain.append(contentsOf: buffer[key])
                plain.append(UInt8(ascii: ":"))
                plain.append(contentsOf: buffer[state.values[position]])
            }
            plain.append(UInt8(ascii: "}"))
            buffer.replaceSubrange((state.start - prefixLength)..<buffer.count, with: plain)
        } else {
            append("]}")
        }
        try endValue()
    }
}
