// Sources/GraphArchive/KeyedArchive/KeyedArchiveIndex.swift - the NSKeyedArchiver layer over a binary property list
//
// An NSKeyedArchiver archive is a property list dictionary: `$archiver` ("NSKeyedArchiver"),
// `$version` (100000), `$top` (the top-level keys) and `$objects`, a flat array every archived
// value lives in, with the string "$null" at index 0. Values refer to each other through UIDs
// (indexes into `$objects`), so a shared instance is stored once and cycles are possible. A
// class instance is a dictionary of its keys plus `$class`, the UID of a class definition
// (`$classname`, `$classes`). Numbers inside instances are stored inline, not through UIDs.

/// What a `$objects` entry is, as far as transcoding cares.
enum KeyedEntryKind: UInt8 {
    case unclassified
    /// UID 0 (`$null`), or an NSNull.
    case null
    /// A string, number, boolean, data or date stored as the plain property list value.
    case scalar
    /// An instance of a model class: becomes an object of the engine.
    case object
    /// An instance of a class read as a value type (a struct): becomes an inline value record.
    case record
    /// NSArray, NSSet, NSOrderedSet and their mutable forms (`NS.objects`, or the ordered
    /// sets' `NS.object.0`, `NS.object.1`… as Apple writes them).
    case array
    /// NSDictionary and NSMutableDictionary (`NS.keys`, `NS.objects`).
    case dictionary
    /// NSString or NSMutableString archived as a class (`NS.string`).
    case string
    /// NSDate (`NS.time`, seconds since 2001).
    case date
    /// NSData or NSMutableData archived as a class (`NS.data`).
    case data
    /// A class definition dictionary (`$classname`, `$classes`).
    case classDefinition
    /// NSCountedSet (`NS.count`, then `NS.object0`, `NS.count0`, `NS.object1`…): read as the
    /// array of its distinct objects.
    case countedSet

    /// The Foundation classes that become values, by `$classname`.
    static let foundationClasses: [String: KeyedEntryKind] = [
        "NSArray": .array, "NSMutableArray": .array, "NSSet": .array, "NSMutableSet": .array,
        "NSOrderedSet": .array, "NSMutableOrderedSet": .array, "NSCountedSet": .countedSet,
        "NSDictionary": .dictionary, "NSMutableDictionary": .dictionary,
        "NSString": .string, "NSMutableString": .string,
        "NSDate": .date, "NSData": .data, "NSMutableData": .data, "NSNull": .null,
    ]
}

/// Keys the keyed-archive layer looks for, with fixed ids in ``KeyedArchiveIndex``'s key table.
enum KeyedKey {
    static let classReference = 0
    static let objects = 1
    static let keys = 2
    static let string = 3
    static let time = 4
    static let data = 5
    static let className = 6
    static let classes = 7
    static let names = ["$class", "NS.objects", "NS.keys", "NS.string", "NS.time", "NS.data", "$classname", "$classes"]
}

/// A checked keyed archive: the `$top` and `$objects` containers, and what each entry is,
/// worked out once on first use and cached.
struct KeyedArchiveIndex {
    static let archiverName = "NSKeyedArchiver"
    static let version: UInt64 = 100_000

    let plist: BPlist
    /// The `$top` dictionary.
    let top: BPlistObject
    /// The `$objects` array; a UID indexes it.
    let entries: BPlistObject
    /// The registry that picks among `$classes` names when reading, if any.
    let registry: GraphTypeRegistry?
    /// Class names whose instances are read as inline values (structs), not objects.
    let valueTypeNames: Set<String>

    /// Per UID: its kind, and for model objects and records their type id in `typeNames`. A
    /// class definition stores its instances' type id, or -1 - kind for a Foundation class.
    private var kinds: [KeyedEntryKind]
    private var details: [Int32]
    /// The property list object of each UID, read once from `$objects`.
    private let uidObjects: [UInt32]
    /// Per property list object: its key id when used as a dictionary key, or -1.
    private var keyIDs: [Int32]
    private(set) var keyNames: [String] = []
    private var keyLookup: [String: Int]
    /// Keys of up to 24 bytes as three zero-padded little-endian words, by key id, and an
    /// open-addressing table of key ids by a hash of those words. Foundation on Linux writes
    /// every dictionary's key strings anew, so keys are matched by content, three word
    /// compares, never making a `String` per key.
    private var keyWords: [KeyWords] = []
    private var keySlots: [Int32] = Array(repeating: -1, count: 64)
    private(set) var typeNames: [String] = []
    private(set) var typeIsValue: [Bool] = []
    private var typeLookup: [String: Int] = [:]

    var entryCount: Int { entries.count }

