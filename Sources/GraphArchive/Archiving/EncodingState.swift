// Sources/GraphArchive/Archiving/EncodingState.swift - the mutable state of one archive being written
//
// Everything the hot path touches lives in this one struct so each public `encode` call makes
// one access to the archiver's storage, not one per table (class stored properties pay a dynamic
// exclusivity check on every access).

/// One keyed container being written: the top level or a record (object body or inline value).
///
/// Usable from inline, with the fields the archiver's inlinable `encode` forms read (see
/// `EncodingState.writeExpectedKey(_:)`).
@usableFromInline
struct EncodingContainer: BitwiseCopyable {
    enum Kind { case top, record }
    var kind: Kind
    var typeID: Int = 0
    /// The shape this record is expected to repeat (the type's previous shape), or -1.
    var candidateShape: Int = -1
    /// Keys written so far.
    @usableFromInline var position: Int = 0
    /// Where the candidate's keys lie in `EncodingState.shapeKeyBits` (and `shapeKeyStrings`),
    /// looked up once a record rather than once a key.
    @usableFromInline var candidateKeyStart: Int = 0
    @usableFromInline var candidateKeyEnd: Int = 0
    /// True while every key so far matches `candidateShape` in order.
    @usableFromInline var matching: Bool = false
    /// Where this record's key ids start in `EncodingState.slowKeyIDs`, once it stopped
    /// matching its candidate (kept outside so the container stays trivially copyable).
    var slowKeysStart: Int = 0
    /// Output offset of the record's one-byte shape placeholder.
    var placeholder: Int = 0

    /// Whether the record, as written so far, is its candidate shape: every key matched, and
    /// all of the candidate's keys written.
    var isCandidateShape: Bool {
        @inline(__always) get { matching && candidateKeyStart &+ position == candidateKeyEnd }
    }

    /// Whether the record has a candidate whose id fits the one-byte placeholder (one unsigned
    /// comparison: no candidate is -1).
    var candidateFitsPlaceholder: Bool {
        @inline(__always) get { UInt(bitPattern: candidateShape) < 0x80 }
    }

    /// The byte a record's shape placeholder is written with when opened: its candidate's id if
    /// that fits one byte (the id the record most likely closes with), else 0.
    var shapeIDByte: UInt8 {
        @inline(__always) get { candidateFitsPlaceholder ? UInt8(truncatingIfNeeded: candidateShape) : 0 }
    }

    /// Whether the placeholder already holds the id the record closes with: it is its candidate
    /// shape, whose id `shapeIDByte` wrote there when it opened.
    var placeholderHoldsShape: Bool {
        @inline(__always) get { isCandidateShape && candidateFitsPlaceholder }
    }

    /// Whether a record of `typeID` can be opened by resetting this container (see
    /// `EncodingState.reopenRecord()`): it is a record of that type that closed, or would close,
    /// as its candidate shape, so it left no key ids in `slowKeyIDs`.
    @inline(__always)
    func isReopenable(as typeID: Int) -> Bool {
        kind == .record && self.typeID == typeID && isCandidateShape
    }
}

struct EncodedType {
    var name: String
    var isObject: Bool
    /// The class, kept so a deep copy can decode without a registry.
    var objectType: (any (GraphCoding & AnyObject).Type)?
    var lastShape: Int = -1
    /// Where `lastShape`'s keys lie in `EncodingState.shapeKeyBits`.
    var lastShapeKeyStart = 0
    var lastShapeKeyEnd = 0
}

struct EncodedShape: Hashable {
    var typeID: Int
    var keyIDs: [Int]
}

/// Usable from inline, with what the common case of the archiver's inlinable `encode` forms
/// reads and writes (see `GraphArchiver.encode(_:forKey:)` for `Int`).
@usableFromInline
struct EncodingState: ~Copyable {
    let maximumDepth: Int

    /// Where values go now: the top-level section, or the object section while bodies are written.
    @usableFromInline var out = ByteWriter(reservingCapacity: 1 << 12)
    /// The section not being written.
    var parked = ByteWriter(reservingCapacity: 1 << 16)
    var isWritingObjects = false

    // MARK: Tables
    var keys: [String] = []
    var keyIndex: [String: Int] = [:]
    var types: [EncodedType] = []
    var typeIndex: [ObjectIdentifier: Int] = [:]
    /// The class archived under each name so far: two classes under one name would decode as one.
    private var classByName: [String: ObjectIdentifier] = [:]
    /// The first name two classes were archived under, as the error `finishEncoding` throws.
    private(set) var typeNameConflict: GraphArchiveError?
    private var lastTypeKey: ObjectIdentifier?
    private var lastTypeID = 0
    var shapes: [EncodedShape] = []
    var shapeIndex: [EncodedShape: Int] = [:]
    /// Shape keys flattened, the user's own strings, so the fast path compares identical storage.
    var shapeKeyStrings: [String] = []
    /// The words of each entry of `shapeKeyStrings`, the retain-free fast path of `writeKey`.
    @usableFromInline var shapeKeyBits: [StringBits] = []
    var shapeKeyStart: [Int] = []
    var shapeKeyCount: [Int] = []

