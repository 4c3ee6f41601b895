// Sources/GraphArchive/KeyedArchive/KeyedArchiveReader.swift - transcodes a keyed archive into the engine's payload
//
// Rather than a second decoder, a keyed archive is rewritten into the engine's own format
// (FORMAT.md §4-§6) and read by the ordinary GraphUnarchiver, so a model type's one
// `init(from:)` serves both formats. Model-class instances become objects whose type name is
// their `$classname` (the registry decides what may be created); Foundation strings, numbers,
// arrays, dictionaries, data and dates become inline values, and so do instances of the
// classes the caller names as value types (structs). Objects are numbered in
// construction order (FORMAT.md §5.4): an iterative depth-first post-order, so everything an
// object refers to comes first, except references that close a cycle (decoded with
// `decodeLater`). Inline values are expanded by bounded recursion: a container that contains
// itself, nesting beyond `maximumDepth`, or sharing that would blow up the output is an error.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Rewrites one keyed archive as a native archive.
struct KeyedArchiveReader: ~Copyable {
    /// A keyed archive may grow this many times (plus `expansionAllowance` bytes) when its
    /// shared values are copied inline: real archives stay far below, while a "billion laughs"
    /// of arrays sharing arrays is stopped after work proportional to its size.
    static let expansionFactor = 64
    static let expansionAllowance = 1 << 20

    private var index: KeyedArchiveIndex
    private let options: GraphUnarchiver.Options
    /// Tables (keys, types, shapes) and the output section.
    private var state: EncodingState
    // The per-UID tables and the lists below are `PlainList`s: they belong to this one
    // reader, so an array's uniqueness check on every change guards nothing (callgrind: about
    // 40 such calls a record).
    /// Per UID: the object's construction-order position, or `unvisited` / `inProgress`.
    private var position: PlainStack<Int32>
    /// Per UID: bit 0 while an inline container is being expanded, bit 1 once it is known to
    /// hold no objects.
    private var flags: PlainStack<UInt8>
    /// Object UIDs in construction order.
    private var order = GrowableBuffer<Int>()
    /// Per object UID: where its record starts in `records`. Per array UID (arrays have no
    /// record): 1 + where `arrayObjects` lists its elements, or 0.
    private var recordStart: PlainStack<Int32>
    /// The elements of inline arrays whose every element is an object, as ordering read them:
    /// each array's count, then its elements' UIDs. Writing such an array (an archive's root
    /// array, nearly always) reads none of its references again.
    private var arrayObjects = GrowableBuffer<Int32>()
    /// Entries `arrayObjects` may hold: an eighth of the input's bytes, so a hostile archive's
    /// arrays cost at most half its size again.
    private let arrayObjectsLimit: Int
    /// Parsed records, back to back: the shape id, then the values in the shape's key order,
    /// each either a plain value's object index (≥ 0: written as is) or -1 - the UID of an
    /// entry that needs classifying. Built while ordering, so writing parses nothing again.
    private var records = GrowableBuffer<Int32>()
    private var nativeKeys: [Int] = []
    private var nativeTypes: [Int] = []
    private var referenceCount = 0
    private var budget: Int
    /// Whether `budget` is the memory budget's share rather than the expansion limit.
    private let budgetIsMemory: Bool
    /// How many objects of `order` had their records written as they were numbered (see
    /// `number(_:recordEnd:)`); -1 while every object so far had.
    private var writtenObjects = -1
    /// The top-level section, written after ordering but stored before the objects' records.
    private var topSection = ByteWriter()
    /// The fields of the record being parsed, sorted by `fieldOrder`: the first `fieldCount`.
    private var fields = GrowableBuffer<(key: Int, value: Int, order: Int)>()
    private var fieldCount = 0
    /// Whether a class's fields go in the order its initializer was seen to read them
    /// (`KeyReadOrders`) rather than by key id: for an output decoded here and now, never for
    /// one stored, which stays the same from one process to the next.
    private let ordersFieldsAsRead: Bool
    /// Per native type: each key's place in the order the type's class reads its keys, for
    /// a type with a noted order (else empty).
    private var readPlaces: [[String: Int]] = []
    /// The bits of the loads `loadedBits(count:includingKinds:uidAt:)` made ahead of use, kept
    /// so that the loads are not optimized away.
    private var loadedAhead: UInt8 = 0

    private static let unvisited: Int32 = -1
    private static let inProgress: Int32 = -2
    private static let expanding: UInt8 = 1
    private static let holdsNoObjects: UInt8 = 2

    private init(
        index: KeyedArchiveIndex,
        options: GraphUnarchiver.Options,
        inputBytes: Int,
        memoryShare: Int,
        ordersFieldsAsRead: Bool
    ) {
        self.index = index
        self.options = options
        self.ordersFieldsAsRead = ordersFieldsAsRead
        state = EncodingState(maximumDepth: options.maximumDepth)
        // The native form is nearly always smaller than the keyed one; reserving that much up
        // front spares the copies of growing (untouched pages cost nothing).
        state.out = ByteWriter(reservingCapacity: inputBytes)
        position = PlainStack(capacity: index.entryCount)
        position.append(repeating: Self.unvisited, count: index.entryCount)
        flags = PlainStack(zeros: index.entryCount)
        recordStart = PlainStack(zeros: index.entryCount)
        // At most one position per entry: reserved whole, the list is never copied as it grows
        // (pages it does not reach are never touched).
        order.reserveCapacity(index.entryCount)
        arrayObjectsLimit = inputBytes / 8
        // Reserved as the lists were seen to grow, so that they are not copied as they do
        // (callgrind: 28 copies, 2.6M instructions, in a read of 100,000 grid-state slots):
        // records of instances holding their strings through UIDs take about 1.3 values an
        // entry, and an array of objects lists one per entry at most.
        records.reserveCapacity(2 * index.entryCount)
        arrayObjects.reserveCapacity(min(index.entryCount + 1, arrayObjectsLimit))
        let (scaled, overflow) = inputBytes.multipliedReportingOverflow(by: Self.expansionFactor)
        let expansion = overflow ? Int.max : scaled + Self.expansionAllowance
        budget = min(expansion, memoryShare)
        budgetIsMemory = memoryShare < expansion
    }

