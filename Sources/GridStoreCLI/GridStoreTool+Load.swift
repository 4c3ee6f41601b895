// Sources/GridStoreCLI/GridStoreTool+Load.swift - `gridstore load`

import Foundation
import GraphArchive
import GridStore

extension GridStoreTool {
    /// Loads the archive into the data source (the app's launch), then prints its records or,
    /// with `--stats`, what the archive holds. `--file -` reads the archive from standard input.
    static func load(_ options: LoadOptions, console: Console) throws {
        let path = archivePath(options.file)
        let archiveName = name(of: path)
        let store = dataSource(at: path)
        let decoding = decodingOptions(memoryLimit: options.memoryLimit)
        store.decodingOptions = decoding
        let progress = console.progress()
        defer { progress.finish() }

        let source = try archiveSource(path, progress: progress, options: decoding)
        // The header's counts, after the checksum over header and payload is verified (a keyed
        // archive has no checksum: its whole structure is checked instead).
        let info: ArchiveInfo? =
            options.stats
            ? try withArchive(archiveName) { try GridStateArchive.info(of: source, options: decoding) } : nil
        progress.phase("loading \(archiveName)")
        let started = ContinuousClock.now
        switch source {
        case .file: try loadExisting(store)
        case .bytes:
            let states = try withArchive(archiveName) {
                try GridStateArchive.readStates(from: source, options: decoding)
            }
            store.replaceAll(with: states)
        }
        let loadTime = ContinuousClock.now - started
        progress.finish()

        var output = OutputBuffer()
        if let info {
            let stats = LoadStatistics(info: info, records: store.count, loadSeconds: seconds(loadTime))
            output.append(options.json ? stats.json : stats.table(path: archiveName))
        } else {
            try store.read { (states) throws in
                let shown = states.prefix(options.limit ?? states.count)
                if options.json {
                    try writeJSONLines(shown, to: &output)
                } else if !states.isEmpty {
                    try RecordTable.write(shown, to: &output)
                }
            }
            if store.count == 0 && !options.json {
                console.note("\(archiveName) holds no records")
            }
        }
        try output.flush()
    }

    private static func writeJSONLines(_ states: ArraySlice<GridState>, to output: inout OutputBuffer) throws {
        var identity = GridStateIdentity()
        for state in states {
            let id = identity.number(of: state)
            output.append { JSONLinesWriter.appendLine(for: state, id: id, to: &$0) }
            try output.flushIfFull()
        }
    }
}

/// What `load --stats` reports.
struct LoadStatistics {
    var info: ArchiveInfo
    /// Array slots in the loaded data source.
    var records: Int
    var loadSeconds: Double

    /// "ok" when the archive's checksum was verified; "none" for a keyed archive, which has none.
    var checksum: String { info.checksumVerified ? "ok" : "none" }

    /// One JSON object with exactly the keys of the CLI contract, in its order.
    var json: String {
        var types: [UInt8] = []
        for (index, name) in info.typeNames.enumerated() {
            if index > 0 { types.append(UInt8(ascii: ",")) }
            JSONLinesWriter.appendString(name, to: &types)
        }
        var compression: [UInt8] = []
        JSONLinesWriter.appendString(info.compressionName, to: &compression)
        var version: [UInt8] = []
        JSONLinesWriter.appendString(info.formatVersion, to: &version)
        return "{\"records\":\(records),\"uniqueObjects\":\(info.objectCount),"
            + "\"sharedReferences\":\(info.sharedReferenceCount),\"types\":[\(String(decoding: types, as: UTF8.self))],"
            + "\"fileBytes\":\(info.archiveBytes),\"payloadBytes\":\(info.payloadBytes),"
            + "\"compression\":\(String(decoding: compression, as: UTF8.self)),"
            + "\"formatVersion\":\(String(decoding: version, as: UTF8.self)),\"checksum\":\"\(checksum)\","
            + "\"loadSeconds\":\(String(format: "%.6f", loadSeconds))}\n"
    }

    /// Aligned lines for people.
    func table(path: String) -> String {
        let rows: [(String, String)] = [
            ("archive", path),
            ("records", "\(records)"),
            ("distinct objects", "\(info.objectCount)"),
            ("shared references", "\(info.sharedReferenceCount)"),
            (
                "types",
                info.typeNames.isEmpty ? "(none)" : info.typeNames.map(RecordTable.printable).joined(separator: ", ")
            ),
            ("file bytes", "\(info.archiveBytes)"),
            ("payload bytes", "\(info.payloadBytes) (uncompressed)"),
            ("compression", info.compressionName),
            ("format version", info.formatVersion),
            (
                "checksum",
                info.checksumVerified
                    ? "ok (XXH64 of header and payload verified)"
                    : "none (a keyed archive carries no checksum; its structure was checked)"
            ),
            ("load time", String(format: "%.3f s", loadSeconds)),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + $0.1 + "\n" }.joined()
    }
}
