// Sources/GraphArchive/KeyedArchive/KeyedArchiveWriter.swift - transcodes a native archive into an NSKeyedArchiver archive
//
// Models encode once, through `encode(with:)`, into the engine's own format; this rewrites
// that archive as the property list NSKeyedArchiver would have written for the same calls:
// - each object becomes one `$objects` dictionary of its keys plus `$class`, so an instance
//   referred to from several places is stored once and decodes as one instance;
// - integers, reals and booleans under a key are stored inline (what `encodeInteger(_:forKey:)`,
//   `encodeDouble`, `encodeBool` write and `decodeInteger(forKey:)` etc. read);
// - strings and data are `$objects` entries (NSString, NSData; equal ASCII strings stored
//   once), dates are NSDate, arrays NSMutableArray, dictionaries NSMutableDictionary, read with
//   `decodeObject(forKey:)`; numbers inside arrays and dictionaries are NSNumber entries;
// - structs (inline value records) become a fresh instance of their class at each use.

/// Rewrites one native archive as a keyed archive.
struct KeyedArchiveWriter: ~Copyable {
    private var plist = BPlistWriter()
    /// Reads the native payload with the engine's own value readers.
    private var source: DecodingState
    /// Keeps the payload alive while `source` reads it.
    private let payload: ArchiveBytes
    private let classNames: [String: String]
    /// The archived names of each class's archivable superclasses, nearest first, by archived
    /// type name: `$classes` lists them between the class and NSObject.
    private let superclasses: [String: [String]]
    private let maximumDepth: Int
    /// `$objects`: the property list object of each UID; -1 until an entry is finished.
    private var entries: [Int]
    /// The UID of each scalar already in `$objects`, by property list object (ids are dense,
    /// so an array, not a hashed table), or -1.
    private var scalarUIDs: [Int] = []
    /// The UID of each class definition, by class name.
    private var classUIDs: [String: Int] = [:]
    /// The property list string of each native key, or -1.
    private var keyStrings: [Int]
    /// The UID of each shape's class definition, or -1: saves hashing its name per record.
    private var shapeClassUIDs: [Int]
    private var classKey = -1

    private init(
        source: consuming DecodingState,
        payload: ArchiveBytes,
        classNames: [String: String],
        superclasses: [String: [String]],
        maximumDepth: Int
    ) {
        self.source = source
        self.payload = payload
        self.classNames = classNames
        self.superclasses = superclasses
        self.maximumDepth = maximumDepth
        keyStrings = Array(repeating: -1, count: self.source.tables.keys.count)
        shapeClassUIDs = Array(repeating: -1, count: self.source.tables.shapeKeyCount.count)
        entries = Array(repeating: -1, count: 1 + self.source.objectCount)
        // Records hold a string or number or two each, most of them distinct: a guess, kept to
        // a share of the payload's size so that a forged object count cannot make it large.
        plist.reserveScalars(min(2 * self.source.objectCount, self.source.reader.remaining / 16))
    }

    /// The keyed archive (binary property list bytes) holding what native archive `bytes` holds.
    ///
    /// - Parameters:
    ///   - classNames: keyed-archive class names by archived type name; a type not listed keeps
    ///     its archived name.
    ///   - superclasses: the archived names of each class's superclasses, nearest first, by
    ///     archived type name (also mapped through `classNames`); a class not listed has only
    ///     NSObject above it.
    /// - Throws: What reading the native archive throws, and `.invalidValue` for what an
    ///   NSKeyedArchiver archive cannot hold (nil inside an array or dictionary).
    static func transcode(
        _ bytes: ArchiveBytes,
        classNames: [String: String],
        superclasses: [String: [String]] = [:],
        options: GraphUnarchiver.Options
    ) throws(GraphArchiveError) -> ByteWriter {
        try transcode(
            LoadedArchive.load(bytes, options: options),
            classNames: classNames,
            superclasses: superclasses,
            options: options
        )
    }