    /// The third of the memory budget the output may grow to (itself, its growth, and the copy
    /// the unarchiver reads); the machine's figures are read only when the expansion limit
    /// alone could pass what the budget has approved so far.
    private static func memoryShare(of memory: inout MemoryBudget, inputBytes: Int) -> Int {
        let (scaled, overflow) = inputBytes.multipliedReportingOverflow(by: expansionFactor)
        let expansion = overflow ? Int.max : scaled + expansionAllowance
        return expansion <= memory.remaining / 3 ? Int.max : memory.finalRemaining() / 3
    }

    /// What indexing and transcoding keep per property list object: its offset and key id, and
    /// for an entry of `$objects` its kind, detail, instance keys, position, flags, record start
    /// and its share of the records and order lists.
    static let bytesPerPlistObject = 72

    /// Transcodes keyed archive `bytes` into a native archive.
    ///
    /// - Parameters:
    ///   - registry: When given, picks the name among `$classname`, its unqualified form and
    ///     `$classes` that the registry knows; otherwise `$classname` is used as is.
    ///   - valueTypeNames: Classes whose instances become inline value records.
    /// - Throws: ``GraphArchiveError`` for anything that is not a well-formed keyed archive.
    static func transcode(
        _ bytes: ArchiveBytes,
        registry: GraphTypeRegistry?,
        valueTypeNames: Set<String> = [],
        options: GraphUnarchiver.Options,
        compression: ArchiveCompression = .none
    ) throws(GraphArchiveError) -> ArchiveOutput {
        var memory = MemoryBudget(options)
        return try transcode(
            bytes,
            registry: registry,
            valueTypeNames: valueTypeNames,
            options: options,
            compression: compression,
            memory: &memory
        )
    }

    /// ``transcode(_:registry:valueTypeNames:options:compression:)`` charging `memory` before it
    /// allocates: the binary form of an XML list, the index of the list's objects (counted from
    /// the trailer before they are indexed), and the native output, whose growth stops where
    /// a third of what is left would be passed (the output, its growth and the copy the
    /// unarchiver reads).
    ///
    /// - Parameter isLoadedHere: The output is only loaded in this process, never stored: its
    ///   payload checksum, which such a load does not check, is not computed (left 0), and the
    ///   fields of a class in `registry` go in the order its initializer was seen to read them
    ///   (see ``KeyReadOrders``).
    static func transcode(
        _ bytes: ArchiveBytes,
        registry: GraphTypeRegistry?,
        valueTypeNames: Set<String> = [],
        options: GraphUnarchiver.Options,
        compression: ArchiveCompression = .none,
        isLoadedHere: Bool = false,
        memory: inout MemoryBudget
    ) throws(GraphArchiveError) -> ArchiveOutput {
        memory.limitToInput(bytes: bytes.count)
        let prefix = bytes.copyBytes(0..<min(8, bytes.count))
        if PropertyListInput.isXML(prefix) {
            try memory.charge(2 * MemoryBudget.chunk(bytes.count), for: "the binary form of the XML property list")
        } else if BPlist.hasMagic(prefix) && bytes.count >= BPlist.magic.count + 1 + BPlist.trailerSize {
            var trailerReader = bytes.reader((bytes.count - BPlist.trailerSize)..<bytes.count)
            let trailer = try BPlist.Trailer.read(
                &trailerReader,
                byteCount: bytes.count,
                maximumObjectCount: options.maximumObjectCount
            )
            let (indexBytes, overflow) = trailer.objectCount.multipliedReportingOverflow(by: bytesPerPlistObject)
            try memory.charge(
                overflow ? Int.max : indexBytes,
                for: "the index of the property list's \(trailer.objectCount) objects",
                offset: bytes.count - BPlist.trailerSize
            )
        }
        return try PropertyListInput.withPropertyList(bytes, options: options) { (plist) throws(GraphArchiveError) in
            try transcode(
                plist: plist,
                registry: registry,
                valueTypeNames: valueTypeNames,
                options: options,
                compression: compression,
                isLoadedHere: isLoadedHere,
                memory: &memory
            )
        }
    }

    /// Transcodes `data` where it lies: a large archive is not copied first.
    static func transcode(
        _ data: Data,
        registry: GraphTypeRegistry?,
        valueTypeNames: Set<String> = [],
        options: GraphUnarchiver.Options,
        compression: ArchiveCompression = .none
    ) throws(GraphArchiveError) -> ArchiveOutput {
        if PropertyListInput.isXML(data.prefix(8)) {
            return try transcode(
                ArchiveBytes(copying: data),
                registry: registry,
                valueTypeNames: valueTypeNames,
                options: options,
                compression: compression
            )
        }
        return try ArchiveBytes.lending(data) { (bytes) throws(GraphArchiveError) -> ArchiveOutput in
            var memory = MemoryBudget(options)
            return try transcode(
                plist: BPlist.scan(bytes.reader(), maximumObjectCount: options.maximumObjectCount),
                registry: registry,
                valueTypeNames: valueTypeNames,
                options: options,
                compression: compression,
                isLoadedHere: false,
                memory: &memory
            )
        }
    }

