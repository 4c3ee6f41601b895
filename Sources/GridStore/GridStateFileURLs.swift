// Sources/GridStore/GridStateFileURLs.swift - the grid-state file calls, taking file URLs

import Foundation
import GraphArchive

// The file URL forms of the calls that take a path, named as GraphArchive names its own
// (`fromFile:` -> `from:`, `toFile:` -> `to:`). Any other URL is `.invalidValue`.

extension URL {
    /// The path of a `file:` URL.
    ///
    /// - Throws: `.invalidValue` for any other URL: grid states are kept in local files.
    fileprivate func gridStateFilePath() throws -> String {
        guard isFileURL else {
            throw GraphArchiveError(.invalidValue, "\(absoluteString) is not a file URL: archives are local files")
        }
        return path(percentEncoded: false)
    }
}

extension GridStateDataSource {
    /// A store that loads from and saves to the archive at `url`, a file URL, empty until
    /// ``load()``; see ``init(archivePath:)``.
    ///
    /// - Throws: `.invalidValue` when `url` is not a file URL.
    public convenience init(archiveURL url: URL) throws {
        self.init(archivePath: try url.gridStateFilePath())
    }
}

extension GridStateArchive {
    /// Reads the grid states of the archive at `url`, a file URL, in either format; see
    /// ``readStates(fromFile:options:)``.
    public static func readStates(
        from url: URL,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> [GridState] {
        try readStates(fromFile: url.gridStateFilePath(), options: options)
    }

    /// What the archive at `url`, a file URL, holds; see ``info(fromFile:options:)``.
    public static func info(
        from url: URL,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> ArchiveInfo {
        try info(fromFile: url.gridStateFilePath(), options: options)
    }

    /// Checks every byte of the archive at `url`, a file URL, and decodes its grid states; see
    /// ``verify(file:options:)``.
    public static func verify(
        _ url: URL,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> (info: ArchiveInfo, records: Int) {
        try verify(file: url.gridStateFilePath(), options: options)
    }

    /// Saves a finished archive at `url`, a file URL, in `format`; see
    /// ``write(_:toFile:format:)``.
    public static func write(_ archive: GraphArchiver, to url: URL, format: Format = .gridstore) throws {
        try write(archive, toFile: url.gridStateFilePath(), format: format)
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
            file: input.gridStateFilePath(),
            toFile: output.gridStateFilePath(),
            format: format,
            compression: compression,
            lockTimeout: lockTimeout,
            options: options
        )
    }
}