    /// Checks the keyed-archive envelope of `plist`.
    ///
    /// - Throws: `.badMagic` if it is not an NSKeyedArchiver archive, `.unsupportedVersion` for a
    ///   `$version` other than 100000, `.corrupt` for a malformed `$top` or `$objects`.
    init(plist: BPlist, registry: GraphTypeRegistry?, valueTypeNames: Set<String> = []) throws(GraphArchiveError) {
        self.plist = plist
        self.registry = registry
        self.valueTypeNames = valueTypeNames
        let root = try plist.object(plist.top)
        guard root.type == BPlistMarker.dictionary else {
            throw GraphArchiveError(
                .badMagic,
                "not an NSKeyedArchiver archive: the property list holds \(BPlistMarker.describeWithArticle(root.marker)), not a dictionary",
                offset: plist.offset(of: root.index)
            )
        }
        var fields: [String: BPlistObject] = [:]
        for position in 0..<root.count {
            let key = try plist.object(plist.reference(in: root, at: position))
            guard key.type == BPlistMarker.asciiString || key.type == BPlistMarker.utf16String else { continue }
            fields[try plist.string(key)] = try plist.object(plist.reference(in: root, at: root.count + position))
        }
        guard let archiver = fields["$archiver"] else {
            throw GraphArchiveError(
                .badMagic,
                "not an NSKeyedArchiver archive: the property list has no $archiver",
                offset: plist.offset(of: root.index)
            )
        }
        let archiverName =
            archiver.type == BPlistMarker.asciiString
            ? try plist.string(archiver) : BPlistMarker.describe(archiver.marker)
        guard archiverName == Self.archiverName else {
            throw GraphArchiveError(
                .badMagic,
                "not an NSKeyedArchiver archive: $archiver is \"\(archiverName)\"",
                offset: plist.offset(of: archiver.index)
            )
        }
        guard let version = fields["$version"], version.type == BPlistMarker.integer,
            try plist.integer(version).bits == Self.version
        else {
            var found = "missing"
            if let version = fields["$version"] {
                found =
                    version.type == BPlistMarker.integer
                    ? String(try plist.integer(version).bits) : BPlistMarker.describe(version.marker)
            }
            throw GraphArchiveError(
                .unsupportedVersion,
                "keyed archive $version is \(found); this reader reads \(Self.version)",
                offset: fields["$version"].flatMap { plist.offset(of: $0.index) }
            )
        }
        guard let top = fields["$top"], top.type == BPlistMarker.dictionary else {
            throw GraphArchiveError(
                .corrupt,
                "keyed archive has no $top dictionary",
                offset: plist.offset(of: root.index)
            )
        }
        guard let entries = fields["$objects"], entries.type == BPlistMarker.array, entries.count >= 1 else {
            throw GraphArchiveError(
                .corrupt,
                "keyed archive has no $objects array",
                offset: plist.offset(of: root.index)
            )
        }
        let null = try plist.object(plist.reference(in: entries, at: 0))
        guard null.type == BPlistMarker.asciiString, try plist.string(null) == "$null" else {
            throw GraphArchiveError(
                .corrupt,
                "keyed archive $objects does not start with \"$null\"",
                offset: plist.offset(of: null.index)
            )
        }
        self.top = top
        self.entries = entries
        // 32 bits are enough: a plist is at most 4 GiB, and every object takes bytes.
        uidObjects = try plist.referenceTable(of: entries)
        kinds = Array(repeating: .unclassified, count: entries.count)
        kinds[0] = .null
        details = Array(repeating: 0, count: entries.count)
        keyIDs = Array(repeating: -1, count: plist.objectCount)
        instanceKeys = Array(repeating: 0, count: entries.count)
        keyLookup = [:]
        for name in KeyedKey.names { _ = addKey(name) }
    }

    // MARK: - Entries

    /// The property list object that UID `uid` stands for.
    @inline(__always)
    func entryObject(_ uid: Int) throws(GraphArchiveError) -> BPlistObject {
        try plist.object(Int(uidObjects[uid]))
    }

    /// The index of the property list object that UID `uid` stands for.
    @inline(__always)
    func entryIndex(_ uid: Int) -> Int { Int(uidObjects[uid]) }

    /// The `$objects` index a UID object holds, checked against the table.
    @inline(__always)
    func uid(_ object: BPlistObject) throws(GraphArchiveError) -> Int {
        try checkedUID(plist.uid(object), in: object.index)
    }

    /// `value`, the UID held by object `index`, checked against the table.
    @inline(__always)
    func checkedUID(_ value: Int, in index: Int) throws(GraphArchiveError) -> Int {
        guard value >= 0 && value < entries.count else {
            throw Self.uidOutOfRange(value, entryCount: entries.count, offset: plist.offset(of: index))
        }
        return value
    }

    // Static, given what it reports: as a method, the index was copied (a 224-byte `memcpy`)
    // on every call of `checkedUID` from a mutating method, thrown or not.
    @inline(never)
    private static func uidOutOfRange(_ value: Int, entryCount: Int, offset: Int?) -> GraphArchiveError {
        GraphArchiveError(
            .badObjectReference,
            "UID \(value) is out of range: $objects has \(entryCount) entries",
            offset: offset
        )
    }

    /// What entry `uid` was classified as, `.unclassified` until it is.
    @inline(__always)
    func knownKind(of uid: Int) -> KeyedEntryKind { kinds[uid] }

    /// What entry `uid` is.
    @inline(__always)
    mutating func kind(of uid: Int) throws(GraphArchiveError) -> KeyedEntryKind {
        let known = kinds[uid]
        if known != .unclassified { return known }
        return try classify(uid)
    }

    /// Whether entry `uid` is a plain value (string, number, boolean, data, date), which its
    /// marker alone tells: the fast path past classifying.
    @inline(__always)
    func isPlainValue(_ uid: Int) throws(GraphArchiveError) -> Bool {
        // UID 0 is "$null": nil, not the string.
        guard uid != 0 else { return false }
        let marker = try plist.marker(Int(uidObjects[uid]))
        switch marker & 0xF0 {
        case BPlistMarker.integer, BPlistMarker.real, BPlistMarker.asciiString, BPlistMarker.utf16String,
            BPlistMarker.data:
            return true
        default:
            return marker == BPlistMarker.falseValue || marker == BPlistMarker.trueValue || marker == BPlistMarker.date
        }
    }