    private static func transcode(
        plist: BPlist,
        registry: GraphTypeRegistry?,
        valueTypeNames: Set<String>,
        options: GraphUnarchiver.Options,
        compression: ArchiveCompression,
        isLoadedHere: Bool,
        memory: inout MemoryBudget
    ) throws(GraphArchiveError) -> ArchiveOutput {
        let index = try KeyedArchiveIndex(plist: plist, registry: registry, valueTypeNames: valueTypeNames)
        let inputBytes = plist.reader.end
        try memory.charge(MemoryBudget.chunk(inputBytes), for: "the native archive transcoded from the keyed one")
        var reader = KeyedArchiveReader(
            index: index,
            options: options,
            inputBytes: inputBytes,
            memoryShare: memoryShare(of: &memory, inputBytes: inputBytes),
            ordersFieldsAsRead: isLoadedHere
        )
        try reader.orderObjects()
        try reader.writeTopLevel()
        try reader.writeObjects()
        let output = try reader.assemble(compression: compression, checksummed: !isLoadedHere)
        // The output beyond what was reserved for it, and the copy of it the unarchiver reads.
        try memory.charge(
            2 * MemoryBudget.chunk(output.stored().count),
            for: "the native archive transcoded from the keyed one"
        )
        return output
    }

    // MARK: - Construction order

    /// Numbers every object reachable from `$top` in construction order.
    private mutating func orderObjects() throws(GraphArchiveError) {
        // The roots, as many as `$top`'s values hold, often an entry's worth (an app's array).
        var edges = GrowableBuffer<Int>(capacity: max(16, index.entryCount))
        let top = index.top
        var values = index.plist.references(of: top, from: top.count)
        for _ in 0..<top.count {
            try collectObjects(inField: values.next(), into: &edges, depth: 0)
        }
        let roots = edges.array
        edges.truncate(to: 0)
        // Each frame is an object, the range of `edges` holding what it refers to, and where
        // its record ends in `records`.
        var stack = GrowableBuffer<(uid: Int, start: Int, next: Int, recordEnd: Int)>()
        for (slot, root) in roots.enumerated() {
            // A root met before (a shared slot) has its position anywhere in the table.
            if slot % Self.lookAhead == 0 {
                let count = min(Self.lookAhead, roots.count &- slot)
                loadedAhead ^= loadedBits(count: count, includingKinds: false) { roots[slot &+ $0] }
                if loadsRecordsAhead { loadRecordsAhead(count: count) { roots[slot &+ $0] } }
            }
            guard position[root] == Self.unvisited else { continue }
            try push(root, onto: &stack, edges: &edges)
            while let frame = stack.last {
                if frame.next < edges.count {
                    stack[stack.count - 1].next = frame.next + 1
                    let target = edges[frame.next]
                    if position[target] == Self.unvisited {
                        try push(target, onto: &stack, edges: &edges)
                    }
                } else {
                    stack.removeLast()
                    edges.truncate(to: frame.start)
                    try number(frame.uid, recordEnd: frame.recordEnd)
                }
            }
        }
        guard order.count <= options.maximumObjectCount else {
            throw GraphArchiveError(
                .limitExceeded,
                "keyed archive holds \(order.count) objects, over maximumObjectCount (\(options.maximumObjectCount))"
            )
        }
    }

    @inline(__always)
    private mutating func push(
        _ uid: Int,
        onto stack: inout GrowableBuffer<(uid: Int, start: Int, next: Int, recordEnd: Int)>,
        edges: inout GrowableBuffer<Int>
    ) throws(GraphArchiveError) {
        position[uid] = Self.inProgress
        let start = edges.count
        let (record, holdsEntries) = try parseRecord(uid)
        recordStart[uid] = Int32(truncatingIfNeeded: record)
        // A record of plain values only refers to nothing: numbered now, with no frame (and
        // its values not looked at again).
        guard holdsEntries else { return try number(uid, recordEnd: nil) }
        for position in (record + 1)..<records.count where records[position] < 0 {
            try collectObjects(inEntry: -1 - Int(records[position]), into: &edges, depth: 0)
        }
        stack.append((uid, start, start, records.count))
    }

    /// Gives object `uid`, all it refers to numbered (but references closing cycles), the next
    /// position, and writes its record while the values parsed are still in cache: written
    /// after ordering, each was read from memory again. Records are written in construction
    /// order, so only while every object so far was: a record with a value other than a plain
    /// value, nil or an object numbered (a reference closing a cycle, an inline container or
    /// value record, whose shapes must be numbered after the objects' own) stops this, and
    /// `writeObjects` writes the rest. `recordEnd` is where the record ends in `records`, nil
    /// for one of plain values only.
    @inline(__always)
    private mutating func number(_ uid: Int, recordEnd: Int?) throws(GraphArchiveError) {
        position[uid] = Int32(truncatingIfNeeded: order.count)
        order.append(uid)
        guard writtenObjects < 0 else { return }
        let start = Int(recordStart[uid])
        if let recordEnd {
            for slot in (start + 1)..<recordEnd where records[slot] < 0 {
                let entry = -1 - Int(records[slot])
                switch index.knownKind(of: entry) {
                case .null, .scalar: continue
                case .object where position[entry] >= 0: continue
                default:
                    writtenObjects = order.count - 1
                    return
                }
            }
        }
        try writeRecord(at: start, depth: 0)
    }

    /// Appends the objects that value `reference` refers to, looking inside inline containers;
    /// returns the entry it looked in (nil for an inline scalar or a plain value).
    @discardableResult
    private mutating func collectObjects(inField reference: Int, into edges: inout GrowableBuffer<Int>, depth: Int)
        throws(GraphArchiveError) -> Int?
    {
        // Inline scalars hold no objects; inline containers are refused when written.
        guard let value = try index.plist.uidValueReadingOnce(reference) else { return nil }
        let uid = try index.checkedUID(value, in: reference)
        // An entry classified before (an object met again, a quarter of a grid-state array's
        // elements) is answered from its kind: its marker, read to tell a plain value, lies
        // anywhere in the archive's bytes, and that read was a cache miss each time.
        switch index.knownKind(of: uid) {
        case .unclassified: if try index.isPlainValue(uid) { return nil }
        case .scalar: return nil
        default: break
        }
        try collectObjects(inEntry: uid, into: &edges, depth: depth)
        return uid
    }

