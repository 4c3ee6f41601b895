// Sources/GraphArchive/Codable/GraphArchiveEncoder.swift - archives Encodable values, keeping class identity

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Archives any `Encodable` value in the gridstore format: the `JSONEncoder` of GraphArchive,
/// for models that are `Codable` rather than ``GraphCoding``.
///
/// ```swift
/// let data = try GraphArchiveEncoder().encode(states)             // [GridStateModel]
/// try GraphArchiveEncoder().encode(states, toFile: path)          // atomic save
/// let back = try GraphArchiveDecoder().decode([GridStateModel].self, from: data)
/// ```
///
/// What it writes is an ordinary archive (same header, checksum, tables, compression, limits;
/// the value under the root key `"root"`), so ``GraphUnarchiver/archiveInfo(from:options:)-(Data,_)``,
/// ``GraphUnarchiver/verify(_:options:)-(Data,_)`` and the `gridstore` tool read it. Within it:
///
/// - **Class instances are objects.** An instance met several times is written once and
///   referenced by index; ``GraphArchiveDecoder`` restores one instance (`===`) for all of them.
///   Its record names its dynamic class (`String(describing:)`).
/// - **Everything else is a value**, written inline where it appears: keyed containers become
///   records whose shape lists the keys (interned once per archive, like ``GraphCoding`` keys),
///   unkeyed containers arrays (an array of objects is packed, FORMAT.md §6.5), single-value
///   containers one tagged value.
/// - `Date` and `Data` (and `[UInt8]`) use the format's native date and bytes tags instead of
///   their own `Codable` conformances: smaller and faster, and readable by ``GraphCoding`` types.
///   `URL`, `UUID`, `Decimal` and everything else go through their own conformances.
///
/// Differences from `JSONEncoder`:
/// - A reference cycle throws `EncodingError.invalidValue` naming both paths: `init(from:)`
///   must return a finished instance, so a plain `decode` could not restore it. A cycle is
///   written only where the type opts into the format's own cycle mechanism (FORMAT.md §7,
///   §11.5): it encodes the references that may close cycles with
///   ``Swift/KeyedEncodingContainer/encodeLater(_:forKey:)`` and decodes them with
///   ``Swift/KeyedDecodingContainer/decodeLater(_:forKey:assign:)``, which assigns them once
///   the root value is decoded. Objects first met inside such a value are written after the
///   root value, from a loop, so a list whose links all go through it has no length limit.
///   This encoder does not call ``GraphCoding/encode(with:)`` for a type that conforms to both
///   protocols, because the two number and build objects differently (here objects are built
///   on first reference, with the type that reference asks for; ``GraphUnarchiver`` builds
///   them in index order from its registry); the bytes are the same format either way.
/// - Encoding the same key twice in one container throws instead of replacing the value.
/// - `encodeConditional(_:forKey:)` encodes unconditionally (the protocol's default).
/// - A value that encodes nothing is stored as an empty keyed record (JSON's `{}`).
///
/// Errors are `EncodingError`s with the coding path; an engine error, such as nesting deeper
/// than ``GraphArchiver/Options/maximumDepth``, is the context's `underlyingError`. After any
/// error nothing is written: no partial data, and ``encode(_:toFile:)`` leaves the file as it was.
public struct GraphArchiveEncoder: Sendable {
    /// Compression and the nesting limit. Object bodies count towards the depth, since each new
    /// object is encoded where it is first met (except inside an `encodeLater` value: those
    /// are written after the root value, at depth 0). Each level takes about 2 KB of stack in release
    /// builds (about 4 KB in debug builds), so the default limit of 512 needs 1–2 MB, well within
    /// Linux's 8 MB thread stacks; raise it only on a thread with the stack to match.
    public var options: GraphArchiver.Options
    /// Passed to every value as `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

    public init(options: GraphArchiver.Options = GraphArchiver.Options()) {
        self.options = options
    }

    /// Archives `value` and returns the archive's bytes.
    ///
    /// - Throws: `EncodingError` for a value that cannot be archived (cycle, duplicate key,
    ///   nesting too deep), whatever the value's `encode(to:)` throws, and ``GraphArchiveError``
    ///   (`.compressionFailed`, `.compressionUnavailable`) when compressing.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        try archive(value).takeData()
    }

    /// Archives `value` and saves it to `path` atomically (see <doc:HostileInput#Saving>): the
    /// file is either its previous content or the whole new archive.
    ///
    /// - Throws: what ``encode(_:)`` throws, and ``GraphArchiveError`` (`.ioError`,
    ///   `.fileNotFound` for a missing folder) from saving.
    public func encode<T: Encodable>(_ value: T, toFile path: String) throws {
        try AtomicFile.write(archive(value), to: path)
    }

    private func archive<T: Encodable>(_ value: T) throws -> ArchiveOutput {
        try CodableEncoder(options: options, userInfo: userInfo).archive(value)
    }
}
