// Sources/GraphArchive/KeyedArchive/KeyedArchiveWriter.swift - any archive graph written as an NSKeyedArchiver archive
//
// Models encode once, through `encode(with:)`, into the engine's own format; this writes a
// graph (that archive, or any other, opened as an ``ArchiveGraph``) as the property list
// NSKeyedArchiver would have written for the same calls:
// - each object becomes one `$objects` dictionary of its keys plus `$class`, so an instance
//   referred to from several places is stored once and decodes as one instance;
// - integers, reals and booleans under a key are stored inline (what `encodeInteger(_:forKey:)`,
//   `encodeDouble`, `encodeBool` write and `decodeInteger(forKey:)` etc. read);
// - strings and data are `$objects` entries (NSString, NSData; equal ASCII strings stored
//   once), dates are NSDate, arrays NSMutableArray, dictionaries NSMutableDictionary, read with
//   `decodeObject(forKey:)`; numbers inside arrays and dictionaries are NSNumber entries;
// - structs (inline value records) become a fresh instance of their class at each use.
// A graph read from a keyed archive says how each value was stored there (``ValueForm``: by UID
// or in place, an NSMutableString, an NSSet's array in place, a 16-byte integer…) and which
// `$classes` each class had; those win over the defaults, so such an archive is written back as
// it was (FORMAT.md §12 carries them through a gridstore archive).

/// Writes one graph as a keyed archive, from visitor events: a class that forwards each event
/// to the ``KeyedArchiveBuilder`` it holds, reached with no run-time exclusivity check (see
/// ``UncheckedCell``; a class's stored `var`s would pay one on every access, several per value).
final class KeyedArchiveWriter: UncheckedCell<KeyedArchiveBuilder>, GraphObjectVisitor {
    /// The keyed archive (binary property list bytes) holding what gridstore archive `bytes` holds.
    ///
    /// - Parameters:
    ///   - classNames: keyed-archive class names by archived type name; a type not listed keeps
    ///     its archived name.
    ///   - superclasses: the archived names of each class's superclasses, nearest first, by
    ///     archived type name (also mapped through `classNames`); a class not listed, and not
    ///     listed by the graph either, has only NSObject above it.
    /// - Throws: What reading the native archive throws, and `.invalidValue` for what an
    ///   NSKeyedArchiver archive cannot hold (nil inside an array or dictionary).
    static func transcode(
        _ bytes: ArchiveBytes,
        classNames: [String: String],
        superclasses: [String: [String]] = [:],
        options: GraphUnarchiver.Options
    ) throws(GraphArchiveError) -> ByteWriter {
        try write(ArchiveGraph(bytes: bytes, options: options), classNames: classNames, superclasses: superclasses)
    }

    /// The keyed archive holding what the checked gridstore archive `loaded` holds; see
    /// ``transcode(_:classNames:options:)``.
    static func transcode(
        _ loaded: LoadedArchive,
        classNames: [String: String],
        superclasses: [String: [String]] = [:],
        options: GraphUnarchiver.Options
    ) throws(GraphArchiveError) -> ByteWriter {
        try write(ArchiveGraph(loaded: loaded, options: options), classNames: classNames, superclasses: superclasses)
    }

    /// The keyed archive holding what `graph` holds.
    static func write(
        _ graph: ArchiveGraph,
        classNames: [String: String],
        superclasses: [String: [String]] = [:]
    ) throws(GraphArchiveError) -> ByteWriter {
        var writer = KeyedArchiveWriter(
            KeyedArchiveBuilder(graph: graph, classNames: classNames, superclasses: superclasses)
        )
        var budget = graph.walkBudget()
        writer.value.beginTopLevel()
        for position in graph.topLevelKeys.indices { try graph.walkTopEntry(position, &writer, budget: &budget) }
        writer.value.endTopLevel()
        try graph.walkObjects(&writer, budget: &budget)
        return try writer.value.finish()
    }

