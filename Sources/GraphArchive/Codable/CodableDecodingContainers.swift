// Sources/GraphArchive/Codable/CodableDecodingContainers.swift - keyed, unkeyed and single-value decoding containers
//
// Each container is a frame number plus a serial number into the decoder's state. Reads
// position the reader from the frame's own cursor, so containers of one value can be used in
// any order, and a container whose value is finished throws instead of reading out of place.

extension CodableDecoder {
    // MARK: - Keyed

    /// Runs `read` with the reader on `key`'s value in keyed `frame` (`found` false if the
    /// record lacks the key); the value counts as read if `read` moved the reader. `keySlots`:
    /// the place of the container `key` came from, which serves its key type only (see
    /// `locate(_:in:keySlots:)`), or nil for a key of another type.
    @inline(__always)
    func withValue<R>(
        forKey key: some CodingKey,
        in frame: Int,
        serial: Int,
        keySlots: CodableKeyedContainerPlace? = nil,
        expected: Any.Type,
        _ read: (_ found: Bool) throws -> R
    ) throws -> R {
        var valueOffset = -1
        do {
            try state.checkFrame(frame, serial: serial)
            let found = try locate(key, in: frame, keySlots: keySlots)
            if found { valueOffset = state.engine.reader.offset }
            let value = try read(found)
            if found && state.engine.reader.offset != valueOffset { state.finishValue(in: frame) }
            return value
        } catch {
            throw keyedError(error, key: key, in: frame, expected: expected, valueOffset: valueOffset)
        }
    }

    /// Takes `frame`'s next key when `place` remembers it as the slot of a key of a plain type
    /// with `bits`: the common case, with no call to the key's `stringValue`.
    @inline(__always)
    private func takeRememberedKey(_ bits: UInt64, in frame: Int, _ place: CodableKeyedContainerPlace) -> Bool {
        let next = state.nextKeySlot(in: frame)
        guard next >= 0 && place.keySlot(for: bits) == next else { return false }
        state.takeNextKey(in: frame)
        return true
    }

    /// Positions the reader on `key`'s value in keyed `frame`, as `CodableDecodingState.locate`
    /// does; a key of a plain type whose slot `keySlots` knows is found without a call to its
    /// `stringValue` (see `CodableKeySlots`).
    @inline(__always)
    private func locate<Key: CodingKey>(_ key: Key, in frame: Int, keySlots place: CodableKeyedContainerPlace?) throws
        -> Bool
    {
        guard let place, let bits = plainKeyBits(of: key) else { return try state.locate(key.stringValue, in: frame) }
        if takeRememberedKey(bits, in: frame, place) { return true }
        let next = state.nextKeySlot(in: frame)
        let name = key.stringValue
        if next >= 0 && state.engine.tables.shapeKeys[next] == name {
            state.takeNextKey(in: frame)
            place.remember(next, for: bits)
            return true
        }
        return try state.locateElsewhere(name, in: frame)
    }

    @inline(never)
    private func keyedError(
        _ error: any Error,
        key: some CodingKey,
        in frame: Int,
        expected: Any.Type,
        valueOffset: Int
    ) -> any Error {
        let path = state.codingPath(to: frame, appending: key)
        return decodingError(error, expected: expected, path: path, valueOffset: valueOffset)
    }

    @inline(never)
    func keyNotFound(_ key: some CodingKey, in frame: Int) -> DecodingError {
        DecodingError.keyNotFound(
            key,
            DecodingError.Context(
                codingPath: state.codingPath(to: frame),
                debugDescription: "no value for key \"\(key.stringValue)\""
            )
        )
    }

    /// The path step of the value just located in keyed `frame`.
    private func locatedStep(in frame: Int) -> CodingPathStep {
        .key(at: state.frames[frame].record.current)
    }

