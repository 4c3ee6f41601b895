// Sources/GridStore/RecordInput/GridStateImporter.swift - grid states from JSON, JSON Lines or CSV

import Foundation
import GraphArchive

/// The text formats records can be imported from.
public enum RecordFormat: String, Sendable, CaseIterable {
    /// A JSON array of objects: `[{"name": "…", "color": 1, "date": "…", "id": 7}, …]`.
    case json
    /// One JSON object per line.
    case jsonLines = "jsonl"
    /// CSV with a header row `name,color,date[,id]`.
    case csv

    /// The format of `content`, read from the file name's extension when it names one
    /// (`.csv`, `.jsonl`, `.ndjson`), else from the content: `[` starts a JSON array, `{` JSON
    /// Lines, anything else is CSV. `.json` files are told apart by content too, so a `.json`
    /// file of one object per line also reads.
    public static func detect(path: String?, content: [UInt8]) -> RecordFormat {
        let lowercasedPath = path?.lowercased() ?? ""
        if lowercasedPath.hasSuffix(".csv") { return .csv }
        if lowercasedPath.hasSuffix(".jsonl") || lowercasedPath.hasSuffix(".ndjson") { return .jsonLines }
        let start = content.starts(with: byteOrderMark) ? byteOrderMark.count : 0
        let first = content[start...].first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        switch first {
        case UInt8(ascii: "["): return .json
        case UInt8(ascii: "{"): return .jsonLines
        default: return .csv
        }
    }
}

/// How far an import has come, for progress displays.
public struct ImportProgress: Sendable, Hashable {
    /// Records read so far.
    public var records: Int
    /// Bytes of the input read so far.
    public var bytesRead: Int
    /// Bytes of the whole input.
    public var totalBytes: Int

    public init(records: Int, bytesRead: Int, totalBytes: Int) {
        self.records = records
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
    }
}

/// Reads grid states from text records, keeping identity: every record with the same `id` is
/// one shared instance, in this input and in later lines given to the same importer.
///
/// ```swift
/// var importer = GridStateImporter(source: "states.csv")
/// var states: [GridState] = []
/// try importer.read(bytes, format: .csv, into: &states)
/// ```
///
/// Records need `name` (a string), `color` (an integer, or a string such as `"#FF8800"`, see
/// below) and `date` (a string); `id` (a string or an integer) is optional, and a record
/// repeating a known id may leave the other fields out. Other JSON fields and CSV columns are
/// skipped (an unknown CSV column with an entry in ``warnings``), or refused when
/// ``rejectsUnknownFields`` is set. A bad record stops the import with a ``RecordInputError``
/// naming the line.
///
/// A color is an integer, or text as `gridstore load` prints it: `#RRGGBB`, `0x` and hex
/// digits, or a decimal integer (in CSV every field is text; in JSON a string). A UTF-8 byte
/// order mark at the start of the input is skipped.
public struct GridStateImporter {
    /// The input's name used in errors.
    public var source: String
    /// Whether JSON fields and CSV columns other than name, color, date and id are errors
    /// (`save --strict`) rather than skipped.
    public var rejectsUnknownFields = false
    /// What the import skipped and the user should hear about: the unknown columns of a CSV
    /// header. Each names the line, as an error would.
    public private(set) var warnings: [RecordInputError] = []
    private var assembler = RecordAssembler()

    public init(source: String) {
        self.source = source
    }

    /// The bytes of the input file at `path`.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` `.fileNotFound` or `.ioError` with the system's reason.
    public static func contents(ofFile path: String) throws -> [UInt8] {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw GraphArchiveError(.ioError, "cannot read \(path): it is a directory")
        }
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            let reason = FileErrorReason.reason(of: error)
            let code: GraphArchiveError.Code = FileManager.default.fileExists(atPath: path) ? .ioError : .fileNotFound
            throw GraphArchiveError(code, "cannot read \(path): \(reason)")
        }
    }

    /// Appends the records of a whole input to `states`.
    ///
    /// An input with nothing in it (no bytes, or only white space and a byte order mark) is an
    /// error, not zero records: it is far more often a failed export than a wish to store
    /// nothing, and a save would replace the archive with an empty one. An empty JSON array or a
    /// CSV header alone is zero records.
    ///
    /// - Parameters:
    ///   - bytes: The input, UTF-8.
    ///   - format: Its format, for example from ``RecordFormat/detect(path:content:)``.
    ///   - states: Where the records go.
    ///   - progress: Called now and then with how far the import has come.
    /// - Throws: ``RecordInputError`` for the first bad record or syntax error.
    public mutating func read(
        _ bytes: [UInt8],
        format: RecordFormat,
        into states: inout [GridState],
        progress: ((ImportProgress) -> Void)? = nil
    ) throws(RecordInputError) {
        guard
            bytes.dropFirst(bytes.starts(with: byteOrderMark) ? byteOrderMark.count : 0).contains(where: { byte in
                byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") && byte != UInt8(ascii: "\n")
                    && byte != UInt8(ascii: "\r")
            })
        else {
            throw RecordInputError(
                source: source,
                line: 0,
                message: bytes.isEmpty ? "the input is empty: no records" : "the input is only white space: no records"
            )
        }
        try read(bytes, format: format, firstLine: 1, into: &states, progress: progress)
    }

    /// Appends the record on one line of JSON Lines to `states` (nothing for a blank line).
    ///
    /// - Returns: the number of records added, 0 or 1.
    /// - Throws: ``RecordInputError`` naming `lineNumber`.
    @discardableResult
    public mutating func readJSONLine(
        _ line: String,
        lineNumber: Int,
        into states: inout [GridState]
    ) throws(RecordInputError) -> Int {
        let before = states.count
        try read(Array(line.utf8), format: .jsonLines, firstLine: lineNumber, into: &states, progress: nil)
        return states.count - before
    }

    private mutating func read(
        _ bytes: [UInt8],
        format: RecordFormat,
        firstLine: Int,
        into states: inout [GridState],
        progress: ((ImportProgress) -> Void)?
    ) throws(RecordInputError) {
        let start = states.count
        var assembler = self.assembler
        defer { self.assembler = assembler }
        func add(_ fields: RecordFields) throws(RecordProblem) {
            try assembler.add(fields, to: &states)
            let records = states.count - start
            if let progress, records % 16_384 == 0 {
                progress(ImportProgress(records: records, bytesRead: fields.offset, totalBytes: bytes.count))
            }
        }
        do {
            switch format {
            case .json, .jsonLines:
                var scanner = JSONRecordScanner(bytes, firstLine: firstLine)
                scanner.rejectsUnknownFields = rejectsUnknownFields
                try format == .json ? scanner.readArray(add) : scanner.readLines(add)
            case .csv:
                var scanner = CSVRecordScanner(bytes)
                scanner.rejectsUnknownColumns = rejectsUnknownFields
                defer {
                    warnings += scanner.warnings.map {
                        RecordInputError(source: source, line: $0.line, message: $0.message)
                    }
                }
                try scanner.readRecords(add)
            }
        } catch {
            throw RecordInputError(source: source, line: error.line, message: error.message)
        }
    }
}