    /// What a record keeps for value `reference` of an instance's dictionary: a plain value's
    /// object index (≥ 0), or -1 - the UID of an entry that needs classifying.
    ///
    /// `mutating` only so that the reader's mutating methods call it on the index where it
    /// lies: called as a non-mutating method from them, it had the whole index copied first
    /// (a 224-byte `memcpy` per value, seen in callgrind).
    @inline(__always)
    mutating func recordValue(_ reference: Int) throws(GraphArchiveError) -> Int {
        guard let value = try plist.uidValueReadingOnce(reference) else { return reference }
        let uid = try checkedUID(value, in: reference)
        return try isPlainValue(uid) ? entryIndex(uid) : -1 - uid
    }

    /// The model type id of object or record entry `uid` (valid once `kind(of:)` said so).
    func modelType(of uid: Int) -> Int { Int(details[uid]) }

    private mutating func classify(_ uid: Int) throws(GraphArchiveError) -> KeyedEntryKind {
        let object: BPlistObject
        if let container = plist.smallContainer(entryIndex(uid)) {
            object = container
        } else {
            object = try entryObject(uid)
        }
        let kind: KeyedEntryKind
        switch object.type {
        case BPlistMarker.dictionary:
            // An instance with a known template's keys has its `$class` where they say; any
            // other is searched key by key, and teaches a template if it is an instance.
            let match = templateMatch(object)
            let classReference =
                if let match {
                    try plist.reference(in: object, at: object.count + match.classPosition)
                } else {
                    try member(of: object, key: KeyedKey.classReference)
                }
            if let classReference {
                guard let definition = try plist.uidValue(classReference) else {
                    throw GraphArchiveError(
                        .corrupt,
                        "$objects[\(uid)] has a $class that is not a UID",
                        offset: plist.offset(of: classReference)
                    )
                }
                let detail = try classDetail(checkedUID(definition, in: classReference))
                if detail >= 0 {
                    kind = typeIsValue[detail] ? .record : .object
                } else {
                    kind = KeyedEntryKind(rawValue: UInt8(-1 - detail))!
                }
                details[uid] = Int32(truncatingIfNeeded: detail)
                if kind == .object || kind == .record {
                    if let match {
                        instanceKeys[uid] = match.keys
                    } else {
                        learnTemplate(object, uid: uid)
                    }
                }
            } else if try member(of: object, key: KeyedKey.className) != nil {
                // Resolved now, so a class definition marked as such always has its detail.
                _ = try classDetail(uid)
                kind = .classDefinition
            } else {
                throw GraphArchiveError(
                    .corrupt,
                    "$objects[\(uid)] is a dictionary with neither $class nor $classname",
                    offset: plist.offset(of: object.index)
                )
            }
        case BPlistMarker.integer, BPlistMarker.real, BPlistMarker.data, BPlistMarker.asciiString,
            BPlistMarker.utf16String:
            kind = .scalar
        case 0x00 where object.marker == BPlistMarker.falseValue || object.marker == BPlistMarker.trueValue:
            kind = .scalar
        case 0x00 where object.marker == BPlistMarker.null:
            kind = .null
        case 0x30 where object.marker == BPlistMarker.date:
            kind = .scalar
        default:
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] is a bare \(BPlistMarker.describe(object.marker)), which keyed archives do not store",
                offset: plist.offset(of: object.index)
            )
        }
        kinds[uid] = kind
        return kind
    }

    /// Resolves class definition `uid`: the model type id of its instances, or -1 - kind for
    /// a Foundation class that becomes a value.
    private mutating func classDetail(_ uid: Int) throws(GraphArchiveError) -> Int {
        if kinds[uid] == .classDefinition { return Int(details[uid]) }
        let (name, object) = try classDefinition(uid)
        // Read whether or not a registry needs them: a damaged `$classes` fails every reader,
        // `verify` included.
        let classes = try classChain(of: object, uid: uid)
        let detail: Int
        if let foundation = KeyedEntryKind.foundationClasses[name] {
            detail = -1 - Int(foundation.rawValue)
        } else {
            detail = typeID(modelTypeName(name, superclasses: classes ?? []))
        }
        kinds[uid] = .classDefinition
        details[uid] = Int32(truncatingIfNeeded: detail)
        return detail
    }

    /// Class definition `uid`'s `$classname` and dictionary.
    ///
    /// - Throws: `.corrupt` if the entry is not a class definition.
    mutating func classDefinition(_ uid: Int) throws(GraphArchiveError) -> (name: String, definition: BPlistObject) {
        let object = try entryObject(uid)
        guard object.type == BPlistMarker.dictionary,
            let nameReference = try member(of: object, key: KeyedKey.className)
        else {
            throw GraphArchiveError(
                .corrupt,
                "$class refers to $objects[\(uid)], which is not a class definition",
                offset: plist.offset(of: object.index)
            )
        }
        return (try plist.string(plist.object(nameReference)), object)
    }

    /// The name a model class is known by: `$classname`, unless a registry is given and knows
    /// the class (or value type) only by its unqualified name ("MyApp.Record" → "Record") or by
    /// a superclass in `$classes`, as NSKeyedUnarchiver falls back along `$classes`.
    private func modelTypeName(_ name: String, superclasses: [String]) -> String {
        guard let registry, !isKnown(name, registry) else { return name }
        return GraphTypeRegistry.lookupNames(for: name, superclasses: superclasses).first { isKnown($0, registry) }
            ?? name
    }

    /// The `$classes` of class definition `definition` (entry `uid`): the class and its
    /// superclasses, most derived first; nil where the definition has none.
    ///
    /// - Throws: `.corrupt` unless it is an array of strings (a UID, dangling or not, is not).
    mutating func classChain(of definition: BPlistObject, uid: Int) throws(GraphArchiveError) -> [String]? {
        guard let reference = try member(of: definition, key: KeyedKey.classes) else { return nil }
        let classes = try plist.object(reference)
        guard classes.type == BPlistMarker.array else {
            throw GraphArchiveError(
                .corrupt,
                "$classes of $objects[\(uid)] is \(BPlistMarker.describeWithArticle(classes.marker)), not an array",
                offset: plist.offset(of: classes.index)
            )
        }
        var names: [String] = []
        for position in 0..<classes.count {
            names.append(try plist.string(plist.object(plist.reference(in: classes, at: position))))
        }
        return names
    }

    private func isKnown(_ name: String, _ registry: GraphTypeRegistry) -> Bool {
        registry.type(named: name) != nil || valueTypeNames.contains(name)
    }

    private mutating func typeID(_ name: String) -> Int {
        if let id = typeLookup[name] { return id }
        typeLookup[name] = typeNames.count
        typeNames.append(name)
        typeIsValue.append(valueTypeNames.contains(name))
        return typeNames.count - 1
    }

    // MARK: - Instance templates

    /// The templates instances are matched against, at most ``maximumTemplates``, the newest last.
    private(set) var templates: [InstanceTemplate] = []
    private var templatesLearned = 0
    static let maximumTemplates = 4
    /// Templates an index learns at most (their generations fit the 16 bits `instanceKeys` has).
    static let maximumTemplatesLearned = 64
    /// Per UID of an instance classified by its keys' bytes: the template's generation (low 16
    /// bits) and, 4 bits per position from bit 16, which template key the instance holds there;
    /// 0 for any other entry.
    private var instanceKeys: [UInt64]

    /// How instance `uid` holds the keys of a template (see `instanceKeys`), or 0.
    @inline(__always)
    func keys(ofInstance uid: Int) -> UInt64 { instanceKeys[uid] }

    /// The template whose keys instance dictionary `object` has, in any order (their objects'
    /// bytes compared, no key resolved): how it holds them, and where `$class` is. Nothing is
    /// thrown: a key that matches none, twice, or cannot be read, leaves the instance to the
    /// thorough way, which reports what is wrong. An instance whose key objects, or their
    /// bytes and layout, are those of one matched before takes the same match without
    /// comparing keys.
    ///
    /// `mutating` only so that it reads the index where it lies (see `recordValue(_:)`).
    @inline(__always)
    private mutating func templateMatch(_ object: BPlistObject) -> (keys: UInt64, classPosition: Int)? {
        // First where key sets were remembered by their references (which an archive whose
        // keys are laid out anew per instance, matched by layout, never does): there it saves
        // working out a layout that is not there.
        if !keyReferenceSets.isEmpty, let references = plist.keyReferenceWords(of: object),
            let match = keyReferenceMatch(references, count: object.count)
        {
            return match
        }
        let layout = plist.keyLayout(of: object, masks: layoutMasks)
        if let layout, let match = layoutMatch(layout, count: object.count) { return match }
        for template in templates.indices where templates[template].images.count == object.count {
            if let match = keysMatch(object, template) {
                if let layout {
                    remember(layout, count: object.count, match: match, template: template)
                } else if let references = plist.keyReferenceWords(of: object) {
                    remember(references, count: object.count, match: match)
                }
                return match
            }
        }
        return nil
    }

    /// Key sets matched before, by their key objects (see ``KeyReferenceMatch``):
    /// ``keyReferenceSlots`` slots, each picked by a hash of the references and holding the
    /// latest set hashed there; empty until one is remembered.
    private var keyReferenceSets: [KeyReferenceMatch] = []
    // A handful of classes times their key orders, in the archives that store keys once.
    private static let keyReferenceSlots = 256

    /// The slot of the key set whose references are `words`.
    @inline(__always)
    private static func keyReferenceSlot(_ words: (UInt64, UInt64, UInt64)) -> Int {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        let mixed = ((words.0 &* multiplier ^ words.1) &* multiplier ^ words.2) &* multiplier
        return Int(truncatingIfNeeded: mixed &>> 56) & (keyReferenceSlots &- 1)
    }

    /// What `templateMatch` found for the instance whose key references were remembered in
    /// the slot of `words`, if they are these.
    ///
    /// `mutating` only so that it reads the index where it lies (see `recordValue(_:)`).
    @inline(__always)
    private mutating func keyReferenceMatch(_ words: (UInt64, UInt64, UInt64), count: Int)
        -> (keys: UInt64, classPosition: Int)?
    {
        let slot = Self.keyReferenceSlot(words)
        guard keyReferenceSets[slot].count == count, keyReferenceSets[slot].words == words else { return nil }
        return (keyReferenceSets[slot].keys, keyReferenceSets[slot].classPosition)
    }

    /// Remembers that the instance whose key references are `words` matched as `match`.
    private mutating func remember(
        _ words: (UInt64, UInt64, UInt64),
        count: Int,
        match: (keys: UInt64, classPosition: Int)
    ) {
        if keyReferenceSets.isEmpty {
            keyReferenceSets = Array(repeating: KeyReferenceMatch(), count: Self.keyReferenceSlots)
        }
        keyReferenceSets[Self.keyReferenceSlot(words)] = KeyReferenceMatch(
            words: words,
            count: count,
            keys: match.keys,
            classPosition: match.classPosition
        )
    }

    /// Key sets matched before, by their layout (see ``KeyLayoutMatch``): ``keyLayoutSlots``
    /// slots, each picked by a hash of the layout and holding the latest set hashed there;
    /// empty until one is remembered.
    private var keyLayouts: [KeyLayoutMatch] = []
    /// ``EightWords/masks``, kept here: read through the global, it was checked to be made
    /// for every instance.
    private let layoutMasks = EightWords.masks
    // Enough that the 24 orders of a class's 4 keys rarely share one (about 1 in 40).
    private static let keyLayoutSlots = 1024

    /// What `templateMatch` found for the instance whose key set was remembered in the slot of
    /// `layout`, if `layout` is that set's and its bytes end before the offset table.
    ///
    /// `mutating` only so that it reads the index where it lies (see `recordValue(_:)`).
    @inline(__always)
    private mutating func layoutMatch(_ layout: KeyLayout, count: Int) -> (keys: UInt64, classPosition: Int)? {
        guard !keyLayouts.isEmpty else { return nil }
        let slot = layout.hash & (Self.keyLayoutSlots &- 1)
        guard keyLayouts[slot].count == count, keyLayouts[slot].distances == layout.distances,
            keyLayouts[slot].length == layout.length, layout.length <= plist.objectsEnd &- layout.start,
            keyLayouts[slot].bytes == layout.bytes
        else { return nil }
        return (keyLayouts[slot].keys, keyLayouts[slot].classPosition)
    }

    /// Remembers that the instance whose keys lie as `layout` says matched `template` so, if
    /// the layout's bytes are exactly the keys' (the string starting last ends last).
    private mutating func remember(
        _ layout: KeyLayout,
        count: Int,
        match: (keys: UInt64, classPosition: Int),
        template: Int
    ) {
        var end = 0
        for position in 0..<count {
            let candidate = Int(truncatingIfNeeded: match.keys &>> UInt64(16 &+ 4 &* position) & 0xF)
            let distance = Int(truncatingIfNeeded: layout.distances &>> UInt64(8 &* position) & 0xFF)
            end = max(end, distance + templates[template].images[candidate].length)
        }
        guard end == layout.length else { return }
        if keyLayouts.isEmpty {
            keyLayouts = Array(repeating: KeyLayoutMatch(), count: Self.keyLayoutSlots)
        }
        keyLayouts[layout.hash & (Self.keyLayoutSlots &- 1)] = KeyLayoutMatch(
            distances: layout.distances,
            count: count,
            length: layout.length,
            bytes: layout.bytes,
            keys: match.keys,
            classPosition: match.classPosition
        )
    }

    private mutating func keysMatch(_ object: BPlistObject, _ template: Int) -> (keys: UInt64, classPosition: Int)? {
        var keys = plist.references(of: object)
        var packed = UInt64(truncatingIfNeeded: templates[template].generation)
        var unmatched: UInt64 = (1 &<< UInt64(object.count)) &- 1
        var classPosition = 0
        let classKey = templates[template].classKey
        let matchers = templates[template].matchers
        let objectsEnd = plist.objectsEnd
        for position in 0..<object.count {
            // The key object's first 24 bytes against each image cut to its length: the bytes
            // that match an image are that string whole (marker and length included), so this
            // finds what comparing the key's own image would, without working out its length.
            guard let key = try? keys.next(), let (bytes, start) = plist.leadingWords(key) else { return nil }
            var candidate = 0
            while candidate < matchers.count && !matchers[candidate].matches(bytes) { candidate &+= 1 }
            guard candidate < matchers.count, matchers[candidate].image.length <= objectsEnd &- start,
                unmatched & (1 &<< UInt64(candidate)) != 0
            else { return nil }
            unmatched &= ~(1 &<< UInt64(candidate))
            packed |= UInt64(candidate) &<< UInt64(16 &+ 4 &* position)
            if candidate == classKey { classPosition = position }
        }
        return (packed, classPosition)
    }

    /// Makes instance dictionary `object` (entry `uid`), just classified the thorough way, a
    /// template if its keys are distinct short ASCII strings, one of them `$class`: resolving
    /// them cannot fail (the thorough way resolves them to the same ids when it is parsed).
    private mutating func learnTemplate(_ object: BPlistObject, uid: Int) {
        // A bound on learning, so an archive of many key sets costs little more than before.
        guard object.count <= InstanceTemplate.maximumKeys && templatesLearned < Self.maximumTemplatesLearned else {
            return
        }
        var template = InstanceTemplate(
            images: [],
            matchers: [],
            keyIDs: [],
            classKey: -1,
            generation: templatesLearned + 1
        )
        var keys = plist.references(of: object)
        var packed = UInt64(truncatingIfNeeded: template.generation)
        for position in 0..<object.count {
            guard let key = try? keys.next(), let image = plist.shortASCIIImage(key), let id = learnedKeyID(key),
                !template.keyIDs.contains(id), !template.images.contains(image)
            else { return }
            if id == KeyedKey.classReference { template.classKey = position }
            template.images.append(image)
            template.matchers.append(KeyImageMatcher(image))
            template.keyIDs.append(id)
            packed |= UInt64(position) &<< UInt64(16 &+ 4 &* position)
        }
        guard template.classKey >= 0 else { return }
        templatesLearned += 1
        if templates.count == Self.maximumTemplates {
            templates.removeFirst()
            // Key sets remembered may have matched the template let go.
            keyLayouts = []
            keyReferenceSets = []
        }
        templates.append(template)
        instanceKeys[uid] = packed
    }

    /// The template of generation `generation`, if still kept.
    func template(generation: Int) -> InstanceTemplate? {
        templates.first { $0.generation == generation }
    }

    /// The id of key object `index` if it is known or a short ASCII string, else nil.
    private mutating func learnedKeyID(_ index: Int) -> Int? {
        if keyIDs[index] >= 0 { return Int(keyIDs[index]) }
        guard let words = plist.shortASCIIKey(index), words.isASCII else { return nil }
        let id = tableKeyID(words) ?? addKey(words.text)
        keyIDs[index] = Int32(truncatingIfNeeded: id)
        return id
    }

    // MARK: - Dictionaries

    /// The key id of property list object `index` used as a dictionary key.
    @inline(__always)
    mutating func keyID(of index: Int) throws(GraphArchiveError) -> Int {
        let known = keyIDs[index]
        if known >= 0 { return Int(known) }
        // A short key already in the table, found here rather than through a call: Foundation
        // on Linux writes the keys of every instance anew, so this runs for nearly every key.
        if let words = plist.shortASCIIKey(index), let id = tableKeyID(words) {
            keyIDs[index] = Int32(truncatingIfNeeded: id)
            return id
        }
        return try newKeyID(index)
    }

    /// The id of the short key `words` if the fast table holds it.
    ///
    /// `mutating` only so that it reads the index where it lies: as a non-mutating method,
    /// called from mutating ones, it had the whole index copied first.
    @inline(__always)
    private mutating func tableKeyID(_ words: KeyWords) -> Int? {
        let mask = keySlots.count &- 1
        var slot = words.hash & mask
        for _ in 0..<Self.maximumProbes {
            let id = Int(keySlots[slot])
            if id < 0 { return nil }
            if keyWords[id] == words { return id }
            slot = (slot &+ 1) & mask
        }
        return nil
    }

    /// The key id of object `index` the thorough way: any string, checked, added if new.
    @inline(never)
    private mutating func newKeyID(_ index: Int) throws(GraphArchiveError) -> Int {
        let id: Int
        if let key = try plist.shortASCIIWords(index) {
            id = try shortKeyID(KeyWords((key.first, key.second, key.third), length: key.length), index)
            keyIDs[index] = Int32(truncatingIfNeeded: id)
            return id
        }
        let object = try plist.object(index)
        switch object.type {
        case BPlistMarker.asciiString where object.count <= KeyWords.maximumLength:
            id = try shortKeyID(KeyWords(try plist.words(of: object), length: object.count), index)
        case BPlistMarker.asciiString:
            id = addKey(try plist.string(object))
        case BPlistMarker.utf16String:
            id = addKey(try plist.string(object))
        default:
            throw GraphArchiveError(
                .corrupt,
                "dictionary key is \(BPlistMarker.describeWithArticle(object.marker)), not a string",
                offset: plist.offset(of: index)
            )
        }
        keyIDs[index] = Int32(truncatingIfNeeded: id)
        return id
    }

    /// The id of the short key `words`, the content of object `index`.
    @inline(__always)
    private mutating func shortKeyID(_ words: KeyWords, _ index: Int) throws(GraphArchiveError) -> Int {
        if let id = tableKeyID(words) { return id }
        // A key not found within `maximumProbes` slots is looked up by name (`addKey`): keys
        // crafted to collide cost a bounded search each, never a scan of a long cluster.
        return addKey(try plist.string(plist.object(index)))
    }

    /// Slots a key lookup or insertion tries before it falls back to the table by name.
    private static let maximumProbes = 32

    /// The id of key `name`, added to the tables if new.
    private mutating func addKey(_ name: String) -> Int {
        if let known = keyLookup[name] { return known }
        let id = keyNames.count
        keyNames.append(name)
        keyLookup[name] = id
        let words = KeyWords(name)
        // A long key gets an entry no lookup matches (lookups have lengths up to 24).
        keyWords.append(words ?? KeyWords((0, 0, 0), length: -1))
        if let words {
            // At most half full, so probes stay short and always end at an empty slot.
            if 2 * (keyNames.count + 1) > keySlots.count { rehashKeys(capacity: 2 * keySlots.count) }
            insertKey(id, words)
        }
        return id
    }

    /// Puts key `id` in the fast table; a key whose slots are all taken within
    /// `maximumProbes` stays out of it and is found by name.
    private mutating func insertKey(_ id: Int, _ words: KeyWords) {
        let mask = keySlots.count - 1
        var slot = words.hash & mask
        for _ in 0..<Self.maximumProbes {
            if keySlots[slot] < 0 {
                keySlots[slot] = Int32(truncatingIfNeeded: id)
                return
            }
            slot = (slot + 1) & mask
        }
    }

    private mutating func rehashKeys(capacity: Int) {
        keySlots = Array(repeating: -1, count: capacity)
        for (id, words) in keyWords.enumerated() where words.length >= 0 {
            insertKey(id, words)
        }
    }

    /// The value object stored under key `key` in dictionary `object`, or nil.
    mutating func member(of object: BPlistObject, key: Int) throws(GraphArchiveError) -> Int? {
        var keys = plist.references(of: object)
        for position in 0..<object.count {
            if try keyID(of: keys.next()) == key {
                return try plist.reference(in: object, at: object.count + position)
            }
        }
        return nil
    }

    /// The value under `key` of Foundation-class entry `uid`, following one UID if it is
    /// stored by reference.
    mutating func wrappedValue(of uid: Int, key: Int) throws(GraphArchiveError) -> BPlistObject {
        let value = try plist.object(requiredMember(of: uid, key: key))
        guard value.type == BPlistMarker.uid else { return value }
        let target = try self.uid(value)
        guard try kind(of: target) == .scalar else {
            throw GraphArchiveError(
                .corrupt,
                "\(KeyedKey.names[key]) of $objects[\(uid)] refers to something that is not a plain value",
                offset: plist.offset(of: value.index)
            )
        }
        return try entryObject(target)
    }

    /// The value object under `key` of Foundation-class entry `uid`, which must have one.
    private mutating func requiredMember(of uid: Int, key: Int) throws(GraphArchiveError) -> Int {
        let object = try entryObject(uid)
        guard let reference = try member(of: object, key: key) else {
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] has no \(KeyedKey.names[key])",
                offset: plist.offset(of: object.index)
            )
        }
        return reference
    }

    /// The elements of array entry `uid` (an NSArray, NSSet, NSOrderedSet or NSCountedSet):
    /// its `NS.objects` array, or its numbered keys, `NS.object.N` (the form Apple's
    /// NSOrderedSet writes) or NSCountedSet's `NS.objectN`.
    mutating func arrayElements(of uid: Int) throws(GraphArchiveError) -> KeyedElements {
        let object = try entryObject(uid)
        let isCounted = kinds[uid] == .countedSet
        if !isCounted, try member(of: object, key: KeyedKey.objects) != nil {
            return .container(try containerMember(of: uid, key: KeyedKey.objects))
        }
        return .members(try numberedMembers(of: object, uid: uid, prefix: isCounted ? "NS.object" : "NS.object."))
    }

    /// The values of `object`'s keys `prefix` + 0, 1, 2…, which must be numbered without gaps.
    /// An instance with no such key and nothing but `$class` (an empty ordered set) has none.
    private mutating func numberedMembers(of object: BPlistObject, uid: Int, prefix: String)
        throws(GraphArchiveError) -> [Int]
    {
        var numbered: [(number: Int, value: Int)] = []
        var others = 0
        var keys = plist.references(of: object)
        for position in 0..<object.count {
            let name = keyNames[try keyID(of: keys.next())]
            if name.hasPrefix(prefix), let number = Int(name.dropFirst(prefix.count)), number >= 0,
                name.dropFirst(prefix.count).allSatisfy(\.isASCII)
            {
                numbered.append((number, try plist.reference(in: object, at: object.count + position)))
            } else if name != KeyedKey.names[KeyedKey.classReference] {
                others += 1
            }
        }
        guard !numbered.isEmpty || others == 0 || prefix == "NS.object" else {
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] has no \(KeyedKey.names[KeyedKey.objects])",
                offset: plist.offset(of: object.index)
            )
        }
        numbered.sort { $0.number < $1.number }
        for (position, member) in numbered.enumerated() where member.number != position {
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] has \(prefix)\(member.number) but no \(prefix)\(position)",
                offset: plist.offset(of: object.index)
            )
        }
        return numbered.map(\.value)
    }

    /// The `NS.keys` and `NS.objects` arrays of dictionary entry `uid`, of equal length.
    mutating func dictionaryParts(of uid: Int) throws(GraphArchiveError) -> (keys: BPlistObject, values: BPlistObject) {
        let keys = try containerMember(of: uid, key: KeyedKey.keys)
        let values = try containerMember(of: uid, key: KeyedKey.objects)
        guard keys.count == values.count else {
            throw GraphArchiveError(
                .corrupt,
                "dictionary $objects[\(uid)] has \(keys.count) keys but \(values.count) values",
                offset: plist.offset(of: values.index)
            )
        }
        return (keys, values)
    }

    private mutating func containerMember(of uid: Int, key: Int) throws(GraphArchiveError) -> BPlistObject {
        let container = try plist.object(requiredMember(of: uid, key: key))
        guard container.type == BPlistMarker.array || container.type == BPlistMarker.set else {
            throw GraphArchiveError(
                .corrupt,
                "\(KeyedKey.names[key]) of $objects[\(uid)] is \(BPlistMarker.describeWithArticle(container.marker)), not an array",
                offset: plist.offset(of: container.index)
            )
        }
        return container
    }
}

