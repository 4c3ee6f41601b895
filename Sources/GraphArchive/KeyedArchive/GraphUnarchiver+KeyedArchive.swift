// Sources/GraphArchive/KeyedArchive/GraphUnarchiver+KeyedArchive.swift - reading NSKeyedArchiver archives

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension GraphUnarchiver {
    /// Opens an archive written by Apple's `NSKeyedArchiver`, a binary property list or an XML
    /// one (`outputFormat = .xml`), to be decoded through the same ``GraphCoding/init(from:)`` as
    /// gridstore archives.
    ///
    /// Instances of model classes become objects named by their `$classname`; only classes in
    /// `registry` are created, so map an app's class names to your types there (the
    /// `setClass(_:forClassName:)` of `NSKeyedUnarchiver`):
    ///
    /// ```swift
    /// var registry = GraphTypeRegistry([GridState.self])
    /// registry.register(GridState.self, forName: "UAGridState")  // or an archivedTypeAliases entry
    /// let unarchiver = try GraphUnarchiver(forReadingKeyedArchive: data, registry: registry)
    /// let states = try unarchiver.decode([GridState].self, forKey: "root")
    /// ```
    ///
    /// A name the registry does not know is also tried unqualified ("MyApp.Record" → "Record")
    /// and then along `$classes`, superclasses first. Instances of the classes named by
    /// `valueTypes` (structs, which a registry does not hold) are read as inline values, a
    /// fresh value at every reference. Foundation's NSString, NSNumber, NSArray
    /// (and NSSet, NSOrderedSet), NSDictionary, NSData and NSDate become values: `String`,
    /// integers, `Double`/`Float`, `Bool`, arrays, dictionaries, `Data` and `Date`; NSOrderedSet's
    /// numbered keys (`NS.object.0`…) and NSCountedSet (its distinct objects) read as arrays too.
    /// An instance referred to from several places comes back as one object; a reference that closes a
    /// cycle is decoded with ``decodeLater(_:forKey:assign:)``, as for gridstore archives.
    /// Values (strings, arrays…) shared in the keyed archive are copied to each place that
    /// refers to them, up to 64 times the archive's size in all.
    ///
    /// A keyed archive stores each object's keys in hash order. Once a class has been decoded,
    /// the process remembers the order its initializer reads its keys in, and later keyed reads
    /// go faster by keeping that class's fields in that order.
    ///
    /// - Throws: `.badMagic` if `data` is not an NSKeyedArchiver archive, `.unsupportedVersion`
    ///   for a `$version` other than 100000, `.corrupt`, `.truncated` or `.badObjectReference`
    ///   for damage (a container that contains itself among them), `.limitExceeded` for a
    ///   limit of `options` or copies beyond 64 times the archive's size, `.unknownType` for
    ///   a class the registry lacks, and whatever an initializer throws.
    public convenience init(
        forReadingKeyedArchive data: Data,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws {
        try self.init(
            forReadingKeyedArchive: data,
            registry: registry,
            valueTypes: valueTypes,
            options: options,
            root: nil
        )
    }

    /// - Parameter root: Set by the one-call decodes: the type the root is asked for.
    convenience init(
        forReadingKeyedArchive data: Data,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type],
        options: Options,
        root: RootRequest?
    ) throws {
        // Read where `data` holds it, not copied: the keyed archive is transcoded before this
        // returns, and nothing transcoded refers back to its bytes.
        var memory = MemoryBudget(options)
        let native = try ArchiveBytes.lending(data) { (bytes) throws(GraphArchiveError) in
            try Self.transcode(bytes, registry: registry, valueTypes: valueTypes, options: options, memory: &memory)
        }
        try self.init(transcoded: native, registry: registry, options: options, root: root, memory: memory)
    }

    /// Opens the NSKeyedArchiver archive at `path`; see ``init(forReadingKeyedArchive:registry:valueTypes:options:)``.
    public convenience init(
        contentsOfKeyedArchiveFile path: String,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws {
        var memory = MemoryBudget(options)
        try self.init(
            keyedArchive: FileReader.readKeyedArchive(path, options: options, memory: &memory),
            registry: registry,
            valueTypes: valueTypes,
            options: options,
            memory: memory
        )
    }

    /// Opens `data` as whichever archive it is: a gridstore archive or an NSKeyedArchiver one
    /// (see ``ArchiveKind``).
    public convenience init(forReadingAnyArchive data: Data, registry: GraphTypeRegistry, options: Options = Options())
        throws
    {
        try self.init(anyArchive: ArchiveBytes(copying: data), registry: registry, options: options)
    }

    /// Opens the archive at `path`, a gridstore archive or an NSKeyedArchiver one, told apart
    /// by its first bytes and read through one open file.
    public convenience init(
        contentsOfAnyArchiveFile path: String,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws {
        try self.init(
            contentsOfAnyArchiveFile: path,
            registry: registry,
            valueTypes: valueTypes,
            options: options,
            root: nil
        )
    }

    /// - Parameter root: Set by the one-call decodes: the type the root is asked for.
    convenience init(
        contentsOfAnyArchiveFile path: String,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type],
        options: Options,
        root: RootRequest?
    ) throws {
        let file = try ArchiveFile(path: path, maximumBytes: options.maximumArchiveBytes)
        if try file.kind() == .keyedArchive {
            var memory = MemoryBudget(options)
            try self.init(
                keyedArchive: file.readPropertyList(maximumObjectCount: options.maximumObjectCount, memory: &memory),
                registry: registry,
                valueTypes: valueTypes,
                options: options,
                root: root,
                memory: memory
            )
        } else {
            try self.init(
                loaded: LoadedArchive.load(streaming: file, options: options),
                registry: registry,
                options: options,
                root: root
            )
        }
    }

    convenience init(
        keyedArchive bytes: ArchiveBytes,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type] = [],
        options: Options,
        root: RootRequest? = nil,
        memory: MemoryBudget? = nil
    ) throws {
        var memory = memory ?? MemoryBudget(options)
        let native = try Self.transcode(
            bytes,
            registry: registry,
            valueTypes: valueTypes,
            options: options,
            memory: &memory
        )
        try self.init(transcoded: native, registry: registry, options: options, root: root, memory: memory)
    }

    /// Keyed archive `bytes` as a native archive, with the registry's and `valueTypes`' names.
    private static func transcode(
        _ bytes: ArchiveBytes,
        registry: GraphTypeRegistry,
        valueTypes: [any GraphCoding.Type],
        options: Options,
        memory: inout MemoryBudget
    ) throws(GraphArchiveError) -> ArchiveOutput {
        try KeyedArchiveReader.transcode(
            bytes,
            registry: registry,
            valueTypeNames: names(of: valueTypes),
            options: options,
            isLoadedHere: true,
            memory: &memory
        )
    }

    /// Opens `native`, the archive the keyed reader just made.
    private convenience init(
        transcoded native: ArchiveOutput,
        registry: GraphTypeRegistry,
        options: Options,
        root: RootRequest?,
        memory: MemoryBudget
    ) throws {
        // Its payload checksum was computed while assembling it and is not computed again.
        let loaded = try LoadedArchive.load(
            ArchiveBytes(joiningInPlace: native.stored()),
            options: options,
            isOwnOutput: true,
            memory: memory
        )
        try self.init(loaded: loaded, registry: registry, options: options, root: root)
    }

    /// The archived names and aliases of the structs among `types`.
    private static func names(of types: [any GraphCoding.Type]) -> Set<String> {
        var names: Set<String> = []
        for type in types where !(type is AnyObject.Type) {
            names.insert(type.archivedTypeName)
            names.formUnion(type.archivedTypeAliases)
        }
        return names
    }

    convenience init(anyArchive bytes: ArchiveBytes, registry: GraphTypeRegistry, options: Options) throws {
        if ArchiveKind.detect(bytes) == .keyedArchive {
            try self.init(keyedArchive: bytes, registry: registry, options: options)
        } else {
            try self.init(bytes: bytes, registry: registry, options: options)
        }
    }

    // MARK: - One-call forms

    /// Decodes the root value (key "root", as `archiveRootObject(_:toFile:)` writes it) of
    /// NSKeyedArchiver archive `data` as `type`.
    ///
    /// `type`'s own classes are registered automatically under their archived names and
    /// aliases, and `type` itself is read as a value type if it is a ``GraphCoding`` struct;
    /// pass others, or other names, in `registry` and `valueTypes`.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        fromKeyedArchive data: Data,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws -> T {
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: data,
            registry: registry.including(T.self),
            valueTypes: valueTypes + rootValueType(T.self),
            options: options,
            root: RootRequest(T.self)
        )
        return try unarchiver.decodeRoot(T.self)
    }

    /// Decodes the root value of the NSKeyedArchiver archive at `path` as `type`: the typed,
    /// throwing `unarchiveObject(withFile:)` for archives an iOS app wrote.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        fromKeyedArchiveFile path: String,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws -> T {
        let unarchiver = try GraphUnarchiver(
            keyedArchive: FileReader.readKeyedArchive(path, options: options),
            registry: registry.including(T.self),
            valueTypes: valueTypes + rootValueType(T.self),
            options: options,
            root: RootRequest(T.self)
        )
        return try unarchiver.decodeRoot(T.self)
    }

    static func rootValueType<T>(_: T.Type) -> [any GraphCoding.Type] {
        (T.self as? any GraphCoding.Type).map { [$0] } ?? []
    }
}
