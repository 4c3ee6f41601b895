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

/// Writes one graph as a keyed archive, from visitor events. (A class: it holds the
/// noncopyable property list writer.)
final class KeyedArchiveWriter: GraphObjectVisitor {
    /// Where values go: an object's, a record's or the top level's dictionary (keys and values
    /// on the property list writer's stack), or an array's or dictionary's elements.
    private enum Context {
        case fields(start: Int)
        case array(elements: [Int], form: ValueForm)
        case dictionary(keys: [Int], values: [Int], form: ValueForm)
        case record(start: Int, uid: Int, className: String)
    }

    private var plist = BPlistWriter()
    private let classes: [ArchiveGraph.GraphClass]
    private let classNames: [String: String]
    /// The archived names of each class's archivable superclasses, nearest first, by archived
    /// type name (what the archiver saw of the class hierarchy).
    private let superclasses: [String: [String]]
    /// The `$classes` list of each class name the graph knows (nil: the class lists none).
    private let listedChains: [String: [String]?]
    /// `$objects`: the property list object of each UID; -1 until an entry is finished.
    private var entries: [Int]
    /// Per object id: its UID.
    private var objectUIDs: [Int32]
    /// The UID of each scalar already in `$objects`, by property list object, or -1.
    private var scalarUIDs: [Int] = []
    /// The UID of each class definition, by class name.
    private var classUIDs: [String: Int] = [:]
    /// The property list string of each key, by the source's key id, or -1.
    private var keyStrings: [Int] = []
    private var classKey = -1
    private var contexts: [Context] = []
    private var currentObject = (uid: 0, classIndex: 0)

    /// Foundation's classes as NSKeyedArchiver lists them, for the instances written here.
    private static let foundationChains: [String: [String]] = [
        "NSArray": ["NSArray", "NSObject"], "NSMutableArray": ["NSMutableArray", "NSArray", "NSObject"],
        "NSDictionary": ["NSDictionary", "NSObject"],
        "NSMutableDictionary": ["NSMutableDictionary", "NSDictionary", "NSObject"],
        "NSString": ["NSString", "NSObject"], "NSMutableString": ["NSMutableString", "NSString", "NSObject"],
        "NSData": ["NSData", "NSObject"], "NSMutableData": ["NSMutableData", "NSData", "NSObject"],
        "NSDate": ["NSDate", "NSObject"], "NSNull": ["NSNull", "NSObject"],
    ]

