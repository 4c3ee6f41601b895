// Sources/GridStoreCLI/GridStoreTool+Verify.swift - `gridstore verify`

import GraphArchive
import GridStore

extension GridStoreTool {
    /// Checks the archive byte by byte and decodes every record; says what is wrong and where.
    static func verify(_ options: VerifyOptions, console: Console) throws {
        let path = archivePath(options.file)
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("verifying \(path)")
        let (info, records) = try withArchive(path) { try GridStateArchive.verify(file: path) }
        progress.finish()
        try console.summary(
            "\(path): ok: \(counted(records, "record")), \(counted(info.objectCount, "distinct object")), "
                + "\(counted(info.archiveBytes, "byte")), format \(info.formatVersion), compression \(info.compressionName), "
                + (info.checksumVerified ? "checksum ok" : "no checksum (keyed archive), structure ok")
        )
    }
}
