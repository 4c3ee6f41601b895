// Sources/GridStoreCLI/GridStoreTool+Save.swift - `gridstore save`

import Foundation
import GraphArchive
import GridStore

extension GridStoreTool {
    /// Fills the data source from `--generate` or `--input` (after the archived records with
    /// `--append`) and saves it atomically. Nothing is written unless every record was read:
    /// a bad input leaves the archive as it was. `--file -` writes the archive to standard
    /// output instead.
    ///
    /// With `--append` the archive keeps its format and compression unless `--format` or
    /// `--compress` say otherwise, and an append that adds nothing (and asks for no other form)
    /// leaves the file untouched.
    static func save(_ options: SaveOptions, console: Console) throws {
        let path = archivePath(options.file)
        let toStandardOutput = path == standardStream
        if options.append { try requireFile(path, command: .save, option: " --append") }
        if toStandardOutput { try checkStandardOutputTakesAnArchive(alternative: "give --file PATH") }
        let stored = options.append ? GridStateArchive.storedForm(ofFile: path) : nil
        let form = try savedForm(
            format: options.format,
            compression: options.compression,
            keeping: stored,
            path: path,
            command: .save
        )
        let store = dataSource(at: path, form: form)
        store.decodingOptions = decodingOptions(memoryLimit: options.memoryLimit)
        store.lockTimeout = options.lockTimeout
        let progress = console.progress()
        defer { progress.finish() }

        var found = false
        if options.append {
            // Load first: a damaged archive stops the save before any work, and is kept. The
            // archive's lock is held from here to the write, so no other process's save in
            // between is lost.
            progress.phase("loading \(path)")
            found = try withArchive(path) {
                try store.lockArchive()
                return try store.load()
            }
        }
        let states = try records(
            from: options.source,
            strict: options.strict,
            memoryLimit: options.memoryLimit,
            progress: progress,
            console: console
        )
        let added = states.count
        if options.append && added == 0 && options.format == nil && options.compression == nil {
            progress.finish()
            let unchanged =
                found ? "\(path) unchanged (\(counted(store.count, "record")))" : "no archive at \(path), none written"
            try console.summary("added 0 records: \(unchanged)")
            return
        }
        if options.append {
            store.append(contentsOf: states)
        } else {
            store.replaceAll(with: states)
        }

        progress.phase("saving \(counted(store.count, "record"))")
        let info: ArchiveInfo
        if toStandardOutput {
            let data = try store.read { (states) throws in
                try GridStateArchive.encoded(
                    GridStateArchive.archive(states, compression: form.compression),
                    format: form.format
                )
            }
            info = try writeArchiveToStandardOutput(data)
        } else {
            try withArchive(path) { try store.save() }
            // Read the header back: confirms what landed on disk (checksum included) for the summary.
            info = try withArchive(path) { try GridStateArchive.info(fromFile: path) }
        }
        progress.finish()

        let total = info.rootElementCount ?? store.count
        let appended = options.append ? "added \(added), " : ""
        try console.summary(
            "saved \(counted(total, "record")) (\(appended)\(info.objectCount) distinct) to "
                + "\(name(of: path, writing: true)): \(counted(info.archiveBytes, "byte")), \(describe(form))",
            onStandardError: toStandardOutput
        )
    }

    /// The records `source` describes.
    private static func records(
        from source: RecordSource,
        strict: Bool,
        memoryLimit: Int?,
        progress: Progress,
        console: Console
    ) throws -> [GridState] {
        switch source {
        case .generate(let count, let sharedFraction, let seed):
            // Checked before a record is made: generating and saving them must fit the budget.
            let budget = AvailableMemory.current().budget(choosing: memoryLimit)
            let (needed, overflow) = count.multipliedReportingOverflow(by: bytesPerSavedRecord)
            guard !overflow, needed <= budget else {
                throw ToolError(
                    "generating and saving \(counted(count, "record")) needs about \(AvailableMemory.describe(needed)), "
                        + "more than the \(AvailableMemory.describe(budget)) this process may use "
                        + "(--memory-limit SIZE sets the budget)"
                )
            }
            progress.phase("generating records", total: count)
            return GridStateGenerator(count: count, sharedFraction: sharedFraction, seed: seed).generate {
                progress.advance(to: $0)
            }
        case .input(let path):
            let inputName = name(of: path)
            progress.phase("reading \(inputName)")
            let bytes =
                try path == standardStream
                ? Array(StandardInput.readAll(limit: .max, what: "an input", progress: progress))
                : GridStateImporter.contents(ofFile: path)
            let format = RecordFormat.detect(path: path == standardStream ? nil : path, content: bytes)
            progress.phase("importing \(format.rawValue) from \(inputName)", total: bytes.count, unit: .bytes)
            var importer = GridStateImporter(source: inputName)
            importer.rejectsUnknownFields = strict
            // Said even when the import then fails: a skipped column may be why.
            defer {
                for warning in importer.warnings { progress.interrupt { console.warning("\(warning)") } }
            }
            var states: [GridState] = []
            try importer.read(bytes, format: format, into: &states) {
                progress.advance(to: $0.bytesRead, detail: counted($0.records, "record"))
            }
            return states
        }
    }
}
