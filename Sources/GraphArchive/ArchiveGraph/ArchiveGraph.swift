// Sources/GraphArchive/ArchiveGraph/ArchiveGraph.swift - any archive, opened without its model types

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An archive opened with no model types and no registry: its top-level keys and values, and
/// every object with its class and fields, typed but schema-less.
///
/// It opens gridstore archives (raw or zstd) and Apple `NSKeyedArchiver` archives (binary and
/// XML property lists) alike, so that an archive written by another program, by an older
/// version of one's models, or by an iOS app can be looked into, printed or converted.
///
/// ```swift
/// let graph = try ArchiveGraph(contentsOfFile: "state.plist")
/// for key in graph.topLevelKeys {
///     print(key, try graph.topLevelValue(forKey: key) ?? .null)
/// }
/// try graph.forEachObject { object in
///     print("#\(object.id) \(object.className)", object.fields.map(\.key))
/// }
/// ```
///
/// Objects keep their identity: each is listed once, under an id (its `$objects` index, the
/// UID, in a keyed archive; its object table index in a gridstore archive), and values refer
/// to it by that id (``ArchiveValue/object(_:)``), so sharing and cycles show. Foundation's
/// value classes (NSString, NSMutableString, NSNumber, NSData, NSDate, NSNull) read as values;
/// an NSArray or NSDictionary (mutable or not) read from one place only reads as an array or a
/// dictionary there, one referred to from several places stays one object. Any other class,
/// known or not (NSSet, NSURL, an app's `MyApp.Note`), is an object with its fields.
///
/// Opening checks what every reader checks (a gridstore archive's header, checksums and
/// tables; a keyed archive's property list and envelope) and, for a keyed archive, classifies
/// its entries in one pass. Values are read when they are asked for, so a million objects are
/// never values at once. Reads obey ``GraphUnarchiver/Options``; values a keyed archive shares
/// may be walked up to 64 times its size in one call before it is refused (`.limitExceeded`),
/// as the typed reader's copies are.
///
/// An `ArchiveGraph` caches what it has read; use it from one thread at a time.
public final class ArchiveGraph {
    /// The archive formats a graph is read from.
    public enum Format: String, Sendable, Hashable {
        /// A gridstore archive.
        case gridstore
        /// An `NSKeyedArchiver` archive (a binary or XML property list).
        case keyedArchive = "keyed-archive"
    }

    /// A class objects belong to.
    struct GraphClass {
        var name: String
        /// The class and its superclasses (the name alone where none is recorded).
        var chain: [String]
        /// What the archive says of them: a keyed class entry's `$classes`, or that it has
        /// none (also kept by a converted archive, FORMAT.md §12); nil where it says nothing.
        var listedClasses: [String]??
    }

    enum Source {
        case native(NativeGraphSource)
        case keyed(KeyedGraphSource)
        /// What `source` holds while its value is taken out to be changed, so that changing it
        /// copies nothing (the enum would otherwise hold a second reference to its arrays).
        case moving
    }

    public let format: Format
    /// Size of the archive as given (the file, or the data), in bytes.
    public let archiveBytes: Int
    let options: GraphUnarchiver.Options
    private(set) var source: Source
    /// Classes by index: the type table's types of a gridstore archive, the class definitions
    /// of a keyed archive.
    let classes: [GraphClass]

    /// Opens archive `data`, gridstore or keyed, told apart by its first bytes.
    ///
    /// - Throws: ``GraphArchiveError``: `.badMagic` for data that is neither, and what reading
    ///   either format throws for damage or limits.
    public convenience init(data: Data, options: GraphUnarchiver.Options = .init()) throws {
        try self.init(bytes: ArchiveBytes(copying: data), options: options)
    }

    /// Opens the archive at `path`; see ``init(data:options:)``.
    public convenience init(contentsOfFile path: String, options: GraphUnarchiver.Options = .init()) throws {
        let file = try ArchiveFile(path: path, maximumBytes: options.maximumArchiveBytes)
        if try file.kind() == .keyedArchive {
            // The trailer first, and the file's bytes charged to the memory budget.
            var memory = MemoryBudget(options)
            try self.init(
                bytes: file.readPropertyList(maximumObjectCount: options.maximumObjectCount, memory: &memory),
                options: options
            )
        } else {
            // A compressed archive is decompressed from the file, never held twice.
            try self.init(loaded: LoadedArchive.load(file: path, options: options), options: options)
        }
    }

