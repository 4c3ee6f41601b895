// Sources/GraphArchive/Codable/CodableDecodingContainers.swift - keyed, unkeyed and single-value decoding containers
//
// Each container is a frame number plus a serial number into the decoder's state. Reads
// position the reader from the frame's own cursor, so containers of one value can be used in
// any order, and a container whose value is finished throws instead of reading out of place.

extension CodableDecoder {
    // MARK: - Keyed

    /// Runs `read` with the reader on `key`'s value in keyed `frame` (`found` false if the
    /// record lacks the key); the value counts as read if `read` moved the reader.
    @inline(__always)
    func withValue<R>(
        forKey key: some CodingKey, in frame: Int, serial: Int, expected: Any.Type, _ read: (_ found: Bool) throws -> R
    ) throws -> R {
        var valueOffset = -1
        do {
            try state.checkFrame(frame, serial: serial)
            let found = try state.locate(key.stringValue, in: frame)
            if found { valueOffset = state.engine.reader.offset }
            let value = try read(found)
            if found && state.engine.reader.offset != valueOffset { state.finishValue(in: frame) }
            return value
        } catch {
            let path = state.codingPath(to: frame, appending: key)
            throw decodingError(error, expected: expected, path: path, valueOffset: valueOffset)
        }
    }

    func keyNotFound(_ key: some CodingKey, in frame: Int) -> DecodingError {
        DecodingError.keyNotFound(
            key,
            DecodingError.Context(
                codingPath: state.codingPath(to: frame), debugDescription: "no value for key \"\(key.stringValue)\""))
    }

