// Sources/GraphArchive/KeyedArchive/KeyedArchive.swift - Apple NSKeyedArchiver archives: writing, converting, inspecting

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Apple's `NSKeyedArchiver` format (a binary property list), written and converted without
/// NSObject; reading goes through ``GraphUnarchiver/init(forReadingKeyedArchive:registry:valueTypes:options:)``.
///
/// Models encode and decode through their one ``GraphCoding`` conformance for both formats.
/// Archives written here decode with Foundation's `NSKeyedUnarchiver` into `NSObject, NSCoding`
/// classes, sharing included: strings, data, dates, arrays and dictionaries are
/// `decodeObject(forKey:)` values, integers, reals and booleans are stored inline for
/// `decodeInteger(forKey:)`, `decodeDouble(forKey:)`, `decodeBool(forKey:)`. Each class's
/// `$classes` lists its superclasses as far up as they adopt ``GraphCoding``, then NSObject
/// (`["Checklist", "Note", "NSObject"]`), so a reader that knows only a superclass falls back
/// to it; converting a gridstore archive file, which records no superclasses, writes the class
/// and NSObject.
///
/// ```swift
/// var options = KeyedArchive.Options()
/// options.setClassName("UAGridState", for: GridState.self)   // the app's class name
/// try KeyedArchive.archiveRootObject(states, toFile: path, options: options)
///
/// let back = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromKeyedArchiveFile: path)
/// ```
public enum KeyedArchive {
    /// Settings for writing keyed archives.
    public struct Options: Sendable {
        /// The `$classname` to write for each archived type name (``GraphCoding/archivedTypeName``);
        /// types not listed are written under their archived name. Default: empty.
        public var classNames: [String: String] = [:]

        public init() {}

        /// Writes instances of `type` under class name `className`: the
        /// `setClassName(_:for:)` of `NSKeyedArchiver`. (For reading, register the type under
        /// that name in the ``GraphTypeRegistry``, or list it in ``GraphCoding/archivedTypeAliases``.)
        public mutating func setClassName(_ className: String, for type: any GraphCoding.Type) {
            classNames[type.archivedTypeName] = className
        }

        /// The class name instances of `type` are written under.
        public func className(for type: any GraphCoding.Type) -> String {
            classNames[type.archivedTypeName] ?? type.archivedTypeName
        }
    }

    // MARK: - Writing

    /// Archives `rootObject` under the key "root" as an NSKeyedArchiver archive: what
    /// `NSKeyedArchiver.archivedData(withRootObject:)` returns for the same model.
    ///
    /// - Throws: What encoding throws, and `.invalidValue` for nil inside an array or
    ///   dictionary, which NSArray and NSDictionary cannot hold.
    public static func archivedData<T: GraphValue>(withRootObject rootObject: T, options: Options = Options()) throws
        -> Data
    {
        let archiver = GraphArchiver()
        try archiver.encode(rootObject, forKey: GraphArchiver.rootKey)
        try archiver.finishEncoding()
        return try archiver.keyedArchiveData(options: options)
    }

    /// Archives `rootObject` under "root" as an NSKeyedArchiver archive and saves it to `path`
    /// atomically (see <doc:HostileInput#Saving>): the `archiveRootObject(_:toFile:)` that iOS
    /// apps use.
    public static func archiveRootObject<T: GraphValue>(
        _ rootObject: T,
        toFile path: String,
        options: Options = Options()
    ) throws {
        let archiver = GraphArchiver()
        try archiver.encode(rootObject, forKey: GraphArchiver.rootKey)
        try archiver.finishEncoding()
        try archiver.writeKeyedArchive(toFile: path, options: options)
    }

    // MARK: - Converting
    //
    // Named by direction, as ArchiveGraph's writers are: the base name says what is produced
    // (`gridstoreArchiveData`, `writeGridstoreArchive`, `keyedArchiveData`, `writeKeyedArchive`),
    // the first label what is read (`fromKeyedArchive`, `fromGridstoreArchiveFile`).

    /// The gridstore archive holding what keyed archive `data` holds, without creating any
    /// object (no registry needed): class instances become objects named by `$classname`, and
    /// the conversion is lossless (see ``ArchiveGraph/gridstoreArchiveData(compression:)``):
    /// ``keyedArchiveData(fromGridstoreArchive:options:decodingOptions:)`` of the result gives
    /// back the same graph.
    ///
    /// - Throws: What ``ArchiveGraph/init(data:options:)`` throws for a bad keyed archive, and
    ///   compression errors.
    public static func gridstoreArchiveData(
        fromKeyedArchive data: Data,
        compression: ArchiveCompression = .none,
        options: GraphUnarchiver.Options = .init()
    ) throws -> Data {
        try ArchiveGraph(data: data, options: options).gridstoreArchiveData(compression: compression)
    }