    /// Reads the primitive under `key`. Its common case, the key of a plain type found at the
    /// slot the record has next, reads in place; any other (a key out of order or never seen,
    /// a finished container) goes out of line, so the common case keeps few registers
    /// (callgrind: about 6 instructions a key).
    ///
    /// `read` is `P.readTagged` named on the concrete type by the caller: called through `P`,
    /// the read stayed a call through the conformance's witness table (callgrind: about 29
    /// instructions a key).
    @inline(__always)
    func decodePrimitive<P: CodablePrimitive>(
        _: P.Type,
        forKey key: some CodingKey,
        in place: CodableKeyedContainerPlace,
        read: (inout DecodingState) throws(GraphArchiveError) -> P
    ) throws -> P {
        let frame = place.frame
        guard state.isUsable(frame, serial: place.serial), let bits = plainKeyBits(of: key),
            takeRememberedKey(bits, in: frame, place)
        else {
            return try decodePrimitiveLocating(P.self, forKey: key, in: place)
        }
        let valueOffset = state.engine.reader.offset
        let value: P
        do {
            value = try read(&state.engine)
        } catch {
            throw keyedError(error, key: key, in: frame, expected: P.self, valueOffset: valueOffset)
        }
        if state.engine.reader.offset != valueOffset { state.finishValue(in: frame) }
        return value
    }

