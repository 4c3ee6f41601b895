// Sources/GraphArchive/Codable/CodableKeyedContainerCache.swift - keyed decoding containers handed out again

/// Keyed containers the decoder has made, handed out again by later `container(keyedBy:)` calls
/// with the same key type once nobody else holds them.
///
/// A `KeyedDecodingContainer` boxes the decoder's container on the heap, and making one from a
/// `Key` known only at run time costs two generic metadata lookups, a witness table lookup, an
/// allocation and a release: about 1,500 of the 5,400 instructions callgrind counted per
/// object of the benchmark's Codable grid states (name, color, date). Reusing a container
/// leaves one metadata lookup (the returned `KeyedDecodingContainer<Key>`'s) and cut the
/// decode by 13.5% of its instructions. A cached container reads its frame through a lease, which
/// is pointed at the new frame when the container is reused. It is reused only while this cache
/// holds its box's one reference, so a container a value still holds (a parent's, while its
/// children decode, or one kept past `init(from:)`) is never pointed anywhere else.
struct CodableKeyedContainerCache {
    struct Entry {
        let key: ObjectIdentifier
        /// The container's box (see `storageObject(of:)`).
        var storage: AnyObject
        let lease: Int
    }

    /// Containers of one key type live at once (nesting of one type), beyond which new ones are
    /// not cached: enough for the usual shapes, and the search stays short.
    static let capacity = 16

    private(set) var entries: ContiguousArray<Entry> = []
    /// The frame and serial number each leased container reads.
    var leases: ContiguousArray<(frame: Int, serial: Int)> = []

    /// The cached container keyed by `key` that nobody else holds, pointed at `frame`.
    @inline(__always)
    mutating func reuse(_ key: ObjectIdentifier, frame: Int, serial: Int) -> AnyObject? {
        for index in entries.indices where entries[index].key == key {
            if isKnownUniquelyReferenced(&entries[index].storage) {
                leases[entries[index].lease] = (frame, serial)
                return entries[index].storage
            }
        }
        return nil
    }

    /// A lease for a new container at `frame`, or -1 when the cache is full.
    mutating func newLease(frame: Int, serial: Int) -> Int {
        guard entries.count < Self.capacity else { return -1 }
        leases.append((frame, serial))
        return leases.count - 1
    }

    /// Keeps the container `storage` holding `lease`, to hand out again.
    mutating func keep(_ storage: AnyObject, key: ObjectIdentifier, lease: Int) {
        entries.append(Entry(key: key, storage: storage, lease: lease))
    }

    /// Drops the containers: each refers to the decoder, which must not keep itself alive. The
    /// leases stay, so that a container kept by a value still finds its (finished) frame.
    mutating func release() {
        entries.removeAll()
    }
}
