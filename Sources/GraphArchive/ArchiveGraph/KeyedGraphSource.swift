// Sources/GraphArchive/ArchiveGraph/KeyedGraphSource.swift - a keyed archive's values, walked without its model classes
//
// Opening checks the property list and the keyed envelope, then makes one pass over
// `$objects`: each entry is classified (a plain value, an instance of a Foundation value
// class, a collection, an object, a class definition) and the UIDs that point at each entry
// are counted, so that an NSArray or NSDictionary referred to from one place reads as a value
// and one referred to from several stays one object. No value is built: walking an object
// reads its dictionary then.

/// The values of one keyed archive, for ``ArchiveGraph``.
struct KeyedGraphSource {
    /// What the view makes of a `$objects` entry.
    enum Kind: UInt8 {
        /// UID 0, `$null`.
        case null
        /// A plain property list value: a string, a number, data, a date, a boolean.
        case plain
        /// Instances of Foundation's value classes, read as values.
        case string, data, date, nsNull
        /// NSArray or NSDictionary (mutable or not) referred to from one place: read as values.
        case array, dictionary
        /// Everything else with a class: shown as an object.
        case object
        case classDefinition
        /// A property list container or UID stored as an entry, which keyed archives do not do:
        /// an error if anything refers to it.
        case bare
    }

    /// A class definition: `$classname`, and `$classes` if it has one.
    struct ClassEntry {
        var name: String
        var chain: [String]?
        /// Whether its instances may read as values (Foundation's value classes, NSArray,
        /// NSDictionary), which depends on their keys.
        var mayBeValue: Bool
    }

    /// The binary property list (made from XML if the input was XML).
    let bytes: ArchiveBytes
    let isXML: Bool
    /// Size of the archive as given, the base of the walks' budget.
    let inputBytes: Int
    let options: GraphUnarchiver.Options
    private(set) var index: KeyedArchiveIndex
    private var kinds: [Kind]
    /// Per UID: the index of its class in `classes` (instances and class definitions), or -1.
    private var classOf: [Int32]
    private(set) var classes: [ClassEntry] = []
    /// The UIDs of the objects, in `$objects` order.
    private(set) var objectIDs: [Int32] = []
    /// The top-level entries in stored order: key, key id and the value's property list object.
    private(set) var topEntries: [(key: String, keyID: Int, value: Int)] = []
    /// Scratch for the keys of one instance.
    private var scratchKeys: [Int] = []

    private static let collectionNames: [String: Kind] = [
        "NSArray": .array, "NSMutableArray": .array, "NSDictionary": .dictionary, "NSMutableDictionary": .dictionary,
    ]
    private static let valueNames: [String: (kind: Kind, key: Int)] = [
        "NSString": (.string, KeyedKey.string), "NSMutableString": (.string, KeyedKey.string),
        "NSData": (.data, KeyedKey.data), "NSMutableData": (.data, KeyedKey.data), "NSDate": (.date, KeyedKey.time),
    ]

    /// Opens and checks keyed archive `input` (binary or XML) and classifies its entries.
    ///
    /// - Throws: `.badMagic`, `.unsupportedVersion`, `.corrupt`, `.truncated`,
    ///   `.badObjectReference`, `.limitExceeded`, as the typed reader does for the same damage.
    init(bytes input: ArchiveBytes, options: GraphUnarchiver.Options) throws(GraphArchiveError) {
        let binary = try PropertyListInput.binary(input, options: options)
        bytes = binary.bytes
        isXML = binary.isXML
        inputBytes = input.count
        self.options = options
        do throws(GraphArchiveError) {
            let plist = try BPlist.scan(bytes.reader(), maximumObjectCount: options.maximumObjectCount)
            index = try KeyedArchiveIndex(plist: plist, registry: nil)
            kinds = Array(repeating: .bare, count: index.entryCount)
            classOf = Array(repeating: -1, count: index.entryCount)
            try classify()
        } catch {
            throw isXML ? PropertyListInput.withoutOffset(error) : error
        }
    }

    var plist: BPlist { index.plist }

    // MARK: - Classifying

