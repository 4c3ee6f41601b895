// Sources/GraphArchive/Codable/CodableEncoder.swift - the Encoder that every value of one archive is given

/// The single-use `Encoder` behind ``GraphArchiveEncoder``: one instance serves every value of
/// one archive, so encoding a value allocates no encoder; which value is being encoded is
/// state (the current slot), and its containers are frames of that state.
final class CodableEncoder: Encoder {
    private let storage: UncheckedStateBox<CodableEncodingState>
    let userInfo: [CodingUserInfoKey: Any]
    private let compression: ArchiveCompression

    /// The encoding state, addressed in place (see `UncheckedStateBox` for why).
    var state: CodableEncodingState {
        _read { yield storage.value }
        _modify { yield &storage.value }
    }

    init(options: GraphArchiver.Options, userInfo: [CodingUserInfoKey: Any]) {
        storage = UncheckedStateBox(CodableEncodingState(maximumDepth: options.maximumDepth))
        compression = options.compression
        self.userInfo = userInfo
    }

    // MARK: - Encoder

    var codingPath: [any CodingKey] { state.codingPath(to: state.currentSlot) }

    /// A keyed container over the current value: a cached one nobody holds any more, if any.
    /// Inlined into its protocol witness, its one caller: every object asks for one.
    @inline(__always)
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (frame, serial) = state.openSlot(state.currentSlot, .keyed)
        return state.keyedContainers.container(
            keyedBy: Key.self,
            coder: self,
            lending: false,
            frame: frame,
            serial: serial
        ) {
            KeyedEncodingContainer(CodableKeyedEncodingContainer<Key>(place: $0))
        }
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (frame, serial) = state.openSlot(state.currentSlot, .unkeyed)
        return CodableUnkeyedEncodingContainer(encoder: self, frame: frame, serial: serial)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        let (frame, serial) = state.openSlot(state.currentSlot, .single)
        return CodableSingleValueEncodingContainer(encoder: self, frame: frame, serial: serial)
    }

    // MARK: - Archiving

    /// Archives `value` under the root key and returns the finished archive.
    func archive<T: Encodable>(_ value: T) throws -> ArchiveOutput {
        try state.engine.writeKey(GraphArchiver.rootKey)
        defer { state.keyedContainers.release() }
        do {
            try encodeValue(value, key: .none)
            try writeLaterObjects()
        } catch {
            throw state.fail(converting: error, path: [])
        }
        if state.failure != nil { throw state.errorAfterFailure(at: -1) }
        return try state.assemble(compression: compression)
    }

    /// Writes `value` at the current position of the current frame.
    func encodeValue<T: Encodable>(_ value: T, key: @autoclosure () -> CodingPathComponent) throws {
        try encodeValue(value, kind: state.kinds.kind(of: T.self), key: key())
    }

    /// ``encodeValue(_:key:)`` with `kind`, looked up for `T` itself already (`.object` is
    /// written like that, but an element of an array is written as ``encodeElement`` does).
    func encodeValue<T: Encodable>(
        _ value: T,
        kind: CodableTypeKind,
        key: @autoclosure () -> CodingPathComponent
    ) throws {
        switch kind {
        case .primitive(let type):
            func write<P: CodablePrimitive>(_: P.Type) {
                // The kind was looked up for T itself, so T is P.
                reinterpreted(value, as: P.self).writeTagged(to: &state.engine)
            }
            write(type)
        case .object:
            let index = try encodeObject(value, key: key())
            state.writeReference(index)
        case .array(let type):
            func write<A: CodableArray>(_: A.Type) throws {
                // T is an Array of Codable elements, as the kind was looked up for T itself.
                try reinterpreted(value, as: A.self).encodeElements(to: self, key: key())
            }
            try write(type)
        case .value:
            let slot = state.pushSlot(valueType: T.self, isObjectBody: false, key: key())
            try value.encode(to: self)
            try closeSlot(slot)
        case .later:
            // T is a CodableLaterValue, as the kind was looked up for T itself.
            try (value as! any CodableLaterEncodable).encodeWrapped(to: self, key: key())
        }
    }

    /// Writes the value of an `encodeLater` call: as `encodeValue` would, except that the object
    /// references in it may close cycles (see `encodeObject`).
    func encodeLater<T: Encodable>(_ value: T, key: CodingPathComponent) throws {
        state.laterDepth += 1
        defer { state.laterDepth -= 1 }
        try encodeValue(value, key: key)
    }

    /// Closes `slot` once its value's `encode(to:)` returned, unless the encoder failed
    /// meanwhile (an error was caught and ignored inside it): frames of the value that threw are
    /// still open then, so the encoder stops instead of closing what it cannot trust. Inlined,
    /// as `CodableEncodingState.closeSlot` inlines its common case.
    @inline(__always)
    private func closeSlot(_ slot: Int) throws {
        if state.failure != nil { throw state.errorAfterFailure(at: state.current) }
        try state.closeSlot(slot)
    }

    /// Writes `array` as its own `encode(to:)` would: an unkeyed container of its elements.
    func encodeArray<Element: Encodable>(_ array: [Element], key: CodingPathComponent) throws {
        let slot = state.pushSlot(valueType: [Element].self, isObjectBody: false, key: key)
        let (frame, serial) = state.openSlot(slot, .unkeyed)
        // The elements' kind, looked up once an array rather than twice an element.
        let kind = state.kinds.kind(of: Element.self)
        switch kind {
        case .object:
            break
        case .primitive(let type):
            func write<P: CodablePrimitive>(_: P.Type) throws {
                try P.encodeElements(array.reinterpreted(as: P.self), to: self, in: frame, serial: serial)
            }
            try write(type)
            try closeSlot(slot)
            return
        case .array, .value, .later:
            for element in array {
                try encodeElement(element, kind: kind, in: frame, serial: serial)
            }
            try closeSlot(slot)
            return
        }
        state.reserveObjects(array.count)
        // The class as one constrained to classes: its instances are then single references
        // to the compiler, copied with a plain retain rather than through value witnesses
        // (callgrind: about 60 instructions a new object). Checked once an array.
        if array.count >= EncodingState.arrayKeptAliveMinimum,
            let objectType = Element.self as? any (AnyObject & Encodable).Type
        {
            try encodeHeldObjects(array, as: objectType, in: frame, serial: serial)
        } else {
            var start = 0
            while start < array.count {
                let batch = start..<min(start + ReferenceLookAhead.count, array.count)
                state.touchHomeSlots(of: array, in: batch)
                for position in batch {
                    try encodeElement(array[position], in: frame, serial: serial)
                }
                start = batch.upperBound
            }
        }
        try closeSlot(slot)
    }

    /// Writes `array`'s elements, instances of `Object` (`Element` itself), as the elements of
    /// unkeyed `frame`, keeping the array (see `CodableEncodingState.keep`) so that its objects
    /// are looked up by address (see `encodeHeldObject`).
    private func encodeHeldObjects<Element, Object: AnyObject & Encodable>(
        _ array: [Element],
        as _: Object.Type,
        in frame: Int,
        serial: Int
    ) throws {
        state.keep(array)
        let addresses = state.batchAddresses.count
        state.batchAddresses.append(repeating: 0, count: ReferenceLookAhead.count)
        defer { state.batchAddresses.truncate(to: addresses) }
        // The encoder as the bodies' `encode(to:)` takes it, made once for the array: made per
        // body, it cost a retain and a release (about 60 instructions an object, callgrind).
        let asEncoder: any Encoder = self
        // The array's engine container, saved once for the run of its bodies, as the native
        // encoder saves it for its queue: each body's record then opens and closes in place
        // (callgrind: about 80 instructions an object for the push and the pop). Not where a
        // body would nest too deep: each one then saves it and throws as before.
        let isInRun = state.engine.stack.count < state.engine.maximumDepth
        if isInRun { try state.engine.saveContainer() }
        // Every body leaves `frame` current again (`closeSlot`) or throws, so the elements do
        // not enter it one by one (callgrind: about 20 instructions an element); entered once
        // here, where a container that failed to open throws as the first element did.
        try write(in: frame, serial: serial, key: nextIndexKey(frame)) {}
        var start = 0
        while start < array.count {
            let batch = start..<min(start + ReferenceLookAhead.count, array.count)
            state.touchHomeSlots(of: array, in: batch, keptFrom: addresses)
            for position in batch {
                let address = state.batchAddresses[addresses + position - batch.lowerBound]
                try encodeHeldObject(
                    Object.self,
                    address: address,
                    in: frame,
                    as: asEncoder,
                    isInRun: isInRun
                )
            }
            start = batch.upperBound
        }
        if isInRun { state.engine.restoreContainer() }
    }

    /// Writes the body of object `value` if it is new and returns its index.
    ///
    /// Inside an `encodeLater` value, the object's body is not written here unless it already
    /// was: a new object is queued for after the root value, and the returned index is a
    /// placeholder (see `CodableEncodingState.forwardReference`).
    ///
    /// - Throws: `EncodingError.invalidValue` if the object is being encoded already (a cycle)
    ///   outside an `encodeLater` value.
    func encodeObject<T: Encodable>(
        _ value: T,
        position: Int = -1,
        key: @autoclosure () -> CodingPathComponent
    ) throws -> Int {
        let (discovery, known) = withClassInstance(value) { state.discover($0) }
        if let index = try indexOfDiscovered(value, discovery: discovery, known: known, key: key()) { return index }
        let index = try encodeBody(of: value, discovery: discovery, position: position, key: key(), as: self)
        state.referenceCount += 1
        return index
    }

    /// The element of an array of `Element`s at `address`, an object that the array (kept, see
    /// `CodableEncodingState.keep`) holds, as the next element of unkeyed `frame`, as
    /// `encodeElement` writes it; an object met before is looked up by its address alone,
    /// without a copy of the element (a retain and a release: writes to an object that may have
    /// left the cache long ago). A new one is taken from its address too: reading it from the
    /// array went through the standard library's unspecialized subscript (callgrind: about 57
    /// instructions an object). `frame` is current (see `writeInCurrentFrame`). `encoder` is
    /// this encoder, as bodies' `encode(to:)` take it;
    /// `isInRun`: the array's container is saved for the run of bodies (see
    /// `CodableEncodingFrame.isInRun`).
    private func encodeHeldObject<Element: AnyObject & Encodable>(
        _: Element.Type,
        address: UInt,
        in frame: Int,
        as encoder: any Encoder,
        isInRun: Bool
    ) throws {
        // `writeInCurrentFrame` spelled out, its body a local function always inlined: as a
        // closure, the body stayed a call of its own, and so did the lookup and the body's
        // write within it (callgrind: about 60 instructions an element).
        @inline(__always)
        func write() throws {
            let (discovery, known) = withObject(at: address) { state.discover($0, heldByArray: true) }
            let position = state.frames[frame].count
            if let index = try indexOfDiscovered(
                classReference(at: address, as: Element.self),
                discovery: discovery,
                known: known,
                key: .index(position)
            ) {
                state.addReferenceElement(index, to: frame)
                return
            }
            let index = try withObject(at: address, as: Element.self) { object in
                try encodeBody(
                    of: object,
                    discovery: discovery,
                    position: position,
                    key: .index(position),
                    as: encoder,
                    isInRun: isInRun
                )
            }
            state.referenceCount += 1
            state.addReferenceElement(index, to: frame)
        }
        assert(frame == state.current && state.failure == nil)
        do {
            try write()
        } catch {
            throw state.fail(converting: error, path: path(frame, nextIndexKey(frame)))
        }
    }

    /// `encodeObject` once `value` was looked up (`CodableEncodingState.discover`): its index,
    /// or nil when it is new and its body is to be written now (`encodeBody`, then counted as
    /// a reference). `value` is asked for only if its body is not written yet.
    @inline(__always)
    private func indexOfDiscovered<T: Encodable>(
        _ value: @autoclosure () -> T,
        discovery: Int,
        known: Int?,
        key: @autoclosure () -> CodingPathComponent
    ) throws -> Int? {
        if let known {
            if known >= 0 {
                state.referenceCount += 1
                return known
            }
            return try encodeUnwritten(value(), discovery: discovery, index: known, key: key())
        }
        if state.laterDepth > 0 {
            return state.forwardReference(to: value(), discovery: discovery, isNew: true, key: key())
        }
        return nil
    }

    /// `encodeObject` for an object met before whose body is not written: being written (a
    /// cycle) or queued by `encodeLater`. Kept out of line: the common cases are a new object
    /// and one already written.
    @inline(never)
    private func encodeUnwritten<T: Encodable>(_ value: T, discovery: Int, index: Int, key: CodingPathComponent)
        throws -> Int
    {
        if state.laterDepth > 0 {
            return state.forwardReference(to: value, discovery: discovery, isNew: false, key: key)
        }
        guard index == CodableEncodingState.queued else { throw cycle(value, discovery: discovery, key: key) }
        // Queued by encodeLater, and now needed at once by a plain reference.
        state.objectIndex[discovery] = CodableEncodingState.beingWritten
        let written = try encodeBody(of: value, discovery: discovery, key: key, as: self)
        state.referenceCount += 1
        return written
    }

    /// Writes the body of object `value` (discovery number `discovery`, marked `beingWritten`)
    /// and returns its index. `position` is the element index where it was met (which `key`
    /// says too), or -1; `encoder` is this encoder, as `encode(to:)` takes it; `isInRun`: see
    /// `CodableEncodingFrame.isInRun`.
    @inline(__always)
    private func encodeBody<T: Encodable>(
        of value: T,
        discovery: Int,
        position: Int = -1,
        key: @autoclosure () -> CodingPathComponent,
        as encoder: any Encoder,
        isInRun: Bool = false
    ) throws -> Int {
        // The body goes after what is being written, in the same buffer (see
        // CodableEncodingState.swift): no buffer of its own to switch to and back.
        let start = state.engine.out.count
        // The object's class read from its header: `type(of: value)` on a generic value asks
        // the runtime to search for its dynamic type.
        let valueType: Any.Type = withClassInstance(value) { type(of: $0) }
        let slot =
            position >= 0
            ? state.pushSlot(
                valueType: valueType,
                isObjectBody: true,
                isInRun: isInRun,
                object: discovery,
                step: .index(position)
            )
            : state.pushSlot(valueType: valueType, isObjectBody: true, object: discovery, key: key())
        try value.encode(to: encoder)
        try closeSlot(slot)
        return state.finishObject(discovery, bodyStart: start)
    }

    /// Writes the bodies of the objects first met inside `encodeLater` values, in the order they
    /// were met, once the root value is written: each one from here, not from inside the body
    /// that met it, so a list of a million nodes linked through `encodeLater` is a loop, not a
    /// recursion. Bodies that meet more such objects add to the queue.
    private func writeLaterObjects() throws {
        while let (object, discovery) = state.nextLaterObject() {
            _ = try encodeBody(of: object, discovery: discovery, key: .none, as: self)
        }
    }

    @inline(never)
    private func cycle<T>(_ value: T, discovery: Int, key: CodingPathComponent) -> any Error {
        var path = state.codingPath(to: state.current)
        if let key = key.codingKey { path.append(key) }
        let first = state.codingPath(to: state.bodyFrame(of: discovery))
        let firstText = first.isEmpty ? "the root" : first.map(\.stringValue).joined(separator: ".")
        let message = """
            reference cycle: this \(type(of: value)) instance is already being encoded at \(firstText); \
            init(from:) cannot restore a cycle through a plain decode, so it is not archived (encode the \
            back reference with encodeLater(_:forKey:) and decode it with decodeLater(_:forKey:assign:), \
            or leave it out of CodingKeys)
            """
        let error = EncodingError.invalidValue(
            value,
            EncodingError.Context(codingPath: path, debugDescription: message)
        )
        return state.fail(error)
    }

    // MARK: - Writing in a frame

    /// Runs `body` with `frame` current; records a thrown error as the encoder's failure, an
    /// engine error becoming an `EncodingError` at the frame's path plus `key`.
    @inline(__always)
    func write<R>(in frame: Int, serial: Int, key: @autoclosure () -> (any CodingKey)?, _ body: () throws -> R) throws
        -> R
    {
        let previous = try state.enter(frame, serial: serial)
        // Entered: `frame` is current and nothing has failed.
        let result = try writeInCurrentFrame(frame, key: key(), body)
        if state.current != previous { state.leave(to: previous) }
        return result
    }

    /// `write(in:serial:key:_:)` where `frame` is current, and usable (no failure so far).
    @inline(__always)
    private func writeInCurrentFrame<R>(_ frame: Int, key: @autoclosure () -> (any CodingKey)?, _ body: () throws -> R)
        throws -> R
    {
        assert(frame == state.current && state.failure == nil)
        do {
            return try body()
        } catch {
            throw state.fail(converting: error, path: path(frame, key()))
        }
    }

    private func path(_ frame: Int, _ key: (any CodingKey)?) -> [any CodingKey] {
        guard let key else { return state.codingPath(to: frame) }
        return state.codingPath(to: frame, appending: key)
    }

    /// Hands out a nested container or super encoder with a buffer of its own, after `announce`
    /// gave it its place in `frame`. Returns frame -1 on failure (recorded, thrown on use).
    func openNested(
        _ kind: CodableEncodingFrame.Kind?,
        keyType: Any.Type,
        in frame: Int,
        serial: Int,
        key: @autoclosure () -> CodingPathComponent,
        announce: () throws -> Void
    ) -> (frame: Int, serial: Int) {
        let seen = state.failure != nil && state.failureThrown
        let opened = try? write(in: frame, serial: serial, key: nil) { () throws -> (Int, Int) in
            try announce()
            let nested = state.pushOwnBufferFrame(key: key(), valueType: keyType)
            if let kind { try state.startOwnBufferFrame(nested, kind) }
            return (nested, state.frames[nested].serial)
        }
        guard let opened else {
            // This call cannot throw: the next use of the container reports the failure.
            state.failureThrown = seen
            return (-1, 0)
        }
        return opened
    }
}
