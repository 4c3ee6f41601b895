// Sources/GraphArchive/ArchiveGraph/ArchiveSummary.swift - what an archive holds, counted by class and by kind of value

/// Counts of an ``ArchiveGraph``: objects and bytes per class, values per kind.
public struct ArchiveSummary: Sendable, Hashable {
    /// The objects of one class.
    public struct ClassCount: Sendable, Hashable {
        public var className: String
        /// The class and its superclasses, most derived first.
        public var classChain: [String]
        public var objects: Int
        /// Bytes of their records as stored: a gridstore record (its values inline, objects it
        /// refers to not), a keyed archive's instance dictionary (its references, not what
        /// they refer to).
        public var bytes: Int
    }

    /// The values of one kind, wherever they are (top level, fields, elements).
    public struct ValueCount: Sendable, Hashable {
        /// "strings", "data", "integers", "reals", "booleans", "dates", "nulls", "arrays",
        /// "dictionaries", "records" or "references".
        public var kind: String
        public var count: Int
        /// UTF-8 bytes of the strings, bytes of the data; 0 for the other kinds.
        public var bytes: Int
    }

    public var format: ArchiveGraph.Format
    /// The format in words, e.g. "keyed archive (NSKeyedArchiver 100000, binary property list)".
    public var formatDescription: String
    public var archiveBytes: Int
    public var topLevelKeys: [String]
    public var objectCount: Int
    /// One entry per class with objects, most objects first.
    public var classes: [ClassCount]
    /// One entry per kind found, in the order of ``ValueCount/kind``'s list.
    public var values: [ValueCount]

    private static let singular = [
        "strings": "string", "integers": "integer", "reals": "real", "booleans": "boolean", "dates": "date",
        "nulls": "null", "arrays": "array", "dictionaries": "dictionary", "records": "record",
        "references": "reference",
    ]

    /// Aligned lines for people.
    public var text: String {
        var lines: [(String, String)] = [
            ("format", formatDescription),
            ("archive bytes", String(archiveBytes)),
            ("top-level keys", topLevelKeys.isEmpty ? "(none)" : topLevelKeys.joined(separator: ", ")),
            ("objects", "\(objectCount) (\(classes.count) class\(classes.count == 1 ? "" : "es"))"),
        ]
        lines.append(
            (
                "values",
                values.isEmpty
                    ? "(none)"
                    : values.map { value in
                        let kind = value.count == 1 ? Self.singular[value.kind] ?? value.kind : value.kind
                        return value.bytes > 0
                            ? "\(value.count) \(kind) (\(value.bytes) bytes)" : "\(value.count) \(kind)"
                    }.joined(separator: ", ")
            )
        )
        let labelWidth = lines.map(\.0.count).max() ?? 0
        var text = lines.map { $0.0.padding(labelWidth) + "  " + $0.1 + "\n" }.joined()
        guard !classes.isEmpty else { return text }
        let rows =
            [["CLASS", "OBJECTS", "BYTES", "SUPERCLASSES"]]
            + classes.map {
                [$0.className, String($0.objects), String($0.bytes), $0.classChain.dropFirst().joined(separator: ", ")]
            }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        text += "\n"
        for row in rows {
            var line = row[0].padding(widths[0]) + "  " + row[1].padding(widths[1], right: true) + "  "
            line += row[2].padding(widths[2], right: true) + "  " + row[3]
            while line.hasSuffix(" ") { line.removeLast() }
            text += line + "\n"
        }
        return text
    }
}

extension String {
    /// The string filled with spaces to `width` characters, on the right or the left.
    fileprivate func padding(_ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - count))
        return right ? fill + self : self + fill
    }
}

/// Counts a walk over the whole graph.
struct SummaryCounter: GraphObjectVisitor {
    static let kinds = [
        "strings", "data", "integers", "reals", "booleans", "dates", "nulls", "arrays", "dictionaries", "records",
        "references",
    ]
    var objects: [Int]
    var bytes: [Int]
    var counts = [Int](repeating: 0, count: kinds.count)
    var sizes = [Int](repeating: 0, count: kinds.count)
    private var currentClass = 0

    init(classCount: Int) {
        objects = Array(repeating: 0, count: classCount)
        bytes = objects
    }

    private mutating func count(_ kind: Int, bytes: Int = 0) {
        counts[kind] += 1
        sizes[kind] += bytes
    }

    mutating func beginObject(id: Int, classIndex: Int) {
        currentClass = classIndex
        objects[classIndex] += 1
    }

    mutating func endObject(storedBytes: Int) {
        bytes[currentClass] += storedBytes
    }

    mutating func field(_ key: String, keyID: Int) {}
    mutating func string(_ value: String, _ form: ValueForm) { count(0, bytes: value.utf8.count) }
    mutating func data(_ value: [UInt8], _ form: ValueForm) { count(1, bytes: value.count) }
    mutating func integer(_ value: Int64, _ form: ValueForm) { count(2) }
    mutating func unsignedInteger(_ value: UInt64, _ form: ValueForm) { count(2) }
    mutating func integer128(high: Int64, low: UInt64, _ form: ValueForm) { count(2) }
    mutating func float(_ value: Float, _ form: ValueForm) { count(3) }
    mutating func double(_ value: Double, _ form: ValueForm) { count(3) }
    mutating func bool(_ value: Bool, _ form: ValueForm) { count(4) }
    mutating func date(_ seconds: Double, _ form: ValueForm) { count(5) }
    mutating func null(_ form: ValueForm) { count(6) }
    mutating func beginArray(count: Int, _ form: ValueForm) { self.count(7) }
    mutating func endArray() {}
    mutating func beginDictionary(count: Int, _ form: ValueForm) { self.count(8) }
    mutating func endDictionary() {}
    mutating func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) { count(9) }
    mutating func endRecord() {}
    mutating func object(_ id: Int, _ form: ValueForm) { count(10) }
}