    private mutating func classify() throws(GraphArchiveError) {
        kinds[0] = .null
        // How many UIDs point at each entry, up to 2 (only "one" or "more" matters).
        var referrers = [UInt8](repeating: 0, count: index.entryCount)
        var budget = ExpansionBudget(inputBytes: inputBytes)
        let top = index.top
        var keys = plist.references(of: top)
        var values = plist.references(of: top, from: top.count)
        var seen = Set<Int>()
        for _ in 0..<top.count {
            let keyID = try index.keyID(of: keys.next())
            let value = try values.next()
            guard seen.insert(keyID).inserted else {
                throw GraphArchiveError(
                    .corrupt,
                    "$top lists key \"\(index.keyNames[keyID])\" twice",
                    offset: plist.offset(of: top.index)
                )
            }
            topEntries.append((index.keyNames[keyID], keyID, value))
            try countReferences(in: value, &referrers, depth: 0, budget: &budget)
        }
        for uid in 1..<index.entryCount {
            // The marker alone tells the plain values (most entries) apart.
            switch try plist.marker(index.entryIndex(uid)) & 0xF0 {
            case BPlistMarker.dictionary:
                try classifyDictionary(uid, index.entryObject(uid), &referrers, budget: &budget)
            case BPlistMarker.array, BPlistMarker.set, BPlistMarker.uid:
                kinds[uid] = .bare
            default:
                kinds[uid] = .plain
            }
        }
        var objects: [Int32] = []
        for uid in 1..<index.entryCount {
            switch kinds[uid] {
            case .array, .dictionary:
                // A collection referred to from one place is read there; otherwise it is an object.
                if referrers[uid] != 1 { kinds[uid] = .object }
            default:
                break
            }
            if kinds[uid] == .object { objects.append(Int32(truncatingIfNeeded: uid)) }
        }
        objectIDs = objects
    }

