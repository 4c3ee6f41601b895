// Sources/GraphArchive/Archiving/EncodingState+Values.swift - tagged value writers (FORMAT.md §6)

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension EncodingState {
    @inlinable @inline(__always)
    mutating func writeNil() {
        out.writeByte(ValueTag.null)
    }

    @inline(__always)
    mutating func writeBool(_ value: Bool) {
        out.writeByte(value ? ValueTag.trueValue : ValueTag.falseValue)
    }

    /// Integers take the smallest form: 0...63 in the tag, else sign and 1...8 magnitude bytes.
    @inlinable @inline(__always)
    mutating func writeInteger<T: FixedWidthInteger>(_ value: T) {
        if value >= 0 {
            writeUnsigned(UInt64(truncatingIfNeeded: value), base: ValueTag.unsignedBase, small: true)
        } else {
            // ~value is -1 - value, non-negative and representable for every negative T.
            writeUnsigned(UInt64(truncatingIfNeeded: ~value), base: ValueTag.negativeBase, small: false)
        }
    }

    @inlinable @inline(__always)
    mutating func writeUnsigned(_ magnitude: UInt64, base: UInt8, small: Bool) {
        if small && magnitude < ValueTag.smallIntegerLimit {
            out.writeByte(ValueTag.smallIntegerBase | UInt8(truncatingIfNeeded: magnitude))
            return
        }
        let width = max(1, (64 - magnitude.leadingZeroBitCount + 7) / 8)
        out.writeTag(base + UInt8(width - 1), littleEndian: magnitude, width: width)
    }

    @inline(__always)
    mutating func writeDouble(_ value: Double) {
        out.writeTag(ValueTag.float64, littleEndian: value.bitPattern, width: 8)
    }

    @inline(__always)
    mutating func writeFloat(_ value: Float) {
        out.writeTag(ValueTag.float32, littleEndian: UInt64(value.bitPattern), width: 4)
    }

    @inline(__always)
    mutating func writeDate(_ secondsSinceReferenceDate: Double) {
        out.writeTag(ValueTag.date, littleEndian: secondsSinceReferenceDate.bitPattern, width: 8)
    }

    @inline(__always)
    mutating func writeString(_ value: String) {
        // A small string (15 bytes at most, under the short-string limit): tag and bytes at once.
        if out.writeSmallString(value, tagBase: ValueTag.shortStringBase) { return }
        let length = value.utf8.count
        if length < ValueTag.shortStringLimit {
            out.writeByte(ValueTag.shortStringBase | UInt8(truncatingIfNeeded: length))
        } else {
            out.writeByte(ValueTag.string)
            out.writeVarint(length)
        }
        out.writeUTF8(value)
    }

    mutating func writeBytes(_ bytes: some Collection<UInt8>) {
        out.writeByte(ValueTag.bytes)
        out.writeVarint(bytes.count)
        out.writeBytes(bytes)
    }
}