    /// ``decodePrimitive(_:forKey:in:read:)`` for all but its common case.
    @inline(never)
    private func decodePrimitiveLocating<P: CodablePrimitive>(
        _: P.Type,
        forKey key: some CodingKey,
        in place: CodableKeyedContainerPlace
    ) throws -> P {
        let frame = place.frame
        return try withValue(forKey: key, in: frame, serial: place.serial, keySlots: place, expected: P.self) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            return try P.readTagged(from: &state.engine)
        }
    }

    func decode<T: Decodable>(_: T.Type, forKey key: some CodingKey, in place: CodableKeyedContainerPlace) throws -> T {
        let frame = place.frame
        return try withValue(forKey: key, in: frame, serial: place.serial, keySlots: place, expected: T.self) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            return try decodeValue(T.self, step: locatedStep(in: frame), parent: frame)
        }
    }

    /// nil when the key is absent or holds nil.
    @inline(__always)
    func decodePrimitiveIfPresent<P: CodablePrimitive>(
        _: P.Type,
        forKey key: some CodingKey,
        in place: CodableKeyedContainerPlace
    ) throws -> P? {
        try withValue(forKey: key, in: place.frame, serial: place.serial, keySlots: place, expected: P.self) { found in
            guard found, try !state.engine.readNilIfPresent() else { return nil }
            return try P.readTagged(from: &state.engine)
        }
    }

    /// nil when the key is absent or holds nil.
    func decodeIfPresent<T: Decodable>(
        _: T.Type,
        forKey key: some CodingKey,
        in place: CodableKeyedContainerPlace
    ) throws -> T? {
        let frame = place.frame
        return try withValue(forKey: key, in: frame, serial: place.serial, keySlots: place, expected: T.self) { found in
            guard found else { return nil }
            if try state.engine.readNilIfPresent() { return nil }
            return try decodeValue(T.self, step: locatedStep(in: frame), parent: frame)
        }
    }

    func decodeNil(forKey key: some CodingKey, in place: CodableKeyedContainerPlace) throws -> Bool {
        let frame = place.frame
        return try withValue(forKey: key, in: frame, serial: place.serial, keySlots: place, expected: Never?.self) {
            found in
            guard found else { throw keyNotFound(key, in: frame) }
            return try state.engine.readNilIfPresent()
        }
    }

    /// Opens a container over `key`'s value and moves past that value in `frame`.
    func nestedContainer(
        _ kind: CodableDecodingFrame.Kind,
        forKey key: some CodingKey,
        in frame: Int,
        serial: Int
    ) throws -> (frame: Int, serial: Int) {
        try withValue(forKey: key, in: frame, serial: serial, expected: kind.expectedType) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            let offset = state.engine.reader.offset
            let step = locatedStep(in: frame)
            let nested = try state.openContainer(
                kind,
                source: CodableValueSource(offset: offset),
                parent: frame,
                step: step
            )
            state.engine.reader.offset = offset
            try state.skipValue()
            return (nested, state.frames[nested].serial)
        }
    }

    func superDecoder(forKey key: some CodingKey, in frame: Int, serial: Int) throws -> any Decoder {
        try withValue(forKey: key, in: frame, serial: serial, expected: (any Decoder).self) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            let offset = state.engine.reader.offset
            let step = locatedStep(in: frame)
            try state.skipValue()
            return CodableSuperDecoder(decoder: self, parent: frame, parentSerial: serial, step: step, offset: offset)
        }
    }

    /// The keys of keyed `frame`'s record, in stored order ([] for a finished container).
    func keys(in frame: Int, serial: Int) -> ArraySlice<String> {
        guard (try? state.checkFrame(frame, serial: serial)) != nil else { return [] }
        let record = state.frames[frame].record
        return state.engine.tables.shapeKeys[record.keyStart..<(record.keyStart + record.keyCount)]
    }

    // MARK: - Unkeyed

    /// The position of the next element of unkeyed `frame`, checking the container is still
    /// usable and not at its end.
    @inline(__always)
    private func nextElement(in frame: Int, serial: Int, expected: Any.Type) throws -> Int {
        try state.checkFrame(frame, serial: serial)
        let position = state.frames[frame].index
        guard position < state.frames[frame].count else { throw atEnd(of: frame, expected: expected) }
        return position
    }

    @inline(never)
    func elementError(_ error: any Error, in frame: Int, expected: Any.Type, valueOffset: Int) -> any Error {
        let position = frame >= 0 && frame < state.frames.count ? state.frames[frame].index : 0
        let path = state.codingPath(to: frame, appending: GraphArchiveCodingKey(index: position))
        return decodingError(error, expected: expected, path: path, valueOffset: valueOffset)
    }

    @inline(never)
    private func atEnd(of frame: Int, expected: Any.Type) -> DecodingError {
        let position = state.frames[frame].index
        return DecodingError.valueNotFound(
            expected,
            DecodingError.Context(
                codingPath: state.codingPath(to: frame, appending: GraphArchiveCodingKey(index: position)),
                debugDescription: "the unkeyed container is at its end"
            )
        )
    }

    /// `read`: `P.readTagged`, named on the concrete type by the caller (see
    /// `PrimitiveValueDecoding`).
    @inline(__always)
    func decodePrimitiveElement<P: CodablePrimitive>(
        _: P.Type,
        in frame: Int,
        serial: Int,
        read: (inout DecodingState) throws(GraphArchiveError) -> P
    ) throws -> P {
        var valueOffset = -1
        do {
            _ = try nextElement(in: frame, serial: serial, expected: P.self)
            guard !state.frames[frame].packed else {
                throw GraphArchiveError(.typeMismatch, "expected \(P.self), found an object reference")
            }
            valueOffset = state.frames[frame].cursor
            state.engine.reader.offset = valueOffset
            let value = try read(&state.engine)
            state.finishElement(in: frame, next: state.engine.reader.offset)
            return value
        } catch {
            throw elementError(error, in: frame, expected: P.self, valueOffset: valueOffset)
        }
    }

    /// Every element of unkeyed `frame` (plain, none read yet) as a `P`, read as
    /// ``decodePrimitiveElement(_:in:serial:read:)`` reads each (see `CodablePrimitive.decodeElements`).
    @inline(__always)
    func decodePrimitiveElements<P: CodablePrimitive>(_: P.Type, in frame: Int, capacity: Int) throws -> [P] {
        var elements: [P] = []
        elements.reserveCapacity(capacity)
        let count = state.frames[frame].count
        state.engine.reader.offset = state.frames[frame].cursor
        while state.frames[frame].index < count {
            let valueOffset = state.engine.reader.offset
            do {
                elements.append(try P.readTagged(from: &state.engine))
            } catch {
                throw elementError(error, in: frame, expected: P.self, valueOffset: valueOffset)
            }
            state.finishElement(in: frame, next: state.engine.reader.offset)
        }
        return elements
    }

    func decodeElement<T: Decodable>(_: T.Type, in frame: Int, serial: Int) throws -> T {
        var valueOffset = -1
        do {
            let position = try nextElement(in: frame, serial: serial, expected: T.self)
            if state.frames[frame].packed {
                let (reference, next) = try state.peekReference(in: frame)
                state.engine.reader.offset = next
                let value = try decodeReference(T.self, index: reference, step: .index(position), parent: frame)
                state.finishElement(in: frame, next: next, reference: reference)
                return value
            }
            valueOffset = state.frames[frame].cursor
            state.engine.reader.offset = valueOffset
            let value = try decodeValue(T.self, step: .index(position), parent: frame)
            state.finishElement(in: frame, next: state.engine.reader.offset)
            return value
        } catch {
            throw elementError(error, in: frame, expected: T.self, valueOffset: valueOffset)
        }
    }

    /// Every element of packed reference array `frame`, none read yet, as `Element`.
    ///
    /// References are read a batch at a time, once (see `nextReference(in:)`): a reference that
    /// cannot be read ends its batch, and the elements before it are decoded first, as one by one.
    ///
    /// Objects of class `Element` are built or looked up as such; any other element (an
    /// optional or a wrapper around an object, see `decodeReference`) is decoded by its
    /// initializer. Either way each is moved into the array as it comes (`Array.moving`):
    /// `Element` is known only at run time, where `append` ran the standard library's
    /// unspecialized code and copied each element.
    func decodePackedElements<Element: Decodable>(of _: Element.Type, in frame: Int, capacity: Int) throws
        -> [Element]
    {
        let areObjects = if case .object = state.kinds.kind(of: Element.self) { true } else { false }
        var producer = PackedElements<Element>(
            decoder: self,
            frame: frame,
            areObjects: areObjects,
            batch: PackedReferenceBatch(state.frames[frame])
        )
        let elements: [Element]
        do {
            elements = try [Element].moving(capacity: capacity, from: &producer)
        } catch {
            state.frames[frame].index = producer.batch.position
            throw elementError(error, in: frame, expected: Element.self, valueOffset: -1)
        }
        state.finishElements(in: frame, readBy: producer.batch)
        return elements
    }

    /// True (and the element consumed) if the next element is nil.
    func decodeNilElement(in frame: Int, serial: Int) throws -> Bool {
        do {
            _ = try nextElement(in: frame, serial: serial, expected: Never?.self)
        } catch {
            throw elementError(error, in: frame, expected: Never?.self, valueOffset: -1)
        }
        guard !state.frames[frame].packed else { return false }
        state.engine.reader.offset = state.frames[frame].cursor
        guard (try? state.engine.readNilIfPresent()) == true else { return false }
        state.finishElement(in: frame, next: state.engine.reader.offset)
        return true
    }

    func nestedElementContainer(_ kind: CodableDecodingFrame.Kind, in frame: Int, serial: Int) throws -> (
        frame: Int, serial: Int
    ) {
        var valueOffset = -1
        do {
            let position = try nextElement(in: frame, serial: serial, expected: kind.expectedType)
            let source: CodableValueSource
            let next: Int
            if state.frames[frame].packed {
                let (reference, after) = try state.peekReference(in: frame)
                source = CodableValueSource(offset: state.frames[frame].cursor, referenceElement: reference)
                next = after
            } else {
                valueOffset = state.frames[frame].cursor
                source = CodableValueSource(offset: valueOffset)
                state.engine.reader.offset = valueOffset
                try state.skipValue()
                next = state.engine.reader.offset
            }
            let nested = try state.openContainer(kind, source: source, parent: frame, step: .index(position))
            state.finishElement(in: frame, next: next, reference: source.referenceElement)
            return (nested, state.frames[nested].serial)
        } catch {
            throw elementError(error, in: frame, expected: kind.expectedType, valueOffset: valueOffset)
        }
    }

    func superElementDecoder(in frame: Int, serial: Int) throws -> any Decoder {
        var valueOffset = -1
        do {
            let position = try nextElement(in: frame, serial: serial, expected: (any Decoder).self)
            guard !state.frames[frame].packed else {
                throw GraphArchiveError(.typeMismatch, "expected a super value, found an object reference")
            }
            valueOffset = state.frames[frame].cursor
            state.engine.reader.offset = valueOffset
            try state.skipValue()
            state.finishElement(in: frame, next: state.engine.reader.offset)
            return CodableSuperDecoder(
                decoder: self,
                parent: frame,
                parentSerial: serial,
                step: .index(position),
                offset: valueOffset
            )
        } catch {
            throw elementError(error, in: frame, expected: (any Decoder).self, valueOffset: valueOffset)
        }
    }

    func elementCount(in frame: Int, serial: Int) -> Int? {
        guard (try? state.checkFrame(frame, serial: serial)) != nil else { return nil }
        return state.frames[frame].count
    }

    func elementIndex(in frame: Int, serial: Int) -> Int {
        guard (try? state.checkFrame(frame, serial: serial)) != nil else { return 0 }
        return state.frames[frame].index
    }

    /// True when unkeyed `frame` has no element left (or is no longer usable).
    func isAtEnd(_ frame: Int, serial: Int) -> Bool {
        guard (try? state.checkFrame(frame, serial: serial)) != nil else { return true }
        return state.frames[frame].index >= state.frames[frame].count
    }

    // MARK: - Single value

    func decodeSingle<T: Decodable>(_: T.Type, in frame: Int, serial: Int) throws -> T {
        try withSingleValue(T.self, in: frame, serial: serial) { reference in
            if reference >= 0 { return try decodeReference(T.self, index: reference, step: .none, parent: frame) }
            return try decodeValue(T.self, step: .none, parent: frame)
        }
    }

    /// ``decodeSingle(_:in:serial:)`` for a primitive `P`, without looking its kind up; `read`:
    /// `P.readTagged`, named on the concrete type by the caller (see `PrimitiveValueDecoding`).
    @inline(__always)
    func decodeSinglePrimitive<P: CodablePrimitive>(
        in frame: Int,
        serial: Int,
        read: (inout DecodingState) throws(GraphArchiveError) -> P
    ) throws -> P {
        try withSingleValue(P.self, in: frame, serial: serial) { reference in
            if reference >= 0 { return try decodeReference(P.self, index: reference, step: .none, parent: frame) }
            return try read(&state.engine)
        }
    }

    /// Runs `read` on single-value `frame`'s value: with the object index of a reference
    /// element (which it decodes), or with -1 and the reader on the tagged value.
    @inline(__always)
    private func withSingleValue<T>(
        _: T.Type,
        in frame: Int,
        serial: Int,
        _ read: (_ reference: Int) throws -> T
    ) throws -> T {
        var valueOffset = -1
        do {
            try state.checkFrame(frame, serial: serial)
            let source = state.frames[frame].source
            if source.referenceElement >= 0 { return try read(source.referenceElement) }
            valueOffset = try state.taggedValueOffset(source, String(describing: T.self))
            state.engine.reader.offset = valueOffset
            let value = try read(-1)
            state.frames[frame].end = state.engine.reader.offset
            return value
        } catch {
            throw decodingError(error, expected: T.self, path: state.codingPath(to: frame), valueOffset: valueOffset)
        }
    }

    func singleIsNil(in frame: Int, serial: Int) -> Bool {
        guard (try? state.checkFrame(frame, serial: serial)) != nil else { return false }
        let source = state.frames[frame].source
        guard source.referenceElement < 0, let offset = try? state.taggedValueOffset(source, "nil") else {
            return false
        }
        state.engine.reader.offset = offset
        guard (try? state.engine.readNilIfPresent()) == true else { return false }
        state.frames[frame].end = state.engine.reader.offset
        return true
    }
}

