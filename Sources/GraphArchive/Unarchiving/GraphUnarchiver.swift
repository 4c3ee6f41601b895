// Sources/GraphArchive/Unarchiving/GraphUnarchiver.swift - reads object graphs (the NSKeyedUnarchiver equivalent)

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reads a gridstore archive back into objects: GraphArchive's `NSKeyedUnarchiver`.
///
/// ```swift
/// let states = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromFile: path)
///
/// let unarchiver = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry([BIDFourLines.self]))
/// let lines = try unarchiver.decode(BIDFourLines.self, forKey: "Data")
/// ```
///
/// Creating an unarchiver checks the whole archive (header, checksum, tables) and builds every
/// object in the archive, each after the objects it refers to, so initializers find their
/// references ready and no recursion is needed however deep the graph. Only registered classes
/// are created. Top-level values are then read by key. Not thread-safe.
public final class GraphUnarchiver {
    /// Limits that keep a hostile or damaged archive from exhausting memory or stack. Each
    /// violation throws `.limitExceeded` naming the limit.
    public struct Options: Sendable {
        /// Deepest nesting of values inside one object or top-level value. Default: 512.
        public var maximumDepth: Int = 512
        /// Most objects an archive may hold. Default: 2^28 (268 million).
        public var maximumObjectCount: Int = 1 << 28
        /// Largest archive file read. Default: 16 GiB.
        public var maximumArchiveBytes: Int = 1 << 34
        /// Largest payload once decompressed. Default: 16 GiB.
        public var maximumDecompressedBytes: Int = 1 << 34
        /// Longest string or byte string, in bytes. Default: 1 GiB.
        public var maximumStringLength: Int = 1 << 30
        /// Most elements in one array or dictionary. Default: 2^30.
        public var maximumCollectionCount: Int = 1 << 30
        /// Most memory, in bytes, one decode may commit: the file or decompressed payload, the
        /// tables, the objects and every string, array and dictionary built from the archive,
        /// each approved before it is allocated, so that an archive that claims or holds more
        /// than the process can afford fails with `limitExceeded` instead of exhausting memory
        /// (a failed allocation traps; under `ulimit -v` one would).
        ///
        /// Default (`nil`): derived from the machine when decoding starts, as what
        /// ``AvailableMemory`` says this process can still commit (the least of physical memory,
        /// the address space left under `RLIMIT_AS` or `RLIMIT_DATA`, and what its control
        /// group's memory limit leaves) less a reserve for the rest of the program: an eighth,
        /// at least 96 MiB; and at most 1024 times the size of the input (the file or the bytes
        /// decoded), at least 256 MiB, so that a small file that describes far more than any
        /// archive its size holds fails before that memory is committed. A value set here
        /// replaces both, but decoding still stops where the address space left under
        /// `RLIMIT_AS` would, past which every allocation fails.
        public var maximumMemoryBytes: Int? = nil

        /// Entries from which reading a keyed archive loads the roots' records ahead of use
        /// (see `KeyedArchiveReader`): only archives whose tables outgrow the caches gain from
        /// it. Internal, so that tests can run that path on small archives.
        var keyedRecordsAheadMinimum = 1 << 20

        public init() {}
    }

    public let options: Options
    /// What the header and tables say about this archive.
    public let info: ArchiveInfo
    /// Usable from inline for the inlinable `decode` forms (see `decode(_:forKey:)` for `Int`).
    @usableFromInline let storage: UncheckedStateBox<DecodingState>

    /// The decoding state, addressed in place (see `UncheckedStateBox` for why).
    var state: DecodingState {
        _read { yield storage.value }
        _modify { yield &storage.value }
    }
    private let bytes: ArchiveBytes
    private var isConstructing = true

    // MARK: - Creating

    /// Opens an archive held in memory.
    ///
    /// - Parameters:
    ///   - data: The archive's bytes.
    ///   - registry: The classes that may be created.
    ///   - options: Decoding limits.
    /// - Throws: ``GraphArchiveError`` for a damaged or unsupported archive or an unknown type,
    ///   and whatever an initializer throws.
    public convenience init(forReadingFrom data: Data, registry: GraphTypeRegistry, options: Options = Options()) throws
    {
        try self.init(bytes: ArchiveBytes(copying: data), registry: registry, options: options)
    }

    /// Opens an archive held in a byte array.
    public convenience init(forReadingFrom bytes: [UInt8], registry: GraphTypeRegistry, options: Options = Options())
        throws
    {
        try self.init(bytes: ArchiveBytes(copying: bytes), registry: registry, options: options)
    }

    /// Opens the archive at `path`.
    public convenience init(contentsOfFile path: String, registry: GraphTypeRegistry, options: Options = Options())
        throws
    {
        try self.init(contentsOfFile: path, registry: registry, options: options, root: nil)
    }

    convenience init(contentsOfFile path: String, registry: GraphTypeRegistry, options: Options, root: RootRequest?)
        throws
    {
        try self.init(
            loaded: LoadedArchive.load(
                streaming: ArchiveFile(path: path, maximumBytes: options.maximumArchiveBytes),
                options: options
            ),
            registry: registry,
            options: options,
            root: root
        )
    }

    convenience init(bytes: ArchiveBytes, registry: GraphTypeRegistry, options: Options, root: RootRequest? = nil)
        throws
    {
        try self.init(
            loaded: LoadedArchive.load(bytes, options: options, rebuildingAlongside: true),
            registry: registry,
            options: options,
            root: root
        )
    }

