// Sources/GraphArchive/Codable/CodablePrimitive.swift - the types the Codable bridge writes as one tagged value

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A type the bridge stores as a single tagged value (FORMAT.md §6) instead of asking it to
/// encode itself: the primitives every container takes directly, plus `Date` and `Data`, which
/// get the format's native date and bytes tags — 9 bytes and one copy, where their own `Codable`
/// conformances would write a Double and an array of one tagged integer per byte. `[UInt8]`
/// shares the bytes tag, as in the keyed protocol.
protocol CodablePrimitive: Codable {
    func writeTagged(to state: inout EncodingState)
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> Self

    /// Writes `array` as the elements of unkeyed `frame`. One call an array, in a loop made for
    /// the type: element by element, each went through the generic path, with its type's kind
    /// looked up and the element cast to its type (callgrind: about 250 instructions an element).
    static func encodeElements(_ array: [Self], to encoder: CodableEncoder, in frame: Int, serial: Int) throws
    /// The elements of unkeyed `frame` (plain, none read yet), read as ``encodeElements`` writes
    /// them, into an array reserved for `capacity`.
    static func decodeElements(from decoder: CodableDecoder, in frame: Int, capacity: Int) throws -> [Self]
}

extension CodablePrimitive {
    // Implemented once here; each conformance's witness gets its own copy, made for the type.
    static func encodeElements(_ array: [Self], to encoder: CodableEncoder, in frame: Int, serial: Int) throws {
        try encoder.encodePrimitiveElements(array, in: frame, serial: serial)
    }

    static func decodeElements(from decoder: CodableDecoder, in frame: Int, capacity: Int) throws -> [Self] {
        try decoder.decodePrimitiveElements(Self.self, in: frame, capacity: capacity)
    }
}

extension Bool: CodablePrimitive {
    func writeTagged(to state: inout EncodingState) { state.writeBool(self) }
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> Bool { try state.readBool() }
}

// The reads are inlined like the writes: a keyed container's `decode(_:forKey:)` for a String or
// an integer (every field of a typical model) then reads its value without a call.
extension String: CodablePrimitive {
    @inline(__always)
    func writeTagged(to state: inout EncodingState) { state.writeString(self) }
    @inline(__always)
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> String {
        try state.readString()
    }
}

extension Double: CodablePrimitive {
    func writeTagged(to state: inout EncodingState) { state.writeDouble(self) }
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> Double {
        try state.readDouble()
    }
}

extension Float: CodablePrimitive {
    func writeTagged(to state: inout EncodingState) { state.writeFloat(self) }
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> Float { try state.readFloat() }
}

extension Date: CodablePrimitive {
    func writeTagged(to state: inout EncodingState) { state.writeDate(timeIntervalSinceReferenceDate) }
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> Date {
        Date(timeIntervalSinceReferenceDate: try state.readDate())
    }
}

extension Data: CodablePrimitive {
    func writeTagged(to state: inout EncodingState) { state.writeBytes(self) }
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> Data {
        Data(try state.readByteArray())
    }
}

extension Array: CodablePrimitive where Element == UInt8 {
    func writeTagged(to state: inout EncodingState) { state.writeBytes(self) }
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> [UInt8] {
        try state.readByteArray()
    }
}

/// Every integer width shares the sign-and-magnitude tags (FORMAT.md §6.2).
protocol CodableIntegerPrimitive: FixedWidthInteger, CodablePrimitive {}

extension CodableIntegerPrimitive {
    @inline(__always)
    func writeTagged(to state: inout EncodingState) { state.writeInteger(self) }
    @inline(__always)
    static func readTagged(from state: inout DecodingState) throws(GraphArchiveError) -> Self {
        try state.readInteger(Self.self)
    }
}

extension Int: CodableIntegerPrimitive {}
extension Int8: CodableIntegerPrimitive {}
extension Int16: CodableIntegerPrimitive {}
extension Int32: CodableIntegerPrimitive {}
extension Int64: CodableIntegerPrimitive {}
extension UInt: CodableIntegerPrimitive {}
extension UInt8: CodableIntegerPrimitive {}
extension UInt16: CodableIntegerPrimitive {}
extension UInt32: CodableIntegerPrimitive {}
extension UInt64: CodableIntegerPrimitive {}

/// How the bridge stores a value of some Swift type.
enum CodableTypeKind {
    /// One tagged value.
    case primitive(any CodablePrimitive.Type)
    /// A class instance: an object record, written once, referred to by index.
    case object
    /// An `Array`: an unkeyed container like the one its own `Codable` conformance uses, written
    /// and read by the bridge directly (see `CodableArray`).
    case array(any CodableArray.Type)
    /// Anything else: the type encodes itself inline (a record, an array or a single value).
    case value
    /// The wrapper `encodeLater(_:forKey:)` hands to its container: its value is written in
    /// place, with the object references in it allowed to close cycles.
    case later
}

/// `Array`, coded by the bridge itself: the standard library's `Array` conformances run
/// unspecialized, paying a metadata lookup and an existential call per element and growing the
/// array without reserving (about 500 instructions an element, measured with callgrind). The
/// bridge writes and reads the very same unkeyed container, element by element.
protocol CodableArray {
    func encodeElements(to encoder: CodableEncoder, key: CodingPathComponent) throws
    static func decodeElements(from decoder: CodableDecoder, step: CodingPathStep, parent: Int) throws -> Self
}

extension Array: CodableArray where Element: Codable {
    func encodeElements(to encoder: CodableEncoder, key: CodingPathComponent) throws {
        try encoder.encodeArray(self, key: key)
    }

    static func decodeElements(from decoder: CodableDecoder, step: CodingPathStep, parent: Int) throws -> [Element] {
        try decoder.decodeArray(of: Element.self, step: step, parent: parent)
    }
}

/// Remembers each type's kind, so the dynamic casts run once per type and archive, not per value.
struct CodableTypeKinds {
    private var lastType: ObjectIdentifier?
    private var lastKind = CodableTypeKind.value
    private var known: [ObjectIdentifier: CodableTypeKind] = [:]

    @inline(__always)
    mutating func kind(of type: Any.Type) -> CodableTypeKind {
        let key = ObjectIdentifier(type)
        if key == lastType { return lastKind }
        return lookUp(type, key)
    }

    @inline(never)
    private mutating func lookUp(_ type: Any.Type, _ key: ObjectIdentifier) -> CodableTypeKind {
        let kind: CodableTypeKind
        if let found = known[key] {
            kind = found
        } else {
            if let primitive = type as? any CodablePrimitive.Type {
                kind = .primitive(primitive)
            } else if let array = type as? any CodableArray.Type {
                kind = .array(array)
            } else if type is any CodableLaterEncodable.Type {
                kind = .later
            } else if type is AnyClass {
                kind = .object
            } else {
                kind = .value
            }
            known[key] = kind
        }
        lastType = key
        lastKind = kind
        return kind
    }
}