    // MARK: Objects
    /// Object → index, in discovery order; it also holds every numbered object, so
    /// identifiers stay unique while the archive is written.
    var identity = IdentityTable()
    /// Kept so that the loads of `IdentityTable.touchHomeSlots` are not optimized away.
    private(set) var prefetchSink: UInt = 0
    /// Arrays whose objects the identity table holds without a retain: kept until it ends.
    var keptAlive: [AnyObject] = []
    /// Objects owed a body, in the order they will be written; emptied whenever all are written.
    /// This and the other lists appended to per object are ``GrowableBuffer``s: no uniqueness
    /// check per append, and no copy when a large one grows.
    var queue = GrowableBuffer<QueuedObject>()
    var queueHead = 0
    /// The object owed a body that was queued while `queue` had none waiting, held here rather
    /// than in `queue` until another is queued behind it (which moves it there first, so the
    /// order stays first come, first written): a chain's link, each body meeting one new
    /// object, then never goes through the queue's memory. Nil whenever `queue` has any waiting.
    private var soleQueued: QueuedObject?
    /// Objects numbered by conditional references only, so far: each gets a body (and leaves
    /// this table) if it is also encoded unconditionally.
    var conditionalOnly: [Int: any GraphCoding & AnyObject] = [:]
    /// Bodies begun.
    var bodyCount = 0
    /// The object of each body, in written order, once that differs from 0, 1, 2, …;
    /// empty while body `i` is object `i`'s (flat collections: the common case).
    var bodyOwner = GrowableBuffer<Int>()
    /// Each body's outgoing references (`edges[edgeStart[i]..<edgeStart[i+1]]` for body `i`),
    /// each marked plain or back link (`ReferenceEdge.edge(to:isBackLink:)`); `edgeStart`
    /// stays empty until the first reference from a body, and while every body before the last
    /// made exactly one, from the first body on (a chain): body `i`'s references then start at
    /// `i`, which is all `edgeStart` would hold (8 bytes an object). It is filled in once a
    /// body breaks that.
    var edges = GrowableBuffer<Int>()
    var edgeStart = GrowableBuffer<Int>()
    /// Where each reference of `edges` sits in its body (``ReferencePlace``), so that a
    /// reordering copies bodies without reading their values, while `notesPlaces`: false once
    /// a body outgrew the places' range, and then the reordering reads every value instead.
    var edgePlaces = GrowableBuffer<ReferencePlace>()
    var notesPlaces = true
    var currentObject = -1
    /// True while `encodeLater` writes its value: the references in it are back links.
    var writesBackLinks = false
    /// Where the body being written starts in the object section.
    var currentBodyStart = 0
    /// False once bodies can no longer be read in table order (FORMAT.md §5.4): a body refers
    /// to an object not written before it, or bodies were written out of index order.
    private(set) var inConstructionOrder = true
    /// True while every reference a body made points to an object numbered after the body's
    /// own (a chain, a tree without back links): the reverse of the numbering is then a
    /// construction order, which `ObjectOrdering` takes without working one out. (Settable so
    /// that tests can compare with the general ordering.)
    var bodyReferencesPointForward = true
    /// Once out of construction order, the reordering pass needs every body's start: those
    /// from body `firstTrackedBody` on are recorded in `trackedBodyStarts` as they are written,
    /// the earlier ones are found by scanning (-1: none recorded yet). Deep graphs leave the
    /// order at their first body; flat ones never do, and pay nothing.
    private(set) var firstTrackedBody = -1
    private(set) var trackedBodyStarts = GrowableBuffer<Int>()
    var referenceCount = 0

    // MARK: Compressed while encoded (FORMAT.md §5.6)
    /// A zstd archive's payload, created at the first block: whole bodies leave the object
    /// section for compressed blocks whenever it reaches a block's size, while they are in
    /// construction order (numbers no later reordering changes, see `ObjectOrdering`).
    private var blocked: BlockedPayload?
    /// Where `blocked` sends the frame: the temporary file of a save, or nil for memory.
    var payloadFile: AtomicFile.Appender?
    /// The zstd level when the archive is compressed; nil for an uncompressed archive.
    var zstdLevel: Int?
    /// zstd workers for a payload of more than one block (`GraphArchiver.Options.zstdWorkers`).
    var zstdWorkers: Int?
    /// Bodies already in blocks: the object section holds the bodies written after them.
    private(set) var bodiesInBlocks = 0
    /// References those bodies make: each one stays a reference in any later reordering.
    private(set) var referencesInBlocks = 0

