// Sources/GraphArchive/Codable/CodableDecoder.swift - the Decoder that every value of one archive is given

/// The single-use `Decoder` behind ``GraphArchiveDecoder``: one instance serves every value of
/// one archive; which value is being decoded is state (the current slot).
final class CodableDecoder: CodableContainerSource {
    private let storage: UncheckedStateBox<CodableDecodingState>
    /// Owns the bytes the state's reader points into.
    private let payload: ArchiveBytes
    let userInfo: [CodingUserInfoKey: Any]
    /// Classes that may stand where a superclass is expected, by archived name.
    private let classes: GraphTypeRegistry

    /// The decoding state, addressed in place (see `UncheckedStateBox` for why).
    var state: CodableDecodingState {
        _read { yield storage.value }
        _modify { yield &storage.value }
    }

    init(
        loaded: LoadedArchive,
        options: GraphUnarchiver.Options,
        userInfo: [CodingUserInfoKey: Any],
        classes: GraphTypeRegistry
    ) throws(GraphArchiveError) {
        payload = loaded.payload
        storage = UncheckedStateBox(try CodableDecodingState(loaded: loaded, options: options))
        self.userInfo = userInfo
        self.classes = classes
    }

    // MARK: - Decoder

    var codingPath: [any CodingKey] { state.codingPath(to: state.currentSlot) }
    var decoder: CodableDecoder { self }

