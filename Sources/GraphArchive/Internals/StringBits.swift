// Sources/GraphArchive/Internals/StringBits.swift - comparing keys without touching their storage

/// The two machine words of a `String` value, for a fast identity test on keys.
///
/// Keys are nearly always the same literal on every call, so their words are identical from
/// one record to the next: comparing the words is a two-compare fast path that needs no
/// retain of the stored key (callgrind showed those retains at ~5% of a 1M-record encode).
/// Equal words imply equal strings (same inline small string, or same storage and length);
/// unequal words prove nothing, and callers then fall back to `==`.
///
/// Usable from inline: the unarchiver's inlinable `decode` forms match keys so.
@usableFromInline
struct StringBits: Equatable, Sendable, BitwiseCopyable {
    @usableFromInline let low: UInt64
    @usableFromInline let high: UInt64

    @inlinable @inline(__always)
    init(_ string: String) {
        // A String is two words on 64-bit platforms; reading them neither retains nor copies.
        (low, high) = unsafeBitCast(string, to: (UInt64, UInt64).self)
    }

    /// Written out: the synthesized `==` is not inlinable, so it would be a call per key.
    @inlinable @inline(__always)
    static func == (lhs: StringBits, rhs: StringBits) -> Bool {
        lhs.low == rhs.low && lhs.high == rhs.high
    }

    /// Words no `String` has: its second word is never 0 (a small string's holds its count and
    /// flags, a larger one's its storage), so a key never matches a slot holding these.
    static let none = StringBits(low: 0, high: 0)

    private init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }
}

extension StringBits {
    /// The UTF-8 length of a small string, one whose code units are stored in its two words
    /// themselves, in order (the first word's bytes, then the second's up to its top byte,
    /// which holds the count and flags), or nil for any other string. That is the standard
    /// library's layout of a `String` on 64-bit little-endian platforms.
    @inline(__always)
    var smallUTF8Count: Int? {
        #if _endian(little) && (arch(x86_64) || arch(arm64))
        // The second word's top byte: bit 5 marks a small string, the low nibble is its count.
        guard high & (1 << 61) != 0 else { return nil }
        return Int(truncatingIfNeeded: (high &>> 56) & 0xF)
        #else
        return nil
        #endif
    }
}
