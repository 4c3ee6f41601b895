// Benchmarks/Floors/CodableCallsFloor.swift - Swift's Codable calls alone, values kept in a flat array

/// What the floor's coders keep: each kind of value in a flat array of its own, in call order.
struct CodableCallsValues {
    var ints: [Int] = []
    var strings: [String] = []
    /// Every other primitive (the codable workload's model has none).
    var others: [any Sendable] = []
    /// Each unkeyed container's element count, in the order the containers were opened.
    var counts: [Int] = []
}

/// A call the floor's coders do not serve: the workload's model makes none of them.
struct CodableCallsUnsupported: Error, CustomStringConvertible {
    var description: String
    init(_ call: String) { description = "Codable calls floor: \(call) is not supported" }
}

/// The keyed container a coder handed out last. The floor's keyed containers hold nothing but
/// their coder, so one serves every record of a key type: the floor pays a cast to hand it out
/// again, where making one costs generic metadata lookups and a box's allocation for each
/// record, which the bridge avoids too (it hands its boxes out again).
struct CodableCallsKeyedCache {
    private var key: ObjectIdentifier?
    private var container: Any?

    mutating func container<Container>(make: () -> Container) -> Container {
        if key == ObjectIdentifier(Container.self), let cached = container as? Container { return cached }
        let made = make()
        key = ObjectIdentifier(Container.self)
        container = made
        return made
    }
}

/// Makes the calls a `Codable` value's conformance makes of its encoder and does nothing
/// else: no format, no key lookup, no identity lookup (which elements repeat an earlier one is
/// given), each value appended to a flat array. Timed on the codable workload, it shows how
/// much of the bridge's encode is Swift's Codable machinery (the synthesized `encode(to:)`, the
/// boxed `KeyedEncodingContainer` and the calls through it) and how much is the bridge's own.
///
/// Nil throws; nested containers are not counted as elements.
final class CodableCallsEncoder: Encoder {
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]
    private(set) var values = CodableCallsValues()
    /// For each element of an unkeyed container, numbered across the run: the number of the
    /// element it repeats, or -1 when it is coded in full.
    let repeats: [Int]
    private var elements = 0

    /// `like`: values of the same counts, whose capacity is reserved.
    init(repeats: [Int], like: CodableCallsValues = CodableCallsValues()) {
        self.repeats = repeats
        values.ints.reserveCapacity(like.ints.count)
        values.strings.reserveCapacity(like.strings.count)
        values.others.reserveCapacity(like.others.count)
        values.counts.reserveCapacity(like.counts.count)
    }

    /// For each of `objects`, the position of its first occurrence if it occurred before, or -1.
    static func repeats(of objects: [AnyObject]) -> [Int] {
        var first: [ObjectIdentifier: Int] = [:]
        return objects.enumerated().map { index, object in
            if let earlier = first[ObjectIdentifier(object)] { return earlier }
            first[ObjectIdentifier(object)] = index
            return -1
        }
    }

    /// The keyed container handed out last, by key type (see ``CodableCallsKeyedCache``).
    private var keyed = CodableCallsKeyedCache()

    func container<Key: CodingKey>(keyedBy _: Key.Type) -> KeyedEncodingContainer<Key> {
        keyed.container { KeyedEncodingContainer(Keyed<Key>(encoder: self)) }
    }

    /// Drops the cached container, which refers to this encoder.
    func finish() { keyed = CodableCallsKeyedCache() }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        values.counts.append(0)
        return Unkeyed(encoder: self, start: values.counts.count - 1)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(encoder: self) }

    /// Element `count` of the unkeyed container whose count is at `start`.
    fileprivate func encodeElement<T: Encodable>(_ value: T, count: Int, start: Int) throws {
        values.counts[start] = count
        let element = elements
        elements += 1
        if element < repeats.count && repeats[element] >= 0 { return }
        try value.encode(to: self)
    }

    fileprivate func append(_ value: Int) { values.ints.append(value) }
    fileprivate func append(_ value: String) { values.strings.append(value) }
    fileprivate func append(other value: some Sendable) { values.others.append(value) }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: CodableCallsEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey _: Key) throws { throw CodableCallsUnsupported("encodeNil(forKey:)") }
        mutating func encode(_ value: Bool, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: String, forKey _: Key) throws { encoder.append(value) }
        mutating func encode(_ value: Double, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: Float, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: Int, forKey _: Key) throws { encoder.append(value) }
        mutating func encode(_ value: Int8, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: Int16, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: Int32, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: Int64, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: UInt, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: UInt8, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: UInt16, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: UInt32, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode(_ value: UInt64, forKey _: Key) throws { encoder.append(other: value) }
        mutating func encode<T: Encodable>(_ value: T, forKey _: Key) throws { try value.encode(to: encoder) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey _: Key)
            -> KeyedEncodingContainer<NestedKey>
        {
            encoder.container(keyedBy: NestedKey.self)
        }

        mutating func nestedUnkeyedContainer(forKey _: Key) -> any UnkeyedEncodingContainer {
            encoder.unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder { encoder }
        mutating func superEncoder(forKey _: Key) -> any Encoder { encoder }
    }

    /// Every element goes through `encode(_:)`: a primitive element is a single value.
    private struct Unkeyed: UnkeyedEncodingContainer, CodableCallsPrimitiveEncoding {
        let encoder: CodableCallsEncoder
        /// Where the container's count is.
        let start: Int
        private(set) var count = 0
        var codingPath: [any CodingKey] { [] }

        init(encoder: CodableCallsEncoder, start: Int) {
            self.encoder = encoder
            self.start = start
        }

        mutating func encodeNil() throws { throw CodableCallsUnsupported("encodeNil()") }
        mutating func encodePrimitive<T: Encodable & Sendable>(_ value: T) throws { try encode(value) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            count += 1
            try encoder.encodeElement(value, count: count, start: start)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            encoder.container(keyedBy: NestedKey.self)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { encoder.unkeyedContainer() }
        mutating func superEncoder() -> any Encoder { encoder }
    }

    private struct Single: SingleValueEncodingContainer, CodableCallsPrimitiveEncoding {
        let encoder: CodableCallsEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil() throws { throw CodableCallsUnsupported("encodeNil()") }
        mutating func encode(_ value: String) throws { encoder.append(value) }
        mutating func encode(_ value: Int) throws { encoder.append(value) }
        mutating func encodePrimitive<T: Encodable & Sendable>(_ value: T) throws { encoder.append(other: value) }
        mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: encoder) }
    }
}