    func openFrame(_ kind: CodableDecodingFrame.Kind) throws -> (frame: Int, serial: Int) {
        let slot = state.currentSlot
        guard slot >= 0 else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [],
                    debugDescription: "a container was requested from a decoder whose value is already decoded"
                )
            )
        }
        do {
            let frame = try state.openContainer(kind, slot: slot)
            return (frame, state.frames[frame].serial)
        } catch {
            let path = state.codingPath(to: slot)
            throw decodingError(
                error,
                expected: kind.expectedType,
                path: path,
                valueOffset: state.frames[slot].source.offset
            )
        }
    }

    /// A keyed container over the current value: a cached one nobody holds any more, if any.
    /// Inlined into its protocol witness, its one caller: every object asks for one.
    @inline(__always)
    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let slot = state.currentSlot
        let (frame, serial) = state.openObjectRecord(slot) ? (slot, state.frames[slot].serial) : try openFrame(.keyed)
        return state.keyedContainers.container(
            keyedBy: Key.self,
            coder: self,
            lending: true,
            frame: frame,
            serial: serial
        ) { reference in
            guard let place = reference.lentPlace else {
                return KeyedDecodingContainer(CodableKeyedDecodingContainer<Key>(place: reference))
            }
            return KeyedDecodingContainer(CodableLentKeyedDecodingContainer<Key>(place: place))
        }
    }

    // MARK: - Decoding values

    /// Decodes the root value as `T`, then checks the rest of the archive.
    func decodeRoot<T: Decodable>(_: T.Type) throws -> T {
        guard let root = state.rootOffset else {
            throw DecodingError.valueNotFound(
                T.self,
                DecodingError.Context(
                    codingPath: [],
                    debugDescription: "the archive has no value under the root key \"\(GraphArchiver.rootKey)\""
                )
            )
        }
        state.engine.reader.offset = root
        defer { state.keyedContainers.release() }
        do {
            // The root array may take the table's references (see `handOverElements(of:)`); a
            // value decoded later, which `decodeLater` hands to user code, may not.
            state.rootMayHandOver = true
            let value = try decodeValue(T.self, step: .none, parent: -1)
            state.rootMayHandOver = false
            try runDeferredAssignments()
            try state.finish()
            return value
        } catch {
            throw decodingError(error, expected: T.self, path: [], valueOffset: root)
        }
    }

    // MARK: - Deferred assignments (decodeLater)

    /// Asks for the value at `place` (a super decoder just handed out for a key) to be decoded
    /// as `T` and passed to `assign` once the root value is decoded.
    func decodeLater<T: Decodable>(_: T.Type, at place: CodableSuperDecoder, assign: @escaping (T) throws -> Void)
        throws
    {
        var path = state.localCodingPath(to: place.parent)
        if let key = state.codingKey(for: place.step, in: place.parent) { path.append(key) }
        let offset = place.offset
        let request = state.deferred.count
        try state.deferAssignment(
            { decoder in
                decoder.state.engine.reader.offset = offset
                let value: T
                do {
                    value = try decoder.decodeValue(T.self, step: .none, parent: -1)
                } catch {
                    let path = decoder.state.deferredPaths.path(of: request)
                    throw decoder.decodingError(error, expected: T.self, path: path, valueOffset: offset)
                }
                try assign(value)
            },
            in: place.parent,
            localPath: path
        )
    }

    /// Runs the deferred assignments in request order, after the root value. Every object the
    /// root value reaches through plain references exists by then; one first reached through a
    /// deferred value is built when that value is decoded, and the assignments its initializer
    /// asks for join the end of the line: a loop, however long a chain of them is.
    private func runDeferredAssignments() throws {
        var next = 0
        while next < state.deferred.count {
            let assignment = state.deferred[next].run
            state.deferred[next].run = nil
            state.deferredPaths.current = next
            try assignment?(self)
            next += 1
        }
        state.deferredPaths.current = -1
    }

    /// Decodes the value at the reader as `T`, leaving the reader after it. `parent` and `step`
    /// say where it sits (for coding paths).
    @inline(__always)
    func decodeValue<T: Decodable>(_: T.Type, step: CodingPathStep, parent: Int) throws -> T {
        switch state.kinds.kind(of: T.self) {
        case .primitive(let type):
            func read<P: CodablePrimitive>(_: P.Type) throws(GraphArchiveError) -> T {
                // The kind was looked up for T itself, so P is T.
                reinterpreted(try P.readTagged(from: &state.engine), as: T.self)
            }
            return try read(type)
        case .object:
            let index = try state.engine.readObjectIndex(expected: String(describing: T.self))
            return try object(index, as: T.self, step: step, parent: parent)
        case .array(let type):
            func read<A: CodableArray>(_: A.Type) throws -> T {
                // The kind was looked up for T itself, so A is T.
                reinterpreted(try A.decodeElements(from: self, step: step, parent: parent), as: T.self)
            }
            return try read(type)
        case .value, .later:
            // (`.later` is the kind of an Encodable-only wrapper: no Decodable type has it.)
            return try decodeNested(
                T.self,
                source: CodableValueSource(offset: state.engine.reader.offset),
                step: step,
                parent: parent
            )
        }
    }

    /// Reads an `Array` as its own `init(from:)` would: an unkeyed container read to its end.
    func decodeArray<Element: Decodable>(of _: Element.Type, step: CodingPathStep, parent: Int) throws -> [Element] {
        let slot = try state.pushSlot(
            CodableValueSource(offset: state.engine.reader.offset),
            parent: parent,
            step: step
        )
        do {
            let frame = try state.openContainer(.unkeyed, slot: slot)
            if parent < 0 && state.rootMayHandOver {
                state.rootMayHandOver = false
                try state.handOverElements(of: frame)
            }
            let serial = state.frames[frame].serial
            let count = state.frames[frame].count
            var elements: [Element] = []
            // Every element takes at least one byte: never reserve more than the input can fill.
            let capacity = min(count, state.engine.reader.remaining)
            try state.engine.charge(
                MemoryBudget.array(capacity, stride: MemoryLayout<Element>.stride),
                for: "an array of \(count) \(Element.self)",
                at: state.engine.reader.offset
            )
            if state.frames[frame].packed {
                elements = try decodePackedElements(of: Element.self, in: frame, capacity: capacity)
            } else if case .primitive(let type) = state.kinds.kind(of: Element.self) {
                func read<P: CodablePrimitive>(_: P.Type) throws -> [Element] {
                    // The kind was looked up for Element itself, so P is Element.
                    try P.decodeElements(from: self, in: frame, capacity: capacity).reinterpreted(as: Element.self)
                }
                elements = try read(type)
            } else {
                elements.reserveCapacity(capacity)
                while state.frames[frame].index < count {
                    elements.append(try decodeElement(Element.self, in: frame, serial: serial))
                }
            }
            if state.handOverFrame == frame { state.handOverFrame = -1 }
            state.engine.reader.offset = try state.closeSlot(slot)
            return elements
        } catch {
            if state.handOverFrame == slot { state.handOverFrame = -1 }  // the frame is the slot
            state.abandonSlot(slot)
            throw error
        }
    }

    /// Decodes an element of a packed reference array (object `index`) as `T`.
    @inline(__always)
    func decodeReference<T: Decodable>(_: T.Type, index: Int, step: CodingPathStep, parent: Int) throws -> T {
        switch state.kinds.kind(of: T.self) {
        case .object:
            return try object(index, as: T.self, step: step, parent: parent)
        case .value, .later:
            // An optional or wrapper around an object: its single-value container finds the reference.
            let source = CodableValueSource(offset: state.engine.reader.offset, referenceElement: index)
            return try decodeNested(T.self, source: source, step: step, parent: parent)
        case .primitive, .array:
            throw GraphArchiveError(
                .typeMismatch,
                "expected \(readableTypeName(T.self)), found \(state.engine.describeObject(index))",
                offset: state.engine.reader.offset
            )
        }
    }

    /// Runs `T.init(from:)` on the value at `source` and leaves the reader after the value.
    private func decodeNested<T: Decodable>(_: T.Type, source: CodableValueSource, step: CodingPathStep, parent: Int)
        throws -> T
    {
        let slot = try state.pushSlot(source, parent: parent, step: step)
        do {
            let value = try T(from: self)
            let end = try state.closeSlot(slot)
            state.engine.reader.offset = end
            return value
        } catch {
            state.abandonSlot(slot)
            throw error
        }
    }

    /// Object `index` as `T`: the cached instance, or built now from its record and cached.
    @inline(__always)
    func object<T: Decodable>(_ index: Int, as _: T.Type, step: CodingPathStep, parent: Int) throws -> T {
        if let cached = state.objects[index] {
            if isInstance(cached, ofExactly: T.self) { return classInstance(cached, as: T.self) }
            return try cast(cached, to: T.self, index: index)
        }
        return try construct(index, as: T.self, step: step, parent: parent)
    }

    /// A cached object that is not exactly a `T`: a subclass, a mismatch, or one still being built.
    @inline(never)
    private func cast<T>(_ object: AnyObject, to _: T.Type, index: Int) throws(GraphArchiveError) -> T {
        try state.checkBuilt(index)
        guard let typed = object as? T else {
            throw GraphArchiveError(
                .typeMismatch,
                "expected \(T.self), found object #\(index) of type \(type(of: object))"
            )
        }
        return typed
    }

    /// Builds object `index` from its record as `T` (or a registered subclass) and caches it.
    private func construct<T: Decodable>(_ index: Int, as _: T.Type, step: CodingPathStep, parent: Int) throws -> T {
        let resume = state.engine.reader.offset
        let shape = try state.readObjectShape(index)
        var subclass: (any (AnyObject & Decodable).Type)? = nil
        let layout: KnownObjectShape
        if let known = state.knownObjectShape(shape, as: ObjectIdentifier(T.self)) {
            layout = known
        } else {
            (layout, subclass) = try checkObjectShape(shape, of: index, as: T.self)
        }
        let start = state.engine.reader.offset
        try state.engine.charge(layout.instanceCost, for: "object #\(index) (\(T.self))", at: start)
        let slot = try state.pushObjectSlot(index, layout: layout, start: start, parent: parent, step: step)
        do {
            let value: T
            if let subclass {
                value = try subclassInstance(subclass, as: T.self)
            } else {
                value = try T(from: self)
            }
            let handingOver = parent >= 0 && parent == state.handOverFrame
            try withClassInstance(value) { try state.closeObjectSlot(slot, object: $0, handingOver: handingOver) }
            state.engine.reader.offset = resume
            return value
        } catch {
            state.abandonObjectSlot(slot)
            throw error
        }
    }

    /// Checks that object `index`'s record, of `shape`, can be built as a `T`: what the shape
    /// holds, with what an instance costs, and the registered subclass to build, if not `T`.
    @inline(never)
    private func checkObjectShape<T>(_ shape: Int, of index: Int, as _: T.Type) throws(GraphArchiveError) -> (
        KnownObjectShape, subclass: (any (AnyObject & Decodable).Type)?
    ) {
        var (layout, typeID) = try state.objectShape(index, shape: shape)
        var subclass: (any (AnyObject & Decodable).Type)? = nil
        if state.verifiedClasses[typeID] != ObjectIdentifier(T.self) {
            subclass = try registeredSubclass(of: T.self, typeID: typeID)
        }
        layout.instanceCost = state.instanceCost(of: typeID, as: subclass ?? T.self)
        if subclass == nil { state.remember(layout, as: ObjectIdentifier(T.self)) }
        return (layout, subclass)
    }

    /// An instance of registered `subclass`, which must be a `T`.
    @inline(never)
    private func subclassInstance<T>(_ subclass: any (AnyObject & Decodable).Type, as _: T.Type) throws -> T {
        let built = try subclass.init(from: self)
        guard let value = built as? T else {
            throw GraphArchiveError(.typeMismatch, "\(type(of: built)) is not \(withIndefiniteArticle("\(T.self)"))")
        }
        return value
    }

    /// nil when the record's type is `T` itself (remembered for the type id); the registered
    /// subclass when it names one; else a type mismatch (a subclass the decoder was not told about).
    private func registeredSubclass<T>(of _: T.Type, typeID: Int) throws(GraphArchiveError) -> (
        any (AnyObject & Decodable).Type
    )? {
        let name = state.engine.tables.typeNames[typeID]
        if name == String(describing: T.self) {
            state.verifiedClasses[typeID] = ObjectIdentifier(T.self)
            return nil
        }
        guard let registered = classes.decodableType(named: name) else {
            throw GraphArchiveError(
                .typeMismatch,
                "expected \(T.self), found an object of class \(name): "
                    + "register \(name) with GraphArchiveDecoder.register(_:) to restore it"
            )
        }
        guard registered is T.Type else {
            throw GraphArchiveError(
                .typeMismatch,
                "expected \(T.self), found an object of class \(name), "
                    + "registered as \(registered), which is not \(withIndefiniteArticle("\(T.self)"))"
            )
        }
        return registered
    }

    // MARK: - Errors

    /// The `DecodingError` for `error` at `path`: engine errors become `typeMismatch` (or
    /// `valueNotFound` for a stored nil) and `dataCorrupted`, keeping the engine error as the
    /// underlying error. Other errors pass through.
    func decodingError(_ error: any Error, expected: Any.Type, path: [any CodingKey], valueOffset: Int) -> any Error {
        guard let error = error as? GraphArchiveError else { return error }
        let context = DecodingError.Context(codingPath: path, debugDescription: error.message, underlyingError: error)
        switch error.code {
        case .typeMismatch:
            if isNil(at: error.offset ?? valueOffset) { return DecodingError.valueNotFound(expected, context) }
            return DecodingError.typeMismatch(expected, context)
        default:
            return DecodingError.dataCorrupted(context)
        }
    }

    private func isNil(at offset: Int) -> Bool {
        var reader = state.engine.reader
        guard offset >= 0 && offset < reader.end else { return false }
        reader.offset = offset
        return (try? reader.peekByte()) == ValueTag.null
    }
}