    // MARK: Containers
    @usableFromInline var container = EncodingContainer(kind: .top)
    /// The enclosing containers, innermost last (a `PlainStack`: no uniqueness check per change).
    var stack = PlainStack<EncodingContainer>()
    var topKeys: Set<Int> = []
    /// Key ids of records that left the fast path, innermost record last.
    var slowKeyIDs: [Int] = []
    var topCount = 0

    init(maximumDepth: Int) {
        self.maximumDepth = maximumDepth
    }

    // MARK: - Keys

    mutating func keyID(_ key: String) -> Int {
        if let id = keyIndex[key] { return id }
        let id = keys.count
        keys.append(key)
        keyIndex[key] = id
        return id
    }

    /// Announces the key of the next value in the current container.
    @inline(__always)
    mutating func writeKey(_ key: String) throws(GraphArchiveError) {
        if writeExpectedKey(key) { return }
        try writeKeySlow(key)
    }

    /// Announces `key` as `writeKey` does, and returns true, when it is the next key of the
    /// record's expected shape and the very string stored for it (its words equal); changes
    /// nothing and returns false otherwise, for the caller to call `writeKey`. Only a record
    /// matches a shape: a value written after it is never at the top level.
    @inlinable @inline(__always)
    mutating func writeExpectedKey(_ key: String) -> Bool {
        guard let next = expectedKeySlot, shapeKeyBits[next] == StringBits(key) else { return false }
        container.position &+= 1
        return true
    }

    /// Announces the next key of the record's expected shape, as `writeExpectedKey(_:)` does,
    /// when that key sits at `slot` of `shapeKeyBits` (the Codable bridge knows a key's slot
    /// from before, see `CodableKeySlots`); changes nothing and returns false otherwise.
    @inline(__always)
    mutating func writeExpectedKey(atSlot slot: Int) -> Bool {
        guard let next = expectedKeySlot, next == slot else { return false }
        container.position &+= 1
        return true
    }

    /// Where the next key of the record's expected shape sits in `shapeKeyBits` and
    /// `shapeKeyStrings`, or nil when no shape is expected or it has no key left.
    @inlinable @inline(__always)
    var expectedKeySlot: Int? {
        guard container.matching else { return nil }
        // Positions stay below a shape's key count: `&+` cannot overflow.
        let next = container.candidateKeyStart &+ container.position
        return next < container.candidateKeyEnd ? next : nil
    }

    @inline(never)
    private mutating func writeKeySlow(_ key: String) throws(GraphArchiveError) {
        // The expected key as an equal string of other storage (a key built at run time).
        if let next = expectedKeySlot, shapeKeyStrings[next] == key {
            container.position &+= 1
            return
        }
        let id = keyID(key)
        switch container.kind {
        case .top:
            guard topKeys.insert(id).inserted else {
                throw GraphArchiveError(
                    .duplicateKey,
                    "key \"\(key)\" encoded twice at the top level",
                    keyPath: [key]
                )
            }
            out.writeVarint(id)
            topCount += 1
        case .record:
            leaveFastPath()
            guard !slowKeyIDs[container.slowKeysStart...].contains(id) else {
                throw GraphArchiveError(
                    .duplicateKey,
                    "key \"\(key)\" encoded twice in one \(types[container.typeID].name)",
                    keyPath: [types[container.typeID].name, key]
                )
            }
            slowKeyIDs.append(id)
            container.position += 1
        }
    }

    /// Moves the current record's keys so far into `slowKeyIDs`, once.
    private mutating func leaveFastPath() {
        guard container.matching else { return }
        container.matching = false
        let shape = container.candidateShape
        slowKeyIDs.append(contentsOf: shapes[shape].keyIDs[0..<container.position])
    }

    // MARK: - Types and records

    /// The id of `type` in the type table, added if new (`object`: the type as a class, for a
    /// class). Inlined for the common case, the type of the record before.
    @inline(__always)
    mutating func typeID(
        for type: any GraphCoding.Type,
        object: (any (GraphCoding & AnyObject).Type)?
    ) -> Int {
        let key = ObjectIdentifier(type)
        if key == lastTypeKey { return lastTypeID }
        return typeID(newTo: key, type: type, object: object)
    }