    convenience init(bytes: ArchiveBytes, options: GraphUnarchiver.Options) throws(GraphArchiveError) {
        guard bytes.count <= options.maximumArchiveBytes else {
            throw GraphArchiveError(
                .limitExceeded,
                "archive of \(bytes.count) bytes exceeds maximumArchiveBytes (\(options.maximumArchiveBytes))"
            )
        }
        if ArchiveKind.detect(bytes) == .keyedArchive {
            self.init(
                source: .keyed(try KeyedGraphSource(bytes: bytes, options: options)),
                archiveBytes: bytes.count,
                options: options
            )
        } else {
            try self.init(loaded: LoadedArchive.load(bytes, options: options), options: options)
        }
    }

    /// The gridstore archive `loaded`, already checked.
    convenience init(loaded: LoadedArchive, options: GraphUnarchiver.Options) throws(GraphArchiveError) {
        let native = try NativeGraphSource(loaded: loaded, options: options)
        self.init(source: .native(native), archiveBytes: loaded.archiveBytes, options: options)
    }

    private init(source: Source, archiveBytes: Int, options: GraphUnarchiver.Options) {
        self.options = options
        self.archiveBytes = archiveBytes
        switch source {
        case .keyed(let keyed):
            format = .keyedArchive
            classes = keyed.classes.map {
                GraphClass(name: $0.name, chain: $0.chain ?? [$0.name], listedClasses: .some($0.chain))
            }
        case .native(let native):
            format = .gridstore
            classes = native.tables.typeNames.map { name in
                let listed = native.notes.classChains[name]
                return GraphClass(name: name, chain: (listed ?? nil) ?? [name], listedClasses: listed)
            }
        case .moving:
            format = .gridstore
            classes = []
        }
        self.source = source
    }

    // MARK: - Top level

    /// The top-level keys, in stored order (for an archive written by `archiveRootObject`,
    /// `["root"]`).
    public var topLevelKeys: [String] {
        switch source {
        case .native(let native): native.topEntries.map { native.tables.keys[$0.keyID] }
        case .keyed(let keyed): keyed.topEntries.map(\.key)
        case .moving: []
        }
    }

    /// The value under top-level `key`, or nil if there is no such key.
    ///
    /// - Throws: ``GraphArchiveError`` for damage found while reading it.
    public func topLevelValue(forKey key: String) throws -> ArchiveValue? {
        guard let position = topLevelKeys.firstIndex(of: key) else { return nil }
        var builder = ValueBuilder()
        var budget = walkBudget()
        try walkTopEntry(position, &builder, budget: &budget)
        return builder.singleValue
    }

    /// Every top-level key and value, in stored order.
    public func topLevelFields() throws -> [ArchiveField] {
        var builder = ValueBuilder()
        var budget = walkBudget()
        for position in topLevelKeys.indices { try walkTopEntry(position, &builder, budget: &budget) }
        return builder.fields
    }

    // MARK: - Objects

    /// How many objects the graph has.
    public var objectCount: Int {
        switch source {
        case .native(let native): native.objectCount
        case .keyed(let keyed): keyed.objectIDs.count
        case .moving: 0
        }
    }

    /// The objects' ids, in stored order.
    public var objectIDs: [Int] {
        switch source {
        case .native(let native): Array(0..<native.objectCount)
        case .keyed(let keyed): keyed.objectIDs.map(Int.init)
        case .moving: []
        }
    }

    /// The index in ``classes`` of object `id`'s class.
    func classIndex(ofObject id: Int) throws(GraphArchiveError) -> Int {
        if case .keyed(let keyed) = source {
            guard keyed.isObject(id) else { throw noObject(id) }
            return keyed.classIndex(of: id)
        }
        return try withNativeRecord(id) { (native, shape, _) throws(GraphArchiveError) in native.tables.shapeType[shape]
        }
    }

    /// Calls `body` with the native source, object `id`'s shape and a reader at its values.
    private func withNativeRecord<Result>(
        _ id: Int,
        _ body: (NativeGraphSource, Int, inout ByteReader) throws(GraphArchiveError) -> Result
    ) throws(GraphArchiveError) -> Result {
        guard case .native(var native) = source else { throw Self.reentered() }
        guard id >= 0 && id < native.objectCount else { throw noObject(id) }
        source = .moving
        defer { source = .native(native) }
        try native.indexObjects()
        var (shape, reader) = try native.record(at: native.recordOffset(id))
        return try body(native, shape, &reader)
    }