// MARK: - Primitive overloads

/// The primitive `decode(_:)` overloads that unkeyed and single-value containers both
/// declare, each forwarded to the container's one generic read.
///
/// Each passes its type's `readTagged`, named on the concrete type: called through `P`, the read
/// stayed a call through the conformance's witness table (see the keyed container's overloads).
protocol PrimitiveValueDecoding {
    func decodePrimitive<P: CodablePrimitive>(read: (inout DecodingState) throws(GraphArchiveError) -> P) throws -> P
}

extension PrimitiveValueDecoding {
    @inline(__always) func decode(_: Bool.Type) throws -> Bool { try decodePrimitive(read: Bool.readTagged) }
    @inline(__always) func decode(_: String.Type) throws -> String { try decodePrimitive(read: String.readTagged) }
    @inline(__always) func decode(_: Double.Type) throws -> Double { try decodePrimitive(read: Double.readTagged) }
    @inline(__always) func decode(_: Float.Type) throws -> Float { try decodePrimitive(read: Float.readTagged) }
    @inline(__always) func decode(_: Int.Type) throws -> Int { try decodePrimitive(read: Int.readTagged) }
    @inline(__always) func decode(_: Int8.Type) throws -> Int8 { try decodePrimitive(read: Int8.readTagged) }
    @inline(__always) func decode(_: Int16.Type) throws -> Int16 { try decodePrimitive(read: Int16.readTagged) }
    @inline(__always) func decode(_: Int32.Type) throws -> Int32 { try decodePrimitive(read: Int32.readTagged) }
    @inline(__always) func decode(_: Int64.Type) throws -> Int64 { try decodePrimitive(read: Int64.readTagged) }
    @inline(__always) func decode(_: UInt.Type) throws -> UInt { try decodePrimitive(read: UInt.readTagged) }
    @inline(__always) func decode(_: UInt8.Type) throws -> UInt8 { try decodePrimitive(read: UInt8.readTagged) }
    @inline(__always) func decode(_: UInt16.Type) throws -> UInt16 { try decodePrimitive(read: UInt16.readTagged) }
    @inline(__always) func decode(_: UInt32.Type) throws -> UInt32 { try decodePrimitive(read: UInt32.readTagged) }
    @inline(__always) func decode(_: UInt64.Type) throws -> UInt64 { try decodePrimitive(read: UInt64.readTagged) }
}

