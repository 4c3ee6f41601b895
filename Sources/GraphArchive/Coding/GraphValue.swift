// Sources/GraphArchive/Coding/GraphValue.swift - everything that can be archived under a key

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value that can be archived under a key: the primitives, `String`, `Data`, `Date`,
/// ``GraphCoding`` types, and optionals, arrays and dictionaries of these.
///
/// Adopt ``GraphCoding`` rather than this protocol; its underscored requirements are the
/// engine's plumbing and not API.
public protocol GraphValue {
    @_documentation(visibility: internal)
    func _encodeGraphValue(to archiver: GraphArchiver) throws
    @_documentation(visibility: internal)
    static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Self
    @_documentation(visibility: internal)
    /// Writes `array` as a packed array of references and returns true if `Self` is a class;
    /// returns false, having written nothing, otherwise.
    static func _encodeObjectArray(_ array: [Self], to archiver: GraphArchiver) throws -> Bool
    @_documentation(visibility: internal)
    /// Decodes a packed array of `count` references as `[Element]`, where `Element` is `Self`
    /// (classes only; for other types an empty array, or else an error the unarchiver turns
    /// into a type mismatch). `capacity` is the most elements the input can hold. Generic
    /// rather than returning `[Self]`, which a non-final class could not declare.
    static func _decodeObjectArray<Element>(
        _: Element.Type,
        count: Int,
        capacity: Int,
        from unarchiver: GraphUnarchiver
    ) throws -> [Element]
    @_documentation(visibility: internal)
    /// Adds the archivable classes this type is built from to `registry`.
    static func _registerGraphTypes(in registry: inout GraphTypeRegistry)
    @_documentation(visibility: internal)
    /// Writes `value`, nil or `Self`: what `Optional`'s conformance does, here so that a class
    /// reads it as the one pointer it is, where generic code would copy it out through the
    /// optional type's value witnesses.
    static func _encodeOptional(_ value: Self?, to archiver: GraphArchiver) throws
    @_documentation(visibility: internal)
    /// Reads nil or `Self`: what `Optional`'s conformance does (see `_encodeOptional`).
    static func _decodeOptional(from unarchiver: GraphUnarchiver) throws -> Self?
}

extension GraphValue {
    @_documentation(visibility: internal)
    public static func _encodeObjectArray(_ array: [Self], to archiver: GraphArchiver) throws -> Bool { false }

    @_documentation(visibility: internal)
    public static func _decodeObjectArray<Element>(
        _: Element.Type,
        count: Int,
        capacity: Int,
        from unarchiver: GraphUnarchiver
    ) throws -> [Element] {
        guard count == 0 else { throw ObjectsWhereValuesWereAskedFor() }
        return []
    }

    @_documentation(visibility: internal)
    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {}

    @_documentation(visibility: internal)
    public static func _encodeOptional(_ value: Self?, to archiver: GraphArchiver) throws {
        switch value {
        case .none: archiver.state.writeNil()
        case .some(let wrapped): try wrapped._encodeGraphValue(to: archiver)
        }
    }

    @_documentation(visibility: internal)
    public static func _decodeOptional(from unarchiver: GraphUnarchiver) throws -> Self? {
        if try unarchiver.state.readNilIfPresent() { return nil }
        return try _decodeGraphValue(from: unarchiver)
    }
}

/// Thrown by ``GraphValue/_decodeObjectArray(_:count:capacity:from:)`` of a value type, for
/// the unarchiver to report as a type mismatch where the array starts.
struct ObjectsWhereValuesWereAskedFor: Error {}

// MARK: - Primitives

extension Bool: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeBool(self) }
    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Bool {
        try unarchiver.state.readBool()
    }
}

extension String: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeString(self) }
    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> String {
        try unarchiver.state.readString()
    }
}

extension Double: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeDouble(self) }
    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Double {
        try unarchiver.state.readDouble()
    }
}

extension Float: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeFloat(self) }
    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Float {
        try unarchiver.state.readFloat()
    }
}

extension Date: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        archiver.state.writeDate(timeIntervalSinceReferenceDate)
    }
    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Date {
        Date(timeIntervalSinceReferenceDate: try unarchiver.state.readDate())
    }
}

extension Data: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeBytes(self) }
    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Data {
        Data(try unarchiver.state.readByteArray())
    }
}

@_documentation(visibility: internal)
/// Every fixed-width integer stores the same way: sign and magnitude in the smallest width
/// (FORMAT.md §6.2), checked against the requested type's range on the way back.
public protocol _GraphInteger: FixedWidthInteger, GraphValue {}

extension _GraphInteger {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        archiver.state.writeInteger(self)
    }
    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Self {
        try unarchiver.state.readInteger(Self.self)
    }
}

extension Int: _GraphInteger {}
extension Int8: _GraphInteger {}
extension Int16: _GraphInteger {}
extension Int32: _GraphInteger {}
extension Int64: _GraphInteger {}
extension UInt: _GraphInteger {}
extension UInt8: _GraphInteger {}
extension UInt16: _GraphInteger {}
extension UInt32: _GraphInteger {}
extension UInt64: _GraphInteger {}

// MARK: - Containers

extension Optional: GraphValue where Wrapped: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try Wrapped._encodeOptional(self, to: archiver)
    }

    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Wrapped? {
        try Wrapped._decodeOptional(from: unarchiver)
    }

    // A packed array of references (an array of objects written as `[T]`, or an NSArray of a
    // keyed archive) read as `[T?]`: the objects read as `[T]`, each then wrapped.
    @_documentation(visibility: internal)
    public static func _decodeObjectArray<Element>(
        _: Element.Type,
        count: Int,
        capacity: Int,
        from unarchiver: GraphUnarchiver
    ) throws -> [Element] {
        let objects = try Wrapped._decodeObjectArray(Wrapped.self, count: count, capacity: capacity, from: unarchiver)
        guard let optionals = objects.map(Optional.some) as? [Element] else { throw ObjectsWhereValuesWereAskedFor() }
        return optionals
    }

    @_documentation(visibility: internal)
    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Wrapped._registerGraphTypes(in: &registry)
    }
}

extension Array: GraphValue where Element: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeArray(self)
    }

    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> [Element] {
        try unarchiver.readArray(Element.self)
    }

    @_documentation(visibility: internal)
    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Element._registerGraphTypes(in: &registry)
    }
}

extension ContiguousArray: GraphValue where Element: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeArray(Array(self))
    }

    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> ContiguousArray<Element> {
        ContiguousArray(try unarchiver.readArray(Element.self))
    }

    @_documentation(visibility: internal)
    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Element._registerGraphTypes(in: &registry)
    }
}

extension Set: GraphValue where Element: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeArray(Array(self))
    }

    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Set<Element> {
        Set(try unarchiver.readArray(Element.self))
    }

    @_documentation(visibility: internal)
    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Element._registerGraphTypes(in: &registry)
    }
}

extension Dictionary: GraphValue where Key: GraphValue, Value: GraphValue {
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeDictionary(self)
    }

    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> [Key: Value] {
        try unarchiver.readDictionary(Key.self, Value.self)
    }

    @_documentation(visibility: internal)
    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Key._registerGraphTypes(in: &registry)
        Value._registerGraphTypes(in: &registry)
    }
}
