// Sources/GraphArchive/Unarchiving/DecodingState.swift - the mutable state of one archive being read
//
// Like EncodingState, one struct so each public `decode` call costs one access to the
// unarchiver's storage.

struct DecodingContainer {
    enum Kind { case top, record }
    var kind: Kind
    var shape = 0
    var keyStart = 0
    var keyCount = 0
    /// Index of the value expected next when keys are read in the order they were written.
    var position = 0
    /// Offset of value `position`.
    var cursor = 0
    /// Offset of value 0.
    var valueStart = 0
    /// Offsets of every value plus the record's end, computed on the first out-of-order read.
    var offsets: [Int] = []
    /// Value being read (for `finishValue` and error messages).
    var current = -1
    /// The object this record belongs to, or -1 for an inline value.
    var objectIndex = -1
}

struct DecodingState {
    var reader: ByteReader
    let tables: ArchiveTables
    let scanner: ValueScanner
    let options: GraphUnarchiver.Options
    let objectCount: Int
    var objects: ContiguousArray<AnyObject> = []
    /// The class of each object in `objects`, so a typed lookup need not read the object itself
    /// (on a large graph that read is a cache miss per reference).
    var objectClasses: ContiguousArray<ObjectIdentifier> = []
    var container = DecodingContainer(kind: .top)
    var stack: ContiguousArray<DecodingContainer> = []
    /// Top-level key → offset of its value.
    var topValues: [String: Int] = [:]
    var currentTopKey: String?
    /// Words of the key last matched at each shape position (see `StringBits`): after one
    /// `==` match, a caller's literal key matches by identity from then on.
    var shapeKeyBits: [StringBits]
    /// The strings `shapeKeyBits` were taken from, kept alive.
    var matchKeys: [String]
    /// Value types checked to match their archived names, by type id.
    var verifiedValueTypes: [ObjectIdentifier?]

    init(reader: ByteReader, tables: ArchiveTables, objectCount: Int, options: GraphUnarchiver.Options) {
        self.reader = reader
        self.tables = tables
        self.objectCount = objectCount
        self.options = options
        self.scanner = ValueScanner(
            shapeValueCounts: tables.shapeKeyCount, objectCount: objectCount, maximumDepth: options.maximumDepth)
        self.verifiedValueTypes = Array(repeating: nil, count: tables.typeNames.count)
        self.shapeKeyBits = tables.shapeKeys.map(StringBits.init)
        self.matchKeys = tables.shapeKeys
    }

    // MARK: - Locating keys

    /// Positions the reader on the value for `key`; false if the container has no such key.
    @inline(__always)
    mutating func locate(_ key: String) throws(GraphArchiveError) -> Bool {
        if container.kind == .record {
            let position = container.position
            if position < container.keyCount {
                let slot = container.keyStart + position
                if shapeKeyBits[slot] == StringBits(key) {
                    reader.offset = container.cursor
                    container.current = position
                    return true
                }
                if matchKeys[slot] == key {
                    // Hold the caller's string so its storage, and so its words, stay unique.
                    matchKeys[slot] = key
                    shapeKeyBits[slot] = StringBits(key)
                    reader.offset = container.cursor
                    container.current = position
                    return true
                }
            }
        }
        return try locateSlow(key)
    }

    @inline(never)
    private mutating func locateSlow(_ key: String) throws(GraphArchiveError) -> Bool {
        switch container.kind {
        case .top:
            guard let offset = topValues[key] else { return false }
            reader.offset = offset
            currentTopKey = key
            return true
        case .record:
            var index = -1
            for candidate in 0..<container.keyCount where tables.shapeKeys[container.keyStart + candidate] == key {
                index = candidate
                break
            }
            guard index >= 0 else { return false }
            try computeOffsets()
            reader.offset = container.offsets[index]
            container.current = index
            return true
        }
    }

    /// Records where each value of the current record starts (one walk, once per record).
    private mutating func computeOffsets() throws(GraphArchiveError) {
        guard container.offsets.isEmpty else { return }
        var walker = reader
        walker.offset = container.valueStart
        var offsets: [Int] = []
        offsets.reserveCapacity(container.keyCount + 1)
        for _ in 0..<container.keyCount {
            offsets.append(walker.offset)
            try scanner.skipValue(&walker, depth: stack.count)
        }
        offsets.append(walker.offset)
        container.offsets = offsets
    }

