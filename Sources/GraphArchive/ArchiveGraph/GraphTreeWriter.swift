// Sources/GraphArchive/ArchiveGraph/GraphTreeWriter.swift - the graph as an indented tree for people
//
// Like `plutil -p`, with references followed: from the top level down, each object is printed
// in full where it is first met, later references say `→ #ID Class`, and a reference back to
// an object being printed says `↻ #ID Class (cycle)`. Objects nested more than
// `objectNestingLimit` deep are printed after the top level instead, so a chain of a million
// objects costs lines, not indentation; objects the top level does not reach come last.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes a graph as a tree.
struct GraphTreeWriter {
    /// Objects nested deeper than this are printed further down, at the left again.
    static let objectNestingLimit = 32
    /// Bytes of data shown before `…`.
    static let dataPreview = 24

    private let graph: ArchiveGraph
    /// `--depth`: levels of nesting shown; deeper containers and objects show as `{…}`.
    private let maximumDepth: Int
    private let chunkSize: Int
    private let output: ([UInt8]) throws -> Void
    private var buffer: [UInt8] = []
    /// By id: printed in full (or queued to be), and being printed (a reference to such an
    /// object closes a cycle).
    private var printed: [Bool]
    private var open: [Bool]
    /// Objects to print at the left once the current tree is done.
    private var queued: [Int] = []

    init(graph: ArchiveGraph, maximumDepth: Int?, chunkSize: Int, output: @escaping ([UInt8]) throws -> Void) {
        self.graph = graph
        self.maximumDepth = maximumDepth ?? Int.max
        self.chunkSize = chunkSize
        self.output = output
        printed = Array(repeating: false, count: graph.objectIDLimit)
        open = printed
    }

    mutating func write() throws {
        let objects = graph.objectCount
        append("\(graph.formatDescription), \(graph.archiveBytes) bytes, \(objects) object\(objects == 1 ? "" : "s")\n")
        let fields = try graph.topLevelFields()
        append("{\n")
        for field in fields {
            try writeField(field, indent: 1, depth: 1, objectDepth: 0)
        }
        append("}\n")
        try printQueued(heading: "objects nested deeper than \(Self.objectNestingLimit), printed here:")
        let unreached = graph.objectIDs.filter { !printed[$0] }
        if !unreached.isEmpty {
            let count = "\(unreached.count) object\(unreached.count == 1 ? "" : "s")"
            if maximumDepth == Int.max {
                append("\(count) the top level does not reach:\n")
                for id in unreached where !printed[id] {
                    try writeObject(id, indent: 0, depth: 1, objectDepth: 0)
                    append("\n")
                    try printQueued(heading: nil)
                }
            } else {
                append("(\(count) not shown at this depth)\n")
            }
        }
        try flush()
    }

    private mutating func printQueued(heading: String?) throws {
        var first = true
        while !queued.isEmpty {
            if first, let heading { append(heading + "\n") }
            first = false
            let id = queued.removeFirst()
            try writeObject(id, indent: 0, depth: 1, objectDepth: 0)
            append("\n")
        }
    }

    // MARK: - Values

    private mutating func writeField(_ field: ArchiveField, indent: Int, depth: Int, objectDepth: Int) throws {
        self.indent(indent)
        appendQuoted(field.key)
        append(" => ")
        try writeValue(field.value, indent: indent, depth: depth, objectDepth: objectDepth)
        append("\n")
        if buffer.count >= chunkSize { try flush() }
    }

