// Sources/GraphArchive/Unarchiving/ArchiveInfo+Header.swift - how an archive is stored, from its header alone

extension GraphUnarchiver {
    /// Whether the gridstore archive at `path` stores its payload zstd-compressed, read from its
    /// 64-byte header alone once the header's own checksum matches.
    ///
    /// Nothing past the header is read or checked, so this is cheap where
    /// ``archiveInfo(fromFile:options:)`` verifies the whole archive: a tool that is about to
    /// load an archive and save it again uses it to keep the archive's compression. The zstd
    /// level is not recorded in archives (FORMAT.md §3.2).
    ///
    /// - Throws: `.fileNotFound`, `.ioError` (unreadable, or not a regular file), and the
    ///   header's errors: `.badMagic`, `.truncated`, `.headerChecksumMismatch`,
    ///   `.unsupportedVersion`, `.corrupt`.
    public static func isPayloadCompressed(archiveFileAt path: String) throws -> Bool {
        let file = try ArchiveFile(path: path, maximumBytes: Int.max)
        let header = try ArchiveBytes(count: ArchiveHeader.size) { (buffer) throws(GraphArchiveError) -> Int in
            try file.read(into: buffer, at: 0)
        }
        // The reader points into `header`, which must outlive it.
        return try withExtendedLifetime(header) {
            var reader = header.reader()
            return try ArchiveHeader.decode(from: &reader).flags.contains(.zstdPayload)
        }
    }
}
