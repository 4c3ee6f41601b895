// Sources/GraphArchive/Format/ValueTag.swift - the one-byte tags of tagged values (FORMAT.md §6)

/// Tag bytes that start every tagged value. Ranges fold a small payload into the tag itself.
///
/// Usable from inline, with the tags the unarchiver's inlinable `decode` forms test; those are
/// inlinable computed constants, since a stored one would be reached through its addressor
/// from another module, a call per test. The archiver's inlinable `encode` forms write some.
@usableFromInline
enum ValueTag {
    @inlinable static var null: UInt8 { 0x00 }
    static let falseValue: UInt8 = 0x01
    static let trueValue: UInt8 = 0x02
    static let float32: UInt8 = 0x03
    static let float64: UInt8 = 0x04
    /// Float64 seconds since 2001-01-01T00:00:00Z, Foundation's reference date.
    static let date: UInt8 = 0x05
    /// Varint length, then UTF-8.
    static let string: UInt8 = 0x06
    /// Varint length, then raw bytes.
    static let bytes: UInt8 = 0x07
    /// Varint object index.
    @inlinable static var objectReference: UInt8 { 0x08 }
    /// Varint count, then that many tagged values.
    static let array: UInt8 = 0x09
    /// Varint count, then that many ZigZag varint deltas between successive object indexes.
    static let referenceArray: UInt8 = 0x0A
    /// Varint count, then that many (tagged key, tagged value) pairs.
    static let dictionary: UInt8 = 0x0B
    /// Varint shape index, then the shape's values in key order (an inline value type).
    static let valueRecord: UInt8 = 0x0C

    /// 0x10...0x17: a non-negative integer in 1...8 little-endian bytes.
    @inlinable static var unsignedBase: UInt8 { 0x10 }
    /// 0x18...0x1F: a negative integer n stored as the unsigned ~n (= -1 - n) in 1...8 bytes.
    @inlinable static var negativeBase: UInt8 { 0x18 }
    /// 0x40...0x7F: the integers 0...63 in the tag itself.
    @inlinable static var smallIntegerBase: UInt8 { 0x40 }
    @inlinable static var smallIntegerLimit: UInt64 { 64 }
    /// 0x80...0xBF: a string of 0...63 UTF-8 bytes, the length in the tag.
    @inlinable static var shortStringBase: UInt8 { 0x80 }
    static let shortStringLimit = 64

    /// A name for the value a tag starts, for error messages.
    static func describe(_ tag: UInt8) -> String {
        switch tag {
        case null: "nil"
        case falseValue, trueValue: "Bool"
        case float32: "Float"
        case float64: "Double"
        case date: "Date"
        case string, shortStringBase..<(shortStringBase + 64): "String"
        case bytes: "bytes"
        case objectReference: "object reference"
        case array: "array"
        case referenceArray: "array of objects"
        case dictionary: "dictionary"
        case valueRecord: "value record"
        case unsignedBase...(negativeBase + 7), smallIntegerBase..<(smallIntegerBase + 64): "integer"
        default: "unknown tag 0x\(String(tag, radix: 16))"
        }
    }
}