/// A key of up to 24 bytes as three zero-padded little-endian words and its length.
struct KeyWords: Equatable {
    static let maximumLength = 24
    var first: UInt64
    var second: UInt64
    var third: UInt64
    var length: Int

    init(_ words: (UInt64, UInt64, UInt64), length: Int) {
        (first, second, third) = words
        self.length = length
    }

    /// The words of `name`'s UTF-8, or nil if it is longer than 24 bytes.
    init?(_ name: String) {
        let bytes = Array(name.utf8)
        guard bytes.count <= Self.maximumLength else { return nil }
        var words: [UInt64] = [0, 0, 0]
        for (index, byte) in bytes.enumerated() {
            words[index / 8] |= UInt64(byte) << (8 * UInt64(index % 8))
        }
        self.init((words[0], words[1], words[2]), length: bytes.count)
    }

    /// Whether every byte is ASCII.
    var isASCII: Bool { (first | second | third) & 0x8080_8080_8080_8080 == 0 }

    /// The bytes as text (ASCII, so as they are).
    var text: String {
        let words = [first, second, third]
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: words[$0 / 8] >> (8 * UInt64($0 % 8))) }
        return String(decoding: bytes, as: UTF8.self)
    }

    var hash: Int {
        var mixed =
            (first &* 0x9E37_79B9_7F4A_7C15) ^ (second &* 0xC2B2_AE3D_27D4_EB4F) ^ (third &* 0x1656_67B1_9E37_79F9)
            ^ UInt64(length)
        // A multiplication carries only low bits upward, and tables index by the low bits: mix
        // the high bits down (MurmurHash3's finalizer), or keys that differ in their last bytes
        // ("k1000000", "k1000001", …) share slots and every probe walks their cluster.
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        mixed &*= 0xC4CE_B9FE_1A85_EC53
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }
}

