// Sources/GridStoreCLI/GridStoreTool+Save.swift - `gridstore save`

import Foundation
import GraphArchive
import GridStore

extension GridStoreTool {
    /// Fills the data source from `--generate` or `--input` (after the archived records with
    /// `--append`) and saves it atomically. Nothing is written unless every record was read:
    /// a bad input leaves the archive as it was.
    static func save(_ options: SaveOptions) throws {
        let path = archivePath(options.file)
        let store = dataSource(at: path, compression: options.compression)
        let progress = Progress()
        defer { progress.finish() }

        if options.append {
            // Load first: a damaged archive stops the save before any work, and is kept.
            progress.phase("loading \(path)")
            try withArchive(path) { try store.load() }
        }
        let states = try records(from: options.source, progress: progress)
        let added = states.count
        if options.append {
            store.append(contentsOf: states)
        } else {
            store.replaceAll(with: states)
        }

        progress.phase("saving \(store.count) records")
        switch options.format {
        case .gridstore:
            try withArchive(path) { try store.save() }
        case .keyedPlist:
            // The data source saves gridstore archives only; write its records as a keyed archive here.
            try withArchive(path) {
                try store.read { (states) throws in
                    try GridStateArchive.write(
                        GridStateArchive.archive(states, compression: .none),
                        toFile: path,
                        format: .keyedPlist
                    )
                }
            }
        }
        // Read the header back: confirms what landed on disk (checksum included) for the summary.
        let info = try withArchive(path) { try GridStateArchive.info(fromFile: path) }
        progress.finish()

        var output = OutputBuffer()
        let total = info.rootElementCount ?? store.count
        let appended = options.append ? "added \(added), " : ""
        output.append(
            "saved \(total) records (\(appended)\(info.objectCount) distinct) to \(path): "
                + "\(info.archiveBytes) bytes, \(describe(options.format, options.compression))\n"
        )
        try output.flush()
    }

    /// "compression none" for gridstore archives, "format keyed-plist" for keyed ones.
    static func describe(_ format: GridStateArchive.Format, _ compression: ArchiveCompression) -> String {
        format == .gridstore ? "compression \(compression)" : "format \(format.rawValue)"
    }

    /// The records `source` describes.
    private static func records(from source: RecordSource, progress: Progress) throws -> [GridState] {
        switch source {
        case .generate(let count, let sharedFraction, let seed):
            progress.phase("generating \(count) records")
            return GridStateGenerator(count: count, sharedFraction: sharedFraction, seed: seed).generate()
        case .input(let path):
            progress.phase("reading \(path == "-" ? "standard input" : path)")
            let bytes = try path == "-" ? standardInput() : GridStateImporter.contents(ofFile: path)
            let format = RecordFormat.detect(path: path == "-" ? nil : path, content: bytes)
            progress.phase("importing \(format.rawValue) records")
            var importer = GridStateImporter(source: path == "-" ? "standard input" : path)
            var states: [GridState] = []
            try importer.read(bytes, format: format, into: &states) { progress.advance(to: $0) }
            return states
        }
    }

    private static func standardInput() throws -> [UInt8] {
        do {
            return Array(try FileHandle.standardInput.readToEnd() ?? Data())
        } catch {
            throw ToolError("cannot read standard input: \(FileErrorReason.reason(of: error))")
        }
    }
}
