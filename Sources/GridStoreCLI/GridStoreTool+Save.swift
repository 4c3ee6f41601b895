// Sources/GridStoreCLI/GridStoreTool+Save.swift - `gridstore save`

import Foundation
import GraphArchive
import GridStore

extension GridStoreTool {
    /// Fills the data source from `--generate` or `--input` (after the archived records with
    /// `--append`) and saves it atomically. Nothing is written unless every record was read:
    /// a bad input leaves the archive as it was.
    static func save(_ options: SaveOptions, console: Console) throws {
        let path = archivePath(options.file)
        let store = dataSource(at: path, compression: options.compression)
        let progress = console.progress()
        defer { progress.finish() }

        if options.append {
            // Load first: a damaged archive stops the save before any work, and is kept.
            progress.phase("loading \(path)")
            try withArchive(path) { try store.load() }
        }
        let states = try records(from: options.source, strict: options.strict, progress: progress, console: console)
        let added = states.count
        if options.append {
            store.append(contentsOf: states)
        } else {
            store.replaceAll(with: states)
        }

        progress.phase("saving \(counted(store.count, "record"))")
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

        let total = info.rootElementCount ?? store.count
        let appended = options.append ? "added \(added), " : ""
        try console.summary(
            "saved \(counted(total, "record")) (\(appended)\(info.objectCount) distinct) to \(path): "
                + "\(counted(info.archiveBytes, "byte")), \(describe(options.format, options.compression))"
        )
    }

    /// "compression none" for gridstore archives, "format keyed-plist" for keyed ones.
    static func describe(_ format: GridStateArchive.Format, _ compression: ArchiveCompression) -> String {
        format == .gridstore ? "compression \(compression)" : "format \(format.rawValue)"
    }

    /// The records `source` describes.
    private static func records(
        from source: RecordSource,
        strict: Bool,
        progress: Progress,
        console: Console
    ) throws -> [GridState] {
        switch source {
        case .generate(let count, let sharedFraction, let seed):
            progress.phase("generating records", total: count)
            return GridStateGenerator(count: count, sharedFraction: sharedFraction, seed: seed).generate {
                progress.advance(to: $0)
            }
        case .input(let path):
            let name = path == "-" ? "standard input" : path
            progress.phase("reading \(name)")
            let bytes = try path == "-" ? standardInput() : GridStateImporter.contents(ofFile: path)
            let format = RecordFormat.detect(path: path == "-" ? nil : path, content: bytes)
            progress.phase("importing \(format.rawValue) from \(name)", total: bytes.count, unit: .bytes)
            var importer = GridStateImporter(source: name)
            importer.rejectsUnknownFields = strict
            // Said even when the import then fails: a skipped column may be why.
            defer {
                progress.finish()
                for warning in importer.warnings { console.warning("\(warning)") }
            }
            var states: [GridState] = []
            try importer.read(bytes, format: format, into: &states) {
                progress.advance(to: $0.bytesRead, detail: counted($0.records, "record"))
            }
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