// MARK: - Keyed container

/// A keyed container of `CodableDecoder`: every call goes to the decoder with the frame of
/// the container's place (`withFrame`). Two types adopt it, which differ only in how they
/// refer to that place: `CodableLentKeyedDecodingContainer`, the one the decoder's cache hands
/// out, and `CodableKeyedDecodingContainer`, any other.
///
/// The calls are inlined into each type's witnesses, where the place is read directly.
protocol CodableKeyedDecoding: KeyedDecodingContainerProtocol {
    /// Calls `body` with the container's place.
    func withPlace<R>(_ body: (CodableKeyedPlace<CodableDecoder>) throws -> R) rethrows -> R
}

extension CodableKeyedDecoding {
    /// Calls `body` with the decoder and the place's frame and serial.
    @inline(__always)
    func withFrame<R>(_ body: (_ decoder: CodableDecoder, _ frame: Int, _ serial: Int) throws -> R) rethrows -> R {
        try withPlace { try body($0.coder, $0.frame, $0.serial) }
    }

    var codingPath: [any CodingKey] { withFrame { decoder, frame, _ in decoder.state.codingPath(to: frame) } }
    var allKeys: [Key] { withFrame { $0.keys(in: $1, serial: $2) }.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { withFrame { $0.keys(in: $1, serial: $2) }.contains(key.stringValue) }

    @inline(__always)
    func decodeNil(forKey key: Key) throws -> Bool {
        try withPlace { try $0.coder.decodeNil(forKey: key, in: $0) }
    }
    @inline(__always) func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try primitive(type, key, read: Bool.readTagged)
    }
    @inline(__always) func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try primitive(type, key, read: String.readTagged)
    }
    @inline(__always) func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try primitive(type, key, read: Double.readTagged)
    }
    @inline(__always) func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try primitive(type, key, read: Float.readTagged)
    }
    @inline(__always) func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try primitive(type, key, read: Int.readTagged)
    }
    @inline(__always) func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try primitive(type, key, read: Int8.readTagged)
    }
    @inline(__always) func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try primitive(type, key, read: Int16.readTagged)
    }
    @inline(__always) func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try primitive(type, key, read: Int32.readTagged)
    }
    @inline(__always) func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try primitive(type, key, read: Int64.readTagged)
    }
    @inline(__always) func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try primitive(type, key, read: UInt.readTagged)
    }
    @inline(__always) func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try primitive(type, key, read: UInt8.readTagged)
    }
    @inline(__always) func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try primitive(type, key, read: UInt16.readTagged)
    }
    @inline(__always) func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try primitive(type, key, read: UInt32.readTagged)
    }
    @inline(__always) func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try primitive(type, key, read: UInt64.readTagged)
    }

    @inline(__always)
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try withPlace { try $0.coder.decode(type, forKey: key, in: $0) }
    }

    @inline(__always)
    private func primitive<P: CodablePrimitive>(
        _ type: P.Type,
        _ key: Key,
        read: (inout DecodingState) throws(GraphArchiveError) -> P
    ) throws -> P {
        try withPlace { try $0.coder.decodePrimitive(type, forKey: key, in: $0, read: read) }
    }

    // One lookup instead of the protocol's default contains + decodeNil + decode.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalPrimitive(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalPrimitive(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

    @inline(__always)
    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        try withPlace { try $0.coder.decodeIfPresent(type, forKey: key, in: $0) }
    }

    @inline(__always)
    private func optionalPrimitive<P: CodablePrimitive>(_ type: P.Type, _ key: Key) throws -> P? {
        try withPlace { try $0.coder.decodePrimitiveIfPresent(type, forKey: key, in: $0) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try withFrame { decoder, frame, serial in
            let (nested, nestedSerial) = try decoder.nestedContainer(.keyed, forKey: key, in: frame, serial: serial)
            return KeyedDecodingContainer(
                CodableKeyedDecodingContainer<NestedKey>(decoder: decoder, frame: nested, serial: nestedSerial)
            )
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try withFrame { decoder, frame, serial in
            let (nested, nestedSerial) = try decoder.nestedContainer(.unkeyed, forKey: key, in: frame, serial: serial)
            return CodableUnkeyedDecodingContainer(decoder: decoder, frame: nested, serial: nestedSerial)
        }
    }

    func superDecoder() throws -> any Decoder {
        try withFrame { try $0.superDecoder(forKey: GraphArchiveCodingKey.superKey, in: $1, serial: $2) }
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try withFrame { try $0.superDecoder(forKey: key, in: $1, serial: $2) }
    }
}

/// A keyed container that holds its place (see `CodableKeyedPlaceReference`).
struct CodableKeyedDecodingContainer<Key: CodingKey>: CodableKeyedDecoding {
    let place: CodableKeyedPlaceReference<CodableDecoder>

    @inline(__always)
    func withPlace<R>(_ body: (CodableKeyedPlace<CodableDecoder>) throws -> R) rethrows -> R {
        try place.withPlace(body)
    }
}

extension CodableKeyedDecodingContainer {
    /// A container that holds its own place, over `frame` of `decoder`.
    init(decoder: CodableDecoder, frame: Int, serial: Int) {
        place = CodableKeyedPlaceReference(owning: decoder, frame: frame, serial: serial)
    }
}

/// A keyed container whose place the decoder's cache holds, and past the decode `LentObjects`
/// (see `CodableKeyedContainerCache.release()`): one plain word, with no reference of its own.
///
/// The standard library's box copies its container and destroys the copy around every call,
/// through the container's value witnesses; for a type of plain words those are a move and
/// nothing, where `CodableKeyedDecodingContainer`'s optional owner cost a retain and a release
/// of nil and the witness calls around them (callgrind: about 37 instructions a value decoded).
struct CodableLentKeyedDecodingContainer<Key: CodingKey>: CodableKeyedDecoding {
    let place: LentReference<CodableKeyedPlace<CodableDecoder>>

    @inline(__always)
    func withPlace<R>(_ body: (CodableKeyedPlace<CodableDecoder>) throws -> R) rethrows -> R {
        try place.withObject(body)
    }
}

// MARK: - Unkeyed container

struct CodableUnkeyedDecodingContainer: UnkeyedDecodingContainer, PrimitiveValueDecoding {
    let decoder: CodableDecoder
    let frame: Int
    let serial: Int

    var codingPath: [any CodingKey] { decoder.state.codingPath(to: frame) }
    var count: Int? { decoder.elementCount(in: frame, serial: serial) }
    var currentIndex: Int { decoder.elementIndex(in: frame, serial: serial) }
    var isAtEnd: Bool { decoder.isAtEnd(frame, serial: serial) }

    mutating func decodeNil() throws -> Bool { try decoder.decodeNilElement(in: frame, serial: serial) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeElement(type, in: frame, serial: serial)
    }

    @inline(__always)
    func decodePrimitive<P: CodablePrimitive>(read: (inout DecodingState) throws(GraphArchiveError) -> P) throws -> P {
        try decoder.decodePrimitiveElement(P.self, in: frame, serial: serial, read: read)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<
        NestedKey
    > {
        let (nested, nestedSerial) = try decoder.nestedElementContainer(.keyed, in: frame, serial: serial)
        return KeyedDecodingContainer(
            CodableKeyedDecodingContainer<NestedKey>(decoder: decoder, frame: nested, serial: nestedSerial)
        )
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (nested, nestedSerial) = try decoder.nestedElementContainer(.unkeyed, in: frame, serial: serial)
        return CodableUnkeyedDecodingContainer(decoder: decoder, frame: nested, serial: nestedSerial)
    }

    mutating func superDecoder() throws -> any Decoder {
        try decoder.superElementDecoder(in: frame, serial: serial)
    }
}

// MARK: - Single-value container

struct CodableSingleValueDecodingContainer: SingleValueDecodingContainer, PrimitiveValueDecoding {
    let decoder: CodableDecoder
    let frame: Int
    let serial: Int

    var codingPath: [any CodingKey] { decoder.state.codingPath(to: frame) }

    func decodeNil() -> Bool { decoder.singleIsNil(in: frame, serial: serial) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeSingle(type, in: frame, serial: serial)
    }

    @inline(__always)
    func decodePrimitive<P: CodablePrimitive>(read: (inout DecodingState) throws(GraphArchiveError) -> P) throws -> P {
        try decoder.decodeSinglePrimitive(in: frame, serial: serial, read: read)
    }
}

/// The elements of a packed reference array, made one by one for `decodePackedElements`.
struct PackedElements<Element: Decodable>: ArrayElementProducer {
    let decoder: CodableDecoder
    let frame: Int
    /// `Element` is a class: its elements are objects, not wrappers around them.
    let areObjects: Bool
    var batch: PackedReferenceBatch
    /// The object the next element refers to.
    private var reference = -1

    init(decoder: CodableDecoder, frame: Int, areObjects: Bool, batch: PackedReferenceBatch) {
        self.decoder = decoder
        self.frame = frame
        self.areObjects = areObjects
        self.batch = batch
    }

    @inline(__always)
    mutating func hasNext() throws -> Bool {
        guard let next = try decoder.state.nextReference(in: &batch) else { return false }
        reference = next
        return true
    }

    @inline(__always)
    mutating func next() throws -> Element {
        let step = CodingPathStep.index(batch.position)
        if areObjects { return try decoder.object(reference, as: Element.self, step: step, parent: frame) }
        return try decoder.decodeReference(Element.self, index: reference, step: step, parent: frame)
    }
}
