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
        let start = content.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
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
/// Records need `name` (a string), `color` (an integer) and `date` (a string); `id` (a string
/// or an integer) is optional, and a record repeating a known id may leave the other fields out.
/// Other JSON fields are ignored. A bad record stops the import with a ``RecordInputError``
/// naming the line.
public struct GridStateImporter {
    /// The input's name used in errors.
    public var source: String
    private var assembler = RecordAssembler()

    public init(source: String) {
        self.source = source
    }

    /// The bytes of the input file at `path`.
    ///
    /// - Throws: ``GraphArchiveError`` `.fileNotFound` or `.ioError` with the system's reason.
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
            case .json:
                var scanner = JSONRecordScanner(bytes, firstLine: firstLine)
                try scanner.readArray(add)
            case .jsonLines:
                var scanner = JSONRecordScanner(bytes, firstLine: firstLine)
                try scanner.readLines(add)
            case .csv:
                var scanner = CSVRecordScanner(bytes)
                try scanner.readRecords(add)
            }
        } catch {
            throw RecordInputError(source: source, line: error.line, message: error.message)
        }
    }
}
