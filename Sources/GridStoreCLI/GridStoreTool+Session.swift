// Sources/GridStoreCLI/GridStoreTool+Session.swift - `gridstore session`: the app lifecycle on a terminal

import GraphArchive
import GridStore

extension GridStoreTool {
    /// Loads the archive (a missing one is an empty store), adds JSON Lines records read from
    /// standard input, and saves when input ends or SIGTERM, SIGINT or SIGHUP arrives: the seed
    /// app's load-at-launch and save-on-resign-active, driven from a pipe or a terminal.
    ///
    /// Prints `loaded N` once loaded and `added N` (the new record count) after each record, so
    /// a driving program knows what has been taken in.
    ///
    /// Saves keep the archive's format and compression unless `--format` or `--compress` say
    /// otherwise; a session that adds nothing writes nothing.
    static func session(_ options: SessionOptions, console: Console) throws {
        let path = archivePath(options.file)
        try requireFile(path, command: .session, option: "")
        let form = try savedForm(
            format: options.format,
            compression: options.compression,
            keeping: GridStateArchive.storedForm(ofFile: path),
            path: path,
            command: .session
        )
        let store = dataSource(at: path, form: form)
        store.decodingOptions = decodingOptions(memoryLimit: options.memoryLimit)
        store.lockTimeout = options.lockTimeout
        // Held to the end: no other writer's save can land between this load and this save.
        try withArchive(path) {
            try store.lockArchive()
            try store.load()
        }
        store.saveOnTermination { reason, result in
            switch result {
            case .success(let count):
                console.note("saved \(counted(count, "record")) to \(path) (\(describe(reason)))")
            case .failure(let error):
                StandardError.error("could not save \(path) (\(describe(reason))): \(error)")
            }
        }

        try console.summary("loaded \(store.count)")

        var importer = GridStateImporter(source: "standard input")
        importer.rejectsUnknownFields = options.strict
        var lineNumber = 0
        var rejected = 0
        while let line = readLine(strippingNewline: true) {
            lineNumber += 1
            // Read the line before touching the store: a blank or rejected line is no change, so
            // a session that adds nothing does not rewrite the archive.
            var record: [GridState] = []
            do {
                try importer.readJSONLine(line, lineNumber: lineNumber, into: &record)
            } catch {
                StandardError.error("\(error) (line skipped)")
                rejected += 1
                continue
            }
            guard !record.isEmpty else { continue }
            store.update { $0.append(contentsOf: record) }
            try console.summary("added \(store.count)")
        }
        // End of input: save here rather than at exit, so a failure sets the exit status.
        if try withArchive(path, { try store.saveIfChanged() }) {
            console.note("saved \(counted(store.count, "record")) to \(path)")
        }
        if rejected > 0 {
            throw ToolError(
                "\(rejected) of \(counted(lineNumber, "input line")) \(rejected == 1 ? "was" : "were") rejected"
            )
        }
    }

    private static func describe(_ reason: GridStateDataSource.TerminationSave) -> String {
        switch reason {
        case .exiting: "on exit"
        case .signal(let signal): "on signal \(signal)"
        }
    }
}