    /// ``typeID(for:object:)`` for a type other than the last one's.
    @inline(never)
    private mutating func typeID(
        newTo key: ObjectIdentifier,
        type: any GraphCoding.Type,
        object: (any (GraphCoding & AnyObject).Type)?
    ) -> Int {
        let id: Int
        if let known = typeIndex[key] {
            id = known
        } else {
            id = addType(type, object: object)
        }
        lastTypeKey = key
        lastTypeID = id
        return id
    }

    /// Adds `type` to the type table. A class may not take a name another class has: that is
    /// noted in `typeNameConflict`, for `finishEncoding` to throw (checked there rather than
    /// here, so that looking up a type stays free of error handling).
    private mutating func addType(
        _ type: any GraphCoding.Type,
        object: (any (GraphCoding & AnyObject).Type)?
    ) -> Int {
        let key = ObjectIdentifier(type)
        let name = type.archivedTypeName
        if let object {
            if typeNameConflict == nil, let other = classByName[name], other != key, let otherID = typeIndex[other],
                let otherClass = types[otherID].objectType
            {
                typeNameConflict = GraphArchiveError(
                    .invalidValue,
                    "classes \(otherClass) and \(object) are both archived as \"\(name)\", so they would decode as one "
                        + "class: give each its own archivedTypeName (in a class hierarchy, declare it `class var` in "
                        + "the base class and override it in each subclass)",
                    keyPath: [name]
                )
            }
            classByName[name] = key
        }
        let id = types.count
        types.append(EncodedType(name: name, isObject: object != nil, objectType: object))
        typeIndex[key] = id
        return id
    }

    /// Opens a record of `typeID`; the caller has written any tag before it.
    mutating func beginRecord(typeID: Int) throws(GraphArchiveError) {
        try saveContainer()
        openRecord(typeID: typeID)
    }

    /// Closes the current record: patches its shape id in.
    mutating func endRecord() {
        closeRecord()
        restoreContainer()
    }

    /// Opens a record of `typeID` in place of the current container, for one of a run of
    /// records whose enclosing container the caller saved once (`saveContainer`), as the
    /// queue's bodies are: no push and pop per record.
    @inline(__always)
    mutating func beginRecordInRun(typeID: Int) {
        openRecord(typeID: typeID)
    }

    /// Closes a record that `beginRecordInRun` opened; it stays the container until the next
    /// record of the run replaces it or the caller restores the saved one (`restoreContainer`).
    @inline(__always)
    mutating func endRecordInRun() {
        closeRecord()
    }

    /// Pushes the current container, one level deeper (at most `maximumDepth`). Every nested
    /// value and record starts so; object bodies written one after another (the queue) save it
    /// once for the whole run, and each body then replaces the last with `openRecord` and
    /// `closeRecord`, instead of a push and a pop per body: the stack, and so the depth, stay
    /// as `beginRecord` makes them while an `encode(with:)` runs.
    mutating func saveContainer() throws(GraphArchiveError) {
        guard stack.count < maximumDepth else {
            throw GraphArchiveError(
                .invalidValue,
                "values nest deeper than maximumDepth (\(maximumDepth))"
            )
        }
        stack.append(container)
    }

    /// Pops the container `saveContainer` pushed.
    mutating func restoreContainer() {
        container = stack.removeLast()
    }

    /// Opens a record of `typeID` in place of the current container (which `beginRecord`, or
    /// for a run of object bodies `saveContainer`, saved).
    ///
    /// The placeholder holds the candidate's shape id from the start when it fits one byte, so
    /// that a record of its candidate shape needs no patch when it closes.
    @inline(__always)
    private mutating func openRecord(typeID: Int) {
        if container.isReopenable(as: typeID) {
            reopenRecord()
            return
        }
        let candidate = types[typeID].lastShape
        container = EncodingContainer(
            kind: .record,
            typeID: typeID,
            candidateShape: candidate,
            candidateKeyStart: types[typeID].lastShapeKeyStart,
            candidateKeyEnd: types[typeID].lastShapeKeyEnd,
            matching: candidate >= 0,
            slowKeysStart: slowKeyIDs.count,
            placeholder: out.count
        )
        out.writeByte(container.shapeIDByte)
    }

    /// Opens the next record in place of the current one, a record of the same type that was its
    /// candidate shape (a run of bodies of one class, each of its last shape): the container
    /// holds what `openRecord` would put in it but the position and the placeholder. Its
    /// candidate is the one its type's records had then; if a record nested in it changed the
    /// type's last shape since, the candidate is only a guess that no longer matches first,
    /// which changes no byte (`closeRecordSlow` finds the shape by its keys).
    @inline(__always)
    private mutating func reopenRecord() {
        assert(container.slowKeysStart == slowKeyIDs.count, "a record of its candidate shape left key ids")
        container.position = 0
        container.placeholder = out.count
        out.writeByte(container.shapeIDByte)
    }