/// The primitive calls of unkeyed and single-value containers, all handed to one.
protocol CodableCallsPrimitiveEncoding {
    mutating func encodePrimitive<T: Encodable & Sendable>(_ value: T) throws
}

extension CodableCallsPrimitiveEncoding {
    mutating func encode(_ value: Bool) throws { try encodePrimitive(value) }
    mutating func encode(_ value: String) throws { try encodePrimitive(value) }
    mutating func encode(_ value: Double) throws { try encodePrimitive(value) }
    mutating func encode(_ value: Float) throws { try encodePrimitive(value) }
    mutating func encode(_ value: Int) throws { try encodePrimitive(value) }
    mutating func encode(_ value: Int8) throws { try encodePrimitive(value) }
    mutating func encode(_ value: Int16) throws { try encodePrimitive(value) }
    mutating func encode(_ value: Int32) throws { try encodePrimitive(value) }
    mutating func encode(_ value: Int64) throws { try encodePrimitive(value) }
    mutating func encode(_ value: UInt) throws { try encodePrimitive(value) }
    mutating func encode(_ value: UInt8) throws { try encodePrimitive(value) }
    mutating func encode(_ value: UInt16) throws { try encodePrimitive(value) }
    mutating func encode(_ value: UInt32) throws { try encodePrimitive(value) }
    mutating func encode(_ value: UInt64) throws { try encodePrimitive(value) }
}

