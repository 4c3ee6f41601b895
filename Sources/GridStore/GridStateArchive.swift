// Sources/GridStore/GridStateArchive.swift - reading and writing archives of grid states

import GraphArchive

/// The one place grid-state archives are read and written, whatever their format.
///
/// The data source, the CLI's `load`, `save --append` and `verify` all come through here, so a
/// new archive format (Apple keyed archives, say) is added once: detect it in
/// ``readStates(fromFile:)`` and write it next to ``archive(_:compression:)``.
public enum GridStateArchive {
    /// Reads the array of grid states stored under the root key of the archive at `path`.
    ///
    /// Shared instances come back shared: a record that sat in several slots is one object again.
    /// The archive is checked in full (header, checksum, tables) before any record is created.
    ///
    /// - Throws: ``GraphArchiveError``: `.fileNotFound` when there is no file, and the codes for
    ///   a damaged, foreign or unsupported archive.
    public static func readStates(fromFile path: String) throws -> [GridState] {
        try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromFile: path)
    }

    /// Archives `states` into a finished archiver, ready for an atomic write.
    ///
    /// The payload stays uncompressed in memory; a zstd archive is compressed while it is
    /// written (see ``write(_:toFile:)``), so no whole compressed copy is ever held.
    ///
    /// - Throws: ``GraphArchiveError`` (for example `.compressionUnavailable`).
    public static func archive(_ states: [GridState], compression: ArchiveCompression) throws -> GraphArchiver {
        let archiver = GraphArchiver(options: GraphArchiver.Options(compression: compression))
        try archiver.encode(states, forKey: GraphArchiver.rootKey)
        try archiver.finishEncoding()
        return archiver
    }

    /// Replaces the file at `path` with the finished `archive` atomically (the old file or the
    /// whole new one, never a mix), creating missing folders on the way.
    ///
    /// - Throws: ``GraphArchiveError`` `.ioError` or `.fileNotFound` with the system's message.
    public static func write(_ archive: GraphArchiver, toFile path: String) throws {
        try ArchiveLocation.createParentFolders(of: path)
        try archive.write(toFile: path)
    }

    /// Facts about the archive at `path` (counts, types, sizes, compression) after verifying its
    /// checksum; creates no record.
    public static func info(fromFile path: String) throws -> ArchiveInfo {
        try GraphUnarchiver.archiveInfo(fromFile: path)
    }

    /// Checks every byte of the archive at `path` against the format, then decodes it as grid
    /// states, so a file that is a sound archive of something else fails too.
    ///
    /// - Returns: what the archive holds and the number of records it decodes to.
    /// - Throws: the first problem found, with its byte offset and key path where known.
    public static func verify(file path: String) throws -> (info: ArchiveInfo, records: Int) {
        let info = try GraphUnarchiver.verify(file: path)
        let states = try readStates(fromFile: path)
        return (info, states.count)
    }
}
