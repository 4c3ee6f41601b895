// Sources/GraphArchive/Codable/GraphArchiveDecoder.swift - Decodable values back, one instance per object

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a gridstore archive back into `Decodable` values: the `JSONDecoder` of GraphArchive,
/// the counterpart of ``GraphArchiveEncoder``.
///
/// ```swift
/// let states = try GraphArchiveDecoder().decode([GridStateModel].self, fromFile: path)
/// ```
///
/// The archive is checked before any value is built (header, checksums, tables), and every
/// read is bounds-checked, so a damaged or hostile archive throws a `DecodingError`, never
/// traps. Decoding is statically typed: the types you ask for are the types built, so no
/// registry is needed, except for one case below.
///
/// - **Objects keep their identity.** Each archived object is built the first time a reference
///   to it is decoded, with the type that reference asks for, and every later reference gets
///   the same instance (`===`).
/// - **Subclasses.** A property typed as a base class may hold a subclass instance. The archive
///   names the subclass; the decoder builds it only if it is in ``registry`` (see
///   ``register(_:forName:)``), and otherwise throws `DecodingError.typeMismatch` naming the
///   class, rather than silently building a base-class instance. The same registration reads
///   archives whose class was renamed.
/// - **Cycles** are read where the type asks for the reference that closes one with
///   ``Swift/KeyedDecodingContainer/decodeLater(_:forKey:assign:)`` (written with
///   ``Swift/KeyedEncodingContainer/encodeLater(_:forKey:)``): the value is decoded and
///   assigned after the root value, in request order. A plain `decode` that comes back to an
///   object still being built throws `DecodingError.dataCorrupted` (underlying error
///   ``GraphArchiveError/Code/unresolvedCycle``), never recursing.
/// - Archives written by ``GraphArchiver`` decode too, where the shapes agree: records are
///   matched by key, objects by class name.
///
/// Errors: `keyNotFound`, `valueNotFound` (nil or a missing element where a value is needed),
/// `typeMismatch` and `dataCorrupted` (damage, limits, numbers that do not fit), each with the
/// coding path; the engine's ``GraphArchiveError`` is the context's `underlyingError`. File
/// system errors (`.fileNotFound`, `.ioError`) are thrown as ``GraphArchiveError`` themselves.
public struct GraphArchiveDecoder: Sendable {
    /// Limits against hostile input (depth, sizes, counts). Decoding recurses once per nesting
    /// level (each object built inside another's initializer counts), about 2 KB of stack each in
    /// release builds (about 5 KB in debug builds): the default `maximumDepth` of 512 stays
    /// within 1–3 MB.
    public var options: GraphUnarchiver.Options
    /// Passed to every value as `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable] = [:]
    /// The classes that may be built where one of their superclasses is asked for, or under a
    /// name they were archived by before a rename: its `Decodable` classes. The registry a
    /// ``GraphUnarchiver`` is given serves here too, for classes that adopt both protocols.
    public var registry: GraphTypeRegistry

    public init(
        options: GraphUnarchiver.Options = GraphUnarchiver.Options(),
        registry: GraphTypeRegistry = GraphTypeRegistry()
    ) {
        self.options = options
        self.registry = registry
    }

    /// Lets archived objects of class `type` be built where one of its superclasses is asked
    /// for: ``GraphTypeRegistry/registerDecodable(_:forName:)`` on ``registry``.
    ///
    /// Without `name`, `type` is registered under its archived name (`String(describing: type)`)
    /// and, if it adopts ``GraphCoding``, its archived name and aliases there, with the
    /// subclasses it lists in ``GraphCoding/archivedSubclasses``. With `name`, `type` alone
    /// is registered under `name`, for an archive written before a rename.
    public mutating func register<T: AnyObject & Decodable>(_ type: T.Type, forName name: String? = nil) {
        registry.registerDecodable(type, forName: name)
    }

    /// Decodes the root value of archive `data` as `type`.
    ///
    /// - Throws: `DecodingError` (see the type's discussion) and whatever `init(from:)` throws.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        // Read where `data` holds it, not copied: the decoder's input is closed before `data`'s
        // bytes are released (see `ArchiveBytes(borrowing:)`).
        try ArchiveBytes.lending(data) { bytes in
            try decode(type) { () throws(GraphArchiveError) in try LoadedArchive.load(bytes, options: options) }
        }
    }

    /// Decodes the root value of the archive at `path` as `type`. A compressed archive is
    /// decompressed as it is read, without holding the compressed file in memory.
    ///
    /// - Throws: ``GraphArchiveError`` `.fileNotFound` or `.ioError` when the file cannot be
    ///   read, and what ``decode(_:from:)-(_,Data)`` throws (a file larger than
    ///   ``GraphUnarchiver/Options/maximumArchiveBytes`` is a `DecodingError`).
    public func decode<T: Decodable>(_ type: T.Type, fromFile path: String) throws -> T {
        try decode(type) { () throws(GraphArchiveError) in try LoadedArchive.load(file: path, options: options) }
    }

    private func decode<T: Decodable>(
        _ type: T.Type,
        loading load: () throws(GraphArchiveError) -> LoadedArchive
    ) throws -> T {
        let decoder: CodableDecoder
        do {
            decoder = try CodableDecoder(loaded: load(), options: options, userInfo: userInfo, classes: registry)
        } catch {
            // The file system's errors are not about the archive's content.
            if error.code == .fileNotFound || error.code == .ioError { throw error }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: error.message, underlyingError: error)
            )
        }
        // A `Decoder` that an `init(from:)` kept reads nothing once this call is over.
        defer { decoder.state.engine.closeInput() }
        return try decoder.decodeRoot(type)
    }
}
