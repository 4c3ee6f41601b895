// Sources/GraphArchive/Files/FileURLs.swift - every file API also takes a file URL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Each call that takes a path (`toFile:`, `fromFile:`, `contentsOfFile:`) has a form that takes
// a `file:` URL, named as Foundation names its URL forms (`to:`, `from:`, `contentsOf:`). They
// forward the URL's path; any other URL is an `.invalidValue` error, never a network read.

extension URL {
    /// The path of a `file:` URL.
    ///
    /// - Throws: `.invalidValue` for any other URL: archives are local files. Package-wide, so
    ///   GridStore's URL forms say the same.
    package func archiveFilePath() throws(GraphArchiveError) -> String {
        guard isFileURL else {
            throw GraphArchiveError(
                .invalidValue,
                "\(absoluteString) is not a file URL: archives are read from local files"
            )
        }
        return path(percentEncoded: false)
    }
}

extension GraphArchiver {
    /// Archives `rootObject` under "root" and saves it at `url`, a file URL, atomically; see
    /// ``archiveRootObject(_:toFile:options:)``.
    public static func archiveRootObject<T: GraphValue>(_ rootObject: T, to url: URL, options: Options = Options())
        throws
    {
        try archiveRootObject(rootObject, toFile: url.archiveFilePath(), options: options)
    }

    /// Writes the finished archive at `url`, a file URL, atomically; see ``write(toFile:)``.
    public func write(to url: URL) throws {
        try write(toFile: url.archiveFilePath())
    }

    /// Saves the finished archive as an NSKeyedArchiver archive at `url`, a file URL; see
    /// ``writeKeyedArchive(toFile:options:)``.
    public func writeKeyedArchive(to url: URL, options: KeyedArchive.Options = KeyedArchive.Options()) throws {
        try writeKeyedArchive(toFile: url.archiveFilePath(), options: options)
    }
}

extension GraphUnarchiver {
    /// Opens the gridstore archive at `url`, a file URL; see
    /// ``init(contentsOfFile:registry:options:)``.
    public convenience init(contentsOf url: URL, registry: GraphTypeRegistry, options: Options = Options()) throws {
        try self.init(contentsOfFile: url.archiveFilePath(), registry: registry, options: options)
    }

    /// Opens the NSKeyedArchiver archive at `url`, a file URL; see
    /// ``init(contentsOfKeyedArchiveFile:registry:valueTypes:options:)``.
    public convenience init(
        contentsOfKeyedArchive url: URL,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws {
        try self.init(
            contentsOfKeyedArchiveFile: url.archiveFilePath(),
            registry: registry,
            valueTypes: valueTypes,
            options: options
        )
    }

    /// Opens the archive at `url`, a file URL, in either format; see
    /// ``init(contentsOfAnyArchiveFile:registry:valueTypes:options:)``.
    public convenience init(
        contentsOfAnyArchive url: URL,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws {
        try self.init(
            contentsOfAnyArchiveFile: url.archiveFilePath(),
            registry: registry,
            valueTypes: valueTypes,
            options: options
        )
    }

    /// Decodes the root value of the gridstore archive at `url`, a file URL, as `type`; see
    /// ``unarchivedObject(ofType:fromFile:registry:options:)``.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        from url: URL,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        options: Options = Options()
    ) throws -> T {
        try unarchivedObject(ofType: type, fromFile: url.archiveFilePath(), registry: registry, options: options)
    }

    /// Decodes the root value of the NSKeyedArchiver archive at `url`, a file URL, as `type`;
    /// see ``unarchivedObject(ofType:fromKeyedArchiveFile:registry:valueTypes:options:)``.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        fromKeyedArchive url: URL,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws -> T {
        try unarchivedObject(
            ofType: type,
            fromKeyedArchiveFile: url.archiveFilePath(),
            registry: registry,
            valueTypes: valueTypes,
            options: options
        )
    }

    /// Decodes the root value of the archive at `url`, a file URL, in either format, as `type`;
    /// see ``unarchivedObject(ofType:fromAnyArchiveFile:registry:valueTypes:options:)``.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        fromAnyArchive url: URL,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws -> T {
        try unarchivedObject(
            ofType: type,
            fromAnyArchiveFile: url.archiveFilePath(),
            registry: registry,
            valueTypes: valueTypes,
            options: options
        )
    }

    /// What the gridstore archive at `url`, a file URL, holds; see
    /// ``archiveInfo(fromFile:options:)``.
    public static func archiveInfo(from url: URL, options: Options = Options()) throws -> ArchiveInfo {
        try archiveInfo(fromFile: url.archiveFilePath(), options: options)
    }

    /// What the archive at `url`, a file URL, holds, in either format; see
    /// ``archiveInfo(fromAnyArchiveFile:options:)``.
    public static func archiveInfo(fromAnyArchive url: URL, options: Options = Options()) throws -> ArchiveInfo {
        try archiveInfo(fromAnyArchiveFile: url.archiveFilePath(), options: options)
    }

    /// Checks every byte of the gridstore archive at `url`, a file URL; see
    /// ``verify(file:options:)``.
    public static func verify(_ url: URL, options: Options = Options()) throws -> ArchiveInfo {
        try verify(file: url.archiveFilePath(), options: options)
    }

    /// Checks every byte of the archive at `url`, a file URL, in either format; see
    /// ``verify(anyArchiveFile:options:)``.
    public static func verify(anyArchive url: URL, options: Options = Options()) throws -> ArchiveInfo {
        try verify(anyArchiveFile: url.archiveFilePath(), options: options)
    }
}