    func beginObject(id: Int, classIndex: Int) { value.beginObject(id: id, classIndex: classIndex) }
    func endObject(storedBytes: Int) { value.endObject() }
    func field(_ key: String, keyID: Int) { value.field(key, keyID: keyID) }
    func null(_ form: ValueForm) throws(GraphArchiveError) { try value.null(form) }
    func bool(_ value: Bool, _ form: ValueForm) { self.value.bool(value, form) }
    func integer(_ value: Int64, _ form: ValueForm) { self.value.integer(value, form) }
    func unsignedInteger(_ value: UInt64, _ form: ValueForm) { self.value.unsignedInteger(value, form) }
    func integer128(high: Int64, low: UInt64, _ form: ValueForm) { value.integer128(high: high, low: low, form) }
    func float(_ value: Float, _ form: ValueForm) { self.value.float(value, form) }
    func double(_ value: Double, _ form: ValueForm) { self.value.double(value, form) }
    func string(_ value: String, _ form: ValueForm) { self.value.string(value, form) }
    func string(utf8 reader: ByteReader, count: Int, _ form: ValueForm) throws(GraphArchiveError) {
        try value.string(utf8: reader, count: count, form)
    }
    func data(_ value: [UInt8], _ form: ValueForm) { self.value.data(value, form) }
    func date(_ seconds: Double, _ form: ValueForm) { value.date(seconds, form) }
    func object(_ id: Int, _ form: ValueForm) { value.object(id, form) }
    func beginArray(count: Int, _ form: ValueForm) { value.beginArray(form) }
    func endArray() { value.endArray() }
    func beginDictionary(count: Int, _ form: ValueForm) { value.beginDictionary(form) }
    func endDictionary() { value.endDictionary() }
    func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) { value.beginRecord(typeName: typeName) }
    func endRecord() { value.endRecord() }
}

/// The state and the work of ``KeyedArchiveWriter``: the property list being built, where
/// each object went, and the containers open.
///
/// Every value is pushed on the property list writer's stack where it is finished; a container
/// (an object's, a record's or the top level's dictionary, an array, a dictionary) remembers
/// where its part of the stack starts and closes it from there.
struct KeyedArchiveBuilder: ~Copyable {
    /// An open container: what it is and where its references start on the stack.
    private struct Context {
        enum Kind { case fields, array, dictionary, record }
        var kind: Kind
        var start: Int
        var form = ValueForm.unspecified
        /// A record's `$objects` entry and type name.
        var uid = 0
        var typeName = ""
    }

    private var plist = BPlistWriter()
    private let classes: [ArchiveGraph.GraphClass]
    private let classNames: [String: String]
    /// The archived names of each class's archivable superclasses, nearest first, by archived
    /// type name (what the archiver saw of the class hierarchy).
    private let superclasses: [String: [String]]
    /// The `$classes` list of each class name the graph knows (nil: the class lists none).
    private let listedChains: [String: [String]?]
    /// `$objects`: the property list object of each UID; `unfinished` until an entry is
    /// finished. (4 bytes an entry: `BPlistWriter` numbers fewer than 2^32 objects.)
    private var entries: [UInt32]
    /// Per object id: its UID.
    private var objectUIDs: [Int32]
    /// The UID of each scalar already in `$objects`, by property list object, plus 1; 0 for
    /// none.
    private var scalarUIDs: [UInt32] = []
    /// The UID of each class definition, by class name.
    private var classUIDs: [String: Int] = [:]
    /// The UID object of each graph class's definition, by class index, or -1 until first used.
    private var classReferences: [Int]
    /// The property list string of each key, by the source's key id, or -1.
    private var keyStrings: [Int] = []
    private var classKey = -1
    private var contexts: [Context] = []
    /// Whether the innermost open container keeps values under keys (else it is an array or
    /// a dictionary).
    private var isInField = true
    private var currentObject = (uid: 0, classIndex: 0)
    private var topLevel = 0

    /// Foundation's classes as NSKeyedArchiver lists them, for the instances written here.
    private static let foundationChains: [String: [String]] = [
        "NSArray": ["NSArray", "NSObject"], "NSMutableArray": ["NSMutableArray", "NSArray", "NSObject"],
        "NSDictionary": ["NSDictionary", "NSObject"],
        "NSMutableDictionary": ["NSMutableDictionary", "NSDictionary", "NSObject"],
        "NSString": ["NSString", "NSObject"], "NSMutableString": ["NSMutableString", "NSString", "NSObject"],
        "NSData": ["NSData", "NSObject"], "NSMutableData": ["NSMutableData", "NSData", "NSObject"],
        "NSDate": ["NSDate", "NSObject"], "NSNull": ["NSNull", "NSObject"],
    ]

