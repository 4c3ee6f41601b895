// Sources/GridStoreCLI/GridStoreTool+Verify.swift - `gridstore verify`

import GraphArchive
import GridStore

extension GridStoreTool {
    /// Checks the archive byte by byte and decodes every record; says what is wrong and where.
    /// `--file -` checks the archive on standard input.
    static func verify(_ options: VerifyOptions, console: Console) throws {
        let path = archivePath(options.file)
        let archiveName = name(of: path)
        let progress = console.progress()
        defer { progress.finish() }
        let decoding = decodingOptions(memoryLimit: options.memoryLimit)
        let source = try archiveSource(path, progress: progress, options: decoding)
        progress.phase("verifying \(archiveName)")
        let (info, records) = try withArchive(archiveName) { try GridStateArchive.verify(source, options: decoding) }
        progress.finish()
        try console.summary(
            "\(archiveName): ok: \(counted(records, "record")), \(counted(info.objectCount, "distinct object")), "
                + "\(counted(info.archiveBytes, "byte")), format \(info.formatVersion), compression \(info.compressionName), "
                + (info.checksumVerified ? "checksum ok" : "no checksum (keyed archive), structure ok")
        )
    }
}