    /// What a one-call decode asks the root to be, so that an archive of other classes is
    /// reported as that rather than as classes missing from the registry. Only an error asks
    /// it anything (naming a type costs conformance lookups: too much for every decode).
    struct RootRequest {
        let requested: any GraphValue.Type
        /// Set when the decode may hand each object to its first reference, and can decode
        /// again if that fails (see `DecodedObjects.handOverFirstReferences()`).
        var handOverConflict: HandOverConflict?

        init<T: GraphValue>(_: T.Type, handOverConflict: HandOverConflict? = nil) {
            requested = T.self
            self.handOverConflict = handOverConflict
        }

        /// The type asked for, e.g. `[String]`.
        var typeName: String { readableTypeName(requested) }

        /// Whether the type names classes (`[Note]`, `Note?`), which objects at the root could be.
        var namesClasses: Bool { Self.namesClasses(requested) }

        private static func namesClasses<T: GraphValue>(_: T.Type) -> Bool {
            !GraphTypeRegistry().including(T.self).classes.isEmpty
        }
    }

    /// - Parameter root: Set by the one-call decodes: the type the root is asked for.
    init(loaded: LoadedArchive, registry: GraphTypeRegistry, options: Options, root: RootRequest? = nil) throws {
        self.options = options
        self.bytes = loaded.payload
        var reader = loaded.payload.reader(loaded.payloadRange)
        var memory = loaded.memory
        let header = loaded.header
        let tables: ArchiveTables
        let objectCount: Int
        do {
            tables = try ArchiveTables.parse(
                &reader,
                header: header,
                options: options,
                memory: &memory,
                bytesBeyond: loaded.unreadBytes
            )
            objectCount = try header.checkedObjectCount(
                bytesLeft: reader.remaining + loaded.unreadBytes,
                options: options
            )
            try Self.chargeObjects(objectCount, tables: tables, registry: registry, to: &memory)
        } catch {
            throw loaded.explaining(error)
        }
        storage = UncheckedStateBox(
            DecodingState(reader: reader, tables: tables, objectCount: objectCount, options: options, memory: memory)
        )
        info = ArchiveInfo(header: header, tables: tables, archiveBytes: loaded.archiveBytes)
        self.payloadOwner = loaded.payload
        do {
            try readTopIndex()
            state.stream(loaded.stream)
            // As many references as objects: each object is most likely referenced once (a chain,
            // a tree), and its first reference can take the table's (no retain, and no release at
            // the end, each a cache miss on a large graph once construction has passed it).
            if let conflict = root?.handOverConflict, objectCount > 0, header.referenceCount == UInt64(objectCount) {
                state.objects.handOverFirstReferences()
                state.handOverConflict = conflict
            }
            try constructObjects(classes: registeredClasses(registry, root: root, loaded: loaded))
        } catch {
            // A decoding initializer may have kept this unarchiver; lent bytes are about to go.
            if loaded.payload.isLent { state.closeInput() }
            throw loaded.explaining(error)
        }
    }

    /// Charges the object table (compact, see `DecodedObjects`, which charges the words if it
    /// turns to them) and the class of each object, and the least any object can cost, before
    /// any object is built: a header that claims more objects than the budget affords fails at
    /// once. Each object's own instance, and what its initializer reads, is charged as it is
    /// built.
    private static func chargeObjects(
        _ count: Int,
        tables: ArchiveTables,
        registry: GraphTypeRegistry,
        to memory: inout MemoryBudget
    ) throws(GraphArchiveError) {
        var cheapest: Int?
        for (index, name) in tables.typeNames.enumerated() where tables.typeIsObject[index] {
            if let type = registry.objectType(named: name) {
                cheapest = min(cheapest ?? .max, MemoryBudget.instance(classInstanceSize(type)))
            }
        }
        let tablesBytes =
            DecodedObjects.compactBytes(capacity: count)
            + ObjectClassTable.bytes(
                capacity: count,
                types: tables.typeNames.count,
                objectTypes: tables.typeIsObject.count(where: { $0 })
            )
        let (instances, overflow) = count.multipliedReportingOverflow(by: cheapest ?? 0)
        let (bytes, sumOverflow) = tablesBytes.addingReportingOverflow(instances)
        try memory.charge(
            overflow || sumOverflow ? Int.max : bytes,
            for: "the \(count) objects the header declares",
            offset: 32
        )
        // The instances are charged one by one as they are built.
        memory.release(instances)
    }

    /// Keeps a decompressed payload alive while the reader points into it.
    private let payloadOwner: ArchiveBytes

    /// Notes where each top-level value starts, then moves to the object section.
    private func readTopIndex() throws {
        let tables = state.tables
        for _ in 0..<tables.topCount {
            let offset = state.reader.offset
            let name = try tables.readTopKey(&state.reader)
            guard state.topValues[name] == nil else {
                throw GraphArchiveError(.corrupt, "top-level key \"\(name)\" appears twice", offset: offset)
            }
            state.topValues[name] = state.reader.offset
            try state.scanner.skipValue(&state.reader)
        }
        state.objectSectionStart = state.reader.offset
    }