    /// Patches the current record's shape id in, unless the placeholder holds it already; the
    /// container stays until replaced. Inlined for the common case, a record of its type's last
    /// shape whose id fits the placeholder (written there when the record was opened).
    @inline(__always)
    private mutating func closeRecord() {
        if !container.placeholderHoldsShape {
            closeRecordSlow()
        }
    }

    /// ``closeRecord()`` for a record of another shape (found or added), or a shape id of more
    /// than one byte. Out of line: inlined, its tables made every caller's frame larger (each
    /// object body paid about 15 instructions for it).
    @inline(never)
    private mutating func closeRecordSlow() {
        let shape: Int
        if container.isCandidateShape {
            shape = container.candidateShape
        } else {
            leaveFastPath()
            let key = EncodedShape(
                typeID: container.typeID,
                keyIDs: Array(slowKeyIDs[container.slowKeysStart...])
            )
            slowKeyIDs.removeSubrange(container.slowKeysStart...)
            if let known = shapeIndex[key] {
                shape = known
            } else {
                shape = shapes.count
                shapes.append(key)
                shapeIndex[key] = shape
                shapeKeyStart.append(shapeKeyStrings.count)
                shapeKeyCount.append(key.keyIDs.count)
                for id in key.keyIDs {
                    shapeKeyStrings.append(keys[id])
                    shapeKeyBits.append(StringBits(keys[id]))
                }
            }
            types[container.typeID].lastShape = shape
            types[container.typeID].lastShapeKeyStart = shapeKeyStart[shape]
            types[container.typeID].lastShapeKeyEnd = shapeKeyStart[shape] + shapeKeyCount[shape]
        }
        if shape < 0x80 {
            out.setByte(UInt8(shape), at: container.placeholder)
        } else {
            var varint = ByteWriter(reservingCapacity: 10)
            varint.writeVarint(shape)
            let bytes = varint.take()
            out.setByte(bytes[0], at: container.placeholder)
            out.insert(Array(bytes[1...]), at: container.placeholder + 1)
            shiftPlaces(after: container.placeholder, by: bytes.count - 1)
        }
    }

    mutating func beginNested() throws(GraphArchiveError) {
        try saveContainer()
        container = EncodingContainer(kind: .record, slowKeysStart: slowKeyIDs.count)
    }

    mutating func endNested() {
        restoreContainer()
    }

    // MARK: - Objects

    /// Numbers `object` (once) and writes a reference to it (see `register`).
    @inline(__always)
    mutating func writeReference<Object: GraphCoding & AnyObject>(
        _ object: Object,
        conditional: Bool,
        backLink: Bool = false
    ) {
        let index = register(LentReference(object), conditional: conditional, backLink: backLink, kind: .tagged)
        out.writeTag(ValueTag.objectReference, varint: UInt64(index))
    }

    /// ``writeReference(_:conditional:)``, not conditional: the one call of the archiver's
    /// inlinable `encode` form for an object. (One function taking the back link as a flag
    /// cost a chain of links about 3 instructions a link.)
    ///
    /// It takes the caller's reference: a reference just read from a stored property (a link's
    /// `next`) comes retained, and the identity table keeps that one for a new object instead
    /// of retaining it again while the caller releases its own (a retain and a release, both
    /// atomic, per object of a chain).
    @usableFromInline @inline(never)
    mutating func writeReference<Object: GraphCoding & AnyObject>(_ object: consuming Object) {
        let owned = OwnedReference(object)
        let next = identity.count
        let index = register(owned.lent, conditional: false, kind: .tagged, keeping: .givenByCaller)
        // Numbered now (neither met before nor waiting as conditional-only): the table took it.
        if index == next { owned.giveUp() }
        out.writeTag(ValueTag.objectReference, varint: UInt64(index))
    }

    /// ``writeReference(_:)`` as a back link, as `encodeLater` writes it: the one call of the
    /// archiver's inlinable `encodeLater` form for an object.
    @usableFromInline @inline(never)
    mutating func writeBackLink<Object: GraphCoding & AnyObject>(_ object: Object) {
        writeReference(object, conditional: false, backLink: true)
        // Back links go to objects queued next to the body's own (siblings in a ring, a list
        // met breadth first) as well as to those met before: the slot of the object queued
        // after the next one, which the next body's back links look up, would by then be a
        // cache miss. Here rather than in the queue's loop, which graphs without back links
        // run too.
        if queueHead &+ 1 < queue.count {
            identity.prefetchHomeSlot(ofAddress: queue[queueHead &+ 1].addressBits)
        }
    }

