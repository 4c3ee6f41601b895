// Sources/GraphArchive/Codable/CodableEncodingContainers.swift - the encoding containers and super encoder
//
// Each container is a frame number plus a serial number into the encoder's state; the writes
// themselves live in `CodableEncoder` and `CodableEncodingState`. A container whose value is
// finished (or that failed to open, frame -1) throws on use instead of writing out of place.

extension CodableEncoder {
    // MARK: - Keyed

    /// Announces `key` in keyed frame `frame` (entered). `keySlots` is the place of the
    /// container `key` came from, which serves its key type only: a key of a plain type whose
    /// slot it knows is announced without a call to its `stringValue` (see `CodableKeySlots`).
    @inline(__always)
    private func writeKey<Key: CodingKey>(_ key: Key, keySlots place: CodableKeyedContainerPlace) throws {
        let bits = plainKeyBits(of: key)
        if let bits, state.engine.writeExpectedKey(atSlot: place.keySlot(for: bits)) { return }
        let expected = state.engine.expectedKeySlot
        let name = key.stringValue
        if state.engine.writeExpectedKey(name) {
            if let bits, let expected { place.remember(expected, for: bits) }
            return
        }
        try state.engine.writeKey(name)
    }

    /// Writes a primitive under `key`. Its common case, the container's frame current and the
    /// key the one the record expects at the slot it was last found at, writes in place and
    /// returns; everything else (entering a frame, a new key, an error) goes out of line, so
    /// the common case keeps few registers and no error handling of its own (callgrind: about
    /// 25 instructions a key).
    @inline(__always)
    func encodePrimitive<P: CodablePrimitive>(
        _ value: P,
        forKey key: some CodingKey,
        in place: CodableKeyedContainerPlace
    ) throws {
        if state.isCurrent(place.frame, serial: place.serial), let bits = plainKeyBits(of: key),
            state.engine.writeExpectedKey(atSlot: place.keySlot(for: bits))
        {
            value.writeTagged(to: &state.engine)
            return
        }
        try encodePrimitiveEntering(value, forKey: key, in: place)
    }

    /// ``encodePrimitive(_:forKey:in:)`` for all but its common case.
    @inline(never)
    private func encodePrimitiveEntering<P: CodablePrimitive>(
        _ value: P,
        forKey key: some CodingKey,
        in place: CodableKeyedContainerPlace
    ) throws {
        try write(in: place.frame, serial: place.serial, key: key) {
            try writeKey(key, keySlots: place)
            value.writeTagged(to: &state.engine)
        }
    }

    func encodeNil(forKey key: some CodingKey, in place: CodableKeyedContainerPlace) throws {
        try write(in: place.frame, serial: place.serial, key: key) {
            try writeKey(key, keySlots: place)
            state.engine.writeNil()
        }
    }

    func encode<T: Encodable>(_ value: T, forKey key: some CodingKey, in place: CodableKeyedContainerPlace) throws {
        try write(in: place.frame, serial: place.serial, key: key) {
            try writeKey(key, keySlots: place)
            try encodeValue(value, key: .key(key))
        }
    }

    // MARK: - Unkeyed

    @inline(__always)
    func encodePrimitiveElement<P: CodablePrimitive>(_ value: P, in frame: Int, serial: Int) throws {
        try write(in: frame, serial: serial, key: nextIndexKey(frame)) {
            state.addValueElement(to: frame)
            value.writeTagged(to: &state.engine)
        }
    }

    /// Writes `array`'s elements as the next elements of unkeyed `frame`, as
    /// ``encodePrimitiveElement(_:in:serial:)`` writes each (see `CodablePrimitive.encodeElements`).
    @inline(__always)
    func encodePrimitiveElements<P: CodablePrimitive>(_ array: [P], in frame: Int, serial: Int) throws {
        try write(in: frame, serial: serial, key: nextIndexKey(frame)) {
            state.addValueElements(array.count, to: frame)
            for element in array {
                element.writeTagged(to: &state.engine)
            }
        }
    }

    func encodeNilElement(in frame: Int, serial: Int) throws {
        try write(in: frame, serial: serial, key: nextIndexKey(frame)) {
            state.addValueElement(to: frame)
            state.engine.writeNil()
        }
    }

    /// Writes `value` as the next element of unkeyed `frame`.
    func encodeElement<T: Encodable>(_ value: T, in frame: Int, serial: Int) throws {
        try encodeElement(value, kind: state.kinds.kind(of: T.self), in: frame, serial: serial)
    }

    /// ``encodeElement(_:in:serial:)`` with `kind`, looked up for `T` itself already.
    func encodeElement<T: Encodable>(_ value: T, kind: CodableTypeKind, in frame: Int, serial: Int) throws {
        try write(in: frame, serial: serial, key: nextIndexKey(frame)) {
            let position = state.frames[frame].count
            if case .object = kind {
                let index = try encodeObject(value, position: position, key: .index(position))
                state.addReferenceElement(index, to: frame)
            } else {
                state.addValueElement(to: frame)
                try encodeValue(value, kind: kind, key: .index(position))
            }
        }
    }

