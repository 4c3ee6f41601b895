// Sources/GraphArchive/Codable/CodableEncodingState.swift - the state of one Codable value being archived
//
// The bridge streams: values are written as they arrive, into the engine's `EncodingState`
// (tables, shapes, value writers), never into a tree. Two things do not fit a plain stream and
// get a buffer of their own:
//
// - Object bodies. A class instance is written once, the first time it is met, and its body
//   finishes before the reference to it is written, so indexes follow completion order: a
//   depth-first post-order, which is the format's construction order (FORMAT.md §5.4). A body
//   interrupts whatever was being written: it goes after it, at the end of the active buffer,
//   and is moved to the object section when it ends. Nothing else writes to that buffer
//   meanwhile (only frames inside the body can be entered), so the bytes before it stay put.
// - Nested containers and super encoders. Codable lets a parent container be written after
//   (or between writes to) a nested container it handed out. Each one therefore writes into a
//   buffer of its own, and its bytes are spliced into the parent's at its key's position when
//   the parent closes.

/// One open container of the encoder, or a value whose container is not chosen yet (a slot).
struct CodableEncodingFrame {
    enum Kind { case pending, keyed, unkeyed, single }

    var kind = Kind.pending
    let serial: Int
    let parent: Int
    /// Its place in the parent; a key is kept in `CodableEncodingState.pathKeys`.
    let step: CodingPathStep
    /// The buffer this frame's bytes go to.
    let buffer: Int
    /// For a frame with a buffer of its own (nested container, super encoder): where its bytes
    /// go in the parent's buffer when the parent closes. -1 for a value written in place.
    let splicePosition: Int
    /// For a frame with a buffer of its own, where `CodableEncodingState.parkedContainers`
    /// keeps its engine container while it is not current; -1 for a value written in place.
    let parkedIndex: Int
    /// The type that names the frame's record: the value's type, or a nested container's key type.
    var valueType: Any.Type
    /// An object's body: a record without a value tag; other container kinds sit under "$value".
    let isObjectBody: Bool
    /// An object's body written in a run (`CodableEncoder.encodeHeldObjects`), whose enclosing
    /// engine container the run saved once: its record opens and closes in place
    /// (`EncodingState.beginRecordInRun`), without a push and a pop of its own.
    let isInRun: Bool
    /// For an object's body, its discovery number (to name the path of a cycle); else -1.
    let object: Int
    /// For a value slot, the slot that was current before it.
    let enclosingSlot: Int

    // Unkeyed containers: the element count is patched into a one-byte placeholder at the end.
    var count = 0
    var countPlaceholder = 0
    /// True while every element so far is an object: the array is a packed reference array.
    var packsReferences = false
    var previousReference = -1

    // Single-value containers.
    var hasValue = false

    var hasOwnBuffer: Bool { parkedIndex >= 0 }
}

/// The engine's container of a nested container or super encoder while another frame is current.
final class ParkedContainer {
    var container = EncodingContainer(kind: .record)
    /// Its keys so far when it left the fast path (`EncodingState.slowKeyIDs` is one stack).
    var slowKeys: [Int] = []
}

/// A scratch buffer, boxed because `ByteWriter` is noncopyable and the pool is an array;
/// unchecked (`UncheckedCell`) as only the encoder's own short, non-reentrant methods touch it,
/// and two dynamic checks per object body showed in callgrind.
final class CodableScratchBuffer: UncheckedCell<ByteWriter> {
    init() {
        super.init(ByteWriter(reservingCapacity: 256))
    }
}

/// A record type named after nothing more specific: what an unused super encoder leaves.
enum EmptySuperValue {}

struct CodableEncodingState: ~Copyable {
    /// Tables, shapes, record bookkeeping and value writers; `engine.out` is the active buffer.
    var engine: EncodingState
    /// Finished object bodies, in index (completion) order.
    var objects = ByteWriter(reservingCapacity: 1 << 16)
    var objectCount = 0
    var referenceCount = 0

    // MARK: Objects
    /// Object identity → discovery number; holds every object met, so identifiers stay unique.
    var identity = IdentityTable()
    /// Kept so that the loads of `touchHomeSlots` are not optimized away.
    private(set) var prefetchSink: UInt = 0
    /// Arrays whose objects `identity` holds without a retain of their own: kept as long as it
    /// is used, so that no address it holds is freed and reused by another object meanwhile.
    private var keptAlive: [AnyObject] = []
    /// Per discovery number: the object's index once its body is written, `beingWritten`
    /// while it is written, `queued` while it waits in `laterObjects`.
    var objectIndex = PlainStack<Int>()
    static let beingWritten = -1
    static let queued = -2