/// The keys of an instance dictionary: their objects' bytes (marker, length and text, at most
/// 24) and key ids, and which is `$class`. An instance whose key objects hold the same bytes,
/// in any order, has the same keys (Foundation writes every instance's keys anew, in an order
/// that varies with its dictionary's hash seed).
struct InstanceTemplate {
    /// 12 keys of 4 bits each, after a 16-bit generation, fill a `UInt64`.
    static let maximumKeys = 12
    var images: [KeyWords]
    /// The images as `keysMatch` compares them, in the same order.
    var matchers: [KeyImageMatcher]
    var keyIDs: [Int]
    var classKey: Int
    /// Numbers the templates an index learned, from 1: a reader's notes on a template are kept
    /// by this number.
    var generation: Int
}

/// A key's image (see ``BPlist/shortASCIIImage(_:)``) and the masks that cut 24 bytes read at
/// an object's start to the image's length.
struct KeyImageMatcher {
    let image: KeyWords
    private let masks: (UInt64, UInt64, UInt64)

    init(_ image: KeyWords) {
        self.image = image
        let bits = image.length * 8
        masks = (ByteReader.lowBits(bits), ByteReader.lowBits(bits - 64), ByteReader.lowBits(bits - 128))
    }

    /// Whether `bytes`, the 24 bytes at an object's start, begin with the image.
    @inline(__always)
    func matches(_ bytes: (UInt64, UInt64, UInt64)) -> Bool {
        // `&` then `==` on each word, joined without branches: most keys differ in the second.
        (bytes.0 & masks.0 ^ image.first) | (bytes.1 & masks.1 ^ image.second) | (bytes.2 & masks.2 ^ image.third) == 0
    }
}

