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
    func _encodeGraphValue(to archiver: GraphArchiver) throws
    static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Self
    /// Writes `array` as a packed array of references and returns true if `Self` is a class;
    /// returns false, having written nothing, otherwise.
    static func _encodeObjectArray(_ array: [Self], to archiver: GraphArchiver) throws -> Bool
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
    /// Adds the archivable classes this type is built from to `registry`.
    static func _registerGraphTypes(in registry: inout GraphTypeRegistry)
}

extension GraphValue {
    public static func _encodeObjectArray(_ array: [Self], to archiver: GraphArchiver) throws -> Bool { false }

    public static func _decodeObjectArray<Element>(
        _: Element.Type,
        count: Int,
        capacity: Int,
        from unarchiver: GraphUnarchiver
    ) throws -> [Element] {
        guard count == 0 else { throw ObjectsWhereValuesWereAskedFor() }
        return []
    }

    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {}
}

/// Thrown by ``GraphValue/_decodeObjectArray(_:count:capacity:from:)`` of a value type, for
/// the unarchiver to report as a type mismatch where the array starts.
struct ObjectsWhereValuesWereAskedFor: Error {}

// MARK: - Primitives

extension Bool: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeBool(self) }
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Bool {
        try unarchiver.state.readBool()
    }
}

extension String: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeString(self) }
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> String {
        try unarchiver.state.readString()
    }
}

extension Double: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeDouble(self) }
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Double {
        try unarchiver.state.readDouble()
    }
}

extension Float: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeFloat(self) }
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Float {
        try unarchiver.state.readFloat()
    }
}

extension Date: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        archiver.state.writeDate(timeIntervalSinceReferenceDate)
    }
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Date {
        Date(timeIntervalSinceReferenceDate: try unarchiver.state.readDate())
    }
}

extension Data: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws { archiver.state.writeBytes(self) }
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Data {
        Data(try unarchiver.state.readByteArray())
    }
}

/// Every fixed-width integer stores the same way: sign and magnitude in the smallest width
/// (FORMAT.md §6.2), checked against the requested type's range on the way back.
public protocol _GraphInteger: FixedWidthInteger, GraphValue {}

extension _GraphInteger {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        archiver.state.writeInteger(self)
    }
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
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        switch self {
        case .none: archiver.state.writeNil()
        case .some(let wrapped): try wrapped._encodeGraphValue(to: archiver)
        }
    }

    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Wrapped? {
        if try unarchiver.state.readNilIfPresent() { return nil }
        return try Wrapped._decodeGraphValue(from: unarchiver)
    }

    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Wrapped._registerGraphTypes(in: &registry)
    }
}

extension Array: GraphValue where Element: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeArray(self)
    }

    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> [Element] {
        try unarchiver.readArray(Element.self)
    }

    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Element._registerGraphTypes(in: &registry)
    }
}

extension ContiguousArray: GraphValue where Element: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeArray(Array(self))
    }

    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> ContiguousArray<Element> {
        ContiguousArray(try unarchiver.readArray(Element.self))
    }

    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Element._registerGraphTypes(in: &registry)
    }
}

extension Set: GraphValue where Element: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeArray(Array(self))
    }

    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Set<Element> {
        Set(try unarchiver.readArray(Element.self))
    }

    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Element._registerGraphTypes(in: &registry)
    }
}

extension Dictionary: GraphValue where Key: GraphValue, Value: GraphValue {
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeDictionary(self)
    }

    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> [Key: Value] {
        try unarchiver.readDictionary(Key.self, Value.self)
    }

    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        Key._registerGraphTypes(in: &registry)
        Value._registerGraphTypes(in: &registry)
    }
}