    // MARK: Cycles (encodeLater)
    /// How many `encodeLater` values are being encoded: while above 0, references may close
    /// cycles, and objects met for the first time are queued instead of written in place.
    var laterDepth = 0
    /// Objects first met inside an `encodeLater` value, whose bodies are written after the
    /// root value, in the order they were met; nil once written. Position `i` is entry `i`
    /// of `laterPaths`.
    var laterObjects: [(object: (any Encodable)?, discovery: Int)] = []
    var laterHead = 0
    /// Where each queued object was met; `current` is the one whose body is being written.
    var laterPaths = DeferredCodingPaths()
    /// Whether a reference was written as `ForwardNumbering.base` plus a discovery number,
    /// to be numbered once every body is written.
    var writesForwardReferences = false

    // MARK: Frames
    /// The open frames, a stack: plain values, so changing one checks no buffer's uniqueness.
    var frames = PlainStack<CodableEncodingFrame>()
    /// The keys of the open frames whose step is a key, in frame order.
    private var pathKeys: [any CodingKey] = []
    /// The engine containers of the open frames with buffers of their own, in frame order.
    private var parkedContainers: [ParkedContainer] = []
    /// The frame whose engine container is `engine.container`: where a write goes now.
    var current = -1
    /// The value whose `encode(to:)` is running: what `Encoder.container(keyedBy:)` opens.
    var currentSlot = -1
    private var nextSerial = 0
    /// The first error: the encoder is unusable after it (it may have written part of a value).
    var failure: (any Error)?
    /// Whether `failure` reached the caller; if not (a non-throwing container request failed),
    /// the next call throws it, and calls after that say the encoder stopped.
    var failureThrown = false

    // MARK: Buffers
    /// Buffer 0 is the top-level section; the others are scratch buffers for bodies and nested
    /// containers. The active buffer's bytes live in `engine.out`, its box holds an empty writer.
    var buffers = [CodableScratchBuffer()]
    var freeBuffers = PlainStack<Int>()
    var active = 0

    // MARK: Types
    var kinds = CodableTypeKinds()
    var keyedContainers = CodableKeyedContainerCache()
    private var valueTypeIDs: [ObjectIdentifier: Int] = [:]
    private var objectTypeIDs: [ObjectIdentifier: Int] = [:]
    private var lastObjectType: ObjectIdentifier?
    private var lastObjectTypeID = 0

    /// Key under which an object's body holds an unkeyed or single value.
    static let valueKey = "$value"

    init(maximumDepth: Int) {
        engine = EncodingState(maximumDepth: maximumDepth)
    }

    // MARK: - Paths and errors

    /// The coding path of `frame`: inside the body of an object queued by `encodeLater`,
    /// the path where it was met followed by the frames' own.
    func codingPath(to frame: Int) -> [any CodingKey] {
        guard laterPaths.current >= 0 else { return localCodingPath(to: frame) }
        return laterPaths.prefix + localCodingPath(to: frame)
    }

