// Sources/GridStore/GridStateArchive.swift - reading and writing archives of grid states

import Foundation
import GraphArchive

/// The one place grid-state archives are read and written, whatever their format.
///
/// The data source, the CLI's `load`, `save --append`, `verify` and `convert` all come through
/// here. Reading detects the format by the file's first bytes: a gridstore archive, or an Apple
/// `NSKeyedArchiver` archive (a binary plist, as the seed's iOS app writes with
/// `archiveRootObject(_:toFile:)`), whose `UAGridState` records decode through the same
/// ``GridState/init(from:)``.
public enum GridStateArchive {
    /// The formats grid states are written in.
    public enum Format: String, Sendable, CaseIterable {
        /// gridstore's own format (optionally zstd-compressed).
        case gridstore
        /// An `NSKeyedArchiver` binary plist that Foundation's `NSKeyedUnarchiver` reads.
        case keyedPlist = "keyed-plist"
    }

    /// The class name grid states are written under in keyed archives: the seed app's, so the
    /// iOS app's `unarchiveObjectWithFile:` finds its `UAGridState` class.
    public static let keyedClassName = "UAGridState"

    /// Writing options for keyed archives of grid states (``keyedClassName``).
    public static var keyedOptions: KeyedArchive.Options {
        var options = KeyedArchive.Options()
        options.setClassName(keyedClassName, for: GridState.self)
        return options
    }

    /// The format the file at `path` starts like (its first eight bytes).
    ///
    /// - Throws: ``GraphArchiveError``: `.fileNotFound`, or `.ioError` when the file cannot be
    ///   read or is not a regular file.
    public static func kind(ofFile path: String) throws -> ArchiveKind {
        try ArchiveKind.detect(fileAt: path)
    }

    /// Reads the array of grid states stored under the root key of the archive at `path`, a
    /// gridstore archive or a keyed archive.
    ///
    /// Shared instances come back shared: a record that sat in several slots is one object again.
    /// The archive is checked in full (header, checksum, tables; for a keyed archive the plist
    /// trailer, offsets and references) before any record is created.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError``: `.fileNotFound` when there is no file, and the codes for
    ///   a damaged, foreign or unsupported archive.
    public static func readStates(fromFile path: String) throws -> [GridState] {
        try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromAnyArchiveFile: path)
    }

    /// Archives `states` into a finished archiver, ready for an atomic write in either format.
    ///
    /// A zstd archive is compressed while it is encoded, block by block (FORMAT.md §5.6), so
    /// what the archiver holds is the compressed archive, never the whole uncompressed payload.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` (for example `.compressionUnavailable`).
    public static func archive(_ states: [GridState], compression: ArchiveCompression) throws -> GraphArchiver {
        let archiver = GraphArchiver(options: GraphArchiver.Options(compression: compression))
        try archiver.encode(states, forKey: GraphArchiver.rootKey)
        try archiver.finishEncoding()
        return archiver
    }

    /// Replaces the file at `path` with the finished `archive` atomically (the old file or the
    /// whole new one, never a mix), creating missing folders on the way. As a keyed archive,
    /// grid states are written under ``keyedClassName`` (the archiver's compression is unused).
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` `.ioError` or `.fileNotFound` with the system's message.
    public static func write(_ archive: GraphArchiver, toFile path: String, format: Format = .gridstore) throws {
        try ArchiveLocation.createParentFolders(of: path)
        switch format {
        case .gridstore: try archive.write(toFile: path)
        case .keyedPlist: try archive.writeKeyedArchive(toFile: path, options: keyedOptions)
        }
    }

    /// Facts about the archive at `path` (counts, types, sizes, compression); creates no record.
    /// A gridstore archive's checksum is verified (`checksumVerified`); a keyed archive has
    /// none, its whole structure is checked instead (`checksumVerified` is false).
    public static func info(fromFile path: String) throws -> ArchiveInfo {
        try GraphUnarchiver.archiveInfo(fromAnyArchiveFile: path)
    }

    /// Checks every byte of the archive at `path` against its format, then decodes it as grid
    /// states, so a file that is a sound archive of something else fails too.
    ///
    /// - Returns: what the archive holds and the number of records it decodes to.
    /// - Throws: the first problem found, with its byte offset and key path where known.
    public static func verify(file path: String) throws -> (info: ArchiveInfo, records: Int) {
        let info = try GraphUnarchiver.verify(anyArchiveFile: path)
        let states = try readStates(fromFile: path)
        return (info, states.count)
    }

    /// Rewrites the archive at `input` (either format) as `format` at `output`, atomically, so
    /// `input` and `output` may be the same file. Records are decoded and re-encoded, which
    /// checks them and keeps their sharing.
    ///
    /// - Returns: the number of records converted.
    public static func convert(
        file input: String,
        toFile output: String,
        format: Format,
        compression: ArchiveCompression = .none
    ) throws -> Int {
        let states = try readStates(fromFile: input)
        try write(
            archive(states, compression: format == .gridstore ? compression : .none),
            toFile: output,
            format: format
        )
        return states.count
    }
}