    /// Numbers `object` if new, queues its body unless `conditional`, records the edge (a back
    /// link if `conditional`, `backLink` or written by `encodeLater`).
    @inline(__always)
    mutating func register<Object: GraphCoding & AnyObject>(
        _ object: LentReference<Object>,
        conditional: Bool,
        backLink: Bool = false,
        kind: ReferencePlace.Kind,
        keeping: IdentityTable.Keeping = .retained
    ) -> Int {
        let next = identity.count
        let (found, inserted) = identity.indexOrInsert(
            object,
            next: UInt32(truncatingIfNeeded: next),
            keeping: keeping
        )
        let index = Int(found)
        if inserted {
            if conditional {
                conditionalOnly[index] = object.withObject { $0 }
            } else {
                enqueue(QueuedObject(index: index, lent: object))
            }
        } else if !conditional && !conditionalOnly.isEmpty,
            let waiting = conditionalOnly.removeValue(forKey: index)
        {
            enqueue(QueuedObject(index: index, existential: waiting))
        }
        if !conditional {
            referenceCount += 1
        }
        if currentObject >= 0 {
            if edges.isEmpty { noteFirstEdge() }
            edges.append(ReferenceEdge.edge(to: index, isBackLink: conditional || backLink || writesBackLinks))
            notePlace(kind)
            // Even a back link leaves the order here: the body could otherwise go into a block
            // (numbers fixed) before the reordering renumbers its target.
            if index >= currentObject && inConstructionOrder { leaveConstructionOrder() }
            if index <= currentObject { bodyReferencesPointForward = false }
        }
        return index
    }

    /// Owes `object` a body, after every object owed one before it (see `soleQueued`).
    @inline(__always)
    private mutating func enqueue(_ object: QueuedObject) {
        guard queueHead == queue.count else {
            queue.append(object)
            return
        }
        // None waits in the queue: the object waits alone in `soleQueued`, or behind the one there.
        if let waiting = soleQueued.take() {
            queue.append(waiting)
            queue.append(object)
        } else {
            soleQueued = object
        }
    }

    /// Before the first reference from a body is recorded: starts `edgeStart`, unless that body
    /// is the first (see `edges`).
    private mutating func noteFirstEdge() {
        if bodyCount > 1 { edgeStart.append(repeating: 0, count: bodyCount) }
    }

    /// Records where the references of body `position`, beginning, start, once bodies made any.
    @inline(__always)
    private mutating func noteEdgeStart(ofBody position: Int) {
        if !edgeStart.isEmpty {
            edgeStart.append(edges.count)
        } else if edges.count != position {
            listEdgeStarts(upTo: position)
        }
    }

    /// Lists where the references of bodies `0...position` start, once body `position - 1` did
    /// not make exactly one reference (out of line: the hot path keeps its registers).
    @inline(never)
    private mutating func listEdgeStarts(upTo position: Int) {
        edgeStart.append(contentsOf: 0..<position)
        edgeStart.append(edges.count)
    }

    /// Where the references of the body being written start in `edges`, or nil before the
    /// first reference from a body.
    private var firstEdgeOfCurrentBody: Int? {
        edges.isEmpty ? nil : edgeRange(ofBody: bodyCount - 1).lowerBound
    }

    /// Records where the reference just registered starts in the body being written.
    @inline(__always)
    private mutating func notePlace(_ kind: ReferencePlace.Kind) {
        guard notesPlaces else { return }
        let offset = out.count &- currentBodyStart
        if offset < ReferencePlace.offsetLimit {
            edgePlaces.append(ReferencePlace(offset: offset, kind: kind))
        } else {
            notesPlaces = false
        }
    }

    /// Moves the places of the current body's references that lie after `index` (a record's
    /// shape placeholder) up by `count` bytes, inserted after it.
    private mutating func shiftPlaces(after index: Int, by count: Int) {
        guard currentObject >= 0, notesPlaces, let firstEdge = firstEdgeOfCurrentBody else { return }
        var edge = edges.count - 1
        while edge >= firstEdge, currentBodyStart + edgePlaces[edge].offset > index {
            guard edgePlaces[edge].offset + count < ReferencePlace.offsetLimit else {
                notesPlaces = false
                return
            }
            edgePlaces[edge].move(by: count)
            edge -= 1
        }
    }

    /// Notes that bodies are no longer in construction order, and starts recording body starts
    /// from the body being written (or the next one).
    private mutating func leaveConstructionOrder() {
        guard inConstructionOrder else { return }
        inConstructionOrder = false
        if currentObject >= 0 {
            firstTrackedBody = bodyCount - 1
            trackedBodyStarts.append(currentBodyStart)
        } else {
            firstTrackedBody = bodyCount
        }
    }