    /// Marks the value just read as done; the reader is right after it.
    @inline(__always)
    mutating func finishValue() {
        if container.kind == .record {
            container.position = container.current + 1
            container.cursor = reader.offset
        }
    }

    func containsKey(_ key: String) -> Bool {
        switch container.kind {
        case .top:
            return topValues[key] != nil
        case .record:
            return tables.shapeKeys[container.keyStart..<(container.keyStart + container.keyCount)].contains(key)
        }
    }

    // MARK: - Records

    /// Reads a record's shape and makes it the current container.
    mutating func beginRecord(objectIndex: Int) throws(GraphArchiveError) -> Int {
        guard stack.count < options.maximumDepth else {
            throw GraphArchiveError(
                .limitExceeded, "values nest deeper than maximumDepth (\(options.maximumDepth))", offset: reader.offset,
                keyPath: keyPath())
        }
        let shape = try scanner.readShape(&reader)
        stack.append(container)
        container = DecodingContainer(
            kind: .record, shape: shape, keyStart: tables.shapeKeyStart[shape], keyCount: tables.shapeKeyCount[shape],
            cursor: reader.offset, valueStart: reader.offset, objectIndex: objectIndex)
        return shape
    }

    /// Moves past the values the initializer did not read (keys newer code wrote) and closes
    /// the record.
    mutating func endRecord() throws(GraphArchiveError) {
        if container.position == container.keyCount {
            reader.offset = container.cursor
        } else if !container.offsets.isEmpty {
            reader.offset = container.offsets[container.keyCount]
        } else {
            reader.offset = container.cursor
            for _ in container.position..<container.keyCount {
                try scanner.skipValue(&reader, depth: stack.count)
            }
        }
        container = stack.removeLast()
    }

    mutating func beginNested() throws(GraphArchiveError) {
        guard stack.count < options.maximumDepth else {
            throw GraphArchiveError(
                .limitExceeded, "values nest deeper than maximumDepth (\(options.maximumDepth))", offset: reader.offset,
                keyPath: keyPath())
        }
        stack.append(container)
    }

    mutating func endNested() {
        container = stack.removeLast()
    }

    // MARK: - Errors

    /// Where the value being decoded sits, e.g. `["root", "GridState#12", "kEncodeKeyName"]`.
    func keyPath() -> [String] {
        var path: [String] = []
        for level in stack + [container] {
            switch level.kind {
            case .top:
                if let currentTopKey { path.append(currentTopKey) }
            case .record:
                let type = tables.typeNames[tables.shapeType[level.shape]]
                path.append(level.objectIndex >= 0 ? "\(type)#\(level.objectIndex)" : type)
                if level.current >= 0 { path.append(tables.shapeKeys[level.keyStart + level.current]) }
            }
        }
        return path
    }

    /// The key path of one value of a record, e.g. `["Node#12", "parent"]`.
    func recordPath(shape: Int, objectIndex: Int, key: Int) -> [String] {
        guard shape < tables.shapeType.count else { return [] }
        let type = tables.typeNames[tables.shapeType[shape]]
        var path = [objectIndex >= 0 ? "\(type)#\(objectIndex)" : type]
        if key >= 0 && key < tables.shapeKeyCount[shape] { path.append(tables.shapeKeys[tables.shapeKeyStart[shape] + key]) }
        return path
    }

    @inline(never)
    func typeMismatch(expected: String, tagOffset: Int) -> GraphArchiveError {
        let found: String
        if tagOffset < reader.end {
            var peek = reader
            peek.offset = tagOffset
            found = (try? peek.peekByte()).map(ValueTag.describe) ?? "nothing"
        } else {
            found = "nothing"
        }
        return GraphArchiveError(
            .typeMismatch, "expected \(expected), found \(found)", offset: tagOffset, keyPath: keyPath())
    }

    @inline(never)
    func keyNotFound(_ key: String, expected: String) -> GraphArchiveError {
        var path = keyPath()
        path.append(key)
        let owner: String
        switch container.kind {
        case .top: owner = "the archive's top level"
        case .record: owner = tables.typeNames[tables.shapeType[container.shape]]
        }
        return GraphArchiveError(.keyNotFound, "no value for key \"\(key)\" (\(expected)) in \(owner)", keyPath: path)
    }
}