    /// The class of each object type of the archive (by type id), from `registry`.
    ///
    /// - Throws: `.unknownType` naming the classes the registry lacks, or, when `root` asks for
    ///   a type that names no class and the root value holds objects itself (`[String]` of an
    ///   archive of notes), `.typeMismatch` saying what the root is and what was asked for.
    private func registeredClasses(_ registry: GraphTypeRegistry, root: RootRequest?, loaded: LoadedArchive) throws
        -> [(any (GraphCoding & AnyObject).Type)?]
    {
        let tables = state.tables
        var classes: [(any (GraphCoding & AnyObject).Type)?] = Array(repeating: nil, count: tables.typeNames.count)
        var missing: [String] = []
        // A class the registry does not know by name falls back as NSKeyedUnarchiver does, along
        // the `$classes` a converted keyed archive keeps (FORMAT.md §12), read on first need.
        var chains: [String: [String]?]?
        func fallback(_ name: String) -> (any (GraphCoding & AnyObject).Type)? {
            if chains == nil {
                let whole = try? state.readWholeStream(of: loaded)
                chains = (try? NativeGraphSource(loaded: whole ?? loaded, options: options))?.notes.classChains ?? [:]
            }
            let superclasses = (chains?[name] ?? nil) ?? []
            return GraphTypeRegistry.lookupNames(for: name, superclasses: superclasses).lazy
                .compactMap(registry.objectType(named:)).first
        }
        for (index, name) in tables.typeNames.enumerated() where tables.typeIsObject[index] {
            if let type = registry.objectType(named: name) ?? fallback(name) {
                classes[index] = type
            } else {
                missing.append(name)
            }
        }
        guard !missing.isEmpty else { return classes }
        let rootOffset = state.topValues[GraphArchiver.rootKey]
        let rootValue = rootOffset.flatMap { state.describeValue(at: $0) }
        if let root, let rootOffset, let rootValue, !root.namesClasses, state.holdsObjects(at: rootOffset) {
            throw GraphArchiveError(
                .typeMismatch,
                "the archive's root is \(rootValue); asked for \(root.typeName)",
                offset: rootOffset,
                keyPath: [GraphArchiver.rootKey]
            )
        }
        let names = missing.map { "\"\($0)\"" }.joined(separator: ", ")
        var message =
            missing.count == 1
            ? "archive contains objects of type \(names), which is not registered for decoding"
            : "archive contains objects of types \(names), which are not registered for decoding"
        message +=
            ": add the class to the GraphTypeRegistry or, for a subclass of the class asked for, to that class's "
            + "archivedSubclasses"
        if let root, let rootValue { message += " (the archive's root is \(rootValue); asked for \(root.typeName))" }
        throw GraphArchiveError(.unknownType, message, keyPath: [missing[0]])
    }

    /// Builds every object in table order, then runs the deferred assignments.
    private func constructObjects(classes: [(any (GraphCoding & AnyObject).Type)?]) throws {
        let tables = state.tables
        // Per shape, what building its record takes: the class, what one instance costs
        // (charged before each object is built), the type id and the keys; one lookup per object.
        // One per shape of the table, which `readShape` checks each record's shape against: a
        // `PlainStack`, read at that shape without a second check.
        var builds = PlainStack<ShapeBuild>(capacity: tables.shapeType.count)
        for shape in tables.shapeType.indices {
            let typeID = tables.shapeType[shape]
            let keys = RecordKeys(start: tables.shapeKeyStart[shape], count: tables.shapeKeyCount[shape])
            builds.append(
                ShapeBuild(
                    type: classes[typeID],
                    instanceCost: classes[typeID].map { MemoryBudget.instance(classInstanceSize($0)) } ?? 0,
                    typeID: typeID,
                    keys: keys,
                    endSlot: DecodingContainer.firstSlot(keyStart: keys.start, shape: shape) + keys.count
                )
            )
        }
        state.objects.reserveCapacity(state.objectCount)
        state.objectClasses = ObjectClassTable(
            classes: classes.map { $0.map { ObjectIdentifier($0) } },
            capacity: state.objectCount
        )
        // The object section's records replace one another inside one saved level, instead of
        // a push and a pop of the container per record (perf: about 5% of decoding 1M grid-state
        // slots); while an initializer runs, the stack is as `beginRecord` would leave it.
        if state.objectCount > 0 { try state.beginNested() }
        let objectCount = state.objectCount
        let lastIndex = objectCount - 1
        // A one-byte shape id below this names a shape of the table: read with one test.
        let oneByteShapes = min(builds.count, 0x80)
        var index = 0
        while index < objectCount {
            if index == state.recordsRead { try state.readRecords(from: index) }
            // The records before `recordsRead` are in the input: built with no test of it per record.
            let inputEnd = max(index + 1, min(state.recordsRead, objectCount))
            // The shape of the record last closed in the container, which the next record of that
            // shape reopens (-1: none, or deferred assignments ran since).
            var closedShape = -1
            repeat {
                let shape = try state.readShape(oneByteBelow: oneByteShapes)
                let build = builds.element(checkedAt: shape)
                if shape == closedShape {
                    state.reopenRecord(objectIndex: index)
                } else {
                    state.openRecord(shape: shape, keys: build.keys, objectIndex: index)
                    closedShape = shape
                }
                guard let type = build.type else {
                    throw GraphArchiveError(
                        .corrupt,
                        "object #\(index) has value type \(tables.typeNames[build.typeID])",
                        offset: state.reader.offset,
                        keyPath: state.keyPath()
                    )
                }
                guard state.memory.tryCharge(build.instanceCost) else {
                    throw state.memory.exceeded(
                        build.instanceCost,
                        "object #\(index) of \(objectCount) (\(tables.typeNames[build.typeID]))",
                        offset: state.reader.offset
                    )
                }
                state.objectBeingBuilt = index
                let object = try type.init(from: self)
                try state.closeRecord(endSlot: build.endSlot)
                try state.appendObject(consume object, typeID: build.typeID)
                // Those waiting for the last object run after the check for trailing bytes below.
                if !state.pendingAssignments.isIdle, index < lastIndex,
                    let queue = state.pendingAssignments.takeQueue(waitingFor: index)
                {
                    try runPendingAssignments(queue)
                    closedShape = -1
                }
                index &+= 1  // below `objectCount`
            } while index < inputEnd
        }
        if state.objectCount > 0 { state.endNested() }
        isConstructing = false
        if state.readRecordsOutOfOrder { noteReadOrders(classes: classes) }
        try state.finishStream()
        // Checked before the deferred assignments, which move the reader back to the values they read.
        guard state.reader.isAtEnd else {
            throw GraphArchiveError(
                .trailingGarbage,
                "unexpected bytes after the last object",
                offset: state.reader.offset
            )
        }
        if state.objectCount > 0, let queue = state.pendingAssignments.takeQueue(waitingFor: state.objectCount - 1) {
            try runPendingAssignments(queue)
        }
    }