    init(graph: ArchiveGraph, classNames: [String: String], superclasses: [String: [String]]) {
        classes = graph.classes
        self.classNames = classNames
        self.superclasses = superclasses
        var chains: [String: [String]?] = [:]
        for graphClass in graph.classes {
            if let listed = graphClass.listedClasses { chains[graphClass.name] = listed }
        }
        listedChains = chains
        classReferences = Array(repeating: -1, count: graph.classes.count)
        objectUIDs = Array(repeating: -1, count: graph.objectIDLimit)
        // Reserved for the records the graph has, as far as its size vouches for them (a
        // record takes a few bytes): the `$objects` entries (the objects, a string or two of
        // each), the property list's objects and its strings (about twice the graph's bytes).
        let records = min(graph.objectCount, graph.archiveBytes / 8)
        entries = [Self.unfinished]
        entries.reserveCapacity(1 + graph.objectCount + 2 * records)
        for (position, id) in graph.objectIDs.enumerated() {
            objectUIDs[id] = Int32(truncatingIfNeeded: 1 + position)
            entries.append(Self.unfinished)
        }
        plist.reserve(records: records, bytes: 2 * graph.archiveBytes)
        scalarUIDs.reserveCapacity(8 * records)
        entries[0] = Self.entry(plist.string("$null"))
        classKey = plist.string(KeyedKey.names[KeyedKey.classReference])
    }

    /// Opens the `$top` dictionary, before the top-level entries are walked.
    mutating func beginTopLevel() {
        openContext(Context(kind: .fields, start: plist.stackPosition))
    }

    /// Closes the `$top` dictionary.
    mutating func endTopLevel() {
        topLevel = plist.closeDictionary(from: closeContext().start)
    }

    /// An entry of `entries` not yet finished.
    private static let unfinished = UInt32.max

    /// Property list object `object` as an entry of `entries`.
    @inline(__always)
    private static func entry(_ object: Int) -> UInt32 { UInt32(truncatingIfNeeded: object) }

    /// The finished property list: `$version`, `$archiver`, `$top` and `$objects`.
    ///
    /// - Throws: What ``BPlistWriter/finish(top:)`` throws.
    mutating func finish() throws(GraphArchiveError) -> ByteWriter {
        let objects = plist.array(entries)
        let root = plist.stackPosition
        plist.push(plist.string("$version"))
        plist.push(plist.integer(Int64(KeyedArchiveIndex.version)))
        plist.push(plist.string("$archiver"))
        plist.push(plist.string(KeyedArchiveIndex.archiverName))
        plist.push(plist.string("$top"))
        plist.push(topLevel)
        plist.push(plist.string("$objects"))
        plist.push(objects)
        let rootObject = plist.closeDictionary(from: root)
        var finished = BPlistWriter()
        swap(&finished, &plist)
        return try finished.finish(top: rootObject)
    }

    private mutating func openContext(_ context: Context) {
        contexts.append(context)
        isInField = context.kind == .fields || context.kind == .record
    }

    private mutating func closeContext() -> Context {
        let context = contexts.removeLast()
        let outer = contexts.last?.kind ?? .fields
        isInField = outer == .fields || outer == .record
        return context
    }

    // MARK: - Objects and fields

    mutating func beginObject(id: Int, classIndex: Int) {
        currentObject = (Int(objectUIDs[id]), classIndex)
        openContext(Context(kind: .fields, start: plist.stackPosition))
    }

    mutating func endObject() {
        let start = closeContext().start
        plist.push(classKey)
        plist.push(classReference(currentObject.classIndex))
        entries[currentObject.uid] = Self.entry(plist.closeDictionary(from: start))
    }

    /// The UID object of graph class `classIndex`'s definition, written on first use.
    private mutating func classReference(_ classIndex: Int) -> Int {
        if classReferences[classIndex] >= 0 { return classReferences[classIndex] }
        let name = classes[classIndex].name
        let reference = plist.uid(classDefinition(classNames[name] ?? name, originalName: name))
        classReferences[classIndex] = reference
        return reference
    }

    mutating func field(_ key: String, keyID: Int) {
        if keyID >= 0 {
            if keyID >= keyStrings.count {
                keyStrings.append(contentsOf: repeatElement(-1, count: keyID + 1 - keyStrings.count))
            }
            if keyStrings[keyID] < 0 { keyStrings[keyID] = plist.string(key) }
            plist.push(keyStrings[keyID])
        } else {
            plist.push(plist.string(key))
        }
    }