extension KeyedArchive {
    /// Archives `rootObject` under "root" as an NSKeyedArchiver archive and saves it at `url`,
    /// a file URL, atomically; see ``archiveRootObject(_:toFile:options:)``.
    public static func archiveRootObject<T: GraphValue>(_ rootObject: T, to url: URL, options: Options = Options())
        throws
    {
        try archiveRootObject(rootObject, toFile: url.archiveFilePath(), options: options)
    }

    /// Converts the keyed archive at `input` into a gridstore archive saved atomically at
    /// `output`, both file URLs; see
    /// ``writeGridstoreArchive(fromKeyedArchiveFile:toFile:compression:options:)``.
    public static func writeGridstoreArchive(
        fromKeyedArchive input: URL,
        to output: URL,
        compression: ArchiveCompression = .none,
        options: GraphUnarchiver.Options = .init()
    ) throws {
        try writeGridstoreArchive(
            fromKeyedArchiveFile: input.archiveFilePath(),
            toFile: output.archiveFilePath(),
            compression: compression,
            options: options
        )
    }

    /// Converts the gridstore archive at `input` into a keyed archive saved atomically at
    /// `output`, both file URLs; see
    /// ``writeKeyedArchive(fromGridstoreArchiveFile:toFile:options:decodingOptions:)``.
    public static func writeKeyedArchive(
        fromGridstoreArchive input: URL,
        to output: URL,
        options: Options = Options(),
        decodingOptions: GraphUnarchiver.Options = .init()
    ) throws {
        try writeKeyedArchive(
            fromGridstoreArchiveFile: input.archiveFilePath(),
            toFile: output.archiveFilePath(),
            options: options,
            decodingOptions: decodingOptions
        )
    }

    /// What the keyed archive at `url`, a file URL, holds; see
    /// ``archiveInfo(fromKeyedArchiveFile:options:)``.
    public static func archiveInfo(fromKeyedArchive url: URL, options: GraphUnarchiver.Options = .init()) throws
        -> ArchiveInfo
    {
        try archiveInfo(fromKeyedArchiveFile: url.archiveFilePath(), options: options)
    }
}

extension ArchiveGraph {
    /// Opens the archive at `url`, a file URL, in either format; see
    /// ``init(contentsOfFile:options:)``.
    public convenience init(contentsOf url: URL, options: GraphUnarchiver.Options = .init()) throws {
        try self.init(contentsOfFile: url.archiveFilePath(), options: options)
    }

    /// Writes the graph as a gridstore archive at `url`, a file URL, atomically; see
    /// ``writeGridstoreArchive(toFile:compression:)``.
    @discardableResult
    public func writeGridstoreArchive(to url: URL, compression: ArchiveCompression = .none) throws -> Int {
        try writeGridstoreArchive(toFile: url.archiveFilePath(), compression: compression)
    }

    /// Writes the graph as an NSKeyedArchiver archive at `url`, a file URL, atomically; see
    /// ``writeKeyedArchive(toFile:options:)``.
    @discardableResult
    public func writeKeyedArchive(to url: URL, options: KeyedArchive.Options = KeyedArchive.Options()) throws -> Int {
        try writeKeyedArchive(toFile: url.archiveFilePath(), options: options)
    }
}

extension GraphUnarchiver {
    /// Whether the gridstore archive at `url`, a file URL, stores its payload zstd-compressed;
    /// see ``isPayloadCompressed(archiveFileAt:)-(String)``.
    public static func isPayloadCompressed(archiveFileAt url: URL) throws -> Bool {
        try isPayloadCompressed(archiveFileAt: url.archiveFilePath())
    }
}

extension ArchiveKind {
    /// The format the file at `url`, a file URL, starts like; see ``detect(fileAt:)-(String)``.
    public static func detect(fileAt url: URL) throws -> ArchiveKind {
        try detect(fileAt: url.archiveFilePath())
    }
}

extension ArchiveLock {
    /// The lock file of the archive at `url`, a file URL; see
    /// ``lockFilePath(forArchive:)-(String)``.
    public static func lockFileURL(forArchive url: URL) throws -> URL {
        URL(fileURLWithPath: try lockFilePath(forArchive: url.archiveFilePath()))
    }

    /// Takes the lock of the archive at `url`, a file URL; see ``init(archivePath:timeout:)``.
    public convenience init(archiveURL url: URL, timeout: Duration = defaultTimeout) throws {
        try self.init(archivePath: url.archiveFilePath(), timeout: timeout)
    }

    /// Runs `body` holding the lock of the archive at `url`, a file URL; see
    /// ``withLock(onArchive:timeout:_:)-(String,_,_)``.
    public static func withLock<Result>(
        onArchive url: URL,
        timeout: Duration = defaultTimeout,
        _ body: () throws -> Result
    ) throws -> Result {
        try withLock(onArchive: url.archiveFilePath(), timeout: timeout, body)
    }
}

extension GraphArchiveEncoder {
    /// Archives `value` and saves it at `url`, a file URL, atomically; see
    /// ``encode(_:toFile:)``.
    public func encode<T: Encodable>(_ value: T, to url: URL) throws {
        try encode(value, toFile: url.archiveFilePath())
    }
}

extension GraphArchiveDecoder {
    /// Decodes a value of `type` from the archive at `url`, a file URL; see
    /// ``decode(_:fromFile:)``.
    public func decode<T: Decodable>(_ type: T.Type, from url: URL) throws -> T {
        try decode(type, fromFile: url.archiveFilePath())
    }
}