    private init(graph: ArchiveGraph, classNames: [String: String], superclasses: [String: [String]]) {
        classes = graph.classes
        self.classNames = classNames
        self.superclasses = superclasses
        var chains: [String: [String]?] = [:]
        for graphClass in graph.classes {
            if let listed = graphClass.listedClasses { chains[graphClass.name] = listed }
        }
        listedChains = chains
        objectUIDs = Array(repeating: -1, count: graph.objectIDLimit)
        entries = [-1]
        for (position, id) in graph.objectIDs.enumerated() {
            objectUIDs[id] = Int32(truncatingIfNeeded: 1 + position)
            entries.append(-1)
        }
        // Records hold a string or number or two each, most of them distinct: a guess, kept to
        // a share of the archive's size so that a large object count cannot make it large.
        plist.reserveScalars(min(2 * graph.objectCount, graph.archiveBytes / 16))
    }

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
        try KeyedArchiveWriter(graph: graph, classNames: classNames, superclasses: superclasses).write(graph)
    }

    private func write(_ graph: ArchiveGraph) throws(GraphArchiveError) -> ByteWriter {
        var visitor = self
        entries[0] = plist.string("$null")
        classKey = plist.string(KeyedKey.names[KeyedKey.classReference])
        var budget = graph.walkBudget()
        let topStart = plist.stackPosition
        contexts = [.fields(start: topStart)]
        for position in graph.topLevelKeys.indices { try graph.walkTopEntry(position, &visitor, budget: &budget) }
        let top = plist.closeDictionary(from: topStart)
        try graph.walkObjects(&visitor, budget: &budget)
        let start = plist.stackPosition
        for entry in entries { plist.push(entry) }
        let objects = plist.closeArray(from: start)
        let root = plist.stackPosition
        plist.push(plist.string("$version"))
        plist.push(plist.integer(Int64(KeyedArchiveIndex.version)))
        plist.push(plist.string("$archiver"))
        plist.push(plist.string(KeyedArchiveIndex.archiverName))
        plist.push(plist.string("$top"))
        plist.push(top)
        plist.push(plist.string("$objects"))
        plist.push(objects)
        let rootObject = plist.closeDictionary(from: root)
        var finished = BPlistWriter()
        swap(&finished, &plist)
        return finished.finish(top: rootObject)
    }

    // MARK: - Objects and fields

    func beginObject(id: Int, classIndex: Int) {
        currentObject = (Int(objectUIDs[id]), classIndex)
        contexts = [.fields(start: plist.stackPosition)]
    }

    func endObject(storedBytes: Int) {
        guard case .fields(let start) = contexts.removeLast() else { return }
        let name = classes[currentObject.classIndex].name
        plist.push(classKey)
        plist.push(plist.uid(classDefinition(classNames[name] ?? name, originalName: name)))
        entries[currentObject.uid] = plist.closeDictionary(from: start)
    }

    func field(_ key: String, keyID: Int) {
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
    private func classDefinition(_ name: String, originalName: String) -> Int {
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
    private func classDefinition(_ name: String, classes: [String]?) -> Int {
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
        entries[uid] = plist.closeDictionary(from: start)
        classUIDs[name] = uid
        return uid
    }

    private func reserveEntry() -> Int {
        entries.append(-1)
        return entries.count - 1
    }

    // MARK: - Values

    /// Whether the value being written goes under a key (else into a container).
    private var isInField: Bool {
        switch contexts.last {
        case .fields, .record: true
        default: false
        }
    }

    /// Hands a finished value's property list object to where it goes.
    private func add(_ value: Int) {
        switch contexts.removeLast() {
        case .fields(let start):
            plist.push(value)
            contexts.append(.fields(start: start))
        case .record(let start, let uid, let className):
            plist.push(value)
            contexts.append(.record(start: start, uid: uid, className: className))
        case .array(var elements, let form):
            elements.append(value)
            contexts.append(.array(elements: elements, form: form))
        case .dictionary(var keys, var values, let form):
            if keys.count == values.count { keys.append(value) } else { values.append(value) }
            contexts.append(.dictionary(keys: keys, values: values, form: form))
        }
    }

    /// A scalar (`object`, a property list object made for it) stored as `form` says, or as
    /// NSKeyedArchiver stores a `kind` there by default.
    private func addScalar(_ object: Int, _ kind: ValueKind, _ form: ValueForm) {
        let stored = form.filled(from: .keyedDefault(for: kind, inField: isInField))
        if case .instance(let className) = stored.instance {
            // An instance of a Foundation value class: its one member in place.
            let member: Int
            switch kind {
            case .string: member = KeyedKey.string
            case .data: member = KeyedKey.data
            default: member = KeyedKey.time
            }
            add(instance(className, members: [(plist.string(KeyedKey.names[member]), object)]))
        } else if stored.storage == .inline {
            add(object)
        } else {
            add(plist.uid(scalarEntry(object)))
        }
    }

    /// A new `$objects` dictionary of class `className` with `members`; its UID object.
    private func instance(_ className: String, members: [(key: Int, value: Int)]) -> Int {
        let definition = classDefinition(className, originalName: className)
        let uid = reserveEntry()
        let start = plist.stackPosition
        for member in members {
            plist.push(member.key)
            plist.push(member.value)
        }
        plist.push(classKey)
        plist.push(plist.uid(definition))
        entries[uid] = plist.closeDictionary(from: start)
        return plist.uid(uid)
    }

    private func scalarEntry(_ object: Int) -> Int {
        if object < scalarUIDs.count && scalarUIDs[object] >= 0 { return scalarUIDs[object] }
        let uid = reserveEntry()
        entries[uid] = object
        if object >= scalarUIDs.count {
            scalarUIDs.append(contentsOf: repeatElement(-1, count: object + 1 - scalarUIDs.count))
        }
        scalarUIDs[object] = uid
        return uid
    }

    func null(_ form: ValueForm) throws(GraphArchiveError) {
        if case .instance(let className) = form.instance {
            add(instance(className, members: []))
        } else if isInField {
            add(plist.uid(0))
        } else {
            throw GraphArchiveError(
                .invalidValue,
                "an array or dictionary holds nil, which NSArray and NSDictionary cannot hold"
            )
        }
    }

    func bool(_ value: Bool, _ form: ValueForm) { addScalar(plist.bool(value), .number, form) }
    func integer(_ value: Int64, _ form: ValueForm) { addScalar(plist.integer(value), .number, form) }
    func unsignedInteger(_ value: UInt64, _ form: ValueForm) { addScalar(plist.unsigned(value), .number, form) }
    func integer128(high: Int64, low: UInt64, _ form: ValueForm) {
        addScalar(plist.integer128(high: high, low: low), .number, form)
    }
    func float(_ value: Float, _ form: ValueForm) { addScalar(plist.float(value), .number, form) }
    func double(_ value: Double, _ form: ValueForm) { addScalar(plist.double(value), .number, form) }
    func string(_ value: String, _ form: ValueForm) { addScalar(plist.string(value), .string, form) }
    func data(_ value: [UInt8], _ form: ValueForm) { addScalar(plist.data(value), .data, form) }

    func date(_ seconds: Double, _ form: ValueForm) {
        let stored = form.filled(from: .keyedDefault(for: .date, inField: isInField))
        if case .instance = stored.instance {
            addScalar(plist.double(seconds), .date, stored)
        } else {
            // A plain property list date (CF writes none in keyed archives; kept if read).
            addScalar(plist.date(seconds), .string, ValueForm(storage: stored.storage, instance: .plain))
        }
    }

    func object(_ id: Int, _ form: ValueForm) {
        add(plist.uid(Int(objectUIDs[id])))
    }

    func beginArray(count: Int, _ form: ValueForm) {
        let stored = form.filled(from: .keyedDefault(for: .array, inField: isInField))
        contexts.append(.array(elements: [], form: stored))
    }

    func endArray() {
        guard case .array(let elements, let form) = contexts.removeLast() else { return }
        let array = list(elements)
        if case .instance(let className) = form.instance {
            add(instance(className, members: [(plist.string(KeyedKey.names[KeyedKey.objects]), array)]))
        } else {
            add(form.storage == .inline ? array : plist.uid(scalarEntry(array)))
        }
    }

    func beginDictionary(count: Int, _ form: ValueForm) {
        let stored = form.filled(from: .keyedDefault(for: .dictionary, inField: isInField))
        contexts.append(.dictionary(keys: [], values: [], form: stored))
    }

    func endDictionary() {
        guard case .dictionary(let keys, let values, let form) = contexts.removeLast() else { return }
        if case .instance(let className) = form.instance {
            add(
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
        let start = plist.stackPosition
        for (key, value) in zip(keys, values) {
            plist.push(key)
            plist.push(value)
        }
        let dictionary = plist.closeDictionary(from: start)
        add(form.storage == .inline ? dictionary : plist.uid(scalarEntry(dictionary)))
    }

    /// A property list array of `elements`.
    private func list(_ elements: [Int]) -> Int {
        let start = plist.stackPosition
        for element in elements { plist.push(element) }
        return plist.closeArray(from: start)
    }

    func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) {
        contexts.append(.record(start: plist.stackPosition, uid: reserveEntry(), className: typeName))
    }

    func endRecord() {
        guard case .record(let start, let uid, let typeName) = contexts.removeLast() else { return }
        plist.push(classKey)
        plist.push(plist.uid(classDefinition(classNames[typeName] ?? typeName, originalName: typeName)))
        entries[uid] = plist.closeDictionary(from: start)
        add(plist.uid(uid))
    }
}
