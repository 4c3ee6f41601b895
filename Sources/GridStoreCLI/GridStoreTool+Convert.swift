// Sources/GridStoreCLI/GridStoreTool+Convert.swift - `gridstore convert`

import GraphArchive
import GridStore

extension GridStoreTool {
    /// Rewrites IN (a gridstore or keyed archive, told apart by its first bytes) as OUT in the
    /// `--to` format, atomically: OUT is the old file or the whole new one, and IN may be OUT.
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
        let lock = try toStandardOutput ? nil : withArchive(outputName) {
            try GridStateArchive.lock(options.output, timeout: options.lockTimeout)
        }
        defer { lock?.unlock() }
        let source = try archiveSource(options.input, progress: progress)
        progress.phase("converting \(inputName)")
        let states = try withArchive(inputName) { try GridStateArchive.readStates(from: source) }
        let archive = try withArchive(outputName) {
            try GridStateArchive.archive(states, compression: form.compression)
        }
        let info: ArchiveInfo
        if toStandardOutput {
            info = try writeArchiveToStandardOutput(
                withArchive(outputName) { try GridStateArchive.encoded(archive, format: form.format) }
            )
        } else {
            try withArchive(outputName) {
                try GridStateArchive.write(archive, toFile: options.output, format: form.format)
            }
            info = try withArchive(outputName) { try GridStateArchive.info(fromFile: options.output) }
        }
        progress.finish()
        try console.summary(
            "converted \(counted(states.count, "record")) (\(info.objectCount) distinct) from \(inputName) to "
                + "\(outputName): \(counted(info.archiveBytes, "byte")), \(describe(form))",
            onStandardError: toStandardOutput
        )
    }
}
