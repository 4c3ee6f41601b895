// Sources/GraphArchive/Codable/CodableDecoder.swift - the Decoder that every value of one archive is given

/// The single-use `Decoder` behind ``GraphArchiveDecoder``: one instance serves every value of
/// one archive; which value is being decoded is state (the current slot).
final class CodableDecoder: Decoder {
    private let storage: UncheckedStateBox<CodableDecodingState>
    /// Owns the bytes the state's reader points into.
    private let payload: ArchiveBytes
    let userInfo: [CodingUserInfoKey: Any]
    /// Classes that may stand where a superclass is expected, by archived name.
    private let classes: [String: any (AnyObject & Decodable).Type]

    /// The decoding state, addressed in place (see `UncheckedStateBox` for why).
    var state: CodableDecodingState {
        unsafeAddress { UnsafePointer(storage.pointer) }
        unsafeMutableAddress { storage.pointer }
    }

    init(
        bytes: ArchiveBytes, options: GraphUnarchiver.Options, userInfo: [CodingUserInfoKey: Any],
        classes: [String: any (AnyObject & Decodable).Type]
    ) throws(GraphArchiveError) {
        let loaded = try LoadedArchive.load(bytes, options: options)
        payload = loaded.payload
        storage = UncheckedStateBox(try CodableDecodingState(loaded: loaded, options: options))
        self.userInfo = userInfo
        self.classes = classes
    }

    // MARK: - Decoder

    var codingPath: [any CodingKey] { state.codingPath(to: state.currentSlot) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let (frame, serial) = try openSlot(.keyed, expected: KeyedDecodingContainer<Key>.self)
        return KeyedDecodingContainer(CodableKeyedDecodingContainer<Key>(decoder: self, frame: frame, serial: serial))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (frame, serial) = try openSlot(.unkeyed, expected: (any UnkeyedDecodingContainer).self)
        return CodableUnkeyedDecodingContainer(decoder: self, frame: frame, serial: serial)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        let (frame, serial) = try openSlot(.single, expected: (any SingleValueDecodingContainer).self)
        return CodableSingleValueDecodingContainer(decoder: self, frame: frame, serial: serial)
    }