    private mutating func classifyDictionary(
        _ uid: Int,
        _ object: BPlistObject,
        _ referrers: inout [UInt8],
        budget: inout ExpansionBudget
    ) throws(GraphArchiveError) {
        // One pass over the keys: the UIDs every value but $class holds are counted, and $class
        // is found (or $classname, for a class definition).
        var keys = plist.references(of: object)
        var values = plist.references(of: object, from: object.count)
        var classReference: Int?
        var isDefinition = false
        scratchKeys.removeAll(keepingCapacity: true)
        for _ in 0..<object.count {
            let keyID = try index.keyID(of: keys.next())
            let value = try values.next()
            switch keyID {
            case KeyedKey.classReference:
                classReference = value
            case KeyedKey.className:
                isDefinition = true
            default:
                scratchKeys.append(keyID)
                // A UID, the usual value, is counted here; anything else may nest UIDs.
                if let target = try plist.uidValue(value) {
                    let referred = try index.checkedUID(target, in: value)
                    if referrers[referred] < 2 { referrers[referred] += 1 }
                } else {
                    try countReferences(in: value, &referrers, depth: 0, budget: &budget)
                }
            }
        }
        guard let classReference else {
            guard isDefinition else {
                throw GraphArchiveError(
                    .corrupt,
                    "$objects[\(uid)] is a dictionary with neither $class nor $classname",
                    offset: plist.offset(of: object.index)
                )
            }
            classOf[uid] = Int32(truncatingIfNeeded: try classEntry(uid))
            kinds[uid] = .classDefinition
            return
        }
        guard let definition = try plist.uidValue(classReference) else {
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] has a $class that is not a UID",
                offset: plist.offset(of: classReference)
            )
        }
        let classIndex = try classEntry(index.checkedUID(definition, in: classReference))
        classOf[uid] = Int32(truncatingIfNeeded: classIndex)
        kinds[uid] =
            classes[classIndex].mayBeValue
            ? try kind(ofInstance: object, className: classes[classIndex].name, memberKeys: scratchKeys) : .object
    }

    /// What an instance of `className` with these keys reads as: a value only when it has
    /// exactly the keys its class writes, and they hold what they must; an object otherwise,
    /// so that nothing it holds is lost.
    private mutating func kind(ofInstance object: BPlistObject, className: String, memberKeys: [Int])
        throws(GraphArchiveError) -> Kind
    {
        if className == "NSNull" { return memberKeys.isEmpty ? .nsNull : .object }
        if let value = Self.valueNames[className] {
            guard memberKeys == [value.key], let member = try index.member(of: object, key: value.key) else {
                return .object
            }
            let stored = try plainObject(member)
            switch value.kind {
            case .string:
                return stored?.type == BPlistMarker.asciiString || stored?.type == BPlistMarker.utf16String
                    ? .string : .object
            case .data:
                return stored?.type == BPlistMarker.data ? .data : .object
            default:
                return stored?.type == BPlistMarker.real ? .date : .object
            }
        }
        guard let kind = Self.collectionNames[className] else { return .object }
        let wanted = kind == .array ? [KeyedKey.objects] : [KeyedKey.keys, KeyedKey.objects]
        guard memberKeys.sorted() == wanted.sorted() else { return .object }
        var counts: [Int] = []
        for key in wanted {
            guard let member = try index.member(of: object, key: key) else { return .object }
            let container = try plist.object(member)
            guard container.type == BPlistMarker.array || container.type == BPlistMarker.set else { return .object }
            counts.append(container.count)
        }
        return counts.allSatisfy { $0 == counts[0] } ? kind : .object
    }

    /// The property list object `reference` holds, following one UID to a plain entry; nil for
    /// a UID to anything else.
    private func plainObject(_ reference: Int) throws(GraphArchiveError) -> BPlistObject? {
        guard let value = try plist.uidValue(reference) else { return try plist.object(reference) }
        let uid = try index.checkedUID(value, in: reference)
        let object = try index.entryObject(uid)
        switch object.type {
        case BPlistMarker.dictionary, BPlistMarker.array, BPlistMarker.set, BPlistMarker.uid: return nil
        default: return uid == 0 ? nil : object
        }
    }

    /// Counts the UIDs `reference` holds, looking inside property list containers stored in
    /// place (NS.objects arrays and the like).
    private func countReferences(
        in reference: Int,
        _ referrers: inout [UInt8],
        depth: Int,
        budget: inout ExpansionBudget
    ) throws(GraphArchiveError) {
        if let value = try plist.uidValue(reference) {
            let uid = try index.checkedUID(value, in: reference)
            if referrers[uid] < 2 { referrers[uid] += 1 }
            return
        }
        let object = try plist.object(reference)
        let parts: Int
        switch object.type {
        case BPlistMarker.array, BPlistMarker.set: parts = object.count
        case BPlistMarker.dictionary: parts = 2 * object.count
        default: return
        }
        try checkDepth(depth, at: reference)
        try budget.spend(parts)
        var elements = plist.references(of: object)
        for _ in 0..<parts {
            try countReferences(in: elements.next(), &referrers, depth: depth + 1, budget: &budget)
        }
    }

    /// The index in `classes` of class definition `uid`, read on first use.
    private mutating func classEntry(_ uid: Int) throws(GraphArchiveError) -> Int {
        if classOf[uid] >= 0 && kinds[uid] == .classDefinition { return Int(classOf[uid]) }
        let (name, object) = try index.classDefinition(uid)
        let chain = try index.classChain(of: object, uid: uid)
        let mayBeValue = name == "NSNull" || Self.valueNames[name] != nil || Self.collectionNames[name] != nil
        classes.append(ClassEntry(name: name, chain: chain, mayBeValue: mayBeValue))
        classOf[uid] = Int32(truncatingIfNeeded: classes.count - 1)
        kinds[uid] = .classDefinition
        return classes.count - 1
    }

    private func checkDepth(_ depth: Int, at reference: Int) throws(GraphArchiveError) {
        guard depth < options.maximumDepth else {
            throw GraphArchiveError(
                .limitExceeded,
                "values nest deeper than maximumDepth (\(options.maximumDepth))",
                offset: plist.offset(of: reference)
            )
        }
    }

    // MARK: - Objects

    /// The class of object (or instance) `uid`.
    func classEntry(of uid: Int) -> ClassEntry {
        classes[Int(classOf[uid])]
    }

    /// The index in ``classes`` of object (or instance) `uid`'s class.
    func classIndex(of uid: Int) -> Int {
        Int(classOf[uid])
    }

    /// Whether `uid` is one of the graph's objects.
    func isObject(_ uid: Int) -> Bool {
        uid >= 0 && uid < kinds.count && kinds[uid] == .object
    }

    /// The bytes of object `uid`'s dictionary: its header and references.
    func storedBytes(of uid: Int) throws(GraphArchiveError) -> Int {
        let object = try index.entryObject(uid)
        let start = plist.offset(of: object.index) ?? object.contentStart
        return object.contentStart - start + 2 * object.count * plist.referenceSize
    }

    /// Walks the fields of object `uid`: each key but `$class`, then its value.
    ///
    /// - Throws: `.corrupt` for a key listed twice, and what walking the values throws.
    mutating func visitFields<V: GraphVisitor>(
        of uid: Int,
        _ visitor: inout V,
        budget: inout ExpansionBudget
    ) throws(GraphArchiveError) {
        let object = try index.entryObject(uid)
        var keys = plist.references(of: object)
        var values = plist.references(of: object, from: object.count)
        scratchKeys.removeAll(keepingCapacity: true)
        for _ in 0..<object.count {
            let keyID = try index.keyID(of: keys.next())
            let value = try values.next()
            if keyID == KeyedKey.classReference { continue }
            // Instances have a handful of keys: a linear search beats hashing.
            guard !scratchKeys.contains(keyID) else {
                throw GraphArchiveError(
                    .corrupt,
                    "$objects[\(uid)] lists key \"\(index.keyNames[keyID])\" twice",
                    offset: plist.offset(of: object.index)
                )
            }
            scratchKeys.append(keyID)
            try visitor.field(index.keyNames[keyID], keyID: keyID)
            try emit(value, depth: 0, &visitor, budget: &budget)
        }
    }

    /// Walks top-level entry `position`: its key, then its value.
    mutating func visitTopEntry<V: GraphVisitor>(
        _ position: Int,
        _ visitor: inout V,
        budget: inout ExpansionBudget
    ) throws(GraphArchiveError) {
        let entry = topEntries[position]
        try visitor.field(entry.key, keyID: entry.keyID)
        try emit(entry.value, depth: 0, &visitor, budget: &budget)
    }

    // MARK: - Values

    /// Hands the value property list object `reference` holds to `visitor`: a UID's entry, or a
    /// value stored in place.
    mutating func emit<V: GraphVisitor>(
        _ reference: Int,
        depth: Int,
        _ visitor: inout V,
        budget: inout ExpansionBudget
    ) throws(GraphArchiveError) {
        try budget.spend(1)
        if let value = try plist.uidValue(reference) {
            try emitEntry(index.checkedUID(value, in: reference), depth: depth, &visitor, budget: &budget)
        } else {
            try emitPlain(
                plist.object(reference),
                ValueForm(storage: .inline, instance: .plain),
                depth: depth,
                &visitor,
                budget: &budget
            )
        }
    }

    private mutating func emitEntry<V: GraphVisitor>(
        _ uid: Int,
        depth: Int,
        _ visitor: inout V,
        budget: inout ExpansionBudget
    ) throws(GraphArchiveError) {
        switch kinds[uid] {
        case .null:
            try visitor.null(ValueForm(storage: .reference, instance: .plain))
        case .plain:
            try emitPlain(
                index.entryObject(uid),
                ValueForm(storage: .reference, instance: .plain),
                depth: depth,
                &visitor,
                budget: &budget
            )
        case .string, .data, .date:
            let key = Self.valueNames[classEntry(of: uid).name]!.key
            let object = try index.entryObject(uid)
            // Classifying found the member and its plain value.
            let stored = try plainObject(index.member(of: object, key: key)!)!
            if kinds[uid] == .date {
                try visitor.date(try plist.real(stored).value, instanceForm(uid))
            } else {
                try emitPlain(stored, instanceForm(uid), depth: depth, &visitor, budget: &budget)
            }
        case .nsNull:
            try visitor.null(instanceForm(uid))
        case .object:
            try visitor.object(uid, ValueForm(storage: .reference, instance: .unspecified))
        case .array:
            // Its NS.objects array, read as the instance's value.
            let object = try index.entryObject(uid)
            let elements = try plist.object(index.member(of: object, key: KeyedKey.objects)!)
            try emitPlain(elements, instanceForm(uid), depth: depth, &visitor, budget: &budget)
        case .dictionary:
            let object = try index.entryObject(uid)
            let keys = try plist.object(index.member(of: object, key: KeyedKey.keys)!)
            let values = try plist.object(index.member(of: object, key: KeyedKey.objects)!)
            try checkDepth(depth, at: object.index)
            try visitor.beginDictionary(count: keys.count, instanceForm(uid))
            var keyReferences = plist.references(of: keys)
            var valueReferences = plist.references(of: values)
            for _ in 0..<keys.count {
                try emit(keyReferences.next(), depth: depth + 1, &visitor, budget: &budget)
                try emit(valueReferences.next(), depth: depth + 1, &visitor, budget: &budget)
            }
            try visitor.endDictionary()
        case .classDefinition:
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] is a class definition, used where a value belongs",
                offset: plist.offset(of: index.entryIndex(uid))
            )
        case .bare:
            let object = try index.entryObject(uid)
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] is a bare \(BPlistMarker.describe(object.marker)), which keyed archives do not store",
                offset: plist.offset(of: object.index)
            )
        }
    }

    /// The form of an instance read as a value: by UID, of its class.
    private func instanceForm(_ uid: Int) -> ValueForm {
        ValueForm(storage: .reference, instance: .instance(classEntry(of: uid).name))
    }

    /// Hands a property list object that is no UID to `visitor`.
    private mutating func emitPlain<V: GraphVisitor>(
        _ object: BPlistObject,
        _ form: ValueForm,
        depth: Int,
        _ visitor: inout V,
        budget: inout ExpansionBudget
    ) throws(GraphArchiveError) {
        switch object.type {
        case BPlistMarker.integer:
            let (high, low) = try plist.wideInteger(object)
            if high == 0 && low <= UInt64(Int64.max) || high == -1 && low > UInt64(Int64.max) {
                try visitor.integer(Int64(bitPattern: low), form)
            } else if high == 0 {
                try visitor.unsignedInteger(low, form)
            } else {
                try visitor.integer128(high: high, low: low, form)
            }
        case BPlistMarker.real:
            let (value, isSingle) = try plist.real(object)
            if isSingle { try visitor.float(Float(value), form) } else { try visitor.double(value, form) }
        case BPlistMarker.asciiString, BPlistMarker.utf16String:
            try budget.spend(object.count)
            try visitor.string(try plist.string(object), form)
        case BPlistMarker.data:
            try budget.spend(object.count)
            try visitor.data(try plist.data(object), form)
        case BPlistMarker.array, BPlistMarker.set:
            try checkDepth(depth, at: object.index)
            try visitor.beginArray(count: object.count, form)
            var references = plist.references(of: object)
            for _ in 0..<object.count {
                try emit(references.next(), depth: depth + 1, &visitor, budget: &budget)
            }
            try visitor.endArray()
        case BPlistMarker.dictionary:
            try checkDepth(depth, at: object.index)
            try visitor.beginDictionary(count: object.count, form)
            var keys = plist.references(of: object)
            var values = plist.references(of: object, from: object.count)
            for _ in 0..<object.count {
                try emit(keys.next(), depth: depth + 1, &visitor, budget: &budget)
                try emit(values.next(), depth: depth + 1, &visitor, budget: &budget)
            }
            try visitor.endDictionary()
        default:
            switch object.marker {
            case BPlistMarker.falseValue, BPlistMarker.trueValue:
                try visitor.bool(object.marker == BPlistMarker.trueValue, form)
            case BPlistMarker.null:
                try visitor.null(form)
            case BPlistMarker.date:
                try visitor.date(try plist.real(object).value, form)
            default:
                throw GraphArchiveError(
                    .corrupt,
                    "property list object \(object.index) is \(BPlistMarker.describeWithArticle(object.marker)), which holds no value",
                    offset: plist.offset(of: object.index)
                )
            }
        }
    }
}