    private mutating func writeValue(_ value: ArchiveValue, indent: Int, depth: Int, objectDepth: Int) throws {
        switch value {
        case .null: append("null")
        case .bool(let value): append(value ? "true" : "false")
        case .integer(let value): append(String(value))
        case .unsignedInteger(let value): append(String(value))
        case .integer128(let high, let low): append(GraphText.decimal(high: high, low: low))
        case .float(let value): append(value.description)
        case .double(let value): append(value.description)
        case .string(let value): appendQuoted(value)
        case .data(let bytes):
            append("<\(bytes.count) byte\(bytes.count == 1 ? "" : "s")")
            if !bytes.isEmpty { append(" ") }
            for byte in bytes.prefix(Self.dataPreview) {
                buffer.append(GraphText.hexDigits[Int(byte >> 4)])
                buffer.append(GraphText.hexDigits[Int(byte & 0x0F)])
            }
            append(bytes.count > Self.dataPreview ? "…>" : ">")
        case .date(let date):
            let seconds = date.timeIntervalSinceReferenceDate
            append(GraphText.iso8601(seconds) ?? "date(\(seconds) s since 2001)")
        case .object(let id):
            try writeReference(id, indent: indent, depth: depth, objectDepth: objectDepth)
        case .array(let elements):
            guard !elements.isEmpty else { return append("[]") }
            guard depth < maximumDepth else {
                return append("[… \(elements.count) item\(elements.count == 1 ? "" : "s")]")
            }
            append("[\n")
            for (position, element) in elements.enumerated() {
                self.indent(indent + 1)
                append("\(position) => ")
                try writeValue(element, indent: indent + 1, depth: depth + 1, objectDepth: objectDepth)
                append("\n")
                if buffer.count >= chunkSize { try flush() }
            }
            self.indent(indent)
            append("]")
        case .dictionary(let entries):
            guard !entries.isEmpty else { return append("{}") }
            guard depth < maximumDepth else {
                return append("{… \(entries.count) entr\(entries.count == 1 ? "y" : "ies")}")
            }
            append("{\n")
            for entry in entries {
                self.indent(indent + 1)
                try writeValue(entry.key, indent: indent + 1, depth: depth + 1, objectDepth: objectDepth)
                append(" => ")
                try writeValue(entry.value, indent: indent + 1, depth: depth + 1, objectDepth: objectDepth)
                append("\n")
            }
            self.indent(indent)
            append("}")
        case .record(let record):
            append(record.typeName + " ")
            try writeFields(record.fields, indent: indent, depth: depth, objectDepth: objectDepth)
        }
    }

    private mutating func writeFields(_ fields: [ArchiveField], indent: Int, depth: Int, objectDepth: Int) throws {
        guard !fields.isEmpty else { return append("{}") }
        guard depth < maximumDepth else { return append("{…}") }
        append("{\n")
        for field in fields {
            try writeField(field, indent: indent + 1, depth: depth + 1, objectDepth: objectDepth)
        }
        self.indent(indent)
        append("}")
    }

    // MARK: - Objects

    private mutating func writeReference(_ id: Int, indent: Int, depth: Int, objectDepth: Int) throws {
        let name = try graph.className(ofObject: id)
        if open[id] {
            append("↻ #\(id) \(name) (cycle)")
        } else if printed[id] {
            append("→ #\(id) \(name)")
        } else if depth >= maximumDepth {
            append("#\(id) \(name) {…}")
        } else if objectDepth >= Self.objectNestingLimit {
            printed[id] = true
            queued.append(id)
            append("→ #\(id) \(name) (printed below)")
        } else {
            try writeObject(id, indent: indent, depth: depth, objectDepth: objectDepth + 1)
        }
    }

    /// Object `id` in full, from the current position (the caller indented the line).
    private mutating func writeObject(_ id: Int, indent: Int, depth: Int, objectDepth: Int) throws {
        let object = try graph.object(withID: id)
        printed[id] = true
        open[id] = true
        defer { open[id] = false }
        append("#\(id) \(object.className) ")
        try writeFields(object.fields, indent: indent, depth: depth, objectDepth: objectDepth)
    }

    // MARK: - Text

    private mutating func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    private mutating func indent(_ level: Int) {
        buffer.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// A string in quotes, its control characters escaped so that an archive cannot drive
    /// the terminal.
    private mutating func appendQuoted(_ text: String) {
        GraphText.appendJSONString(text, to: &buffer)
    }

    private mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        try output(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