    /// The coding path of `frame` within the running work (empty for -1).
    private func localCodingPath(to frame: Int) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var walk = frame
        while walk >= 0 && walk < frames.count {
            switch frames[walk].step.kind {
            case .none: break
            case .index: keys.append(GraphArchiveCodingKey(index: frames[walk].step.value))
            case .key: keys.append(pathKeys[frames[walk].step.value])
            }
            walk = frames[walk].parent
        }
        return keys.reversed()
    }

    func codingPath(to frame: Int, appending key: any CodingKey) -> [any CodingKey] {
        codingPath(to: frame) + [key]
    }

    /// What a call made after the encoder failed throws: the failure itself if the caller has
    /// not seen it yet, else an error saying an earlier (caught and ignored) error stopped it.
    mutating func errorAfterFailure(at frame: Int) -> any Error {
        if !failureThrown, let failure {
            failureThrown = true
            return failure
        }
        return EncodingError.invalidValue(
            (),
            EncodingError.Context(
                codingPath: codingPath(to: frame),
                debugDescription: "an earlier error stopped this encoder; nothing more can be encoded into it",
                underlyingError: failure
            )
        )
    }

    /// Records `error` as the encoder's failure (the first one is kept) and returns it to throw.
    mutating func fail(_ error: any Error) -> any Error {
        if failure == nil { failure = error }
        failureThrown = true
        return error
    }

    /// Records `error` as the failure without throwing it (for calls that cannot throw).
    mutating func record(_ error: any Error) {
        if failure == nil { failure = error }
    }

    /// An `EncodingError.invalidValue` at `frame`'s path.
    func invalid(_ message: String, value: Any, at frame: Int) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(codingPath: codingPath(to: frame), debugDescription: message)
        )
    }

    // MARK: - Types

    /// The type id of `type`, by kind: a class and a key type used as a record name never share one.
    /// Inlined for the common case, an object of the class of the object before.
    @inline(__always)
    mutating func typeID(for type: Any.Type, isObject: Bool) -> Int {
        if isObject && ObjectIdentifier(type) == lastObjectType { return lastObjectTypeID }
        return typeID(newTo: type, isObject: isObject)
    }

    /// ``typeID(for:isObject:)`` for a value type, or a class other than the last one's.
    @inline(never)
    private mutating func typeID(newTo type: Any.Type, isObject: Bool) -> Int {
        let key = ObjectIdentifier(type)
        if isObject {
            let id = objectTypeIDs[key] ?? addType(type, isObject: true, key: key)
            lastObjectType = key
            lastObjectTypeID = id
            return id
        }
        return valueTypeIDs[key] ?? addType(type, isObject: false, key: key)
    }

    private mutating func addType(_ type: Any.Type, isObject: Bool, key: ObjectIdentifier) -> Int {
        let id = engine.types.count
        engine.types.append(EncodedType(name: String(describing: type), isObject: isObject, objectType: nil))
        if isObject { objectTypeIDs[key] = id } else { valueTypeIDs[key] = id }
        return id
    }

    // MARK: - Buffers

    mutating func switchBuffer(to buffer: Int) {
        guard buffer != active else { return }
        swap(&engine.out, &buffers[active].value)
        swap(&engine.out, &buffers[buffer].value)
        active = buffer
    }

    mutating func acquireBuffer() -> Int {
        if !freeBuffers.isEmpty { return freeBuffers.removeLast() }
        buffers.append(CodableScratchBuffer())
        return buffers.count - 1
    }

    /// Empties an inactive buffer and returns it to the pool.
    mutating func releaseBuffer(_ buffer: Int) {
        buffers[buffer].value.truncate(to: 0)
        freeBuffers.append(buffer)
    }

    // MARK: - Frames

    /// Opens a slot for a value about to encode itself, in the active buffer, and makes it current.
    mutating func pushSlot(valueType: Any.Type, isObjectBody: Bool, object: Int = -1, key: CodingPathComponent) -> Int {
        pushSlot(valueType: valueType, isObjectBody: isObjectBody, object: object, step: step(for: key))
    }

    /// ``pushSlot(valueType:isObjectBody:object:key:)`` with the frame's step made by the
    /// caller: an element index, which then needs no `CodingPathComponent`. That enum holds an
    /// existential, so each one made and matched is copied and destroyed through its value
    /// witnesses (callgrind: about 50 instructions an object of an array).
    mutating func pushSlot(
        valueType: Any.Type,
        isObjectBody: Bool,
        isInRun: Bool = false,
        object: Int = -1,
        step: CodingPathStep
    ) -> Int {
        let slot = frames.count
        nextSerial &+= 1
        frames.append(
            CodableEncodingFrame(
                serial: nextSerial,
                parent: current,
                step: step,
                buffer: active,
                splicePosition: -1,
                parkedIndex: -1,
                valueType: valueType,
                isObjectBody: isObjectBody,
                isInRun: isInRun,
                object: object,
                enclosingSlot: currentSlot
            )
        )
        current = slot
        currentSlot = slot
        return slot
    }

    /// Adds a frame with a buffer of its own under the current frame, at the active buffer's end.
    mutating func pushOwnBufferFrame(key: CodingPathComponent, valueType: Any.Type) -> Int {
        let frame = frames.count
        nextSerial &+= 1
        frames.append(
            CodableEncodingFrame(
                serial: nextSerial,
                parent: current,
                step: step(for: key),
                buffer: acquireBuffer(),
                splicePosition: engine.out.count,
                parkedIndex: parkContainer(),
                valueType: valueType,
                isObjectBody: false,
                isInRun: false,
                object: -1,
                enclosingSlot: currentSlot
            )
        )
        return frame
    }

    /// The step of a new frame at `component`, its key kept in `pathKeys`.
    private mutating func step(for component: CodingPathComponent) -> CodingPathStep {
        switch component {
        case .none:
            return .none
        case .index(let index):
            return .index(index)
        case .key(let key):
            pathKeys.append(key)
            return .key(at: pathKeys.count - 1)
        }
    }

    /// A new parked container for a new frame with a buffer of its own; its index.
    private mutating func parkContainer() -> Int {
        parkedContainers.append(ParkedContainer())
        return parkedContainers.count - 1
    }

    /// Removes the top frame, and the key and parked container it held.
    private mutating func removeLastFrame() {
        let frame = frames.removeLast()
        if frame.step.kind == .key { pathKeys.removeLast() }
        if frame.hasOwnBuffer { parkedContainers.removeLast() }
    }

    /// Starts container `kind` in frame `frame`, which must be current (its buffer active).
    mutating func open(_ kind: CodableEncodingFrame.Kind, frame: Int) throws(GraphArchiveError) {
        let isObjectBody = frames[frame].isObjectBody
        if isObjectBody {
            try beginBodyRecord(frame)
            if kind != .keyed { try engine.writeKey(Self.valueKey) }
        }
        switch kind {
        case .keyed:
            if !isObjectBody {
                engine.out.writeByte(ValueTag.valueRecord)
                try engine.beginRecord(typeID: typeID(for: frames[frame].valueType, isObject: false))
            }
        case .unkeyed:
            try engine.beginNested()
            engine.out.writeByte(ValueTag.referenceArray)
            frames[frame].countPlaceholder = engine.out.count
            engine.out.writeByte(0)
            frames[frame].packsReferences = true
        case .single:
            try engine.beginNested()
        case .pending:
            break
        }
        frames[frame].kind = kind
    }

    /// Opens container `kind` for the value slot `slot`; asking again for the same kind returns
    /// the same container (a subclass and its superclass share one). On failure the returned
    /// frame is -1, and every use of the container throws the recorded error.
    ///
    /// Inlined for the keyed container of an object's body in a run (see
    /// `CodableEncodingFrame.isInRun`), what every object of a held array asks for first: its
    /// record opens in place, which cannot fail (callgrind: about 30 instructions an object
    /// for the call and the error handling).
    @inline(__always)
    mutating func openSlot(_ slot: Int, _ kind: CodableEncodingFrame.Kind) -> (frame: Int, serial: Int) {
        if kind == .keyed && slot == current && slot >= 0 && failure == nil && frames[slot].isInRun
            && frames[slot].kind == .pending
        {
            engine.beginRecordInRun(typeID: typeID(for: frames[slot].valueType, isObject: true))
            frames[slot].kind = .keyed
            return (slot, frames[slot].serial)
        }
        return openSlotChecked(slot, kind)
    }

    /// ``openSlot(_:_:)`` but for a body in a run.
    @inline(never)
    private mutating func openSlotChecked(_ slot: Int, _ kind: CodableEncodingFrame.Kind) -> (frame: Int, serial: Int) {
        guard failure == nil else { return (-1, 0) }
        guard slot >= 0 && slot == current else {
            record(
                invalid(
                    "a container was requested from an encoder whose value is already encoded",
                    value: (),
                    at: current
                )
            )
            return (-1, 0)
        }
        if kind == .keyed && frames[slot].isObjectBody && frames[slot].kind == .pending {
            // What every object's `encode(to:)` asks for first, opened without `openOnce`'s
            // layers (callgrind: about 60 instructions an object).
            do {
                try beginBodyRecord(slot)
            } catch {
                return failedToOpen(slot, error)
            }
            frames[slot].kind = .keyed
            return (slot, frames[slot].serial)
        }
        return openOnce(slot, kind) { (state) throws(GraphArchiveError) in try state.open(kind, frame: slot) }
    }

    /// Chooses the container kind of an own-buffer frame that was handed out as a super encoder.
    mutating func openOwnBufferFrame(_ frame: Int, serial: Int, _ kind: CodableEncodingFrame.Kind, keyType: Any.Type)
        -> (frame: Int, serial: Int)
    {
        guard failure == nil, frame >= 0, frame < frames.count, frames[frame].serial == serial else {
            record(invalid("a super encoder was used after its container was finished", value: (), at: current))
            return (-1, 0)
        }
        return openOnce(frame, kind) { (state) throws in
            let parent = state.frames[frame].parent
            let previous = try state.enter(parent, serial: state.frames[parent].serial)
            state.frames[frame].valueType = keyType
            try state.startOwnBufferFrame(frame, kind)
            state.leave(to: previous)
        }
    }

    /// Runs `open` for a frame that has no container yet; the same kind again is the same
    /// container, another kind is an error (recorded, frame -1).
    private mutating func openOnce<E: Error>(
        _ frame: Int,
        _ kind: CodableEncodingFrame.Kind,
        _ open: (inout Self) throws(E) -> Void
    ) -> (frame: Int, serial: Int) {
        switch frames[frame].kind {
        case .pending:
            do {
                try open(&self)
            } catch {
                return failedToOpen(frame, error)
            }
        case kind:
            break
        case let existing:
            record(
                invalid(
                    "\(frames[frame].valueType) asked for \(withIndefiniteArticle("\(kind)")) container "
                        + "after \(withIndefiniteArticle("\(existing)")) one for the same value",
                    value: (),
                    at: frame
                )
            )
            return (-1, 0)
        }
        return (frame, frames[frame].serial)
    }

    /// Records `error` from opening a container for `frame`, and returns the failed frame -1.
    private mutating func failedToOpen(_ frame: Int, _ error: any Error) -> (frame: Int, serial: Int) {
        record(converted(error, path: codingPath(to: frame)))
        // Opening cannot throw: the next use of the container reports the failure.
        failureThrown = false
        return (-1, 0)
    }

    /// Opens `kind` in the fresh own-buffer frame `frame`, whose parent is current, leaving the
    /// parent current again.
    mutating func startOwnBufferFrame(_ frame: Int, _ kind: CodableEncodingFrame.Kind) throws(GraphArchiveError) {
        let parent = current
        switchBuffer(to: frames[frame].buffer)
        current = frame
        try open(kind, frame: frame)
        leave(to: parent)
    }

    /// Records `error`, an engine error becoming an `EncodingError` at `path`, and returns it to throw.
    mutating func fail(converting error: any Error, path: [any CodingKey]) -> any Error {
        fail(converted(error, path: path))
    }

    /// `error`, an engine error becoming an `EncodingError` at `path`.
    func converted(_ error: any Error, path: [any CodingKey]) -> any Error {
        guard let error = error as? GraphArchiveError else { return error }
        return EncodingError.invalidValue(
            (),
            EncodingError.Context(codingPath: path, debugDescription: error.message, underlyingError: error)
        )
    }

    // MARK: - Entering frames

    /// Makes `frame` current for one write and returns the frame to go back to with `leave(to:)`.
    /// An own-buffer frame is entered through its parents, which must lead to the current frame.
    @inline(__always)
    mutating func enter(_ frame: Int, serial: Int) throws -> Int {
        let previous = current
        if isCurrent(frame, serial: serial) { return previous }
        try enterSlow(frame, serial: serial)
        return previous
    }

    /// Whether `frame` (of serial `serial`) is current and usable (nothing has failed): a write
    /// to it needs no `enter`.
    @inline(__always)
    func isCurrent(_ frame: Int, serial: Int) -> Bool {
        frame == current && frame >= 0 && failure == nil && frames[frame].serial == serial
    }

    @inline(never)
    private mutating func enterSlow(_ frame: Int, serial: Int) throws {
        if failure != nil { throw errorAfterFailure(at: current) }
        guard frame >= 0 && frame < frames.count && frames[frame].serial == serial else {
            throw fail(
                invalid("a container was used after the value it belongs to was encoded", value: (), at: current)
            )
        }
        guard frame != current else { return }
        try enterChain(frame)
    }

    private mutating func enterChain(_ frame: Int) throws {
        let parent = frames[frame].parent
        guard frames[frame].hasOwnBuffer && frames[frame].kind != .pending && parent >= 0 else {
            throw fail(
                invalid(
                    "a container was used while a value it does not contain was being encoded",
                    value: (),
                    at: current
                )
            )
        }
        if parent != current { try enterChain(parent) }
        pushLevel(of: frame)
        current = frame
    }

    /// Makes own-buffer frame `frame`'s engine container current, keeping the current one below.
    private mutating func pushLevel(of frame: Int) {
        guard frames[frame].hasOwnBuffer else { return }
        let parked = parkedContainers[frames[frame].parkedIndex]
        engine.stack.append(engine.container)
        engine.container = parked.container
        engine.container.slowKeysStart = engine.slowKeyIDs.count
        engine.slowKeyIDs.append(contentsOf: parked.slowKeys)
        parked.slowKeys.removeAll(keepingCapacity: true)
        switchBuffer(to: frames[frame].buffer)
    }

    /// Puts away the own-buffer frames entered since `previous` was current.
    mutating func leave(to previous: Int) {
        while current != previous, frames[current].hasOwnBuffer {
            let frame = current
            let parked = parkedContainers[frames[frame].parkedIndex]
            let start = engine.container.slowKeysStart
            parked.slowKeys.append(contentsOf: engine.slowKeyIDs[start...])
            engine.slowKeyIDs.removeSubrange(start...)
            parked.container = engine.container
            engine.container = engine.stack.removeLast()
            current = frames[frame].parent
            switchBuffer(to: frames[current].buffer)
        }
    }

    // MARK: - Closing

    /// Finishes value slot `slot` (current) once its `encode(to:)` returned: splices in its
    /// own-buffer descendants, closes its container and makes its parent current again.
    ///
    /// Inlined for the keyed body of an object in a run (see `CodableEncodingFrame.isInRun`)
    /// with no frame above it, what a held array's objects leave: its record closes in place
    /// (callgrind: about 20 instructions an object for the call).
    @inline(__always)
    mutating func closeSlot(_ slot: Int) throws(GraphArchiveError) {
        if frames.count - 1 == slot && frames[slot].isInRun && frames[slot].kind == .keyed {
            // Such a body sits at an element index, not under a key: no key of `pathKeys` to drop.
            assert(frames[slot].step.kind == .index)
            engine.endRecordInRun()
            current = frames[slot].parent
            currentSlot = frames[slot].enclosingSlot
            frames.truncate(to: slot)
            return
        }
        try closeSlotChecked(slot)
    }

    /// ``closeSlot(_:)`` but for a body in a run with no frame above it.
    @inline(never)
    private mutating func closeSlotChecked(_ slot: Int) throws(GraphArchiveError) {
        while frames.count - 1 > slot {
            try finishOwnBufferFrame(frames.count - 1)
        }
        let frame = frames[slot]
        // A keyed container, what most values and every object of a Codable class open: its
        // record ends here, without `closeLevel`'s other cases.
        if frame.kind == .keyed { endBodyOrValueRecord(frame) } else { try closeLevel(slot) }
        current = frame.parent
        currentSlot = frame.enclosingSlot
        // `removeLastFrame` without its parked-container case, which a slot never has (it
        // writes in its parent's buffer, `pushSlot`): called here, it cost 0.5% of a bridge encode.
        frames.truncate(to: slot)
        if frame.step.kind == .key { pathKeys.removeLast() }
    }

    /// Closes own-buffer frame `frame` (the last one) and splices its bytes into its parent's buffer.
    private mutating func finishOwnBufferFrame(_ frame: Int) throws(GraphArchiveError) {
        let outer = active
        if frames[frame].kind == .pending {
            // A super encoder nothing was encoded into: an empty record, as JSONEncoder writes {}.
            switchBuffer(to: frames[frame].buffer)
            try writeEmptyRecord(type: EmptySuperValue.self)
        } else {
            pushLevel(of: frame)
            try closeLevel(frame)
        }
        switchBuffer(to: outer)
        let parentBuffer = frames[frames[frame].parent].buffer
        let bytes = buffers[frames[frame].buffer].value.bytes
        if parentBuffer == active {
            engine.out.insert(bytes, at: frames[frame].splicePosition)
        } else {
            buffers[parentBuffer].value.insert(bytes, at: frames[frame].splicePosition)
        }
        releaseBuffer(frames[frame].buffer)
        removeLastFrame()
    }

    /// Closes the container of `frame`, whose engine container is current, in the active buffer.
    private mutating func closeLevel(_ frame: Int) throws(GraphArchiveError) {
        let isObjectBody = frames[frame].isObjectBody
        switch frames[frame].kind {
        case .pending:
            // The value encoded nothing: an empty record, as JSONEncoder writes {}.
            if isObjectBody {
                try beginBodyRecord(frame)
                endBodyOrValueRecord(frames[frame])
            } else {
                try writeEmptyRecord(type: frames[frame].valueType)
            }
            return
        case .keyed:
            endBodyOrValueRecord(frames[frame])
            return
        case .unkeyed:
            let placeholder = frames[frame].countPlaceholder
            if frames[frame].count == 0 { engine.out.setByte(ValueTag.array, at: placeholder - 1) }
            engine.out.patchVarint(frames[frame].count, atPlaceholder: placeholder)
            engine.endNested()
        case .single:
            if !frames[frame].hasValue { try writeEmptyRecord(type: frames[frame].valueType) }
            engine.endNested()
        }
        if isObjectBody { endBodyOrValueRecord(frames[frame]) }
    }

    /// Opens the record of object body `frame`: in place, in a run (see
    /// `CodableEncodingFrame.isInRun`).
    @inline(__always)
    private mutating func beginBodyRecord(_ frame: Int) throws(GraphArchiveError) {
        let typeID = typeID(for: frames[frame].valueType, isObject: true)
        if frames[frame].isInRun {
            engine.beginRecordInRun(typeID: typeID)
        } else {
            try engine.beginRecord(typeID: typeID)
        }
    }

    /// Closes the record of `frame`, an object's body or a keyed value: in place, in a run.
    @inline(__always)
    private mutating func endBodyOrValueRecord(_ frame: CodableEncodingFrame) {
        if frame.isInRun { engine.endRecordInRun() } else { engine.endRecord() }
    }

    /// An empty record as a value (an object's is `beginBodyRecord` and `endBodyOrValueRecord`).
    private mutating func writeEmptyRecord(type: Any.Type) throws(GraphArchiveError) {
        engine.out.writeByte(ValueTag.valueRecord)
        try engine.beginRecord(typeID: typeID(for: type, isObject: false))
        engine.endRecord()
    }

    // MARK: - Objects

    /// Looks `object` up: its index if written, `beingWritten`, `queued`, or nil when new
    /// (then it is numbered for discovery, held, and marked `beingWritten`).
    ///
    /// With `heldByArray`, an object new to the table is not retained: the array it came from
    /// was passed to `keep(_:)`, and holds it until the encoder ends.
    @inline(__always)
    mutating func discover(_ object: AnyObject, heldByArray: Bool = false) -> (discovery: Int, index: Int?) {
        let next = UInt32(truncatingIfNeeded: objectIndex.count)
        let (found, inserted) = identity.indexOrInsert(
            object,
            next: next,
            keeping: heldByArray ? .heldByCaller : .retained
        )
        let discovery = Int(found)
        if inserted {
            objectIndex.append(-1)
            return (discovery, nil)
        }
        return (discovery, objectIndex[discovery])
    }

    /// Makes room for `count` more objects, so a large array of them grows the tables once.
    mutating func reserveObjects(_ count: Int) {
        let total = objectIndex.count + count
        identity.reserve(total)
        // Geometrically, as reserving the exact size for each small array of a tree would copy
        // the whole list at almost every object. Grown by its appends instead, the list was
        // copied a dozen times for 75,000 objects (callgrind: about 28 instructions an object).
        if total > objectIndex.capacity { objectIndex.reserveCapacity(max(total, objectIndex.capacity * 2)) }
    }

    /// Keeps `array` (of objects) until the encoder ends, so that `discover` need not retain
    /// its objects one by one: one reference instead of a retain and a release per object (the
    /// release a write to a header that may have left the cache long before), as the native
    /// encoder keeps its arrays (`EncodingState.arrayKeptAliveMinimum`).
    mutating func keep<Element>(_ array: [Element]) {
        keptAlive.append(array.storageReference)
    }

    /// Loads the identity-table slots of the objects at `batch` of `array` (whose elements are
    /// objects) into cache together, as the native encoder does (`IdentityTable.touchHomeSlots`):
    /// their misses overlap instead of stalling one lookup after another.
    /// With `keptFrom` 0 or more, the addresses it read are kept in `batchAddresses` from there
    /// on, in order.
    mutating func touchHomeSlots<Element>(of array: [Element], in batch: Range<Int>, keptFrom start: Int = -1) {
        let sink = array.withClassElementAddresses(in: batch) { addresses in
            if start >= 0 {
                for (offset, address) in addresses.enumerated() { batchAddresses[start + offset] = address }
            }
            return identity.touchHomeSlots(of: addresses)
        }
        prefetchSink ^= sink
    }

    /// The addresses of the objects of the arrays being encoded by address, a batch
    /// (`ReferenceLookAhead.count`) each: a body in an array's batch may encode an array of its
    /// own, whose batch goes above.
    var batchAddresses = PlainStack<UInt>()

    /// A reference that may close a cycle (inside an `encodeLater` value) to object
    /// `discovery`, not written yet: queues it if it is new, and returns the placeholder index
    /// that `assemble` numbers once every body is written (FORMAT.md §5.4: it points forward).
    mutating func forwardReference(
        to object: some Encodable,
        discovery: Int,
        isNew: Bool,
        key: CodingPathComponent
    ) -> Int {
        if isNew {
            objectIndex[discovery] = Self.queued
            var path = localCodingPath(to: current)
            if let key = key.codingKey { path.append(key) }
            _ = laterPaths.add(path)
            laterObjects.append((object, discovery))
        }
        writesForwardReferences = true
        referenceCount += 1
        return ObjectOrdering.ForwardNumbering.base + discovery
    }

    /// The next queued object still to be written, marked `beingWritten` and made the current
    /// one for coding paths; nil when none is left.
    mutating func nextLaterObject() -> (object: any Encodable, discovery: Int)? {
        while laterHead < laterObjects.count {
            let position = laterHead
            laterHead += 1
            guard let object = laterObjects[position].object else { continue }
            laterObjects[position].object = nil
            let discovery = laterObjects[position].discovery
            // Written meanwhile by a plain reference, which needed its body at once.
            guard objectIndex[discovery] == Self.queued else { continue }
            objectIndex[discovery] = Self.beingWritten
            laterPaths.current = position
            return (object, discovery)
        }
        laterPaths.current = -1
        return nil
    }

    /// The frame of the body being written for discovery number `discovery`.
    func bodyFrame(of discovery: Int) -> Int {
        var frame = frames.count - 1
        while frame >= 0 && frames[frame].object != discovery { frame -= 1 }
        return frame
    }

    /// Moves the finished body at the end of the active buffer, from `start` on, to the object
    /// section and numbers it. Inlined into its one caller, `CodableEncoder.encodeBody`.
    @inline(__always)
    mutating func finishObject(_ discovery: Int, bodyStart start: Int) -> Int {
        // A body of a few words is copied a word at a time, without a `memcpy` call.
        objects.writeBytes(of: engine.out, in: start..<engine.out.count)
        engine.out.truncate(to: start)
        let index = objectCount
        objectCount += 1
        objectIndex[discovery] = index
        return index
    }

    // MARK: - Unkeyed containers

    /// Counts one more element of unkeyed `frame` (current) that is not an object reference.
    @inline(__always)
    mutating func addValueElement(to frame: Int) {
        if frames[frame].packsReferences { unpackReferences(frame) }
        frames[frame].count += 1
    }

    /// Counts `count` values the caller writes next as elements of unkeyed `frame` (current).
    @inline(__always)
    mutating func addValueElements(_ count: Int, to frame: Int) {
        if frames[frame].packsReferences && count > 0 { unpackReferences(frame) }
        frames[frame].count += count
    }

    /// Appends a reference to object `index` to unkeyed `frame` (current).
    @inline(__always)
    mutating func addReferenceElement(_ index: Int, to frame: Int) {
        frames[frame].count += 1
        guard frames[frame].packsReferences else {
            writeReference(index)
            return
        }
        engine.out.writeReferenceDelta(to: index, from: frames[frame].previousReference)
        frames[frame].previousReference = index
    }

    @inline(__always)
    mutating func writeReference(_ index: Int) {
        engine.out.writeByte(ValueTag.objectReference)
        engine.out.writeVarint(index)
    }

    /// Turns a packed reference array into a plain array once a non-object element arrives:
    /// the deltas so far are rewritten as tagged references (FORMAT.md §6.4, §6.5).
    @inline(never)
    private mutating func unpackReferences(_ frame: Int) {
        frames[frame].packsReferences = false
        let start = frames[frame].countPlaceholder + 1
        engine.out.setByte(ValueTag.array, at: start - 2)
        let count = frames[frame].count
        guard count > 0 else { return }
        let indexes = engine.out.withReader { reader in
            reader.offset = start
            var indexes: [Int] = []
            var previous = -1
            for _ in 0..<count {
                // These deltas were written above and cannot be malformed.
                previous = (try? ValueScanner.nextReferenceIndex(&reader, previous: previous)) ?? 0
                indexes.append(previous)
            }
            return indexes
        }
        engine.out.truncate(to: start)
        for index in indexes { writeReference(index) }
    }

    // MARK: - Finishing

    mutating func assemble(compression: ArchiveCompression) throws(GraphArchiveError) -> ArchiveOutput {
        var top = ByteWriter()
        swap(&top, &engine.out)
        var objectSection = ByteWriter()
        swap(&objectSection, &objects)
        if writesForwardReferences {
            var numbered = try ObjectOrdering.numberForwardReferences(
                top: top,
                topCount: engine.topCount,
                objects: objectSection,
                objectCount: objectCount,
                shapeValueCounts: engine.shapes.map(\.keyIDs.count),
                numbering: ObjectOrdering.ForwardNumbering(indexOfDiscovery: objectIndex.array)
            )
            swap(&top, &numbered.top)
            swap(&objectSection, &numbered.objects)
            referenceCount = numbered.referenceCount
        }
        return try ArchiveAssembler.assemble(
            tablesOf: engine,
            sections: [OutputChunk(top), OutputChunk(objectSection)],
            objectCount: objectCount,
            referenceCount: referenceCount,
            compression: compression
        )
    }
}