    /// The UID of the class definition for `name` (`originalName` before `classNames`), written
    /// on first use: its `$classes` as the graph lists them, else Foundation's for its classes,
    /// else the class then NSObject.
    private mutating func classDefinition(_ name: String, originalName: String) -> Int {
        if let known = classUIDs[name] { return known }
        if let listed = listedChains[originalName] {
            return classDefinition(name, classes: listed)
        }
        return classDefinition(name, classes: Self.foundationChains[name] ?? [name] + superclasses(of: originalName))
    }

    /// The superclasses written for a class the graph lists none for: those the archiver saw,
    /// then NSObject.
    private func superclasses(of name: String) -> [String] {
        (superclasses[name] ?? []).map { classNames[$0] ?? $0 } + ["NSObject"]
    }

    /// Writes a class definition entry: `$classname`, and `$classes` when `classes` is given.
    private mutating func classDefinition(_ name: String, classes: [String]?) -> Int {
        let uid = reserveEntry()
        let start = plist.stackPosition
        if let classes {
            let list = plist.stackPosition
            for name in classes { plist.push(plist.string(name)) }
            let hierarchy = plist.closeArray(from: list)
            plist.push(plist.string(KeyedKey.names[KeyedKey.classes]))
            plist.push(hierarchy)
        }
        plist.push(plist.string(KeyedKey.names[KeyedKey.className]))
        plist.push(plist.string(name))
        entries[uid] = Self.entry(plist.closeDictionary(from: start))
        classUIDs[name] = uid
        return uid
    }

    private mutating func reserveEntry() -> Int {
        entries.append(Self.unfinished)
        return entries.count - 1
    }

    // MARK: - Values

    /// A scalar (`object`, a property list object made for it) stored as `form` says, or as
    /// NSKeyedArchiver stores a `kind` there by default.
    private mutating func addScalar(_ object: Int, _ kind: ValueKind, _ form: ValueForm) {
        // Most values come with no form (all of an archive written here): NSKeyedArchiver's
        // defaults for a string, data or number, decided without building them.
        if case .unspecified = form.instance, form.storage == .unspecified, kind != .date {
            plist.push(isInField && kind == .number ? object : plist.uid(scalarEntry(object)))
            return
        }
        let stored = form.filled(from: .keyedDefault(for: kind, inField: isInField))
        if case .instance(let className) = stored.instance {
            // An instance of a Foundation value class: its one member in place.
            let member: Int
            switch kind {
            case .string: member = KeyedKey.string
            case .data: member = KeyedKey.data
            default: member = KeyedKey.time
            }
            plist.push(instance(className, members: [(plist.string(KeyedKey.names[member]), object)]))
        } else if stored.storage == .inline {
            plist.push(object)
        } else {
            plist.push(plist.uid(scalarEntry(object)))
        }
    }

    /// A new `$objects` dictionary of class `className` with `members`; its UID object.
    private mutating func instance(_ className: String, members: [(key: Int, value: Int)]) -> Int {
        let definition = classDefinition(className, originalName: className)
        let uid = reserveEntry()
        let start = plist.stackPosition
        for member in members {
            plist.push(member.key)
            plist.push(member.value)
        }
        plist.push(classKey)
        plist.push(plist.uid(definition))
        entries[uid] = Self.entry(plist.closeDictionary(from: start))
        return plist.uid(uid)
    }

    private mutating func scalarEntry(_ object: Int) -> Int {
        if object < scalarUIDs.count && scalarUIDs[object] != 0 { return Int(scalarUIDs[object]) - 1 }
        let uid = reserveEntry()
        entries[uid] = Self.entry(object)
        if object >= scalarUIDs.count {
            scalarUIDs.append(contentsOf: repeatElement(0, count: object + 1 - scalarUIDs.count))
        }
        scalarUIDs[object] = UInt32(truncatingIfNeeded: uid + 1)
        return uid
    }

    mutating func null(_ form: ValueForm) throws(GraphArchiveError) {
        if case .instance(let className) = form.instance {
            plist.push(instance(className, members: []))
        } else if isInField {
            plist.push(plist.uid(0))
        } else {
            throw GraphArchiveError(
                .invalidValue,
                "an array or dictionary holds nil, which NSArray and NSDictionary cannot hold"
            )
        }
    }

