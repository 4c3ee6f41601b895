// Sources/GraphArchive/Internals/ByteStringTable.swift - byte strings stored once, found by their bytes

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds byte strings already written to a ``ByteWriter`` by their content: an open-addressing
/// table of where each one lies, hashed and compared as bytes, never as `String`s.
///
/// The binary property list writer stores each distinct ASCII string once, as CF's does. Keyed
/// by `String`, that table made a `String` of every value read from an archive and hashed it
/// with SipHash: a third of the instructions of writing a keyed archive (callgrind). Here a
/// string read from archive bytes is hashed a word at a time where it lies and copied once,
/// when it is new.
///
/// A lookup probes at most ``maximumProbes`` slots: a string not found within them is reported
/// as new (and stored again by the caller), so strings crafted to collide cost a bounded search
/// each, never a walk of a long cluster.
///
/// A slot holds the high half of its string's hash beside the string's index, so a lookup
/// reads an entry (and compares bytes) only for a string whose hash matches: looking up a new
/// string touches one slot, one cache miss in a large table. The slots are on huge pages
/// (``PlainStack``): for the names and dates of 10M grid-state slots, 2^26 slots (512 MB)
/// looked up at random.
struct ByteStringTable: ~Copyable {
    private struct Entry {
        var hash: UInt64
        /// Where the string's bytes lie in the storage.
        var offset: Int
        var count: Int
        var id: Int
    }

    private var entries: [Entry] = []
    /// The high 32 bits of the hash, then the index into `entries` plus 1 below them; 0 for an
    /// empty slot. At most half full.
    private var slots = PlainStack<UInt64>(zeros: 64)

    private static let tagMask: UInt64 = 0xFFFF_FFFF_0000_0000

    /// Slots a lookup or insertion tries.
    static let maximumProbes = 32

    /// Makes room for `count` strings without growing.
    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(count)
        var capacity = slots.count
        while capacity < 2 * count { capacity *= 2 }
        if capacity > slots.count { rehash(capacity: capacity) }
    }

    /// The hash of the `count` bytes at `reader`'s position, and whether all of them are ASCII;
    /// nil if fewer than `count` bytes are left. The reader does not move.
    @inline(__always)
    static func fingerprint(_ reader: ByteReader, count: Int) -> (hash: UInt64, isASCII: Bool)? {
        guard let bytes = reader.peekBytes(count) else { return nil }
        var hash = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        var high: UInt64 = 0
        var index = 0
        while index &+ 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            high |= word
            hash = (hash ^ word) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash &>> 29
            index &+= 8
        }
        var last: UInt64 = 0
        var shift: UInt64 = 0
        while index < count {
            last |= UInt64(bytes.load(fromByteOffset: index, as: UInt8.self)) &<< shift
            shift &+= 8
            index &+= 1
        }
        high |= last
        hash = (hash ^ last) &* 0xC4CE_B9FE_1A85_EC53
        hash ^= hash &>> 32
        return (hash, high & 0x8080_8080_8080_8080 == 0)
    }

    /// The id of the string stored with `hash` whose bytes equal the `count` bytes at
    /// `reader`'s position, looked for in `storage`; nil if there is none (or none within
    /// ``maximumProbes`` slots).
    ///
    /// The caller guarantees that every offset and count inserted lies within `storage`, and
    /// that `count` bytes are left in `reader` (``fingerprint(_:count:)`` checked them).
    func id(of reader: ByteReader, count: Int, hash: UInt64, in storage: borrowing ByteWriter) -> Int? {
        let mask = slots.count &- 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        let tag = hash & Self.tagMask
        for _ in 0..<Self.maximumProbes {
            let value = slots[slot]
            guard value != 0 else { return nil }
            if value & Self.tagMask == tag {
                let entry = entries[Int(truncatingIfNeeded: value & ~Self.tagMask) &- 1]
                if entry.hash == hash && entry.count == count
                    && Self.equal(reader, storage, at: entry.offset, count: count)
                {
                    return entry.id
                }
            }
            slot = (slot &+ 1) & mask
        }
        return nil
    }

    /// Whether the `count` bytes at `reader`'s position equal those at `offset` of `storage`.
    private static func equal(_ reader: ByteReader, _ storage: borrowing ByteWriter, at offset: Int, count: Int) -> Bool
    {
        precondition(offset >= 0 && count <= storage.count - offset)
        guard let bytes = reader.peekBytes(count) else { return false }
        guard count > 0 else { return true }
        return storage.withUnsafeBytes { stored in memcmp(bytes.baseAddress!, stored.baseAddress! + offset, count) == 0
        }
    }

    /// Records string `id`, of `count` bytes hashing to `hash`, as lying at `offset` of the
    /// storage. A string with no free slot within ``maximumProbes`` is not recorded.
    mutating func insert(id: Int, hash: UInt64, offset: Int, count: Int) {
        if 2 * (entries.count + 1) > slots.count { rehash(capacity: 2 * slots.count) }
        if place(entries.count, hash: hash) {
            entries.append(Entry(hash: hash, offset: offset, count: count, id: id))
        }
    }

    private mutating func place(_ index: Int, hash: UInt64) -> Bool {
        let mask = slots.count &- 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        for _ in 0..<Self.maximumProbes {
            if slots[slot] == 0 {
                slots[slot] = hash & Self.tagMask | UInt64(UInt32(truncatingIfNeeded: index &+ 1))
                return true
            }
            slot = (slot &+ 1) & mask
        }
        return false
    }

    private mutating func rehash(capacity: Int) {
        let old = entries
        slots = PlainStack<UInt64>(zeros: capacity)
        entries.removeAll(keepingCapacity: true)
        for entry in old where place(entries.count, hash: entry.hash) {
            entries.append(entry)
        }
    }
}

extension ByteReader {
    /// Calls `body` with a reader over the UTF-8 bytes of `string`.
    /// - Warning: Do not let the reader escape `body`.
    static func withUTF8<R>(of string: String, _ body: (ByteReader) -> R) -> R {
        var string = string
        return string.withUTF8 { buffer in
            withReader(over: UnsafeRawBufferPointer(buffer)) { reader in body(reader) }
        }
    }
}
