// Sources/GridStoreCLI/GridStoreTool+Verify.swift - `gridstore verify`

import GraphArchive
import GridStore

extension GridStoreTool {
    /// Checks the archive byte by byte and decodes every record; says what is wrong and where.
    static func verify(_ options: VerifyOptions) throws {
        let path = archivePath(options.file)
        let progress = Progress()
        defer { progress.finish() }
        progress.phase("verifying \(path)")
        let (info, records) = try withArchive(path) { try GridStateArchive.verify(file: path) }
        progress.finish()
        var output = OutputBuffer()
        output.append(
            "\(path): ok: \(records) records, \(info.objectCount) distinct objects, \(info.archiveBytes) bytes, "
                + "format \(info.formatVersion), compression \(info.compressionName), "
                + (info.checksumVerified ? "checksum ok\n" : "no checksum (keyed archive), structure ok\n")
        )
        try output.flush()
    }
}