    /// The keyed archive holding what the checked native archive `loaded` holds; see
    /// ``transcode(_:classNames:options:)``.
    static func transcode(
        _ loaded: LoadedArchive,
        classNames: [String: String],
        superclasses: [String: [String]] = [:],
        options: GraphUnarchiver.Options
    ) throws(GraphArchiveError) -> ByteWriter {
        var reader = loaded.payload.reader(loaded.payloadRange)
        let tables = try ArchiveTables.parse(&reader, header: loaded.header, options: options)
        // Every object record takes at least one byte.
        guard loaded.header.objectCount <= UInt64(min(reader.remaining, options.maximumObjectCount)) else {
            throw GraphArchiveError(
                .corrupt,
                "header claims \(loaded.header.objectCount) objects, more than the payload or maximumObjectCount allows",
                offset: 32
            )
        }
        let source = DecodingState(
            reader: reader,
            tables: tables,
            objectCount: Int(loaded.header.objectCount),
            options: options
        )
        let writer = KeyedArchiveWriter(
            source: source,
            payload: loaded.payload,
            classNames: classNames,
            superclasses: superclasses,
            maximumDepth: options.maximumDepth
        )
        return try writer.write()
    }

    private consuming func write() throws(GraphArchiveError) -> ByteWriter {
        entries[0] = plist.string("$null")
        classKey = plist.string(KeyedKey.names[KeyedKey.classReference])
        let top = try writeTopLevel()
        for index in 0..<source.objectCount {
            let offset = source.reader.offset
            let shape = try source.scanner.readShape(&source.reader)
            guard source.tables.typeIsObject[source.tables.shapeType[shape]] else {
                throw GraphArchiveError(.corrupt, "object #\(index) is recorded with a value type", offset: offset)
            }
            entries[1 + index] = try writeRecord(shape: shape, depth: 0)
        }
        guard source.reader.isAtEnd else {
            throw GraphArchiveError(
                .trailingGarbage,
                "unexpected bytes after the last object",
                offset: source.reader.offset
            )
        }
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
        return plist.finish(top: rootObject)
    }

    /// The `$top` dictionary.
    private mutating func writeTopLevel() throws(GraphArchiveError) -> Int {
        let start = plist.stackPosition
        var seen: Set<Int> = []
        for _ in 0..<source.tables.topCount {
            let offset = source.reader.offset
            let key = try source.reader.readCount()
            guard key < source.tables.keys.count, seen.insert(key).inserted else {
                throw GraphArchiveError(
                    .corrupt,
                    "top-level entry uses key \(key) twice or out of range",
                    offset: offset
                )
            }
            plist.push(keyString(key))
            plist.push(try writeField(depth: 0))
        }
        return plist.closeDictionary(from: start)
    }

    /// A record (object body or struct) as an instance dictionary: its keys, then `$class`.
    private mutating func writeRecord(shape: Int, depth: Int) throws(GraphArchiveError) -> Int {
        let tables = source.tables
        let classUID = shapeClassUID(shape)
        let start = plist.stackPosition
        let keyStart = tables.shapeKeyStart[shape]
        for position in 0..<tables.shapeKeyCount[shape] {
            plist.push(keyString(tables.shapeKeyIDs[keyStart + position]))
            plist.push(try writeField(depth: depth))
        }
        plist.push(classKey)
        plist.push(plist.uid(classUID))
        return plist.closeDictionary(from: start)
    }

    private mutating func shapeClassUID(_ shape: Int) -> Int {
        if shapeClassUIDs[shape] < 0 {
            let typeName = source.tables.typeNames[source.tables.shapeType[shape]]
            let chain = (superclasses[typeName] ?? []).map { classNames[$0] ?? $0 } + ["NSObject"]
            shapeClassUIDs[shape] = classDefinition(classNames[typeName] ?? typeName, superclasses: chain)
        }
        return shapeClassUIDs[shape]
    }

    private mutating func keyString(_ key: Int) -> Int {
        if keyStrings[key] < 0 { keyStrings[key] = plist.string(source.tables.keys[key]) }
        return keyStrings[key]
    }

