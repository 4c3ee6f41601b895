// Sources/GridStoreCLI/GridStoreTool+Convert.swift - `gridstore convert`

import GraphArchive
import GridStore

extension GridStoreTool {
    /// Rewrites IN (a gridstore or keyed archive of any classes, told apart by its first bytes)
    /// as OUT in the `--to` format, atomically: OUT is the old file or the whole new one, and IN
    /// may be OUT. Keyed output names grid states UAGridState, as the iOS app expects.
    /// IN `-` is standard input, OUT `-` standard output.
    static func convert(_ options: ConvertOptions, console: Console) throws {
        let toStandardOutput = options.output == standardStream
        if toStandardOutput { try checkStandardOutputTakesAnArchive(alternative: "give OUT as a file path") }
        let inputName = name(of: options.input)
        let outputName = name(of: options.output, writing: true)
        let form = GridStateArchive.StoredForm(
            format: options.format,
            compression: options.format == .gridstore ? options.compression : .none
        )
        let progress = console.progress()
        defer { progress.finish() }
        // OUT's lock, from before IN is read to the end of OUT's write (IN may be OUT).
        let lock =
            try toStandardOutput
            ? nil
            : withArchive(outputName) {
                try GridStateArchive.lock(options.output, timeout: options.lockTimeout)
            }
        defer { lock?.unlock() }
        let decoding = decodingOptions(memoryLimit: options.memoryLimit)
        let source = try archiveSource(options.input, progress: progress, options: decoding)
        progress.phase("converting \(inputName)")
        // Any graph, not only grid states: objects of any class, their sharing and, from a keyed
        // archive, how it stored each value (see ArchiveGraph.gridstoreArchiveData).
        let graph = try withArchive(inputName) { try openGraph(source, options: decoding) }
        let written: Int
        if toStandardOutput {
            let data = try withArchive(inputName) {
                form.format == .gridstore
                    ? try graph.gridstoreArchiveData(compression: form.compression)
                    : try graph.keyedArchiveData(options: GridStateArchive.keyedOptions)
            }
            try OutputBuffer.write(data)
            written = data.count
        } else {
            do {
                written =
                    form.format == .gridstore
                    ? try graph.writeGridstoreArchive(toFile: options.output, compression: form.compression)
                    : try graph.writeKeyedArchive(toFile: options.output, options: GridStateArchive.keyedOptions)
            } catch let error as GraphArchiveError {
                // Saving fails on OUT; the conversion (its memory budget, a value OUT's format
                // cannot hold) on what IN holds.
                let failedOn = [.ioError, .fileNotFound].contains(error.code) ? outputName : inputName
                written = try withArchive(failedOn) { throw error }
            }
        }
        progress.finish()
        try console.summary(
            "converted \(try contents(of: graph)) from \(inputName) to \(outputName): "
                + "\(counted(written, "byte")), \(describe(form))",
            onStandardError: toStandardOutput
        )
    }

    /// What a converted graph holds, in words: "30 records (15 distinct)" when its root is an
    /// array (grid states), else its objects.
    private static func contents(of graph: ArchiveGraph) throws -> String {
        if graph.topLevelKeys.contains(GraphArchiver.rootKey),
            case .array(let slots) = try graph.topLevelValue(forKey: GraphArchiver.rootKey)
        {
            return "\(counted(slots.count, "record")) (\(graph.objectCount) distinct)"
        }
        return counted(graph.objectCount, "object")
    }

    /// The archive `source` holds, opened without its model types.
    static func openGraph(_ source: GridStateArchive.Source, options: GraphUnarchiver.Options) throws -> ArchiveGraph {
        switch source {
        case .file(let path): try ArchiveGraph(contentsOfFile: path, options: options)
        case .bytes(let data): try ArchiveGraph(data: data, options: options)
        }
    }
}