    /// Appends the objects that entry `uid` is or holds.
    private mutating func collectObjects(inEntry uid: Int, into edges: inout GrowableBuffer<Int>, depth: Int)
        throws(GraphArchiveError)
    {
        try spend(1)
        switch try index.kind(of: uid) {
        case .object:
            edges.append(uid)
        case let kind where kind == .array || kind == .countedSet || kind == .dictionary || kind == .record:
            guard flags[uid] & Self.holdsNoObjects == 0 else { return }
            try enter(uid, depth: depth)
            let before = edges.count
            // An array's elements, a dictionary's keys then values, a record's values.
            switch kind {
            case .dictionary:
                let dictionary = try index.dictionaryParts(of: uid)
                for part in [dictionary.keys, dictionary.values] {
                    var references = index.plist.references(of: part)
                    for _ in 0..<part.count {
                        try collectObjects(inField: references.next(), into: &edges, depth: depth + 1)
                    }
                }
            case .record:
                let record = try index.entryObject(uid)
                var references = index.plist.references(of: record, from: record.count)
                for _ in 0..<record.count {
                    try collectObjects(inField: references.next(), into: &edges, depth: depth + 1)
                }
            default:
                try collectObjects(inArray: uid, into: &edges, depth: depth)
            }
            flags[uid] &= ~Self.expanding
            if edges.count == before { flags[uid] |= Self.holdsNoObjects }
        default:
            return
        }
    }

    /// Appends the objects that the elements of array entry `uid` are or hold, as
    /// `collectObjects(inField:)` does for each; lists them in `arrayObjects` the first time
    /// if every element is an object.
    private mutating func collectObjects(inArray uid: Int, into edges: inout GrowableBuffer<Int>, depth: Int)
        throws(GraphArchiveError)
    {
        let elements = try index.arrayElements(of: uid)
        var cursor = elements.cursor(index.plist)
        let listStart = arrayObjects.count
        var listing = recordStart[uid] == 0 && elements.count > 0 && listStart + elements.count < arrayObjectsLimit
        if listing { arrayObjects.append(Int32(truncatingIfNeeded: elements.count)) }
        let looksAhead = elements.count > Self.lookAhead
        for slot in 0..<elements.count {
            if looksAhead && slot % Self.lookAhead == 0 {
                loadAhead(cursor, count: min(Self.lookAhead, elements.count &- slot))
            }
            let before = edges.count
            let element = try collectObjects(inField: cursor.next(), into: &edges, depth: depth + 1)
            guard listing else { continue }
            // Listed while every element is an object. A list cut short stays, unused: an array
            // inside this one may have listed its objects after it. (Only arrays whose lists fit
            // the limit are listed at all.)
            if let element, edges.count == before + 1, try index.kind(of: element) == .object {
                arrayObjects.append(Int32(truncatingIfNeeded: element))
            } else {
                listing = false
            }
        }
        if listing { recordStart[uid] = Int32(truncatingIfNeeded: listStart + 1) }
    }

    // MARK: - Loading ahead

    /// Elements whose entries are loaded together ahead of use.
    private static var lookAhead: Int { ReferenceLookAhead.count }

    /// Loads what the next `count` (at most ``lookAhead``) references of `cursor` refer to, as
    /// `collectObjects(inField:)` will read it: the UID objects, then their entries' kinds and
    /// positions. An array whose slots share objects refers back to entries anywhere in the
    /// archive, and each such element cost a chain of cache misses, one waiting for the next
    /// (the UID object's offset, its bytes, the entry's kind, later its position); loaded here
    /// in tight loops, the misses of a batch overlap. Reads only: what damage a reference
    /// holds is reported when it is read in turn.
    private mutating func loadAhead(_ cursor: KeyedElementCursor, count: Int) {
        var ahead = cursor
        var uids = ReferenceLookAhead.Slots(repeating: -1)
        for slot in 0..<count {
            guard let reference = try? ahead.next() else { break }
            uids[slot] = index.plist.peekedUIDValue(reference) ?? -1
        }
        loadedAhead ^= loadedBits(count: count, includingKinds: true) { uids[$0] }
    }

    /// Loads what `parseRecord` will read of the roots `uidAt` gives for 0..<`count` (at most
    /// ``lookAhead``) that are not yet numbered: each one's dictionary, the objects its values
    /// refer to, and the markers of the entries those refer to. A value an instance shares with
    /// an earlier one (a name, a color, a date met before) lies anywhere in the archive, and
    /// reading it was a chain of cache misses (its object's offset, its bytes, its entry's
    /// object and marker), one waiting for the next; loaded here a stage at a time for the
    /// batch, the misses of a stage overlap. Reads only, as ``loadAhead(_:count:)``.
    private mutating func loadRecordsAhead(count: Int, uidAt uid: (Int) -> Int) {
        var values = RecordValueSlots(repeating: -1)
        var found = 0
        for slot in 0..<count {
            let uid = uid(slot)
            guard uid > 0 && uid < index.entryCount && position[uid] == Self.unvisited,
                let record = index.plist.smallContainer(index.entryIndex(uid)),
                record.type == BPlistMarker.dictionary
            else { continue }
            var references = index.plist.references(of: record, from: record.count)
            for _ in 0..<min(record.count, values.count &- found) {
                guard let reference = try? references.next() else { break }
                values[found] = reference
                found &+= 1
            }
        }
        for slot in 0..<found { values[slot] = index.plist.peekedUIDValue(values[slot]) ?? 0 }
        var bits: UInt8 = 0
        for slot in 0..<found where values[slot] > 0 && values[slot] < index.entryCount {
            bits ^= UInt8(truncatingIfNeeded: index.plist.leadingWords(index.entryIndex(values[slot]))?.words.0 ?? 0)
        }
        loadedAhead ^= bits
    }