    /// Elements in unkeyed `frame` so far (0 for a finished or failed container).
    func elementCount(in frame: Int, serial: Int) -> Int {
        guard frame >= 0 && frame < state.frames.count && state.frames[frame].serial == serial else { return 0 }
        return state.frames[frame].count
    }

    /// The coding key of unkeyed `frame`'s next element (nil for a failed container).
    func nextIndexKey(_ frame: Int) -> (any CodingKey)? {
        frame >= 0 && frame < state.frames.count ? GraphArchiveCodingKey(index: state.frames[frame].count) : nil
    }

    // MARK: - Single value

    @inline(__always)
    func encodeSingle<P: CodablePrimitive>(_ value: P, in frame: Int, serial: Int) throws {
        try write(in: frame, serial: serial, key: nil) {
            try claimSingleValue(frame)
            value.writeTagged(to: &state.engine)
        }
    }

    func encodeSingleNil(in frame: Int, serial: Int) throws {
        try write(in: frame, serial: serial, key: nil) {
            try claimSingleValue(frame)
            state.engine.writeNil()
        }
    }

    func encodeSingle<T: Encodable>(_ value: T, in frame: Int, serial: Int) throws {
        try write(in: frame, serial: serial, key: nil) {
            try claimSingleValue(frame)
            try encodeValue(value, key: .none)
        }
    }

    private func claimSingleValue(_ frame: Int) throws {
        guard !state.frames[frame].hasValue else {
            throw EncodingError.invalidValue(
                (),
                EncodingError.Context(
                    codingPath: state.codingPath(to: frame),
                    debugDescription: "a single-value container was asked to encode a second value"
                )
            )
        }
        state.frames[frame].hasValue = true
    }
}

// MARK: - Primitive overloads

/// The primitive `encode(_:)` overloads that unkeyed and single-value containers both
/// declare, each forwarded to the container's one generic write.
protocol PrimitiveValueEncoding {
    func encodePrimitive<P: CodablePrimitive>(_ value: P) throws
}

extension PrimitiveValueEncoding {
    @inline(__always) mutating func encode(_ value: Bool) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: String) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: Double) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: Float) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: Int) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: Int8) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: Int16) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: Int32) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: Int64) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: UInt) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: UInt8) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: UInt16) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: UInt32) throws { try encodePrimitive(value) }
    @inline(__always) mutating func encode(_ value: UInt64) throws { try encodePrimitive(value) }
}

// MARK: - Keyed container

/// A keyed container of `CodableEncoder`: every call goes to the encoder with the frame of
/// the container's place, which it holds or which the encoder's cache lends it (see
/// `CodableKeyedPlaceReference`).
struct CodableKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let place: CodableKeyedPlaceReference<CodableEncoder>

    var codingPath: [any CodingKey] { place.withFrame { encoder, frame, _ in encoder.state.codingPath(to: frame) } }

    func encodeNil(forKey key: Key) throws { try place.withPlace { try $0.coder.encodeNil(forKey: key, in: $0) } }
    // Inlined into their protocol witnesses, which the standard library's box calls: a call
    // more cost about 8 instructions a key (callgrind).
    @inline(__always) func encode(_ value: Bool, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: String, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: Double, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: Float, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: Int, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: Int8, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: Int16, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: Int32, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: Int64, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: UInt, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: UInt8, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: UInt16, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: UInt32, forKey key: Key) throws { try primitive(value, key) }
    @inline(__always) func encode(_ value: UInt64, forKey key: Key) throws { try primitive(value, key) }

    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try place.withPlace { try $0.coder.encode(value, forKey: key, in: $0) }
    }

    @inline(__always)
    private func primitive<P: CodablePrimitive>(_ value: P, _ key: Key) throws {
        try place.withPlace { try $0.coder.encodePrimitive(value, forKey: key, in: $0) }
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let (encoder, nested, nestedSerial) = openNested(.keyed, keyType: NestedKey.self, forKey: key)
        return KeyedEncodingContainer(
            CodableKeyedEncodingContainer<NestedKey>(encoder: encoder, frame: nested, serial: nestedSerial)
        )
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let (encoder, nested, nestedSerial) = openNested(.unkeyed, keyType: Key.self, forKey: key)
        return CodableUnkeyedEncodingContainer(encoder: encoder, frame: nested, serial: nestedSerial)
    }

    func superEncoder() -> any Encoder {
        let (encoder, nested, nestedSerial) = openNested(
            nil,
            keyType: EmptySuperValue.self,
            forKey: GraphArchiveCodingKey.superKey
        )
        return CodableSuperEncoder(encoder: encoder, frame: nested, serial: nestedSerial)
    }

    func superEncoder(forKey key: Key) -> any Encoder {
        let (encoder, nested, nestedSerial) = openNested(nil, keyType: EmptySuperValue.self, forKey: key)
        return CodableSuperEncoder(encoder: encoder, frame: nested, serial: nestedSerial)
    }

    /// A nested container (or, for kind nil, a super encoder's value) under `key`, and its encoder.
    private func openNested(
        _ kind: CodableEncodingFrame.Kind?,
        keyType: Any.Type,
        forKey key: some CodingKey
    ) -> (encoder: CodableEncoder, frame: Int, serial: Int) {
        place.withFrame { encoder, frame, serial in
            let (nested, nestedSerial) = encoder.openNested(
                kind,
                keyType: keyType,
                in: frame,
                serial: serial,
                key: .key(key)
            ) {
                try encoder.state.engine.writeKey(key.stringValue)
            }
            return (encoder, nested, nestedSerial)
        }
    }
}