    /// Converts the keyed archive at `input` into a gridstore archive saved atomically at
    /// `output`; see ``gridstoreArchiveData(fromKeyedArchive:compression:options:)``.
    public static func writeGridstoreArchive(
        fromKeyedArchiveFile input: String,
        toFile output: String,
        compression: ArchiveCompression = .none,
        options: GraphUnarchiver.Options = .init()
    ) throws {
        let bytes = try FileReader.readKeyedArchive(input, options: options)
        try ArchiveGraph(bytes: bytes, options: options).writeGridstoreArchive(toFile: output, compression: compression)
    }

    /// The keyed archive holding what gridstore archive `data` holds, without creating any
    /// object (no registry needed).
    ///
    /// - Throws: What reading the gridstore archive throws, and `.invalidValue` for nil inside
    ///   an array or dictionary.
    public static func keyedArchiveData(
        fromGridstoreArchive data: Data,
        options: Options = Options(),
        decodingOptions: GraphUnarchiver.Options = .init()
    ) throws -> Data {
        try KeyedArchiveWriter.transcode(
            ArchiveBytes(copying: data),
            classNames: options.classNames,
            options: decodingOptions
        )
        .takeData()
    }

    /// Converts the gridstore archive at `input` into a keyed archive saved atomically at `output`.
    public static func writeKeyedArchive(
        fromGridstoreArchiveFile input: String,
        toFile output: String,
        options: Options = Options(),
        decodingOptions: GraphUnarchiver.Options = .init()
    ) throws {
        let loaded = try LoadedArchive.load(file: input, options: decodingOptions)
        try write(
            KeyedArchiveWriter.transcode(loaded, classNames: options.classNames, options: decodingOptions),
            to: output
        )
    }

    @discardableResult
    static func write(_ plist: borrowing ByteWriter, to path: String) throws -> Int {
        try AtomicFile.write(to: path) { sink in
            try sink.write(plist)
        }
    }

    // MARK: - Inspecting

    /// What keyed archive `data` holds, as ``ArchiveInfo``: objects, references, class names,
    /// top-level keys and the root's element count, counted as it would be stored natively.
    /// `formatVersion` is "NSKeyedArchiver 100000" and `archiveBytes` the keyed archive's size.
    public static func archiveInfo(fromKeyedArchive data: Data, options: GraphUnarchiver.Options = .init()) throws
        -> ArchiveInfo
    {
        try archiveInfo(bytes: ArchiveBytes(copying: data), options: options)
    }

    /// What the keyed archive at `path` holds; see ``archiveInfo(fromKeyedArchive:options:)-(Data,_)``.
    public static func archiveInfo(fromKeyedArchiveFile path: String, options: GraphUnarchiver.Options = .init()) throws
        -> ArchiveInfo
    {
        var memory = MemoryBudget(options)
        let bytes = try FileReader.readKeyedArchive(path, options: options, memory: &memory)
        return try archiveInfo(bytes: bytes, options: options, memory: memory)
    }

    static func archiveInfo(bytes: ArchiveBytes, options: GraphUnarchiver.Options, memory: MemoryBudget? = nil)
        throws(GraphArchiveError) -> ArchiveInfo
    {
        var memory = memory ?? MemoryBudget(options)
        let native = try KeyedArchiveReader.transcode(
            bytes,
            registry: nil,
            options: options,
            isLoadedHere: true,
            memory: &memory
        )
        let loaded = try LoadedArchive.load(
            ArchiveBytes(joiningInPlace: native.stored()),
            options: options,
            isOwnOutput: true,
            memory: memory
        )
        var info = try GraphUnarchiver.archiveInfo(loaded: loaded, options: options)
        info.formatVersion = "\(KeyedArchiveIndex.archiverName) \(KeyedArchiveIndex.version)"
        info.archiveBytes = bytes.count
        return info
    }
}

extension GraphArchiver {
    /// The finished archive as an NSKeyedArchiver archive, for archives with several top-level
    /// keys (e.g. `encode(fourLines, forKey: "Data")`); available after ``finishEncoding()``.
    ///
    /// - Throws: `.invalidState` before ``finishEncoding()``, `.invalidValue` for nil inside an
    ///   array or dictionary.
    public func keyedArchiveData(options: KeyedArchive.Options = KeyedArchive.Options()) throws -> Data {
        try keyedArchive(options: options).takeData()
    }

    /// Saves the finished archive as an NSKeyedArchiver archive at `path`, atomically.
    public func writeKeyedArchive(toFile path: String, options: KeyedArchive.Options = KeyedArchive.Options()) throws {
        try KeyedArchive.write(keyedArchive(options: options), to: path)
    }

    private func keyedArchive(options keyedOptions: KeyedArchive.Options) throws -> ByteWriter {
        guard let output = finishedOutput else {
            throw GraphArchiveError(.invalidState, "the keyed archive was requested before finishEncoding()")
        }
        // The archive this archiver just assembled: its checksum is not computed again.
        let options = GraphUnarchiver.Options()
        return try KeyedArchiveWriter.transcode(
            LoadedArchive.load(ArchiveBytes(joining: output.stored()), options: options, isOwnOutput: true),
            classNames: keyedOptions.classNames,
            superclasses: encounteredSuperclasses,
            options: options
        )
    }
}