    /// The UID of the class definition for `name`, written on first use.
    private mutating func classDefinition(_ name: String, superclasses: [String]) -> Int {
        if let known = classUIDs[name] { return known }
        let uid = reserveEntry()
        let classes = plist.stackPosition
        plist.push(plist.string(name))
        for superclass in superclasses { plist.push(plist.string(superclass)) }
        let hierarchy = plist.closeArray(from: classes)
        let start = plist.stackPosition
        plist.push(plist.string(KeyedKey.names[KeyedKey.classes]))
        plist.push(hierarchy)
        plist.push(plist.string(KeyedKey.names[KeyedKey.className]))
        plist.push(plist.string(name))
        entries[uid] = plist.closeDictionary(from: start)
        classUIDs[name] = uid
        return uid
    }

    private mutating func reserveEntry() -> Int {
        entries.append(-1)
        return entries.count - 1
    }

    // MARK: - Values

    /// The value under a key: numbers and booleans inline, everything else by UID.
    private mutating func writeField(depth: Int) throws(GraphArchiveError) -> Int {
        if Self.isNumber(try source.reader.peekByte()) {
            return try writeNumber()
        }
        return plist.uid(try writeEntry(depth: depth))
    }

    /// Whether `tag` starts a number or a boolean.
    private static func isNumber(_ tag: UInt8) -> Bool {
        switch tag {
        case ValueTag.falseValue, ValueTag.trueValue, ValueTag.float32, ValueTag.float64,
            ValueTag.unsignedBase...(ValueTag.negativeBase + 7), ValueTag.smallIntegerBase..<ValueTag.shortStringBase:
            true
        default:
            false
        }
    }

    /// A number or boolean as a property list scalar.
    private mutating func writeNumber() throws(GraphArchiveError) -> Int {
        switch try source.reader.peekByte() {
        case ValueTag.falseValue, ValueTag.trueValue:
            return plist.bool(try source.readBool())
        case ValueTag.float32:
            return plist.float(try source.readFloat())
        case ValueTag.float64:
            return plist.double(try source.readDouble())
        case ValueTag.negativeBase...(ValueTag.negativeBase + 7):
            return plist.integer(try source.readInteger(Int64.self))
        default:
            return plist.unsigned(try source.readInteger(UInt64.self))
        }
    }

    /// Writes the next value as a `$objects` entry and returns its UID (0 for nil).
    private mutating func writeEntry(depth: Int) throws(GraphArchiveError) -> Int {
        let start = source.reader.offset
        switch try source.reader.peekByte() {
        case ValueTag.null:
            source.reader.offset += 1
            return 0
        case ValueTag.date:
            let time = try source.readDate()
            return foundationInstance("NSDate", superclasses: ["NSObject"]) { writer in
                writer.plist.push(writer.plist.string(KeyedKey.names[KeyedKey.time]))
                writer.plist.push(writer.plist.double(time))
            }
        case ValueTag.string, ValueTag.shortStringBase..<(ValueTag.shortStringBase + 64):
            return scalarEntry(plist.string(try source.readString()))
        case ValueTag.bytes:
            return scalarEntry(plist.data(try source.readByteArray()))
        case ValueTag.objectReference:
            return 1 + (try source.readObjectIndex(expected: "object"))
        case ValueTag.array, ValueTag.referenceArray:
            return try writeArray(depth: depth)
        case ValueTag.dictionary:
            return try writeDictionary(depth: depth)
        case ValueTag.valueRecord:
            source.reader.offset += 1
            try checkDepth(depth, at: start)
            let shape = try source.scanner.readShape(&source.reader)
            guard !source.tables.typeIsObject[source.tables.shapeType[shape]] else {
                throw GraphArchiveError(.corrupt, "value record has an object type", offset: start)
            }
            let uid = reserveEntry()
            entries[uid] = try writeRecord(shape: shape, depth: depth + 1)
            return uid
        case let tag where Self.isNumber(tag):
            return scalarEntry(try writeNumber())
        case let tag:
            throw GraphArchiveError(.corrupt, "unknown value tag 0x\(String(tag, radix: 16))", offset: start)
        }
    }