extension CodableKeyedEncodingContainer {
    /// A container that holds its own place, over `frame` of `encoder`.
    init(encoder: CodableEncoder, frame: Int, serial: Int) {
        place = CodableKeyedPlaceReference(owning: encoder, frame: frame, serial: serial)
    }
}

// MARK: - Unkeyed container

struct CodableUnkeyedEncodingContainer: UnkeyedEncodingContainer, PrimitiveValueEncoding {
    let encoder: CodableEncoder
    let frame: Int
    let serial: Int

    var codingPath: [any CodingKey] { encoder.state.codingPath(to: frame) }
    var count: Int { encoder.elementCount(in: frame, serial: serial) }

    mutating func encodeNil() throws { try encoder.encodeNilElement(in: frame, serial: serial) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeElement(value, in: frame, serial: serial)
    }

    @inline(__always)
    func encodePrimitive<P: CodablePrimitive>(_ value: P) throws {
        try encoder.encodePrimitiveElement(value, in: frame, serial: serial)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let (nested, nestedSerial) = openNested(.keyed, keyType: NestedKey.self)
        return KeyedEncodingContainer(
            CodableKeyedEncodingContainer<NestedKey>(encoder: encoder, frame: nested, serial: nestedSerial)
        )
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (nested, nestedSerial) = openNested(.unkeyed, keyType: EmptySuperValue.self)
        return CodableUnkeyedEncodingContainer(encoder: encoder, frame: nested, serial: nestedSerial)
    }

    mutating func superEncoder() -> any Encoder {
        let (nested, nestedSerial) = openNested(nil, keyType: EmptySuperValue.self)
        return CodableSuperEncoder(encoder: encoder, frame: nested, serial: nestedSerial)
    }

    /// A nested container (or, for kind nil, a super encoder's value) as the next element.
    private func openNested(_ kind: CodableEncodingFrame.Kind?, keyType: Any.Type) -> (frame: Int, serial: Int) {
        let position = count
        return encoder.openNested(kind, keyType: keyType, in: frame, serial: serial, key: .index(position)) {
            encoder.state.addValueElement(to: frame)
        }
    }
}

// MARK: - Single-value container

struct CodableSingleValueEncodingContainer: SingleValueEncodingContainer, PrimitiveValueEncoding {
    let encoder: CodableEncoder
    let frame: Int
    let serial: Int

    var codingPath: [any CodingKey] { encoder.state.codingPath(to: frame) }

    mutating func encodeNil() throws { try encoder.encodeSingleNil(in: frame, serial: serial) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeSingle(value, in: frame, serial: serial)
    }

    @inline(__always)
    func encodePrimitive<P: CodablePrimitive>(_ value: P) throws {
        try encoder.encodeSingle(value, in: frame, serial: serial)
    }
}

// MARK: - Super encoder

/// The `Encoder` of `superEncoder()`: its value goes under "super" (or the given key) in the
/// parent container, in a buffer of its own until the parent closes.
final class CodableSuperEncoder: Encoder {
    let encoder: CodableEncoder
    let frame: Int
    let serial: Int

    init(encoder: CodableEncoder, frame: Int, serial: Int) {
        self.encoder = encoder
        self.frame = frame
        self.serial = serial
    }

    var codingPath: [any CodingKey] { encoder.state.codingPath(to: frame) }
    var userInfo: [CodingUserInfoKey: Any] { encoder.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (opened, openedSerial) = encoder.state.openOwnBufferFrame(frame, serial: serial, .keyed, keyType: Key.self)
        return KeyedEncodingContainer(
            CodableKeyedEncodingContainer<Key>(encoder: encoder, frame: opened, serial: openedSerial)
        )
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (opened, openedSerial) = encoder.state.openOwnBufferFrame(
            frame,
            serial: serial,
            .unkeyed,
            keyType: EmptySuperValue.self
        )
        return CodableUnkeyedEncodingContainer(encoder: encoder, frame: opened, serial: openedSerial)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        let (opened, openedSerial) = encoder.state.openOwnBufferFrame(
            frame,
            serial: serial,
            .single,
            keyType: EmptySuperValue.self
        )
        return CodableSingleValueEncodingContainer(encoder: encoder, frame: opened, serial: openedSerial)
    }
}