/// The decoding side of ``CodableCallsEncoder``: reads its values back in order, builds each
/// element coded in full with its `init(from:)`, and hands out the instance again for a
/// repeat (a cast from the instances kept, as any decoder that keeps identity must make).
/// Values that run out or are not of the type asked for throw.
final class CodableCallsDecoder: Decoder {
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]
    private let values: CodableCallsValues
    private let repeats: [Int]
    private var nextInt = 0
    private var nextString = 0
    private var nextOther = 0
    private var nextCount = 0
    /// Each element's instance, by element number (repeats too, so that numbers match).
    private var instances: [Any] = []

    init(values: CodableCallsValues, repeats: [Int]) {
        self.values = values
        self.repeats = repeats
        instances.reserveCapacity(repeats.count)
    }

    /// The keyed container handed out last, by key type (see ``CodableCallsKeyedCache``).
    private var keyed = CodableCallsKeyedCache()

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        keyed.container { KeyedDecodingContainer(Keyed<Key>(decoder: self)) }
    }

    /// Drops the cached container, which refers to this decoder.
    func finish() { keyed = CodableCallsKeyedCache() }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard nextCount < values.counts.count else { throw missing("an unkeyed container") }
        nextCount += 1
        return Unkeyed(decoder: self, count: values.counts[nextCount - 1])
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    fileprivate func int() throws -> Int {
        guard nextInt < values.ints.count else { throw missing("an Int") }
        nextInt += 1
        return values.ints[nextInt - 1]
    }

    fileprivate func string() throws -> String {
        guard nextString < values.strings.count else { throw missing("a String") }
        nextString += 1
        return values.strings[nextString - 1]
    }

    fileprivate func other<T>(_: T.Type) throws -> T {
        guard nextOther < values.others.count, let value = values.others[nextOther] as? T else {
            throw missing("a \(T.self)")
        }
        nextOther += 1
        return value
    }

    fileprivate func element<T: Decodable>(_: T.Type) throws -> T {
        let number = instances.count
        let element: T
        if number < repeats.count && repeats[number] >= 0 {
            guard repeats[number] < number, let instance = instances[repeats[number]] as? T else {
                throw missing("element \(repeats[number]) as \(T.self)")
            }
            element = instance
        } else {
            element = try T(from: self)
        }
        instances.append(element)
        return element
    }

    private func missing(_ expected: String) -> VerificationError {
        VerificationError("Codable calls floor: \(expected) was asked for and is not there")
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: CodableCallsDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_: Key) -> Bool { true }
        func decodeNil(forKey _: Key) throws -> Bool { false }
        func decode(_: Bool.Type, forKey _: Key) throws -> Bool { try decoder.other(Bool.self) }
        func decode(_: String.Type, forKey _: Key) throws -> String { try decoder.string() }
        func decode(_: Double.Type, forKey _: Key) throws -> Double { try decoder.other(Double.self) }
        func decode(_: Float.Type, forKey _: Key) throws -> Float { try decoder.other(Float.self) }
        func decode(_: Int.Type, forKey _: Key) throws -> Int { try decoder.int() }
        func decode(_: Int8.Type, forKey _: Key) throws -> Int8 { try decoder.other(Int8.self) }
        func decode(_: Int16.Type, forKey _: Key) throws -> Int16 { try decoder.other(Int16.self) }
        func decode(_: Int32.Type, forKey _: Key) throws -> Int32 { try decoder.other(Int32.self) }
        func decode(_: Int64.Type, forKey _: Key) throws -> Int64 { try decoder.other(Int64.self) }
        func decode(_: UInt.Type, forKey _: Key) throws -> UInt { try decoder.other(UInt.self) }
        func decode(_: UInt8.Type, forKey _: Key) throws -> UInt8 { try decoder.other(UInt8.self) }
        func decode(_: UInt16.Type, forKey _: Key) throws -> UInt16 { try decoder.other(UInt16.self) }
        func decode(_: UInt32.Type, forKey _: Key) throws -> UInt32 { try decoder.other(UInt32.self) }
        func decode(_: UInt64.Type, forKey _: Key) throws -> UInt64 { try decoder.other(UInt64.self) }
        func decode<T: Decodable>(_: T.Type, forKey _: Key) throws -> T { try T(from: decoder) }

        func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey _: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try decoder.container(keyedBy: NestedKey.self)
        }

        func nestedUnkeyedContainer(forKey _: Key) throws -> any UnkeyedDecodingContainer {
            try decoder.unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey _: Key) throws -> any Decoder { decoder }
    }

    /// Every element goes through `decode(_:)`, as the encoder wrote it.
    private struct Unkeyed: UnkeyedDecodingContainer, CodableCallsPrimitiveDecoding {
        let decoder: CodableCallsDecoder
        let count: Int?
        private(set) var currentIndex = 0
        var codingPath: [any CodingKey] { [] }
        var isAtEnd: Bool { currentIndex >= count ?? 0 }

        init(decoder: CodableCallsDecoder, count: Int) {
            self.decoder = decoder
            self.count = count
        }

        mutating func decodeNil() throws -> Bool { false }
        mutating func decodePrimitive<T: Decodable>(_ type: T.Type) throws -> T { try decode(type) }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            guard !isAtEnd else { throw CodableCallsUnsupported("decoding past the end of an unkeyed container") }
            currentIndex += 1
            return try decoder.element(type)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try decoder.container(keyedBy: NestedKey.self)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try decoder.unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder { decoder }
    }

    private struct Single: SingleValueDecodingContainer, CodableCallsPrimitiveDecoding {
        let decoder: CodableCallsDecoder
        var codingPath: [any CodingKey] { [] }

        func decodeNil() -> Bool { false }
        func decode(_: String.Type) throws -> String { try decoder.string() }
        func decode(_: Int.Type) throws -> Int { try decoder.int() }
        func decodePrimitive<T: Decodable>(_: T.Type) throws -> T { try decoder.other(T.self) }
        func decode<T: Decodable>(_: T.Type) throws -> T { try T(from: decoder) }
    }
}

/// The primitive calls of unkeyed and single-value containers, all handed to one.
protocol CodableCallsPrimitiveDecoding {
    mutating func decodePrimitive<T: Decodable>(_ type: T.Type) throws -> T
}

extension CodableCallsPrimitiveDecoding {
    mutating func decode(_ type: Bool.Type) throws -> Bool { try decodePrimitive(type) }
    mutating func decode(_ type: String.Type) throws -> String { try decodePrimitive(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try decodePrimitive(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try decodePrimitive(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try decodePrimitive(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodePrimitive(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodePrimitive(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodePrimitive(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodePrimitive(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decodePrimitive(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodePrimitive(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodePrimitive(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodePrimitive(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodePrimitive(type) }
}
