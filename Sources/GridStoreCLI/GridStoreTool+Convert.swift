// Sources/GridStoreCLI/GridStoreTool+Convert.swift - `gridstore convert`

import GraphArchive
import GridStore

extension GridStoreTool {
    /// Rewrites IN (a gridstore or keyed archive, told apart by its first bytes) as OUT in the
    /// `--to` format, atomically: OUT is the old file or the whole new one, and IN may be OUT.
    static func convert(_ options: ConvertOptions, console: Console) throws {
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("converting \(options.input)")
        let records = try withArchive(options.input) {
            try GridStateArchive.convert(
                file: options.input,
                toFile: options.output,
                format: options.format,
                compression: options.compression
            )
        }
        let info = try withArchive(options.output) { try GridStateArchive.info(fromFile: options.output) }
        progress.finish()
        try console.summary(
            "converted \(counted(records, "record")) (\(info.objectCount) distinct) from \(options.input) to "
                + "\(options.output): \(counted(info.archiveBytes, "byte")), \(describe(options.format, options.compression))"
        )
    }
}