    /// Makes room for `count` more references in the queue, so a large array grows it once.
    /// Grows geometrically: reserving the exact size for every small array would copy the
    /// whole queue at almost every object of a tree (quadratic; found by the benchmark harness).
    /// The identity table grows by itself: an array's count overstates its distinct objects.
    mutating func reserveObjects(_ count: Int) {
        if queue.count + count > queue.capacity {
            queue.reserveCapacity(max(queue.count + count, queue.capacity * 2))
        }
    }

    /// Starts a packed array of `count` references (FORMAT.md §6.5); `writeReferences` writes them.
    @inline(__always)
    mutating func beginReferenceArray(count: Int) {
        out.writeTag(ValueTag.referenceArray, varint: UInt64(count))
    }

    /// Writes the references of `array[positions]`, each as its delta from `previous` (updated).
    /// An array of at least `arrayKeptAliveMinimum` objects is kept when these positions number
    /// new objects, so they need no retain of their own (see `IdentityTable`); `isKept` says
    /// whether an earlier call for other positions of the array kept it already (updated), so
    /// that it is kept once.
    mutating func writeReferences<Object: GraphCoding & AnyObject>(
        _ array: [Object],
        _ positions: Range<Int>,
        previous: inout Int,
        isKept: inout Bool
    ) {
        reserveObjects(positions.count)
        let held = array.count >= Self.arrayKeptAliveMinimum
        let countBefore = identity.count
        defer {
            if held && !isKept && identity.count != countBefore {
                keptAlive.append(array.storageReference)
                isKept = true
            }
        }
        var batchStart = positions.lowerBound
        while batchStart < positions.upperBound {
            let batch = batchStart..<min(batchStart + ReferenceLookAhead.count, positions.upperBound)
            array.withBorrowedObjects(in: batch) { objects in
                prefetchSink ^= identity.touchHomeSlots(of: objects.addresses)
                for position in 0..<objects.count {
                    let index = register(
                        objects.lent(at: position),
                        conditional: false,
                        kind: previous < 0 ? .firstInArray : .inArray,
                        keeping: held ? .heldByCaller : .retained
                    )
                    out.writeReferenceDelta(to: index, from: previous)
                    previous = index
                }
            }
            batchStart = batch.upperBound
        }
    }

    /// Arrays of objects at least this long are kept whole rather than each new object
    /// retained: one reference instead of one per object, for arrays large enough to make that
    /// pay (keeping one costs about as much as three retains and releases; an object with a
    /// weak reference to it pays each of those in its side table, at about 50 instructions).
    static let arrayKeptAliveMinimum = 4

    /// True while a value is being written straight into the top-level section, outside any
    /// body or nested value: the moment queued bodies may be written in between.
    var isWritingTopLevelValue: Bool {
        !isWritingObjects && container.kind == .top && stack.isEmpty
    }

    /// Switches output to the next queued object's body and opens its record (in place of the
    /// container `saveContainer` saved for the run), or returns nil when none is left. Inlined
    /// into the queue's loop, what only some bodies need out of line: a call and a frame a body
    /// cost about 20 instructions (callgrind, a chain).
    @inline(__always)
    mutating func beginNextObject() throws(GraphArchiveError) -> QueuedObject? {
        let next: QueuedObject
        if queueHead < queue.count {
            next = queue[queueHead]
            queueHead &+= 1
            if queueHead == queue.count && queueHead >= 1 << 12 { restartQueue() }
        } else {
            // The only object owed a body, if any (see `soleQueued`).
            guard let sole = soleQueued.take() else { return nil }
            next = sole
        }
        let index = next.index
        if !isWritingObjects { switchToObjects() }
        if index != bodyCount { noteBodyOutOfOrder() }
        currentBodyStart = out.count
        if firstTrackedBody >= 0 { trackedBodyStarts.append(currentBodyStart) }
        if !bodyOwner.isEmpty { bodyOwner.append(index) }
        if !edges.isEmpty { noteEdgeStart(ofBody: bodyCount) }
        bodyCount &+= 1
        currentObject = index
        if let lastTypeKey, next.isInstance(ofExactly: lastTypeKey) {
            openRecord(typeID: lastTypeID)
        } else {
            openRecord(ofClassOf: next)
        }
        return next
    }

    /// Every queued body is being written: starts the queue afresh, so it holds only what is
    /// still owed (a large one is given back rather than kept).
    @inline(never)
    private mutating func restartQueue() {
        if queue.capacity > 1 << 14 { queue = GrowableBuffer() } else { queue.truncate(to: 0) }
        queueHead = 0
    }