    /// Object `id`, its fields read now.
    ///
    /// - Throws: ``GraphArchiveError`` `.badObjectReference` if the graph has no object `id`,
    ///   and what reading it throws.
    public func object(withID id: Int) throws -> ArchiveObject {
        var builder = ValueBuilder()
        var budget = walkBudget()
        let classIndex = try walkObject(id, &builder, budget: &budget)
        let graphClass = classes[classIndex]
        return ArchiveObject(id: id, className: graphClass.name, classChain: graphClass.chain, fields: builder.fields)
    }

    /// Calls `body` with every object in stored order, each read when its turn comes.
    public func forEachObject(_ body: (ArchiveObject) throws -> Void) throws {
        try withoutActuallyEscaping(body) { body in
            let classes = self.classes
            var builder = ValueBuilder()
            builder.objectHandler = { id, classIndex, fields in
                try body(
                    ArchiveObject(
                        id: id,
                        className: classes[classIndex].name,
                        classChain: classes[classIndex].chain,
                        fields: fields
                    )
                )
            }
            var budget = walkBudget()
            do {
                try walkObjects(&builder, budget: &budget)
            } catch {
                throw builder.handlerError ?? error
            }
        }
    }

    // MARK: - Walking (for visitors)

    /// A budget for one walk (see ``ExpansionBudget``).
    func walkBudget() -> ExpansionBudget {
        switch source {
        case .keyed(let keyed): ExpansionBudget(inputBytes: keyed.inputBytes)
        default: .unlimited
        }
    }

    /// Walks top-level entry `position`: its key and its value.
    func walkTopEntry<V: GraphVisitor>(_ position: Int, _ visitor: inout V, budget: inout ExpansionBudget)
        throws(GraphArchiveError)
    {
        switch source {
        case .native(let native):
            try native.visitTopEntry(position, &visitor)
        case .keyed(var keyed):
            source = .moving
            defer { source = .keyed(keyed) }
            try keyed.visitTopEntry(position, &visitor, budget: &budget)
        case .moving:
            throw Self.reentered()
        }
    }

    /// Walks object `id`'s fields; returns its class index.
    @discardableResult
    func walkObject<V: GraphVisitor>(_ id: Int, _ visitor: inout V, budget: inout ExpansionBudget)
        throws(GraphArchiveError) -> Int
    {
        switch source {
        case .native:
            return try withNativeRecord(id) { (native, shape, reader) throws(GraphArchiveError) in
                try native.visitFields(of: id, shape: shape, reader: &reader, &visitor)
                return native.tables.shapeType[shape]
            }
        case .keyed(var keyed):
            guard keyed.isObject(id) else { throw noObject(id) }
            source = .moving
            defer { source = .keyed(keyed) }
            try keyed.visitFields(of: id, &visitor, budget: &budget)
            return keyed.classIndex(of: id)
        case .moving:
            throw Self.reentered()
        }
    }

    /// Walks every object in stored order: `beginObject`, its fields, `endObject`.
    func walkObjects<V: GraphObjectVisitor>(_ visitor: inout V, budget: inout ExpansionBudget)
        throws(GraphArchiveError)
    {
        switch source {
        case .native(let native):
            try native.visitObjects(&visitor)
        case .keyed(var keyed):
            source = .moving
            defer { source = .keyed(keyed) }
            for id in keyed.objectIDs {
                let uid = Int(id)
                try visitor.beginObject(id: uid, classIndex: keyed.classIndex(of: uid))
                try keyed.visitFields(of: uid, &visitor, budget: &budget)
                try visitor.endObject(storedBytes: keyed.storedBytes(of: uid))
            }
        case .moving:
            throw Self.reentered()
        }
    }

    /// A visitor asked the graph for values while it walked it.
    private static func reentered() -> GraphArchiveError {
        GraphArchiveError(.invalidState, "the archive graph was used from inside one of its own walks")
    }

    private func noObject(_ id: Int) -> GraphArchiveError {
        GraphArchiveError(.badObjectReference, "the archive has no object #\(id)")
    }

}

/// A visitor that also hears where each object of a walk over all objects begins and ends.
protocol GraphObjectVisitor: GraphVisitor {
    mutating func beginObject(id: Int, classIndex: Int) throws(GraphArchiveError)
    /// `storedBytes`: the size of the object's record as stored (see ``ArchiveSummary/ClassCount/bytes``).
    mutating func endObject(storedBytes: Int) throws(GraphArchiveError)
}