    /// Notes, for the keyed reader, the order each class read its records in where that was
    /// not the stored one: per class, the longest among its shapes (the one with the most of
    /// the keys it reads).
    private func noteReadOrders(classes: [(any (GraphCoding & AnyObject).Type)?]) {
        var longest: [Int: (type: AnyObject.Type, keys: [String])] = [:]
        for (shape, typeID) in state.tables.shapeType.enumerated() {
            guard let type = classes[typeID], let keys = state.learnedReadOrder(ofShape: shape),
                keys.count > longest[typeID]?.keys.count ?? 0
            else { continue }
            longest[typeID] = (type, keys)
        }
        for learned in longest.values { KeyReadOrders.note(learned.keys, for: learned.type) }
    }

    /// What building an object of one shape takes (see `constructObjects`).
    private struct ShapeBuild {
        /// The class, or nil for a value type's shape (no object has it).
        let type: (any (GraphCoding & AnyObject).Type)?
        let instanceCost: Int
        let typeID: Int
        /// The shape's keys, for opening its records.
        let keys: RecordKeys
        /// Where its records' keys end in `DecodingState.shapeKeyBits`, for closing them.
        let endSlot: Int

    }

    /// Runs the `decodeLater` assignments of a queue taken for an object just built, from its
    /// first slot `queue`, in the order they were requested, then goes on reading where
    /// construction stopped.
    private func runPendingAssignments(_ queue: Int32) throws {
        let resume = state.reader.offset
        let wasConstructing = isConstructing
        isConstructing = false
        var slot = queue
        while slot >= 0 {
            let (entry, assign, next) = state.pendingAssignments.take(slot)
            try entry.run(consume assign, self)
            state.memory.release(MemoryBudget.deferredAssignment)
            slot = next
        }
        isConstructing = wasConstructing
        state.reader.offset = resume
    }

    /// The object after which a deferred value can be decoded: the one it refers to if it is
    /// one reference, the object being built for nil or an object built already (so that no
    /// assignment runs while an initializer does), else the last object.
    ///
    /// - Returns: that object, and where the value ends when it is nil or a valid reference
    ///   (otherwise the caller steps over it, which reports any damage), and the object it
    ///   refers to (-1 for nil or any other value).
    private func objectAwaited(byValueAt offset: Int) -> (object: Int, end: Int?, target: Int) {
        let last = state.objectCount - 1
        var reader = state.reader
        reader.offset = offset
        // `nextByte`, which cannot throw: `readByte`'s error path kept a copy of the reader
        // (callgrind: 4 instructions a request of the cycles benchmark).
        let tag = reader.nextByte()
        reader.offset = offset &+ 1  // read only past a tag
        switch tag {
        case ValueTag.null:
            return (state.objectBeingBuilt, reader.offset, -1)
        case ValueTag.objectReference:
            guard let index = try? reader.readVarint(), index <= UInt64(last) else { return (last, nil, -1) }
            return (max(state.objectBeingBuilt, Int(index)), reader.offset, Int(index))
        default:
            return (last, nil, -1)
        }
    }

    // MARK: - Decoding by key

    /// Whether the current container has a value (possibly nil) for `key`.
    public func containsValue(forKey key: String) -> Bool {
        state.containsKey(key)
    }