    /// Output goes to the object section from the first body of a run on.
    @inline(never)
    private mutating func switchToObjects() {
        swap(&out, &parked)
        isWritingObjects = true
    }

    /// The body about to be written is not the object numbered next: bodies leave construction
    /// order, and each body's object is listed from here on.
    @inline(never)
    private mutating func noteBodyOutOfOrder() {
        leaveConstructionOrder()
        if bodyOwner.isEmpty { bodyOwner.append(contentsOf: 0..<bodyCount) }
    }

    /// Opens the record of `next`'s body, its class read from the object (not the class of the
    /// body before).
    @inline(never)
    private mutating func openRecord(ofClassOf next: QueuedObject) {
        let type = next.type  // read from the object once
        openRecord(typeID: typeID(for: type, object: type))
    }

    /// Calls `body` with the references bodies made and, while they are noted, their places.
    func withEdges<Result: ~Copyable, Failure: Error>(
        _ body: (BufferView<Int>, BufferView<ReferencePlace>?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try edges.withView { (edges) throws(Failure) -> Result in
            guard notesPlaces else { return try body(edges, nil) }
            return try edgePlaces.withView { (places) throws(Failure) -> Result in try body(edges, places) }
        }
    }

    /// The object whose body was written `position`-th.
    func owner(ofBody position: Int) -> Int {
        bodyOwner.isEmpty ? position : bodyOwner[position]
    }

    /// The references made by the body written `position`-th.
    func edgeRange(ofBody position: Int) -> Range<Int> {
        guard !edgeStart.isEmpty else {
            // None yet, or one a body so far (see `edges`).
            if edges.isEmpty { return 0..<0 }
            return position..<(position + 1 < bodyCount ? position + 1 : edges.count)
        }
        let end = position + 1 < edgeStart.count ? edgeStart[position + 1] : edges.count
        return edgeStart[position]..<end
    }

    @inline(__always)
    mutating func endObject() throws(GraphArchiveError) {
        closeRecord()
        currentObject = -1
        if out.count >= ColumnarObjects.rowBatchBytes, inConstructionOrder, zstdLevel != nil {
            try moveBodiesIntoBlocks()
        }
    }

    /// The blocked payload of a zstd archive, created on first use.
    mutating func blockedPayload(level: Int) throws(GraphArchiveError) -> BlockedPayload {
        if let blocked { return blocked }
        let created = try BlockedPayload(level: level, file: payloadFile, workers: zstdWorkers)
        blocked = created
        return created
    }

    /// Compresses the bodies written so far (the object section, being written) into blocks, in
    /// the blocked payload of a zstd archive. Out of line, as `endObject` is inlined.
    @inline(never)
    private mutating func moveBodiesIntoBlocks() throws(GraphArchiveError) {
        guard let zstdLevel else { return }
        let blocked = try blockedPayload(level: zstdLevel)
        let shapeValueCounts = shapeKeyCount
        try blocked.writeRecords(out, in: 0..<out.count, shapeValueCounts: shapeValueCounts)
        out.truncate(to: 0)
        bodiesInBlocks = bodyCount
        referencesInBlocks = edges.count  // every reference made from inside a body so far
    }

    /// Back to the top-level section once every queued body is written.
    mutating func endObjects() {
        if isWritingObjects {
            swap(&out, &parked)
            isWritingObjects = false
        }
    }

    var isAtTop: Bool { container.kind == .top && stack.isEmpty }
    var hasQueuedObjects: Bool { soleQueued != nil || queueHead < queue.count }
}

/// Where a reference written by a body sits in it: the offset from the body's start of its tag
/// (`tagged`: `08` and an index, FORMAT.md §6.4) or of its entry in a packed array (§6.5, the
/// array's first entry or a later one), in 32 bits.
struct ReferencePlace {
    enum Kind: UInt32 {
        case tagged, firstInArray, inArray
    }

    private var bits: UInt32

    /// Offsets from here on do not fit (a body of a gigabyte).
    static let offsetLimit = 1 << 30

    init(offset: Int, kind: Kind) {
        bits = UInt32(truncatingIfNeeded: offset) << 2 | kind.rawValue
    }

    var offset: Int { Int(bits >> 2) }
    var kind: Kind { Kind(rawValue: bits & 3) ?? .tagged }
    /// `kind == .tagged`, in one test of the bits.
    var isTagged: Bool { bits & 3 == Kind.tagged.rawValue }

    /// Moves the place `count` bytes on (bytes inserted before it), to an offset below the limit.
    mutating func move(by count: Int) {
        bits &+= UInt32(truncatingIfNeeded: count) << 2
    }
}
