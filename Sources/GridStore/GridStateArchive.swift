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

    /// Where an archive is read from.
    public enum Source: Sendable {
        /// The file at this path.
        case file(String)
        /// An archive already in memory, for example one read from standard input.
        case bytes(Data)
    }

    /// How an archive is stored: what a tool that loads an archive and saves it again keeps.
    public struct StoredForm: Sendable, Hashable {
        public var format: Format
        /// `.none`, or `.zstd` at the default level: archives do not record the level.
        public var compression: ArchiveCompression

        public init(format: Format, compression: ArchiveCompression) {
            self.format = format
            self.compression = compression
        }
    }

    /// The format the file at `path` starts like (its first eight bytes).
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError``: `.fileNotFound`, or `.ioError` when the file cannot be
    ///   read or is not a regular file.
    public static func kind(ofFile path: String) throws -> ArchiveKind {
        try ArchiveKind.detect(fileAt: path)
    }

    /// How the archive at `path` is stored, from its first bytes alone (a gridstore header,
    /// whose own checksum is checked, or a property list's first bytes); `nil` when no archive
    /// can be read there (missing, not a regular file, unreadable, a damaged header, neither
    /// format). The rest of the file is not checked: loading it does that, and says what is
    /// wrong.
    public static func storedForm(ofFile path: String) -> StoredForm? {
        switch try? kind(ofFile: path) {
        case .keyedArchive:
            return StoredForm(format: .keyedPlist, compression: .none)
        case .gridstore:
            guard let compressed = try? GraphUnarchiver.isPayloadCompressed(archiveFileAt: path) else { return nil }
            return StoredForm(format: .gridstore, compression: compressed ? .zstd : .none)
        case .unknown, nil:
            return nil
        }
    }

    /// Reads the array of grid states stored under the root key of the archive at `path`, a
    /// gridstore archive or a keyed archive.
    ///
    /// Shared instances come back shared: a record that sat in several slots is one object again.
    /// The archive is checked in full (header, checksum, tables; for a keyed archive the plist
    /// trailer, offsets and references) before any record is created.
    ///
    /// `options` are the decoding limits, the memory budget among them
    /// (``/GraphArchive/GraphUnarchiver/Options/maximumMemoryBytes``): an archive that needs
    /// more fails with `.limitExceeded` before it is allocated.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError``: `.fileNotFound` when there is no file, and the codes for
    ///   a damaged, foreign or unsupported archive.
    public static func readStates(
        fromFile path: String,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> [GridState] {
        try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromAnyArchiveFile: path, options: options)
    }

    /// Reads the grid states of the archive `source` holds; see ``readStates(fromFile:options:)``.
    public static func readStates(
        from source: Source,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> [GridState] {
        switch source {
        case .file(let path):
            try readStates(fromFile: path, options: options)
        case .bytes(let data) where ArchiveKind.detect(data) == .keyedArchive:
            try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromKeyedArchive: data, options: options)
        case .bytes(let data):
            try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, from: data, options: options)
        }
    }

    /// What encoding takes per record at its peak, with room to spare: `gridstore save
    /// --generate 1000000` peaks at 309 MB, of which the records themselves take about 200 MB,
    /// so the output and the table of objects seen about 100 bytes a record.
    public static let bytesPerEncodedRecord = 160

    /// Archives `states` into a finished archiver, ready for an atomic write in either format.
    ///
    /// A zstd archive is compressed while it is encoded, block by block (FORMAT.md §5.6), so
    /// what the archiver holds is the compressed archive, never the whole uncompressed payload.
    ///
    /// Encoding takes about ``bytesPerEncodedRecord`` per record (the archive and the table of
    /// objects seen); that much is checked against what this process can still commit
    /// (``/GraphArchive/AvailableMemory``) before encoding starts.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` (for example `.compressionUnavailable`, or
    ///   `.limitExceeded` when the machine cannot hold the encoding).
    public static func archive(_ states: [GridState], compression: ArchiveCompression) throws -> GraphArchiver {
        let available = AvailableMemory.current()
        let budget = available.budget()
        let (needed, overflow) = states.count.multipliedReportingOverflow(by: bytesPerEncodedRecord)
        guard !overflow, needed <= budget else {
            throw GraphArchiveError(
                .limitExceeded,
                "encoding \(states.count) records needs about \(AvailableMemory.describe(needed)), more than the "
                    + "\(AvailableMemory.describe(budget)) this process can still commit (\(available.limitingFactor))"
            )
        }
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

    /// The bytes of the finished `archive` in `format`, for writing somewhere other than a file
    /// (standard output).
    public static func encoded(_ archive: GraphArchiver, format: Format) throws -> Data {
        switch format {
        case .gridstore: try archive.encodedData
        case .keyedPlist: try archive.keyedArchiveData(options: keyedOptions)
        }
    }

    /// Facts about the archive at `path` (counts, types, sizes, compression); creates no record.
    /// A gridstore archive's checksum is verified (`checksumVerified`); a keyed archive has
    /// none, its whole structure is checked instead (`checksumVerified` is false).
    public static func info(
        fromFile path: String,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> ArchiveInfo {
        try GraphUnarchiver.archiveInfo(fromAnyArchiveFile: path, options: options)
    }

    /// Facts about the archive `source` holds; see ``info(fromFile:options:)``.
    public static func info(
        of source: Source,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> ArchiveInfo {
        switch source {
        case .file(let path):
            return try info(fromFile: path, options: options)
        case .bytes(let data) where ArchiveKind.detect(data) == .keyedArchive:
            // The engine counts a keyed archive through its native translation, whose checksum
            // it verifies; the archive itself carries none, so say so.
            var info = try KeyedArchive.archiveInfo(fromKeyedArchive: data, options: options)
            info.checksumVerified = false
            return info
        case .bytes(let data):
            return try GraphUnarchiver.archiveInfo(from: data, options: options)
        }
    }

    /// Checks every byte of the archive at `path` against its format, then decodes it as grid
    /// states, so a file that is a sound archive of something else fails too.
    ///
    /// - Returns: what the archive holds and the number of records it decodes to.
    /// - Throws: the first problem found, with its byte offset and key path where known.
    public static func verify(
        file path: String,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> (info: ArchiveInfo, records: Int) {
        try verify(.file(path), options: options)
    }

    /// Checks the archive `source` holds; see ``verify(file:options:)``.
    public static func verify(
        _ source: Source,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> (info: ArchiveInfo, records: Int) {
        let info: ArchiveInfo
        switch source {
        case .file(let path): info = try GraphUnarchiver.verify(anyArchiveFile: path, options: options)
        case .bytes(let data) where ArchiveKind.detect(data) == .keyedArchive:
            info = try self.info(of: source, options: options)
        case .bytes(let data): info = try GraphUnarchiver.verify(data, options: options)
        }
        let states = try readStates(from: source, options: options)
        return (info, states.count)
    }

    /// Rewrites the archive at `input` (either format) as `format` at `output`, atomically, so
    /// `input` and `output` may be the same file. Records are decoded and re-encoded, which
    /// checks them and keeps their sharing. `output`'s lock between processes is held from
    /// before `input` is read to after `output` is written (waiting up to `lockTimeout`).
    ///
    /// - Returns: the number of records converted.
    public static func convert(
        file input: String,
        toFile output: String,
        format: Format,
        compression: ArchiveCompression = .none,
        lockTimeout: Duration = ArchiveLock.defaultTimeout,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> Int {
        let lock = try self.lock(output, timeout: lockTimeout)
        defer { lock.unlock() }
        let states = try readStates(fromFile: input, options: options)
        try write(
            archive(states, compression: format == .gridstore ? compression : .none),
            toFile: output,
            format: format
        )
        return states.count
    }

    /// Takes the lock between processes on the archive at `path` (``/GraphArchive/ArchiveLock``),
    /// creating the missing folders above it first, as a save would.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` `.locked` after `timeout`, `.ioError`.
    public static func lock(_ path: String, timeout: Duration = ArchiveLock.defaultTimeout) throws -> ArchiveLock {
        try ArchiveLocation.createParentFolders(of: path)
        return try ArchiveLock(archivePath: path, timeout: timeout)
    }
}