    public func decode(_: Bool.Type, forKey key: String) throws -> Bool {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: "Bool") }
        let value = try state.readBool()
        state.finishValue()
        return value
    }

    // The common case of the forms called for every field (an integer, an object reference),
    // the next value stored and read within nine bytes, is inlinable: inlined into the
    // caller's initializer, in another module, it takes no call, no stack frame and no moving
    // of the key into place (callgrind: about 35 instructions a link of the chain benchmark's
    // decode less). Their slow forms, for anything else, keep their errors and stay here.

    @inlinable @inline(__always)
    public func decode(_: Int.Type, forKey key: String) throws -> Int {
        // The common case, the next value stored and a short integer, with no stack frame: the
        // error paths' need one (callgrind: about 20 instructions an integer less).
        if let value = storage.value.nextInteger(forKey: key) { return value }
        return try decodeInteger(forKey: key)
    }

    @usableFromInline @inline(never)
    func decodeInteger(forKey key: String) throws -> Int {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: "Int") }
        let value = try state.readInteger(Int.self)
        state.finishValue()
        return value
    }

    public func decode(_: Double.Type, forKey key: String) throws -> Double {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: "Double") }
        let value = try state.readDouble()
        state.finishValue()
        return value
    }

    public func decode(_: String.Type, forKey key: String) throws -> String {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: "String") }
        let value = try state.readString()
        state.finishValue()
        return value
    }

    /// Decodes the value for `key` as `T`.
    ///
    /// - Throws: `.keyNotFound` if the key is absent, `.typeMismatch` if the stored value is of
    ///   another type (nil included, unless `T` is optional), `.valueOutOfRange` if a number does
    ///   not fit `T`, `.unresolvedCycle` for a back link that closes a cycle (decode it with
    ///   ``decodeLater(_:forKey:assign:)``).
    public func decode<T: GraphValue>(_: T.Type, forKey key: String) throws -> T {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: readableTypeName(T.self)) }
        let value = try T._decodeGraphValue(from: self)
        state.finishValue()
        return value
    }

    // An object reference, optional or not, is the common field of a graph: these forms of
    // `decode` read it directly rather than through `GraphValue`'s requirements, whose generic
    // calls (Optional's, then the class's) cost more than the read itself (callgrind: about
    // 100 instructions per reference). Same result, same errors.

    // The common case of each, the next value stored and a reference to an object of the
    // class asked for, is read with no stack frame, which the error paths need (callgrind:
    // about 20 instructions a reference less).

    @_documentation(visibility: internal) @inlinable @inline(__always)
    public func decode<T: GraphCoding & AnyObject>(_: T.Type, forKey key: String) throws -> T {
        if let object = storage.value.nextObject(forKey: key, as: T.self, allowingNil: false), let object {
            return object
        }
        return try decodeObject(T.self, forKey: key)
    }

    @usableFromInline @inline(never)
    func decodeObject<T: GraphCoding & AnyObject>(_: T.Type, forKey key: String) throws -> T {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: readableTypeName(T.self)) }
        let value = try readObjectReference(T.self)
        state.finishValue()
        return value
    }

    @_documentation(visibility: internal) @inlinable @inline(__always)
    public func decode<T: GraphCoding & AnyObject>(_: T?.Type, forKey key: String) throws -> T? {
        if let object = storage.value.nextObject(forKey: key, as: T.self, allowingNil: true) { return object }
        return try decodeOptionalObject(T.self, forKey: key)
    }

    @usableFromInline @inline(never)
    func decodeOptionalObject<T: GraphCoding & AnyObject>(_: T.Type, forKey key: String) throws -> T? {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: readableTypeName(T?.self)) }
        let value = try state.readNilIfPresent() ? nil : readObjectReference(T.self)
        state.finishValue()
        return value
    }

    // An array of references (a node's children) read directly too: through `GraphValue`, a
    // packed reference array went by Array's conformance, `readArray` and the class's
    // `_decodeObjectArray` (callgrind: about 700 instructions an array). Any other value
    // (an array of values, nil, another type) is left to `readArray`, for the same errors.

    @_documentation(visibility: internal)
    public func decode<T: GraphCoding & AnyObject>(_: [T].Type, forKey key: String) throws -> [T] {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: readableTypeName([T].self)) }
        let start = state.reader.offset
        let value: [T]
        if try state.reader.peekByte() == ValueTag.referenceArray {
            state.reader.offset += 1
            let (count, capacity) = try state.readCollectionCount(at: start)
            value = try readReferenceArray(count: count, capacity: capacity, as: T.self)
        } else {
            value = try readArray(T.self)
        }
        state.finishValue()
        return value
    }

    /// Decodes the value for `key`, or returns nil if the key is absent or holds nil.
    public func decodeIfPresent<T: GraphValue>(_: T.Type, forKey key: String) throws -> T? {
        guard try state.locate(key) else { return nil }
        let value = try T?._decodeGraphValue(from: self)
        state.finishValue()
        return value
    }

    /// Decodes the value for `key` once every object in the archive exists, then passes it to
    /// `assign`: the way to restore a back link, a reference that may close a cycle (a parent
    /// link, a ring), written with ``GraphArchiver/encodeConditionalObject(_:forKey:)`` or
    /// ``GraphArchiver/encodeLater(_:forKey:)-(T,_)``. Other references always point to objects
    /// built before, so `decode` reads them directly.
    ///
    /// ```swift
    /// init(from unarchiver: borrowing GraphUnarchiver) throws {
    ///     name = try unarchiver.decode(String.self, forKey: "name")
    ///     children = try unarchiver.decode([Node].self, forKey: "children")
    ///     try unarchiver.decodeLater(Node?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
    /// }
    /// ```
    ///
    /// An assignment runs once the objects its value may refer to are built, and never while an
    /// initializer runs: for one reference, as soon as its object exists; for nil, right after
    /// the object asking; for any other value (an array, a struct), after the last object. So a
    /// graph's back links are not all held until its end. Those waiting for the same object run
    /// in the order they were requested, and all before the unarchiver's initializer returns.
    /// Outside object initializers it runs at once.
    ///
    /// The closure is made, and holds `self`, per request: in a graph of many objects,
    /// ``decodeLater(_:forKey:into:)`` takes one that captures nothing.
    ///
    /// - Throws: `.keyNotFound` if the key is absent; decoding errors are thrown by the
    ///   unarchiver's initializer when the assignment runs.
    public func decodeLater<T: GraphValue>(_: T.Type, forKey key: String, assign: @escaping (T) throws -> Void) throws {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: readableTypeName(T.self)) }
        guard isConstructing else {
            let value = try T._decodeGraphValue(from: self)
            state.finishValue()
            try assign(value)
            return
        }
        try deferValue(T.self, assign: QueuedAssignment(assign), form: .value)
    }

    /// Decodes the value for `key` once every object it may refer to exists, then passes it to
    /// `assign` with the object whose initializer asks: ``decodeLater(_:forKey:assign:)`` for a
    /// closure that captures nothing, so that no closure is made, nor `self` held, per request.
    ///
    /// ```swift
    /// init(from unarchiver: borrowing GraphUnarchiver) throws {
    ///     name = try unarchiver.decode(String.self, forKey: "name")
    ///     children = try unarchiver.decode([Node].self, forKey: "children")
    ///     try unarchiver.decodeLater(Node?.self, forKey: "parent") { (node: Node, parent) in node.parent = parent }
    /// }
    /// ```
    ///
    /// The assignment runs when ``decodeLater(_:forKey:assign:)``'s would, with the object as
    /// `Object`: its class, or a superclass of it.
    ///
    /// - Throws: `.keyNotFound` if the key is absent; `.invalidState` outside an object's
    ///   initializer, where no object asks. Decoding errors, and `.typeMismatch` if the object
    ///   is not an `Object`, are thrown by the unarchiver's initializer when the assignment runs.
    public func decodeLater<Object: GraphCoding & AnyObject, T: GraphValue>(
        _: T.Type,
        forKey key: String,
        into assign: @escaping (Object, T) throws -> Void
    ) throws {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: readableTypeName(T.self)) }
        try checkOwnedRequest(key)
        try deferValue(T.self, assign: QueuedAssignment(assign), form: .value, owner: Object.self)
    }

    // A back link, an optional reference, is what `decodeLater` reads nearly always: this form
    // of `decodeLater(_:forKey:into:)` reads the reference when it is requested and later only
    // looks its object up, rather than decoding it then through `GraphValue`'s generic calls.
    // Same result, same errors.

    @_documentation(visibility: internal)
    public func decodeLater<Object: GraphCoding & AnyObject, T: GraphCoding & AnyObject>(
        _: T?.Type,
        forKey key: String,
        into assign: @escaping (Object, T?) throws -> Void
    ) throws {
        guard try state.locate(key) else { throw state.keyNotFound(key, expected: readableTypeName(T?.self)) }
        try checkOwnedRequest(key)
        try deferValue(
            Int.self,  // not used: the reference is read as a `T`
            assign: QueuedAssignment(reference: assign),
            form: .ownedReference,
            owner: Object.self,
            reference: T.self
        )
    }

    /// Throws unless an object's initializer asks, for the forms of `decodeLater` whose
    /// closure takes that object.
    private func checkOwnedRequest(_ key: String) throws(GraphArchiveError) {
        guard isConstructing else {
            throw GraphArchiveError(
                .invalidState,
                "decodeLater(_:forKey:into:) passes its closure the object whose initializer asks; no object's "
                    + "initializer asks for key \"\(key)\": use decodeLater(_:forKey:assign:)",
                keyPath: state.keyPath()  // located: the path ends with `key`
            )
        }
    }

    /// Queues the value the reader is on, for `decodeLater`'s forms, as `form` says: notes where
    /// it is (or copies it, or for `.ownedReference` reads a reference or nil) and after which
    /// object it can be decoded, and moves past it.
    private func deferValue(
        _ type: any GraphValue.Type,
        assign: consuming QueuedAssignment,
        form: PendingAssignments.Entry.Form,
        owner: (any (GraphCoding & AnyObject).Type)? = nil,
        reference: (any (GraphCoding & AnyObject).Type)? = nil
    ) throws {
        let offset = state.reader.offset
        try state.charge(MemoryBudget.deferredAssignment, for: "a deferred assignment", at: offset)
        let (awaited, end, referenced) = objectAwaited(byValueAt: offset)
        var copy: CopiedValue?
        var target = referenced
        if let end, form == .ownedReference {
            // Nil or one valid reference: only its object is looked up when the assignment runs.
            state.reader.offset = end
        } else {
            target = Int(PendingAssignments.Entry.readLater)
            // Nil, one reference or a packed reference array of at most `CopiedValue.capacity`
            // bytes in a payload given back as construction passes it (a large file or rebuilt
            // payload) is copied, so that the payload need not be kept for it; any other value
            // is read where it is, and a payload given back is kept from there on.
            copy = state.input == nil ? nil : end.flatMap { CopiedValue(offset..<$0, of: state.reader) }
            if let end, copy != nil || state.input == nil {
                state.reader.offset = end
            } else {
                var tag = state.reader
                try state.scanner.skipValue(&state.reader, depth: state.stack.count)
                if state.input != nil && (try? tag.readByte()) == ValueTag.referenceArray {
                    copy = CopiedValue(offset..<state.reader.offset, of: state.reader)
                }
                if copy == nil { state.keepsInput(from: offset) }
            }
        }
        state.finishValue()
        // Taken once the value is finished, which keeps `current` (the value's key): the
        // container's fields are then at hand rather than kept across the calls above.
        let place = DeferredPlace(
            shape: Int32(truncatingIfNeeded: state.container.shape),
            key: Int32(truncatingIfNeeded: state.container.current),
            object: Int32(truncatingIfNeeded: state.container.objectIndex),
            owner: Int32(truncatingIfNeeded: state.objectBeingBuilt)
        )
        state.pendingAssignments.add(
            after: awaited,
            isBeingBuilt: awaited == state.objectBeingBuilt,
            .init(
                type: type,
                offset: offset,
                copy: copy ?? CopiedValue(),
                place: place,
                form: form,
                target: Int32(truncatingIfNeeded: target),
                owner: owner,
                reference: reference
            ),
            assign: assign
        )
    }

    /// Points the reader at a deferred value: at `offset` in the payload, or at `copy`, the
    /// value's bytes copied from there, when it holds any. Returns the reader to put back.
    func readerForDeferred(at offset: Int, copy: CopiedValue) -> ByteReader {
        let payloadReader = state.reader
        if copy.isEmpty {
            state.reader.offset = offset
        } else {
            if state.copiedValues == nil { state.copiedValues = CopiedValueBuffer() }
            state.reader = state.copiedValues!.reader(holding: copy)
        }
        return payloadReader
    }

    // MARK: - Plumbing called by the GraphValue conformances

    @inline(__always)
    func readObjectReference<T: GraphCoding & AnyObject>(_: T.Type) throws -> T {
        try state.readObjectReference(T.self, expected: readableTypeName(T.self))
    }

    /// The `count` objects of a packed reference array (FORMAT.md §6.5), its tag and count read.
    func readReferenceArray<T: GraphCoding & AnyObject>(count: Int, capacity: Int, as _: T.Type) throws -> [T] {
        guard !state.objects.handsOverFirstReferences else {
            return try readTakenReferenceArray(count: count, capacity: capacity, as: T.self)
        }
        // The one-call decode's root array: nothing but this array can hold the objects after it.
        let handingOver = state.handsOverObjects && state.stack.isEmpty
        var unread = try startReferenceArray(count: count, capacity: capacity, as: T.self)
        return try [T].filled(count: count, capacity: capacity) { () throws(GraphArchiveError) -> T in
            let (index, offset) = try state.nextArrayReference(unread: &unread, handingOver: handingOver)
            return try state.object(at: index, as: T.self, offset: offset, handingOver: handingOver)
        }
    }

    /// `readReferenceArray` while the table hands each object to its first reference
    /// (`takenObject`); apart, so that the usual array pays no test per element. Its
    /// `readReferences` touch none of the objects, as for a root array's not yet taken.
    @inline(never)
    private func readTakenReferenceArray<T: GraphCoding & AnyObject>(count: Int, capacity: Int, as _: T.Type)
        throws -> [T]
    {
        var unread = try startReferenceArray(count: count, capacity: capacity, as: T.self)
        return try [T].filled(count: count, capacity: capacity) { () throws(GraphArchiveError) -> T in
            let (index, offset) = try state.nextArrayReference(unread: &unread, handingOver: true)
            return try state.takenObject(at: index, as: T.self, offset: offset)
        }
    }

    /// Charges a packed reference array of `count` elements and starts reading it; returns the
    /// references to read, never more than `filled` takes (an array longer than its input fails
    /// there).
    @inline(__always)
    private func startReferenceArray<T: GraphCoding & AnyObject>(count: Int, capacity: Int, as _: T.Type)
        throws(GraphArchiveError) -> Int
    {
        try state.charge(
            MemoryBudget.array(capacity, stride: MemoryLayout<T>.stride),
            for: "an array of \(count) references",
            at: state.reader.offset
        )
        state.referenceBatch.startArray()
        return min(count, capacity)
    }

    func readValueRecord<T: GraphCoding>(_: T.Type) throws -> T {
        let start = state.reader.offset
        guard try state.reader.readByte() == ValueTag.valueRecord else {
            throw state.typeMismatch(expected: readableTypeName(T.self), tagOffset: start)
        }
        return try unwindingOnError {
            let shape = try state.beginRecord(objectIndex: -1)
            let typeID = state.tables.shapeType[shape]
            if state.verifiedValueTypes[typeID] != ObjectIdentifier(T.self) {
                let name = state.tables.typeNames[typeID]
                guard !state.tables.typeIsObject[typeID],
                    name == T.archivedTypeName || T.archivedTypeAliases.contains(name)
                else {
                    throw GraphArchiveError(
                        .typeMismatch,
                        "expected \(T.archivedTypeName), found a value of type \(name)",
                        offset: start,
                        keyPath: state.keyPath()
                    )
                }
                state.verifiedValueTypes[typeID] = ObjectIdentifier(T.self)
            }
            let value = try T(from: self)
            try state.endRecord()
            return value
        }
    }

    /// Runs a read that opens containers (a value record, an array or dictionary of values);
    /// when it throws, closes what it opened (`DecodingState.unwind(toDepth:)`) before the error
    /// goes on, so that a caller who catches it reads on in its own container.
    @inline(__always)
    private func unwindingOnError<Result>(_ read: () throws -> Result) throws -> Result {
        let depth = state.stack.count
        do {
            return try read()
        } catch {
            state.unwind(toDepth: depth)
            throw error
        }
    }

    func readArray<Element: GraphValue>(_: Element.Type) throws -> [Element] {
        let start = state.reader.offset
        let tag = try state.reader.peekByte()
        if Element.self == UInt8.self && tag == ValueTag.bytes {
            return try state.readByteArray() as! [Element]
        }
        switch tag {
        case ValueTag.referenceArray:
            state.reader.offset += 1
            let (count, capacity) = try state.readCollectionCount(at: start)
            do {
                return try Element._decodeObjectArray(Element.self, count: count, capacity: capacity, from: self)
            } catch is ObjectsWhereValuesWereAskedFor {
                throw state.typeMismatch(expected: readableTypeName([Element].self), tagOffset: start)
            }
        case ValueTag.array:
            state.reader.offset += 1
            let (count, capacity) = try state.readCollectionCount(at: start)
            try state.charge(
                MemoryBudget.array(capacity, stride: MemoryLayout<Element>.stride),
                for: "an array of \(count) \(Element.self)",
                at: start
            )
            return try unwindingOnError {
                try state.beginNested()
                var result: [Element] = []
                result.reserveCapacity(capacity)
                for _ in 0..<count {
                    result.append(try Element._decodeGraphValue(from: self))
                }
                state.endNested()
                return result
            }
        default:
            throw state.typeMismatch(expected: readableTypeName([Element].self), tagOffset: start)
        }
    }

    func readDictionary<Key: GraphValue, Value: GraphValue>(_: Key.Type, _: Value.Type) throws -> [Key: Value] {
        let start = state.reader.offset
        guard try state.reader.readByte() == ValueTag.dictionary else {
            throw state.typeMismatch(expected: readableTypeName([Key: Value].self), tagOffset: start)
        }
        let (count, capacity) = try state.readCollectionCount(at: start)
        try state.charge(
            MemoryBudget.dictionary(
                capacity / 2,
                keyStride: MemoryLayout<Key>.stride,
                valueStride: MemoryLayout<Value>.stride
            ),
            for: "a dictionary of \(count) entries",
            at: start
        )
        return try unwindingOnError {
            try state.beginNested()
            var result: [Key: Value] = [:]
            result.reserveCapacity(capacity / 2)
            for _ in 0..<count {
                let keyOffset = state.reader.offset
                let key = try Key._decodeGraphValue(from: self)
                let value = try Value._decodeGraphValue(from: self)
                guard result.updateValue(value, forKey: key) == nil else {
                    throw GraphArchiveError(
                        .corrupt,
                        "dictionary holds the same key twice",
                        offset: keyOffset,
                        keyPath: state.keyPath()
                    )
                }
            }
            state.endNested()
            return result
        }
    }

    // MARK: - One-call forms

    /// Decodes the root value of archive `data` (key ``GraphArchiver/rootKey``) as `type`.
    ///
    /// `type`'s own classes (e.g. `GridState` for `[GridState]`) are registered automatically,
    /// with the subclasses they list in ``GraphCoding/archivedSubclasses``; pass others (the
    /// classes of fields, of structs' fields) in `registry`. The typed, throwing
    /// `unarchivedObject(ofClass:from:)`.
    ///
    /// In an archive with as many references as objects (a chain, a tree), each object is
    /// given to the first reference read to it, without a retain. An initializer that reads a
    /// reference a second time, or two records that refer to one object, make it decode the
    /// archive again from the start, retaining as usual: initializers can then run twice.
    ///
    /// - Throws: What ``init(forReadingFrom:registry:options:)-(Data,_,_)`` throws; for an
    ///   archive whose root is objects of classes `registry` lacks while `type` names no class
    ///   (`[String]` of an archive of notes), `.typeMismatch` saying what the root holds and
    ///   what was asked for, rather than `.unknownType`.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        from data: Data,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        options: Options = Options()
    ) throws -> T {
        // The archive is read where `data` holds it, not copied (see `ArchiveBytes(borrowing:)`).
        // The unarchiver is closed before `data`'s bytes are released, so one that a decoding
        // initializer kept can no longer read them.
        let registry = registry.including(T.self)
        return try ArchiveBytes.lending(data) { bytes in
            // First handing each object to its first reference; if one is referenced again, once
            // more without (see `DecodedObjects.handOverFirstReferences()`).
            let conflict = HandOverConflict()
            do {
                let root = try decodeRoot(T.self, of: bytes, registry: registry, options: options, conflict: conflict)
                if !conflict.happened { return root }
            } catch  where conflict.happened {}
            return try decodeRoot(T.self, of: bytes, registry: registry, options: options, conflict: nil)
        }
    }

    private static func decodeRoot<T: GraphValue>(
        _: T.Type,
        of bytes: ArchiveBytes,
        registry: GraphTypeRegistry,
        options: Options,
        conflict: HandOverConflict?
    ) throws -> T {
        let unarchiver = try GraphUnarchiver(
            bytes: bytes,
            registry: registry,
            options: options,
            root: RootRequest(T.self, handOverConflict: conflict)
        )
        defer { unarchiver.state.closeInput() }
        return try unarchiver.decodeRoot(T.self)
    }

    /// Decodes the root value of the archive at `path` as `type`: the typed, throwing
    /// `unarchiveObject(withFile:)`.
    ///
    /// - Throws: `.fileNotFound` if there is no file at `path`, and everything
    ///   ``init(forReadingFrom:registry:options:)-(Data,_,_)`` throws.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        fromFile path: String,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        options: Options = Options()
    ) throws -> T {
        let unarchiver = try GraphUnarchiver(
            contentsOfFile: path,
            registry: registry.including(T.self),
            options: options,
            root: RootRequest(T.self)
        )
        return try unarchiver.decodeRoot(T.self)
    }

    /// The root value, for the one-call forms, which drop the unarchiver afterwards: its
    /// objects may be handed to the root array (see `DecodedObjects`).
    func decodeRoot<T: GraphValue>(_: T.Type) throws -> T {
        try state.charge(
            DecodedObjects.handOverBytes(count: state.objectCount),
            for: "marking the objects handed to the root",
            at: state.reader.offset
        )
        state.handsOverObjects = true
        return try decode(T.self, forKey: GraphArchiver.rootKey)
    }
}

extension GraphTypeRegistry {
    /// This registry plus the classes `T` is made of.
    func including<T: GraphValue>(_: T.Type) -> GraphTypeRegistry {
        var registry = self
        T._registerGraphTypes(in: &registry)
        return registry
    }
}