    /// The references `loadRecordsAhead(count:uidAt:)` loads for one batch of ``lookAhead``
    /// roots: four a root, a grid-state record's three values and its class; a batch of larger
    /// records loads what its first records refer to only.
    private typealias RecordValueSlots = InlineArray<64, Int>

    /// Whether ordering loads the roots' records ahead (``loadRecordsAhead(count:uidAt:)``): only
    /// for archives of `keyedRecordsAheadMinimum` entries on (2^20 unless a test lowers it),
    /// whose tables (the index's and this reader's, some 40 bytes an entry, beside the archive)
    /// outgrow the caches, so that the reads it does early are misses; in a smaller one they
    /// mostly hit, and reading them twice would only add work.
    private var loadsRecordsAhead: Bool { index.entryCount >= options.keyedRecordsAheadMinimum }

    /// The XOR of the positions (and kinds, if `includingKinds`) of the entries `uidAt` gives
    /// for 0..<`count`, those in range: loads independent of one another, so that their cache
    /// misses overlap, ahead of the reads that use them one at a time.
    @inline(__always)
    private func loadedBits(count: Int, includingKinds: Bool, uidAt uid: (Int) -> Int) -> UInt8 {
        var bits: UInt8 = 0
        for slot in 0..<count {
            let uid = uid(slot)
            guard uid >= 0 && uid < index.entryCount else { continue }
            bits ^= UInt8(truncatingIfNeeded: position[uid])
            if includingKinds { bits ^= index.knownKind(of: uid).rawValue }
        }
        return bits
    }