    mutating func bool(_ value: Bool, _ form: ValueForm) { addScalar(plist.bool(value), .number, form) }
    mutating func integer(_ value: Int64, _ form: ValueForm) { addScalar(plist.integer(value), .number, form) }
    mutating func unsignedInteger(_ value: UInt64, _ form: ValueForm) {
        addScalar(plist.unsigned(value), .number, form)
    }
    mutating func integer128(high: Int64, low: UInt64, _ form: ValueForm) {
        addScalar(plist.integer128(high: high, low: low), .number, form)
    }
    mutating func float(_ value: Float, _ form: ValueForm) { addScalar(plist.float(value), .number, form) }
    mutating func double(_ value: Double, _ form: ValueForm) { addScalar(plist.double(value), .number, form) }
    mutating func string(_ value: String, _ form: ValueForm) { addScalar(plist.string(value), .string, form) }
    /// A string read from an archive: its bytes copied as they are when they are ASCII.
    mutating func string(utf8 reader: ByteReader, count: Int, _ form: ValueForm) throws(GraphArchiveError) {
        if let object = plist.asciiString(reader, count: count) {
            addScalar(object, .string, form)
        } else {
            var reader = reader
            string(try reader.readString(count: count), form)
        }
    }

    mutating func data(_ value: [UInt8], _ form: ValueForm) { addScalar(plist.data(value), .data, form) }

    mutating func date(_ seconds: Double, _ form: ValueForm) {
        let stored = form.filled(from: .keyedDefault(for: .date, inField: isInField))
        if case .instance = stored.instance {
            addScalar(plist.double(seconds), .date, stored)
        } else {
            // A plain property list date (CF writes none in keyed archives; kept if read).
            addScalar(plist.date(seconds), .string, ValueForm(storage: stored.storage, instance: .plain))
        }
    }

    mutating func object(_ id: Int, _ form: ValueForm) {
        plist.push(plist.uid(Int(objectUIDs[id])))
    }

    mutating func beginArray(_ form: ValueForm) {
        let stored = form.filled(from: .keyedDefault(for: .array, inField: isInField))
        openContext(Context(kind: .array, start: plist.stackPosition, form: stored))
    }

    mutating func endArray() {
        let context = closeContext()
        let array = plist.closeArray(from: context.start)
        if case .instance(let className) = context.form.instance {
            plist.push(instance(className, members: [(plist.string(KeyedKey.names[KeyedKey.objects]), array)]))
        } else {
            plist.push(context.form.storage == .inline ? array : plist.uid(scalarEntry(array)))
        }
    }

    mutating func beginDictionary(_ form: ValueForm) {
        let stored = form.filled(from: .keyedDefault(for: .dictionary, inField: isInField))
        openContext(Context(kind: .dictionary, start: plist.stackPosition, form: stored))
    }

    mutating func endDictionary() {
        let context = closeContext()
        if case .instance(let className) = context.form.instance {
            // Keys and values alternate on the stack: taken off, then listed apart.
            let entries = plist.popReferences(from: context.start)
            let keys = stride(from: 0, to: entries.count, by: 2).map { entries[$0] }
            let values = stride(from: 1, to: entries.count, by: 2).map { entries[$0] }
            plist.push(
                instance(
                    className,
                    members: [
                        (plist.string(KeyedKey.names[KeyedKey.keys]), list(keys)),
                        (plist.string(KeyedKey.names[KeyedKey.objects]), list(values)),
                    ]
                )
            )
            return
        }
        // A property list dictionary in place.
        let dictionary = plist.closeDictionary(from: context.start)
        plist.push(context.form.storage == .inline ? dictionary : plist.uid(scalarEntry(dictionary)))
    }

    /// A property list array of `elements`.
    private mutating func list(_ elements: [Int]) -> Int {
        let start = plist.stackPosition
        for element in elements { plist.push(element) }
        return plist.closeArray(from: start)
    }

    mutating func beginRecord(typeName: String) {
        openContext(Context(kind: .record, start: plist.stackPosition, uid: reserveEntry(), typeName: typeName))
    }

    mutating func endRecord() {
        let context = closeContext()
        let typeName = context.typeName
        plist.push(classKey)
        plist.push(plist.uid(classDefinition(classNames[typeName] ?? typeName, originalName: typeName)))
        entries[context.uid] = Self.entry(plist.closeDictionary(from: context.start))
        plist.push(plist.uid(context.uid))
    }
}