    private func openSlot(_ kind: CodableDecodingFrame.Kind, expected: Any.Type) throws -> (frame: Int, serial: Int) {
        let slot = state.currentSlot
        guard slot >= 0 else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "a container was requested from a decoder whose value is already decoded"))
        }
        let frame = state.frames[slot]
        return try openContainer(
            kind, source: frame.source, parent: frame.parent, key: frame.key, slot: slot, expected: expected,
            path: state.codingPath(to: slot))
    }

    /// Opens a container over `source`, converting engine errors to `DecodingError`s at `path`.
    func openContainer(
        _ kind: CodableDecodingFrame.Kind, source: CodableValueSource, parent: Int, key: CodingPathComponent, slot: Int?,
        expected: Any.Type, path: @autoclosure () -> [any CodingKey]
    ) throws -> (frame: Int, serial: Int) {
        do {
            let frame = try state.openContainer(kind, source: source, parent: parent, key: key, slot: slot)
            return (frame, state.frames[frame].serial)
        } catch {
            throw decodingError(error, expected: expected, path: path(), valueOffset: source.offset)
        }
    }

    // MARK: - Decoding values

    /// Decodes the root value as `T`, then checks the rest of the archive.
    func decodeRoot<T: Decodable>(_: T.Type) throws -> T {
        guard let root = state.rootOffset else {
            throw DecodingError.valueNotFound(
                T.self,
                DecodingError.Context(codingPath: [], debugDescription: "the archive has no value under the root key \"\(GraphArchiver.rootKey)\""))
        }
        state.engine.reader.offset = root
        do {
            let value = try decodeValue(T.self, key: .none, parent: -1)
            try state.finish()
            return value
        } catch let error as GraphArchiveError {
            throw decodingError(error, expected: T.self, path: [], valueOffset: root)
        }
    }

    /// Decodes the value at the reader as `T`, leaving the reader after it. `parent` is the
    /// frame it belongs to (for coding paths).
    func decodeValue<T: Decodable>(_: T.Type, key: @autoclosure () -> CodingPathComponent, parent: Int) throws -> T {
        switch state.kinds.kind(of: T.self) {
        case .primitive(let type):
            func read<P: CodablePrimitive>(_: P.Type) throws(GraphArchiveError) -> T {
                // The kind was looked up for T itself, so P is T.
                try P.readTagged(from: &state.engine) as! T
            }
            return try read(type)
        case .object:
            let index = try state.engine.readObjectIndex(expected: String(describing: T.self))
            return try object(index, as: T.self, key: key(), parent: parent)
        case .value:
            return try decodeNested(T.self, source: CodableValueSource(offset: state.engine.reader.offset), key: key(), parent: parent)
        }
    }

    /// Decodes an element of a packed reference array (object `index`) as `T`.
    func decodeReference<T: Decodable>(_: T.Type, index: Int, key: CodingPathComponent, parent: Int) throws -> T {
        switch state.kinds.kind(of: T.self) {
        case .object:
            return try object(index, as: T.self, key: key, parent: parent)
        case .value:
            // An optional or wrapper around an object: its single-value container finds the reference.
            let source = CodableValueSource(offset: state.engine.reader.offset, referenceElement: index)
            return try decodeNested(T.self, source: source, key: key, parent: parent)
        case .primitive:
            throw GraphArchiveError(.typeMismatch, "expected \(T.self), found an object reference", offset: state.engine.reader.offset)
        }
    }

    /// Runs `T.init(from:)` on the value at `source` and leaves the reader after the value.
    private func decodeNested<T: Decodable>(_: T.Type, source: CodableValueSource, key: CodingPathComponent, parent: Int) throws -> T {
        let slot = try state.pushSlot(source, parent: parent, key: key)
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
    func object<T: Decodable>(_ index: Int, as _: T.Type, key: CodingPathComponent, parent: Int) throws -> T {
        if let cached = try state.cachedObject(index) {
            guard let typed = cached as? T else {
                throw GraphArchiveError(.typeMismatch, "expected \(T.self), found object #\(index) of type \(type(of: cached))")
            }
            return typed
        }
        let resume = state.engine.reader.offset
        let (shape, typeID) = try state.readObjectShape(index)
        let subclass = try registeredSubclass(of: T.self, typeID: typeID)
        let source = CodableValueSource(offset: state.engine.reader.offset, objectIndex: index, shape: shape)
        state.markUnderConstruction(index)
        let slot: Int
        do {
            slot = try state.pushSlot(source, parent: parent, key: key)
        } catch {
            state.objects[index] = nil
            throw error
        }
        do {
            let value = try subclass?.init(from: self) ?? T(from: self)
            let end = try state.closeSlot(slot, needsEnd: state.objectOffsets.count == index + 1)
            state.finishObject(index, value as AnyObject, end: end)
            state.engine.reader.offset = resume
            return value
        } catch {
            state.abandonSlot(slot)
            state.objects[index] = nil
            throw error
        }
    }

    /// nil when the record's type is `T` itself; the registered subclass when it names one; else
    /// a type mismatch (a subclass instance the decoder was not told about).
    private func registeredSubclass<T>(of _: T.Type, typeID: Int) throws(GraphArchiveError) -> T.Type? {
        if state.verifiedClasses[typeID] == ObjectIdentifier(T.self) { return nil }
        let name = state.engine.tables.typeNames[typeID]
        if name == String(describing: T.self) {
            state.verifiedClasses[typeID] = ObjectIdentifier(T.self)
            return nil
        }
        guard let registered = classes[name] else {
            throw GraphArchiveError(
                .typeMismatch,
                "expected \(T.self), found an object of class \(name): register \(name) with GraphArchiveDecoder.register(_:) to restore it")
        }
        guard let subclass = registered as? T.Type else {
            throw GraphArchiveError(
                .typeMismatch, "expected \(T.self), found an object of class \(name), registered as \(registered), which is not a \(T.self)")
        }
        return subclass
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

/// The `Decoder` of `superDecoder()`: reads the value under "super" (or the given key).
final class CodableSuperDecoder: Decoder {
    let decoder: CodableDecoder
    let parent: Int
    let parentSerial: Int
    let key: any CodingKey
    let offset: Int

    init(decoder: CodableDecoder, parent: Int, parentSerial: Int, key: any CodingKey, offset: Int) {
        self.decoder = decoder
        self.parent = parent
        self.parentSerial = parentSerial
        self.key = key
        self.offset = offset
    }

    var codingPath: [any CodingKey] { decoder.state.codingPath(to: parent, appending: key) }
    var userInfo: [CodingUserInfoKey: Any] { decoder.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let (frame, serial) = try open(.keyed, expected: KeyedDecodingContainer<Key>.self)
        return KeyedDecodingContainer(CodableKeyedDecodingContainer<Key>(decoder: decoder, frame: frame, serial: serial))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (frame, serial) = try open(.unkeyed, expected: (any UnkeyedDecodingContainer).self)
        return CodableUnkeyedDecodingContainer(decoder: decoder, frame: frame, serial: serial)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        let (frame, serial) = try open(.single, expected: (any SingleValueDecodingContainer).self)
        return CodableSingleValueDecodingContainer(decoder: decoder, frame: frame, serial: serial)
    }

    private func open(_ kind: CodableDecodingFrame.Kind, expected: Any.Type) throws -> (frame: Int, serial: Int) {
        do {
            try decoder.state.checkFrame(parent, serial: parentSerial)
        } catch {
            throw decoder.decodingError(error, expected: expected, path: [key], valueOffset: offset)
        }
        return try decoder.openContainer(
            kind, source: CodableValueSource(offset: offset), parent: parent, key: .key(key), slot: nil, expected: expected,
            path: codingPath)
    }
}
