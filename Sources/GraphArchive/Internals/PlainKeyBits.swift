// Sources/GraphArchive/Internals/PlainKeyBits.swift - the bits of a coding key of a plain type

/// The bits of `key` when its type is plain (`_isPOD`: bitwise copyable, no references) and 0,
/// 1, 2, 4 or 8 bytes, the size of an enum without payloads (what `CodingKeys` are) or of an
/// integer; nil for any other type.
///
/// Two values of one plain type with the same bits are the same value, so a pure
/// `stringValue` gives them the same string: the Codable containers key their
/// `CodableKeySlots` on these bits (the assumption is documented in CodableBridge.md). Padding
/// bytes may differ between equal values: that only misses a cached slot.
@inline(__always)
func plainKeyBits<Key: CodingKey>(of key: Key) -> UInt64? {
    guard _isPOD(Key.self) else { return nil }
    // A bit cast reads the key where it lies; `withUnsafeBytes(of:)` stayed a generic call
    // with a closure in the unspecialized containers (callgrind: about 50 instructions a key).
    switch MemoryLayout<Key>.size {
    case 0: return 0
    case 1: return UInt64(unsafeBitCast(key, to: UInt8.self))
    case 2: return UInt64(unsafeBitCast(key, to: UInt16.self))
    case 4: return UInt64(unsafeBitCast(key, to: UInt32.self))
    case 8: return unsafeBitCast(key, to: UInt64.self)
    default: return nil
    }
}
