// Sources/GridStore/RecordInput/CSVRecordScanner.swift - reads records from CSV with a header row

/// Reads grid-state records from CSV (RFC 4180): a header row naming the columns `name`,
/// `color`, `date` and optionally `id`, in any order, then one record per row.
///
/// Quoted fields may hold commas, doubled quotes and line breaks. An unquoted empty field means
/// "absent" (how a repeated id leaves fields out); a quoted empty field `""` is the empty string.
/// Lines end in LF or CRLF; blank lines are skipped; a UTF-8 byte order mark is ignored. Other
/// columns are skipped with a warning in ``warnings``, or refused when
/// ``rejectsUnknownColumns`` is set.
struct CSVRecordScanner {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    /// Whether a column other than name, color, date and id is an error rather than skipped.
    var rejectsUnknownColumns = false
    /// What was skipped: the unknown columns of the header.
    private(set) var warnings: [RecordProblem] = []

    /// One field as written: its text and whether it was quoted.
    private struct Field {
        var text: String
        var isQuoted: Bool
        var isAbsent: Bool { text.isEmpty && !isQuoted }
    }

    enum Column: String, CaseIterable {
        case name, color, date, id
    }

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: byteOrderMark) { index = byteOrderMark.count }
    }

    /// Reads the header, then hands each record to `each`.
    mutating func readRecords(_ each: (RecordFields) throws(RecordProblem) -> Void) throws(RecordProblem) {
        guard let (headerLine, _, header) = try readRow() else { return }
        let columns = try readHeader(header, line: headerLine)
        while let (rowLine, rowOffset, row) = try readRow() {
            guard row.count == columns.count else {
                throw RecordProblem(
                    line: rowLine,
                    message: "expected \(columns.count) fields as in the header, found \(row.count)"
                )
            }
            var fields = RecordFields(line: rowLine, offset: rowOffset)
            for (column, field) in zip(columns, row) where !field.isAbsent {
                switch column {
                case .name: fields.name = field.text
                case .date: fields.date = field.text
                case .id: fields.id = field.text
                case .color: fields.color = try ColorText.parse(field.text, line: rowLine)
                case nil: break
                }
            }
            try each(fields)
        }
    }

    /// The header's columns in order, `nil` for one that is skipped.
    private mutating func readHeader(_ header: [Field], line: Int) throws(RecordProblem) -> [Column?] {
        let expected = "the header must name the columns name,color,date and optionally id"
        var columns: [Column?] = []
        var unknown: [String] = []
        for field in header {
            let name = field.text.trimmingSpaces.lowercased()
            guard let column = Column(rawValue: name) else {
                columns.append(nil)
                unknown.append("\"\(field.text)\"")
                continue
            }
            guard !columns.contains(column) else {
                throw RecordProblem(line: line, message: "column \"\(name)\" appears twice in the header")
            }
            columns.append(column)
        }
        let missing: [Column] = [.name, .color, .date].filter { !columns.contains($0) }
        let unknownList = unknown.joined(separator: ", ")
        guard missing.isEmpty else {
            let names = missing.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            let others = unknown.isEmpty ? "" : "; it has \(unknownList)"
            throw RecordProblem(line: line, message: "the header has no \(names) column (\(expected)\(others))")
        }
        if !unknown.isEmpty {
            let columnsWord = unknown.count == 1 ? "column" : "columns"
            if rejectsUnknownColumns {
                throw RecordProblem(
                    line: line,
                    message: "unknown \(columnsWord) \(unknownList) (the columns are name, color, date and id; "
                        + "other columns are refused under --strict)"
                )
            }
            warnings.append(RecordProblem(line: line, message: "ignoring unknown \(columnsWord) \(unknownList)"))
        }
        return columns
    }

    /// Reads the next non-blank row and the line and byte offset it starts at; `nil` at the end
    /// of the input.
    private mutating func readRow() throws(RecordProblem) -> (line: Int, offset: Int, fields: [Field])? {
        while atLineBreak() { skipLineBreak() }
        guard index < bytes.count else { return nil }
        let startLine = line
        let startOffset = index
        var fields: [Field] = []
        while true {
            fields.append(try readField())
            if index < bytes.count && bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if atLineBreak() { skipLineBreak() }
            return (startLine, startOffset, fields)
        }
    }

    private mutating func readField() throws(RecordProblem) -> Field {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            let start = index
            while index < bytes.count && bytes[index] != UInt8(ascii: ",") && !atLineBreak() {
                index += 1
            }
            return Field(text: try text(bytes[start..<index]), isQuoted: false)
        }
        let openingLine = line
        index += 1
        var buffer: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\"") {
                // A doubled quote is a quote; a single one closes the field.
                if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
                    buffer.append(byte)
                    index += 1
                    continue
                }
                guard index == bytes.count || bytes[index] == UInt8(ascii: ",") || atLineBreak() else {
                    throw RecordProblem(line: line, message: "invalid CSV: text after the closing quote of a field")
                }
                return Field(text: try text(buffer[...]), isQuoted: true)
            }
            if byte == UInt8(ascii: "\n") { line += 1 }
            buffer.append(byte)
        }
        throw RecordProblem(line: openingLine, message: "invalid CSV: a quoted field opened here is never closed")
    }

    private func atLineBreak() -> Bool {
        guard index < bytes.count else { return false }
        // LF, CRLF, or a CR that ends the input.
        return bytes[index] == UInt8(ascii: "\n")
            || (bytes[index] == UInt8(ascii: "\r")
                && (index + 1 == bytes.count || bytes[index + 1] == UInt8(ascii: "\n")))
    }

    private mutating func skipLineBreak() {
        index += bytes[index] == UInt8(ascii: "\r") ? 2 : 1
        index = min(index, bytes.count)
        line += 1
    }

    private func text(_ slice: ArraySlice<UInt8>) throws(RecordProblem) -> String {
        guard let string = String(validating: slice, as: UTF8.self) else {
            throw RecordProblem(line: line, message: "field is not valid UTF-8")
        }
        return string
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