/// A `Decoder` whose three container requests differ only in where the value is: the
/// decoder itself (the current value) or a super decoder (the value under "super").
protocol CodableContainerSource: Decoder {
    var decoder: CodableDecoder { get }
    /// A frame of `kind` over this source's value.
    func openFrame(_ kind: CodableDecodingFrame.Kind) throws -> (frame: Int, serial: Int)
}

extension CodableContainerSource {
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let (frame, serial) = try openFrame(.keyed)
        return KeyedDecodingContainer(
            CodableKeyedDecodingContainer<Key>(decoder: decoder, frame: frame, serial: serial)
        )
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (frame, serial) = try openFrame(.unkeyed)
        return CodableUnkeyedDecodingContainer(decoder: decoder, frame: frame, serial: serial)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        let (frame, serial) = try openFrame(.single)
        return CodableSingleValueDecodingContainer(decoder: decoder, frame: frame, serial: serial)
    }
}

extension CodableDecodingFrame.Kind {
    /// What a container of this kind was asked for, for error messages.
    var expectedType: Any.Type {
        switch self {
        case .keyed: [String: Any].self
        case .unkeyed: [Any].self
        case .single, .pending: Any.self
        }
    }
}

/// The `Decoder` of `superDecoder()`: reads the value under "super" (or the given key).
final class CodableSuperDecoder: CodableContainerSource {
    let decoder: CodableDecoder
    let parent: Int
    let parentSerial: Int
    let step: CodingPathStep
    let offset: Int

    init(decoder: CodableDecoder, parent: Int, parentSerial: Int, step: CodingPathStep, offset: Int) {
        self.decoder = decoder
        self.parent = parent
        self.parentSerial = parentSerial
        self.step = step
        self.offset = offset
    }

    var codingPath: [any CodingKey] {
        guard (try? decoder.state.checkFrame(parent, serial: parentSerial)) != nil else { return [] }
        let path = decoder.state.codingPath(to: parent)
        guard let key = decoder.state.codingKey(for: step, in: parent) else { return path }
        return path + [key]
    }

    var userInfo: [CodingUserInfoKey: Any] { decoder.userInfo }

    func openFrame(_ kind: CodableDecodingFrame.Kind) throws -> (frame: Int, serial: Int) {
        do {
            try decoder.state.checkFrame(parent, serial: parentSerial)
            let frame = try decoder.state.openContainer(
                kind,
                source: CodableValueSource(offset: offset),
                parent: parent,
                step: step
            )
            return (frame, decoder.state.frames[frame].serial)
        } catch {
            throw decoder.decodingError(error, expected: kind.expectedType, path: codingPath, valueOffset: offset)
        }
    }
}