    func decodePrimitive<P: CodablePrimitive>(_: P.Type, forKey key: some CodingKey, in frame: Int, serial: Int) throws -> P {
        try withValue(forKey: key, in: frame, serial: serial, expected: P.self) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            return try P.readTagged(from: &state.engine)
        }
    }

    func decode<T: Decodable>(_: T.Type, forKey key: some CodingKey, in frame: Int, serial: Int) throws -> T {
        try withValue(forKey: key, in: frame, serial: serial, expected: T.self) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            return try decodeValue(T.self, key: .key(key), parent: frame)
        }
    }

    /// nil when the key is absent or holds nil.
    func decodeIfPresent<T: Decodable>(_: T.Type, forKey key: some CodingKey, in frame: Int, serial: Int) throws -> T? {
        try withValue(forKey: key, in: frame, serial: serial, expected: T.self) { found in
            guard found else { return nil }
            if try state.engine.readNilIfPresent() { return nil }
            return try decodeValue(T.self, key: .key(key), parent: frame)
        }
    }

    func decodeNil(forKey key: some CodingKey, in frame: Int, serial: Int) throws -> Bool {
        try withValue(forKey: key, in: frame, serial: serial, expected: Never?.self) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            return try state.engine.readNilIfPresent()
        }
    }

    /// Opens a container over `key`'s value and moves past that value in `frame`.
    func nestedContainer(
        _ kind: CodableDecodingFrame.Kind, forKey key: some CodingKey, in frame: Int, serial: Int, expected: Any.Type
    ) throws -> (frame: Int, serial: Int) {
        try withValue(forKey: key, in: frame, serial: serial, expected: expected) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            let offset = state.engine.reader.offset
            let nested = try state.openContainer(kind, source: CodableValueSource(offset: offset), parent: frame, key: .key(key), slot: nil)
            state.engine.reader.offset = offset
            try state.skipValue()
            return (nested, state.frames[nested].serial)
        }
    }

    func superDecoder(forKey key: some CodingKey, in frame: Int, serial: Int) throws -> any Decoder {
        try withValue(forKey: key, in: frame, serial: serial, expected: (any Decoder).self) { found in
            guard found else { throw keyNotFound(key, in: frame) }
            let offset = state.engine.reader.offset
            try state.skipValue()
            return CodableSuperDecoder(decoder: self, parent: frame, parentSerial: serial, key: key, offset: offset)
        }
    }

    /// The keys of keyed `frame`'s record, in stored order ([] for a finished container).
    func keys(in frame: Int, serial: Int) -> ArraySlice<String> {
        guard (try? state.checkFrame(frame, serial: serial)) != nil else { return [] }
        let record = state.frames[frame].record
        return state.engine.tables.shapeKeys[record.keyStart..<(record.keyStart + record.keyCount)]
    }

    // MARK: - Unkeyed

    /// Runs `read` on the next element of unkeyed `frame`, with the reader on it, or with the
    /// object index of a packed reference (else -1); counts it read once `read` returns.
    @inline(__always)
    func withElement<R>(
        in frame: Int, serial: Int, expected: Any.Type, _ read: (_ position: Int, _ reference: Int) throws -> R
    ) throws -> R {
        var position = 0
        var valueOffset = -1
        do {
            try state.checkFrame(frame, serial: serial)
            position = state.frames[frame].index
            guard position < state.frames[frame].count else { throw atEnd(of: frame, expected: expected) }
            if state.frames[frame].packed {
                let (reference, next) = try state.peekReference(in: frame)
                state.engine.reader.offset = next
                let value = try read(position, reference)
                state.finishElement(in: frame, next: next, reference: reference)
                return value
            }
            valueOffset = state.frames[frame].cursor
            state.engine.reader.offset = valueOffset
            let value = try read(position, -1)
            state.finishElement(in: frame, next: state.engine.reader.offset)
            return value
        } catch {
            let path = state.codingPath(to: frame, appending: GraphArchiveCodingKey(index: position))
            throw decodingError(error, expected: expected, path: path, valueOffset: valueOffset)
        }
    }

    func decodePrimitiveElement<P: CodablePrimitive>(_: P.Type, in frame: Int, serial: Int) throws -> P {
        try withElement(in: frame, serial: serial, expected: P.self) { _, reference in
            guard reference < 0 else {
                throw GraphArchiveError(.typeMismatch, "expected \(P.self), found an object reference")
            }
            return try P.readTagged(from: &state.engine)
        }
    }

    func decodeElement<T: Decodable>(_: T.Type, in frame: Int, serial: Int) throws -> T {
        try withElement(in: frame, serial: serial, expected: T.self) { position, reference in
            guard reference < 0 else { return try decodeReference(T.self, index: reference, key: .index(position), parent: frame) }
            return try decodeValue(T.self, key: .index(position), parent: frame)
        }
    }

    /// True (and the element consumed) if the next element is nil.
    func decodeNilElement(in frame: Int, serial: Int) throws -> Bool {
        do {
            try state.checkFrame(frame, serial: serial)
        } catch {
            throw decodingError(error, expected: Never?.self, path: state.codingPath(to: frame), valueOffset: -1)
        }
        let element = state.frames[frame]
        guard element.index < element.count else { throw atEnd(of: frame, expected: Never?.self) }
        guard !element.packed else { return false }
        state.engine.reader.offset = element.cursor
        guard (try? state.engine.readNilIfPresent()) == true else { return false }
        state.finishElement(in: frame, next: state.engine.reader.offset)
        return true
    }

    private func atEnd(of frame: Int, expected: Any.Type) -> DecodingError {
        let position = state.frames[frame].index
        return DecodingError.valueNotFound(
            expected,
            DecodingError.Context(
                codingPath: state.codingPath(to: frame, appending: GraphArchiveCodingKey(index: position)),
                debugDescription: "the unkeyed container is at its end"))
    }

    func nestedElementContainer(_ kind: CodableDecodingFrame.Kind, in frame: Int, serial: Int, expected: Any.Type) throws -> (frame: Int, serial: Int) {
        try withElement(in: frame, serial: serial, expected: expected) { position, reference in
            let offset = state.engine.reader.offset
            let source = CodableValueSource(offset: offset, referenceElement: reference)
            let nested = try state.openContainer(kind, source: source, parent: frame, key: .index(position), slot: nil)
            state.engine.reader.offset = offset
            try state.skipValue()
            return (nested, state.frames[nested].serial)
        }
    }

    func superElementDecoder(in frame: Int, serial: Int) throws -> any Decoder {
        try withElement(in: frame, serial: serial, expected: (any Decoder).self) { position, reference in
            guard reference < 0 else { throw GraphArchiveError(.typeMismatch, "expected a super value, found an object reference") }
            let offset = state.engine.reader.offset
            try state.skipValue()
            return CodableSuperDecoder(
                decoder: self, parent: frame, parentSerial: serial, key: GraphArchiveCodingKey(index: position), offset: offset)
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

    // MARK: - Single value

    func decodeSingle<T: Decodable>(_: T.Type, in frame: Int, serial: Int) throws -> T {
        var valueOffset = -1
        do {
            try state.checkFrame(frame, serial: serial)
            let source = state.frames[frame].source
            if source.referenceElement >= 0 {
                return try decodeReference(T.self, index: source.referenceElement, key: .none, parent: frame)
            }
            valueOffset = try state.taggedValueOffset(source, String(describing: T.self))
            state.engine.reader.offset = valueOffset
            let value = try decodeValue(T.self, key: .none, parent: frame)
            state.frames[frame].end = state.engine.reader.offset
            return value
        } catch {
            throw decodingError(error, expected: T.self, path: state.codingPath(to: frame), valueOffset: valueOffset)
        }
    }

    func singleIsNil(in frame: Int, serial: Int) -> Bool {
        guard (try? state.checkFrame(frame, serial: serial)) != nil else { return false }
        let source = state.frames[frame].source
        guard source.referenceElement < 0, let offset = try? state.taggedValueOffset(source, "nil") else { return false }
        state.engine.reader.offset = offset
        guard (try? state.engine.readNilIfPresent()) == true else { return false }
        state.frames[frame].end = state.engine.reader.offset
        return true
    }
}

// MARK: - Keyed container

struct CodableKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: CodableDecoder
    let frame: Int
    let serial: Int

    var codingPath: [any CodingKey] { decoder.state.codingPath(to: frame) }
    var allKeys: [Key] { decoder.keys(in: frame, serial: serial).compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { decoder.keys(in: frame, serial: serial).contains(key.stringValue) }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder.decodeNil(forKey: key, in: frame, serial: serial) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try primitive(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try primitive(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try primitive(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try primitive(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try primitive(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try primitive(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try primitive(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try primitive(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try primitive(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try primitive(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try primitive(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try primitive(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try primitive(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try primitive(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decoder.decode(type, forKey: key, in: frame, serial: serial)
    }

    @inline(__always)
    private func primitive<P: CodablePrimitive>(_ type: P.Type, _ key: Key) throws -> P {
        try decoder.decodePrimitive(type, forKey: key, in: frame, serial: serial)
    }

    // One lookup instead of the protocol's default contains + decodeNil + decode.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

    @inline(__always)
    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        try decoder.decodeIfPresent(type, forKey: key, in: frame, serial: serial)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let (nested, nestedSerial) = try decoder.nestedContainer(
            .keyed, forKey: key, in: frame, serial: serial, expected: KeyedDecodingContainer<NestedKey>.self)
        return KeyedDecodingContainer(CodableKeyedDecodingContainer<NestedKey>(decoder: decoder, frame: nested, serial: nestedSerial))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let (nested, nestedSerial) = try decoder.nestedContainer(
            .unkeyed, forKey: key, in: frame, serial: serial, expected: (any UnkeyedDecodingContainer).self)
        return CodableUnkeyedDecodingContainer(decoder: decoder, frame: nested, serial: nestedSerial)
    }

    func superDecoder() throws -> any Decoder {
        try decoder.superDecoder(forKey: GraphArchiveCodingKey.superKey, in: frame, serial: serial)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try decoder.superDecoder(forKey: key, in: frame, serial: serial)
    }
}

// MARK: - Unkeyed container

struct CodableUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let decoder: CodableDecoder
    let frame: Int
    let serial: Int

    var codingPath: [any CodingKey] { decoder.state.codingPath(to: frame) }
    var count: Int? { decoder.elementCount(in: frame, serial: serial) }
    var currentIndex: Int { decoder.elementIndex(in: frame, serial: serial) }
    var isAtEnd: Bool { currentIndex >= count ?? 0 }

    mutating func decodeNil() throws -> Bool { try decoder.decodeNilElement(in: frame, serial: serial) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try primitive(type) }
    mutating func decode(_ type: String.Type) throws -> String { try primitive(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try primitive(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try primitive(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try primitive(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try primitive(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try primitive(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try primitive(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try primitive(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try primitive(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try primitive(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try primitive(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try primitive(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try primitive(type) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeElement(type, in: frame, serial: serial)
    }

    @inline(__always)
    private func primitive<P: CodablePrimitive>(_ type: P.Type) throws -> P {
        try decoder.decodePrimitiveElement(type, in: frame, serial: serial)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (nested, nestedSerial) = try decoder.nestedElementContainer(
            .keyed, in: frame, serial: serial, expected: KeyedDecodingContainer<NestedKey>.self)
        return KeyedDecodingContainer(CodableKeyedDecodingContainer<NestedKey>(decoder: decoder, frame: nested, serial: nestedSerial))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (nested, nestedSerial) = try decoder.nestedElementContainer(
            .unkeyed, in: frame, serial: serial, expected: (any UnkeyedDecodingContainer).self)
        return CodableUnkeyedDecodingContainer(decoder: decoder, frame: nested, serial: nestedSerial)
    }

    mutating func superDecoder() throws -> any Decoder {
        try decoder.superElementDecoder(in: frame, serial: serial)
    }
}

// MARK: - Single-value container

struct CodableSingleValueDecodingContainer: SingleValueDecodingContainer {
    let decoder: CodableDecoder
    let frame: Int
    let serial: Int

    var codingPath: [any CodingKey] { decoder.state.codingPath(to: frame) }

    func decodeNil() -> Bool { decoder.singleIsNil(in: frame, serial: serial) }
    func decode(_ type: Bool.Type) throws -> Bool { try single(type) }
    func decode(_ type: String.Type) throws -> String { try single(type) }
    func decode(_ type: Double.Type) throws -> Double { try single(type) }
    func decode(_ type: Float.Type) throws -> Float { try single(type) }
    func decode(_ type: Int.Type) throws -> Int { try single(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try single(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try single(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try single(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try single(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try single(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try single(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try single(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try single(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try single(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try single(type) }

    @inline(__always)
    private func single<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.decodeSingle(type, in: frame, serial: serial)
    }
}