    private mutating func scalarEntry(_ object: Int) -> Int {
        if object < scalarUIDs.count && scalarUIDs[object] >= 0 { return scalarUIDs[object] }
        let uid = reserveEntry()
        entries[uid] = object
        if object >= scalarUIDs.count {
            scalarUIDs.append(contentsOf: repeatElement(-1, count: object + 1 - scalarUIDs.count))
        }
        scalarUIDs[object] = uid
        return uid
    }

    /// An NSMutableArray of the next array's elements.
    private mutating func writeArray(depth: Int) throws(GraphArchiveError) -> Int {
        let start = source.reader.offset
        let isPacked = try source.reader.readByte() == ValueTag.referenceArray
        let (count, _) = try source.readCollectionCount(at: start)
        try checkDepth(depth, at: start)
        var elements: [Int] = []
        elements.reserveCapacity(min(count, source.reader.remaining))
        var previous = -1
        for _ in 0..<count {
            if isPacked {
                let offset = source.reader.offset
                previous = try ValueScanner.nextReferenceIndex(&source.reader, previous: previous)
                try source.scanner.checkObjectIndex(UInt64(previous), at: offset)
                elements.append(1 + previous)
            } else {
                elements.append(try writeElement(depth: depth + 1))
            }
        }
        return foundationInstance("NSMutableArray", superclasses: ["NSArray", "NSObject"]) { writer in
            writer.plist.push(writer.plist.string(KeyedKey.names[KeyedKey.objects]))
            writer.plist.push(writer.uidArray(elements))
        }
    }

    /// An NSMutableDictionary of the next dictionary's pairs.
    private mutating func writeDictionary(depth: Int) throws(GraphArchiveError) -> Int {
        let start = source.reader.offset
        source.reader.offset += 1
        let (count, capacity) = try source.readCollectionCount(at: start)
        try checkDepth(depth, at: start)
        var keys: [Int] = []
        var values: [Int] = []
        keys.reserveCapacity(capacity / 2)
        values.reserveCapacity(capacity / 2)
        for _ in 0..<count {
            keys.append(try writeElement(depth: depth + 1))
            values.append(try writeElement(depth: depth + 1))
        }
        return foundationInstance("NSMutableDictionary", superclasses: ["NSDictionary", "NSObject"]) { writer in
            writer.plist.push(writer.plist.string(KeyedKey.names[KeyedKey.keys]))
            writer.plist.push(writer.uidArray(keys))
            writer.plist.push(writer.plist.string(KeyedKey.names[KeyedKey.objects]))
            writer.plist.push(writer.uidArray(values))
        }
    }

    /// An element of an array or dictionary: always a UID, never nil (NSArray cannot hold nil).
    private mutating func writeElement(depth: Int) throws(GraphArchiveError) -> Int {
        let offset = source.reader.offset
        let uid = try writeEntry(depth: depth)
        guard uid != 0 else {
            throw GraphArchiveError(
                .invalidValue,
                "an array or dictionary holds nil, which NSArray and NSDictionary cannot hold",
                offset: offset
            )
        }
        return uid
    }

    private mutating func uidArray(_ uids: [Int]) -> Int {
        let start = plist.stackPosition
        for uid in uids { plist.push(plist.uid(uid)) }
        return plist.closeArray(from: start)
    }

    /// A new `$objects` dictionary of Foundation class `name`, its members pushed by `members`.
    private mutating func foundationInstance(
        _ name: String,
        superclasses: [String],
        members: (inout KeyedArchiveWriter) -> Void
    ) -> Int {
        let classUID = classDefinition(name, superclasses: superclasses)
        let uid = reserveEntry()
        let start = plist.stackPosition
        members(&self)
        plist.push(classKey)
        plist.push(plist.uid(classUID))
        entries[uid] = plist.closeDictionary(from: start)
        return uid
    }

    private func checkDepth(_ depth: Int, at offset: Int) throws(GraphArchiveError) {
        guard depth < maximumDepth else {
            throw GraphArchiveError(
                .limitExceeded,
                "values nest deeper than maximumDepth (\(maximumDepth))",
                offset: offset
            )
        }
    }
}
