// Sources/GridStore/GridStateFileURLs.swift - the grid-state file calls, taking file URLs

import Foundation
import GraphArchive

// The file URL forms of the calls that take a path, named as GraphArchive names its own
// (`fromFile:` -> `from:`, `toFile:` -> `to:`, `ofFile:` -> `of:`). Any other URL is
// `.invalidValue`, with GraphArchive's message.

extension GridStateDataSource {
    /// A store that loads from and saves to the archive at `url`, a file URL, empty until
    /// ``load()``; see ``init(archivePath:)``.
    ///
    /// - Throws: `.invalidValue` when `url` is not a file URL.
    public convenience init(archiveURL url: URL) throws {
        self.init(archivePath: try url.archiveFilePath())
    }
}

extension GridStateArchive {
    /// Reads the grid states of the archive at `url`, a file URL, in either format; see
    /// ``readStates(fromFile:options:)``.
    public static func readStates(
        from url: URL,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> [GridState] {
        try readStates(fromFile: url.archiveFilePath(), options: options)
    }

    /// What the archive at `url`, a file URL, holds; see ``info(fromFile:options:)``.
    public static func info(
        from url: URL,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> ArchiveInfo {
        try info(fromFile: url.archiveFilePath(), options: options)
    }

    /// Checks every byte of the archive at `url`, a file URL, and decodes its grid states; see
    /// ``verify(file:options:)``.
    public static func verify(
        _ url: URL,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> (info: ArchiveInfo, records: Int) {
        try verify(file: url.archiveFilePath(), options: options)
    }

    /// Saves a finished archive at `url`, a file URL, in `format`; see
    /// ``write(_:toFile:format:)``.
    public static func write(_ archive: GraphArchiver, to url: URL, format: Format = .gridstore) throws {
        try write(archive, toFile: url.archiveFilePath(), format: format)
    }

    /// The format the file at `url`, a file URL, starts like; see ``kind(ofFile:)``.
    public static func kind(of url: URL) throws -> ArchiveKind {
        try kind(ofFile: url.archiveFilePath())
    }

    /// How the archive at `url`, a file URL, is stored, from its first bytes alone; `nil` when
    /// no archive can be read there or `url` is not a file URL; see ``storedForm(ofFile:)``.
    public static func storedForm(of url: URL) -> StoredForm? {
        guard let path = try? url.archiveFilePath() else { return nil }
        return storedForm(ofFile: path)
    }

    /// Takes the lock between processes on the archive at `url`, a file URL, creating the
    /// missing folders above it first; see ``lock(_:timeout:)-(String,_)``.
    public static func lock(_ url: URL, timeout: Duration = ArchiveLock.defaultTimeout) throws -> ArchiveLock {
        try lock(url.archiveFilePath(), timeout: timeout)
    }

    /// Rewrites the archive at `input` as `output`, both file URLs; see
    /// ``convert(file:toFile:format:compression:lockTimeout:options:)``.
    public static func convert(
        _ input: URL,
        to output: URL,
        format: Format,
        compression: ArchiveCompression = .none,
        lockTimeout: Duration = ArchiveLock.defaultTimeout,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> Int {
        try convert(
            file: input.archiveFilePath(),
            toFile: output.archiveFilePath(),
            format: format,
            compression: compression,
            lockTimeout: lockTimeout,
            options: options
        )
    }
}

extension GridStateImporter {
    /// The bytes of the input file at `url`, a file URL; see ``contents(ofFile:)``.
    public static func contents(of url: URL) throws -> [UInt8] {
        try contents(ofFile: url.archiveFilePath())
    }
}

extension ArchiveLocation {
    /// The archive file used when none is given, as a file URL; see
    /// ``defaultArchivePath(environment:homeDirectory:)``.
    public static func defaultArchiveURL(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        homeDirectory: @autoclosure () -> String = NSHomeDirectory()
    ) -> URL {
        URL(fileURLWithPath: defaultArchivePath(environment: environment, homeDirectory: homeDirectory()))
    }

    /// Creates the folders above `url`, a file URL, that do not exist yet; see
    /// ``createParentFolders(of:)-(String)``.
    public static func createParentFolders(of url: URL) throws {
        try createParentFolders(of: url.archiveFilePath())
    }
}