/// Where the key objects of an instance dictionary lie (see ``BPlist/keyLayout(of:masks:)``).
struct KeyLayout {
    static let maximumKeys = 8
    /// Where the first key's object starts.
    var start: Int
    /// Each key's start after the first key's, 8 bits each from the lowest, in key order.
    var distances: UInt64
    /// Bytes from `start` to the end of the string that starts last.
    var length: Int
    /// Those bytes, zero past `length`.
    var bytes: EightWords

    /// Mixes every byte: the key sets of one class differ only in their keys' order, and two
    /// orders can share the distances and the first words.
    var hash: Int { Int(truncatingIfNeeded: bytes.hash(seed: distances) &>> 32) }
}

/// A key set that matched a template, as laid out: key objects the same distances apart whose
/// bytes, from the first one's start to the end of the last one, are the same hold the same
/// strings, so an instance with such keys matches the same template the same way. (Whether a
/// template's image matches a key is settled within the key's own bytes: images that differ
/// from the key differ in its marker or length bytes, or within its length.)
struct KeyLayoutMatch {
    var distances: UInt64 = 0
    /// Keys in the set; 0 for an empty slot.
    var count = 0
    var length = 0
    var bytes = EightWords()
    /// What `templateMatch` found: as in `instanceKeys`, and where `$class` is.
    var keys: UInt64 = 0
    var classPosition = 0
}

