// Sources/GridStore/GridStateArchive.swift - reading and writing archives of grid states

import GraphArchive

/// The one place grid-state archives are read and written, whatever their format.
///
/// The data source, the CLI's `load`, `save --append` and `verify` all come through here, so a
/// new archive format (Apple keyed archives, say) is added once: detect it in
/// ``readStates(fromFile:)`` and write it next to ``archivedBytes(of:compression:)``.
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

    /// Archives `states` and returns the bytes, ready for an atomic write.
    ///
    /// - Throws: ``GraphArchiveError`` (for example `.compressionUnavailable`).
    public static func archivedBytes(of states: [GridState], compression: ArchiveCompression) throws -> [UInt8] {
        let archiver = GraphArchiver(options: GraphArchiver.Options(compression: compression))
        try archiver.encode(states, forKey: GraphArchiver.rootKey)
        try archiver.finishEncoding()
        return try archiver.encodedBytes
    }

    /// Replaces the file at `path` with `bytes` atomically (the old file or the whole new one,
    /// never a mix), creating missing folders on the way.
    ///
    /// - Throws: ``GraphArchiveError`` `.ioError` or `.fileNotFound` with the system's message.
    public static func write(_ bytes: [UInt8], toFile path: String) throws {
        try ArchiveLocation.createParentFolders(of: path)
        try AtomicFile.write(to: path) { sink in try sink.write(bytes) }
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