    /// Marks inline container `uid` as being expanded; refuses one that contains itself.
    private mutating func enter(_ uid: Int, depth: Int) throws(GraphArchiveError) {
        guard flags[uid] & Self.expanding == 0 else {
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] contains itself: an inline value cannot hold itself without an object between",
                offset: index.plist.offset(of: try index.entryObject(uid).index)
            )
        }
        guard depth < options.maximumDepth else {
            throw GraphArchiveError(.limitExceeded, "values nest deeper than maximumDepth (\(options.maximumDepth))")
        }
        flags[uid] |= Self.expanding
    }

    @inline(__always)
    private mutating func spend(_ work: Int) throws(GraphArchiveError) {
        budget -= work
        if budget < 0 {
            guard !budgetIsMemory else {
                throw GraphArchiveError(
                    .limitExceeded,
                    "keyed archive's values, copied inline where they are shared, need more memory than the decode's budget has left"
                )
            }
            throw GraphArchiveError(
                .limitExceeded,
                "keyed archive shares values so widely that copying them inline would exceed \(Self.expansionFactor) times its size"
            )
        }
    }

    // MARK: - Writing

    /// Writes the top-level section into `topSection`, which goes before the records
    /// ordering may have written already.
    private mutating func writeTopLevel() throws(GraphArchiveError) {
        swap(&topSection, &state.out)
        defer { swap(&topSection, &state.out) }
        let top = index.top
        var seen: Set<Int> = []
        for slot in 0..<top.count {
            let key = try nativeKey(index.keyID(of: index.plist.reference(in: top, at: slot)))
            guard seen.insert(key).inserted else {
                throw GraphArchiveError(
                    .corrupt,
                    "$top lists key \"\(state.keys[key])\" twice",
                    offset: index.plist.offset(of: top.index)
                )
            }
            state.out.writeVarint(key)
            state.topCount += 1
            try writeField(index.plist.reference(in: top, at: top.count + slot), depth: 0)
        }
    }

    /// Writes each object's record, parsed while ordering, that ordering did not write.
    private mutating func writeObjects() throws(GraphArchiveError) {
        for position in (writtenObjects < 0 ? order.count : writtenObjects)..<order.count {
            try writeRecord(at: Int(recordStart[order[position]]), depth: 0)
        }
    }

    /// Writes the record parsed at `start` of `records`: its shape, then its values.
    private mutating func writeRecord(at start: Int, depth: Int) throws(GraphArchiveError) {
        let shape = Int(records[start])
        state.out.writeVarint(shape)
        for position in (start + 1)..<(start + 1 + state.shapes[shape].keyIDs.count) {
            let value = Int(records[position])
            if value >= 0 {
                switch index.plist.commonValue(value) {
                case .asciiString(let start, let count)?: try writeASCII(from: start, count: count)
                case .integer(let bits)?: state.writeInteger(bits)
                case nil: try writeScalar(index.plist.object(value))
                }
            } else {
                try writeEntry(-1 - value, depth: depth)
            }
        }
    }

    /// Parses the dictionary of instance `uid` onto `records`: its shape, then its value
    /// objects in the shape's key order. Returns where it starts, and whether a value is an
    /// entry that needs classifying (one below 0).
    private mutating func parseRecord(_ uid: Int) throws(GraphArchiveError) -> (start: Int, holdsEntries: Bool) {
        let instanceKeys = index.keys(ofInstance: uid)
        if instanceKeys != 0 {
            let modelType = index.modelType(of: uid)
            for note in notes.indices
            where notes[note].instanceKeys & 0xFFFF == instanceKeys & 0xFFFF && notes[note].modelType == modelType {
                // Classifying the instance read its dictionary whole: not checked a second time.
                let object = try index.plist.checkedContainer(index.entryIndex(uid))
                return try parseRecord(object, keys: instanceKeys, like: note)
            }
        }
        let object = try index.entryObject(uid)
        var keys = index.plist.references(of: object)
        var values = index.plist.references(of: object, from: object.count)
        let type = nativeType(index.modelType(of: uid))
        fieldCount = 0
        // The values OR-ed: negative if any is.
        var anyValue = 0
        for _ in 0..<object.count {
            let keyID = try index.keyID(of: keys.next())
            let reference = try values.next()
            if keyID == KeyedKey.classReference { continue }
            let key = nativeKey(keyID)
            let field = (key: key, value: try index.recordValue(reference), order: fieldOrder(key, type: type))
            anyValue |= field.value
            // Sort as we go (records have a handful of keys), by an order that depends only on
            // the key and the type, so every instance of a class gets one shape whatever its
            // key order. (`fields` is scratch that only grows: emptying an array costs a call
            // per record.)
            if fieldCount == fields.count { fields.append(field) }
            var insertion = fieldCount
            fieldCount += 1
            while insertion > 0 && fields[insertion - 1].order > field.order {
                fields[insertion] = fields[insertion - 1]
                insertion -= 1
            }
            guard insertion == 0 || fields[insertion - 1].key != field.key else {
                throw GraphArchiveError(
                    .corrupt,
                    "$objects[\(uid)] lists key \"\(state.keys[field.key])\" twice",
                    offset: index.plist.offset(of: object.index)
                )
            }
            fields[insertion] = field
        }
        let start = records.count
        // 32 bits are enough: object indexes and UIDs are below 2^31 in a plist of at most 4 GiB.
        records.append(Int32(truncatingIfNeeded: shape(type: type)))
        for position in 0..<fieldCount { records.append(Int32(truncatingIfNeeded: fields[position].value)) }
        if instanceKeys != 0 { note(instanceKeys, modelType: index.modelType(of: uid), shape: Int(records[start])) }
        return (start, anyValue < 0)
    }

    /// What parsing an instance of a template's keys takes: its shape, and each template key's
    /// place in the shape's order.
    private struct TemplateNote {
        /// The template's generation (low 16 bits, as in `instanceKeys`).
        var instanceKeys: UInt64
        var modelType: Int
        var shape: Int32
        /// The shape's values: the template's keys but `$class`.
        var valueCount: Int
        /// Each template key's place, 4 bits each from the lowest (a template has at most 12
        /// keys), ``classPlace`` for `$class`: bits, not an array, so that reading one costs
        /// no bounds checks on the way to it.
        var places: UInt64
    }

    private static let classPlace: UInt64 = 0xF

    /// What parsing the instances of the index's latest templates takes, once one was parsed.
    private var notes: [TemplateNote] = []

    /// Notes the template of an instance of model type `modelType` (whose keys are
    /// `instanceKeys`), just parsed into record shape `shape`.
    private mutating func note(_ instanceKeys: UInt64, modelType: Int, shape: Int) {
        guard let template = index.template(generation: Int(instanceKeys & 0xFFFF)) else { return }
        var places = Array(repeating: -1, count: template.keyIDs.count)
        let type = nativeType(modelType)
        let orders = template.keyIDs.map { $0 == KeyedKey.classReference ? -1 : fieldOrder(nativeKey($0), type: type) }
        for key in places.indices where orders[key] >= 0 {
            places[key] = orders.count { $0 >= 0 && $0 < orders[key] }
        }
        var packed: UInt64 = 0
        for (key, place) in places.enumerated() {
            packed |= (place < 0 ? Self.classPlace : UInt64(place)) &<< UInt64(4 * key)
        }
        if notes.count == KeyedArchiveIndex.maximumTemplates { notes.removeFirst() }
        notes.append(
            TemplateNote(
                instanceKeys: instanceKeys,
                modelType: modelType,
                shape: Int32(truncatingIfNeeded: shape),
                valueCount: places.count { $0 >= 0 },
                places: packed
            )
        )
    }

    /// ``parseRecord(_:)`` for an instance that holds a template's keys as `keys` says: its
    /// values are read in the same order and checked the same way, and placed where note
    /// `note` says, with no key resolved or sorted.
    private mutating func parseRecord(_ object: BPlistObject, keys: UInt64, like note: Int)
        throws(GraphArchiveError) -> (start: Int, holdsEntries: Bool)
    {
        let start = records.count
        let template = notes[note]
        let places = template.places
        records.append(template.shape)
        // Appended one by one, inline: `append(repeating:count:)` is a call that costs more
        // than the three or four values of an instance (callgrind: 44 instructions a record).
        for _ in 0..<template.valueCount { records.append(0) }
        var values = index.plist.references(of: object, from: object.count)
        // Which template key each position holds, 4 bits each from the lowest.
        var held = keys &>> 16
        // The values OR-ed: negative if any is.
        var anyValue = 0
        for _ in 0..<object.count {
            let place = places &>> ((held & 0xF) &* 4) & 0xF
            held &>>= 4
            // `$class`, read and checked when the instance was classified, is not read again.
            if place == Self.classPlace {
                values.skip()
                continue
            }
            let value = try index.recordValue(values.next())
            anyValue |= value
            records[start &+ 1 &+ Int(truncatingIfNeeded: place)] = Int32(truncatingIfNeeded: value)
        }
        return (start, anyValue < 0)
    }

    /// The shape of the record whose keys are in `fields`, reusing the type's last one.
    private mutating func shape(type: Int) -> Int {
        let last = state.types[type].lastShape
        if last >= 0 && fieldsMatch(state.shapes[last].keyIDs) { return last }
        let id = state.shapeID(EncodedShape(typeID: type, keyIDs: (0..<fieldCount).map { fields[$0].key }))
        state.types[type].lastShape = id
        return id
    }

    private func fieldsMatch(_ keys: [Int]) -> Bool {
        guard keys.count == fieldCount else { return false }
        for position in keys.indices where keys[position] != fields[position].key { return false }
        return true
    }

    @inline(__always)
    private mutating func nativeKey(_ keyID: Int) -> Int {
        if keyID < nativeKeys.count && nativeKeys[keyID] >= 0 { return nativeKeys[keyID] }
        return newNativeKey(keyID)
    }

    private mutating func newNativeKey(_ keyID: Int) -> Int {
        while nativeKeys.count <= keyID { nativeKeys.append(-1) }
        if nativeKeys[keyID] < 0 { nativeKeys[keyID] = state.keyID(index.keyNames[keyID]) }
        return nativeKeys[keyID]
    }

    private mutating func nativeType(_ typeID: Int) -> Int {
        while nativeTypes.count <= typeID { nativeTypes.append(-1) }
        if nativeTypes[typeID] < 0 {
            nativeTypes[typeID] = state.types.count
            let name = index.typeNames[typeID]
            state.types.append(EncodedType(name: name, isObject: !index.typeIsValue[typeID], objectType: nil))
            readPlaces.append(readPlaces(ofTypeNamed: name))
        }
        return nativeTypes[typeID]
    }

    /// Where native key `key` goes among the fields of a record of native type `type`: by key
    /// id, after the keys the type's class was seen to read, in the order it read them.
    @inline(__always)
    private func fieldOrder(_ key: Int, type: Int) -> Int {
        let places = readPlaces[type]
        guard !places.isEmpty else { return key }
        return (places[state.keys[key]] ?? KeyReadOrders.maximumKeys) &<< 32 | key
    }

    /// The place of each key the class registered as `name` was seen to read, in order
    /// (`KeyReadOrders`); empty unless fields go in that order.
    private func readPlaces(ofTypeNamed name: String) -> [String: Int] {
        guard ordersFieldsAsRead, let type = index.registry?.objectType(named: name),
            let keys = KeyReadOrders.keys(for: type)
        else { return [:] }
        var places: [String: Int] = [:]
        for (place, key) in keys.enumerated() where places[key] == nil { places[key] = place }
        return places
    }

    /// Writes a dictionary value or container element: a UID or an inline scalar.
    private mutating func writeField(_ reference: Int, depth: Int) throws(GraphArchiveError) {
        let object = try index.plist.object(reference)
        if object.type == BPlistMarker.uid {
            try writeEntry(index.uid(object), depth: depth)
        } else {
            try writeScalar(object)
        }
    }

    private mutating func writeEntry(_ uid: Int, depth: Int) throws(GraphArchiveError) {
        try spend(1)
        if try index.isPlainValue(uid) {
            try writeScalar(index.entryObject(uid))
            return
        }
        switch try index.kind(of: uid) {
        case .null:
            state.writeNil()
        case .scalar:
            try writeScalar(index.entryObject(uid))
        case .object:
            state.out.writeByte(ValueTag.objectReference)
            state.out.writeVarint(try objectPosition(uid))
            referenceCount += 1
        case .record:
            try enter(uid, depth: depth)
            state.out.writeByte(ValueTag.valueRecord)
            // Parsed at the end of `records` and dropped once written.
            let start = try parseRecord(uid).start
            try writeRecord(at: start, depth: depth + 1)
            records.truncate(to: start)
            flags[uid] &= ~Self.expanding
        case .array, .countedSet:
            try enter(uid, depth: depth)
            let listed = Int(recordStart[uid])
            if listed == 0 {
                try writeArray(index.arrayElements(of: uid), depth: depth)
            } else {
                try writeObjectArray(listedAt: listed - 1)
            }
            flags[uid] &= ~Self.expanding
        case .dictionary:
            try enter(uid, depth: depth)
            let parts = try index.dictionaryParts(of: uid)
            state.out.writeByte(ValueTag.dictionary)
            state.out.writeVarint(parts.keys.count)
            for slot in 0..<parts.keys.count {
                try writeField(index.plist.reference(in: parts.keys, at: slot), depth: depth + 1)
                try writeField(index.plist.reference(in: parts.values, at: slot), depth: depth + 1)
            }
            flags[uid] &= ~Self.expanding
        case .string:
            try writeWrapped(uid, key: KeyedKey.string, types: [BPlistMarker.asciiString, BPlistMarker.utf16String])
        case .date:
            let time = try index.wrappedValue(of: uid, key: KeyedKey.time)
            guard time.type == BPlistMarker.real else { throw wrongType(time, in: uid, key: KeyedKey.time) }
            state.writeDate(try index.plist.real(time).value)
        case .data:
            try writeWrapped(uid, key: KeyedKey.data, types: [BPlistMarker.data])
        case .classDefinition:
            throw GraphArchiveError(
                .corrupt,
                "$objects[\(uid)] is a class definition, used where a value belongs",
                offset: index.plist.offset(of: try index.entryObject(uid).index)
            )
        case .unclassified:
            preconditionFailure("kind(of:) never returns .unclassified")
        }
    }

    private mutating func writeWrapped(_ uid: Int, key: Int, types: [UInt8]) throws(GraphArchiveError) {
        let value = try index.wrappedValue(of: uid, key: key)
        guard types.contains(value.type) else { throw wrongType(value, in: uid, key: key) }
        try writeScalar(value)
    }

    private func wrongType(_ value: BPlistObject, in uid: Int, key: Int) -> GraphArchiveError {
        GraphArchiveError(
            .corrupt,
            "\(KeyedKey.names[key]) of $objects[\(uid)] is \(BPlistMarker.describeWithArticle(value.marker))",
            offset: index.plist.offset(of: value.index)
        )
    }

    private func objectPosition(_ uid: Int) throws(GraphArchiveError) -> Int {
        // Every object written was reached, and so numbered, by `orderObjects`.
        guard position[uid] >= 0 else {
            throw GraphArchiveError(.corrupt, "$objects[\(uid)] was not reached while ordering objects")
        }
        return Int(position[uid])
    }

    /// An array: packed references when every element is an object (FORMAT.md §6.5), else
    /// tagged values.
    private mutating func writeArray(_ elements: KeyedElements, depth: Int) throws(GraphArchiveError) {
        // Written as packed references while the elements are objects, in one pass; the first
        // element that is not one takes the output back and writes tagged values instead.
        let mark = state.out.count
        state.out.writeByte(ValueTag.referenceArray)
        state.out.writeVarint(elements.count)
        var references = elements.cursor(index.plist)
        var previous = -1
        var packed = elements.count > 0
        for _ in 0..<elements.count {
            let reference = try references.next()
            guard let value = try index.plist.uidValue(reference) else {
                packed = false
                break
            }
            // Ordering numbered objects only: an element without a position is something else
            // (or an object it did not reach, which the tagged values below report).
            let position = Int(self.position[try index.checkedUID(value, in: reference)])
            guard position >= 0 else {
                packed = false
                break
            }
            state.out.writeReferenceDelta(to: position, from: previous)
            previous = position
        }
        guard packed else {
            state.out.truncate(to: mark)
            references = elements.cursor(index.plist)
            state.out.writeByte(ValueTag.array)
            state.out.writeVarint(elements.count)
            for _ in 0..<elements.count {
                try writeField(references.next(), depth: depth + 1)
            }
            return
        }
        try spend(elements.count)
        referenceCount += elements.count
    }

    /// Writes the array whose objects `arrayObjects` lists at `start` as packed references:
    /// ordering numbered every object it reached.
    private mutating func writeObjectArray(listedAt start: Int) throws(GraphArchiveError) {
        let count = Int(arrayObjects[start])
        state.out.writeByte(ValueTag.referenceArray)
        state.out.writeVarint(count)
        var previous = -1
        for slot in (start + 1)..<(start + 1 + count) {
            // Shared slots' positions lie anywhere in the table (see `loadAhead`).
            if (slot &- start &- 1) % Self.lookAhead == 0 {
                loadedAhead ^= loadedBits(
                    count: min(Self.lookAhead, start &+ 1 &+ count &- slot),
                    includingKinds: false
                ) {
                    Int(arrayObjects[slot &+ $0])
                }
            }
            let position = try objectPosition(Int(arrayObjects[slot]))
            state.out.writeReferenceDelta(to: position, from: previous)
            previous = position
        }
        try spend(count)
        referenceCount += count
    }

    /// Writes the ASCII string whose `count` bytes start at `start` as a string value.
    @inline(__always)
    private mutating func writeASCII(from start: Int, count: Int) throws(GraphArchiveError) {
        // Inlined into `writeRecord`, where two of a grid state's three values are strings: as
        // a call it saved and restored four registers and reloaded the writer each time.
        // Copied as they are: ASCII is UTF-8, and the unarchiver validates every string it
        // reads, so a stray high byte still ends as `.invalidUTF8`.
        try spend(count)
        if count < ValueTag.shortStringLimit {
            state.out.writeByte(ValueTag.shortStringBase | UInt8(truncatingIfNeeded: count))
        } else {
            state.out.writeByte(ValueTag.string)
            state.out.writeVarint(count)
        }
        try index.plist.copyBytes(from: start, count: count, into: &state.out)
    }

    /// Writes a plain property list value as the engine's tagged value.
    private mutating func writeScalar(_ object: BPlistObject) throws(GraphArchiveError) {
        let plist = index.plist
        switch object.type {
        case BPlistMarker.integer:
            let (bits, isUnsigned) = try plist.integer(object)
            // 1, 2 and 4-byte integers are unsigned, 8-byte ones signed.
            if isUnsigned || object.marker & 0x0F < 3 {
                state.writeInteger(bits)
            } else {
                state.writeInteger(Int64(bitPattern: bits))
            }
        case BPlistMarker.real:
            let (value, isSingle) = try plist.real(object)
            if isSingle { state.writeFloat(Float(value)) } else { state.writeDouble(value) }
        case BPlistMarker.asciiString:
            try writeASCII(from: object.contentStart, count: object.count)
        case BPlistMarker.utf16String:
            try spend(object.count)
            state.writeString(try plist.string(object))
        case BPlistMarker.data:
            try spend(object.count)
            state.writeBytes(try plist.data(object))
        default:
            switch object.marker {
            case BPlistMarker.falseValue: state.writeBool(false)
            case BPlistMarker.trueValue: state.writeBool(true)
            case BPlistMarker.null: state.writeNil()
            case BPlistMarker.date: state.writeDate(try plist.real(object).value)
            default:
                throw GraphArchiveError(
                    .corrupt,
                    "keyed archive stores \(BPlistMarker.describeWithArticle(object.marker)) where a UID or a plain value belongs (object \(object.index))",
                    offset: plist.offset(of: object.index)
                )
            }
        }
    }

    // MARK: - Finishing

    private consuming func assemble(compression: ArchiveCompression, checksummed: Bool) throws(GraphArchiveError)
        -> ArchiveOutput
    {
        var body = ByteWriter()
        swap(&body, &state.out)
        var top = ByteWriter()
        swap(&top, &topSection)
        return try ArchiveAssembler.assemble(
            tablesOf: state,
            sections: [OutputChunk(top), OutputChunk(body)],
            objectCount: order.count,
            referenceCount: referenceCount,
            compression: compression,
            checksummed: checksummed
        )
    }
}