/// A key set that matched a template, by its key references: writers that store each key
/// string once (Foundation on Apple platforms, Python's plistlib, gridstore) give every instance
/// of a class the same references, and an instance that lists the same key objects in the same
/// order matches the same template the same way.
struct KeyReferenceMatch {
    /// The references' bytes as `BPlist.keyReferenceWords(of:)` reads them.
    var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
    /// Keys in the set; 0 for an empty slot.
    var count = 0
    /// What `templateMatch` found: as in `instanceKeys`, and where `$class` is.
    var keys: UInt64 = 0
    var classPosition = 0
}

/// The element references of an array-like Foundation instance (see `arrayElements(of:)`).
enum KeyedElements {
    /// An `NS.objects` array (or set) of the property list.
    case container(BPlistObject)
    /// The values of the instance's numbered keys, in order.
    case members([Int])

    var count: Int {
        switch self {
        case .container(let container): container.count
        case .members(let members): members.count
        }
    }

    /// A cursor over the references, from the first.
    func cursor(_ plist: BPlist) -> KeyedElementCursor {
        switch self {
        case .container(let container): KeyedElementCursor(references: plist.references(of: container), members: [])
        case .members(let members): KeyedElementCursor(references: nil, members: members)
        }
    }
}

/// Reads the references of ``KeyedElements`` one after another.
struct KeyedElementCursor {
    var references: BPlistReferences?
    let members: [Int]
    private var position = 0

    init(references: BPlistReferences?, members: [Int]) {
        self.references = references
        self.members = members
    }

    // Inlined into the loops over elements: as a call it cost about 40 instructions an element.
    @inline(__always)
    mutating func next() throws(GraphArchiveError) -> Int {
        if references != nil { return try references!.next() }
        defer { position += 1 }
        return members[position]
    }
}
