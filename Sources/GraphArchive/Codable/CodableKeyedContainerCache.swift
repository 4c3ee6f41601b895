// Sources/GraphArchive/Codable/CodableKeyedContainerCache.swift - keyed decoding containers handed out again

/// Keyed containers the decoder has made, handed out again by later `container(keyedBy:)` calls
/// with the same key type once nobody else holds them.
///
/// A `KeyedDecodingContainer` boxes the decoder's container on the heap, and making one from a
/// `Key` known only at run time costs two generic metadata lookups, a witness table lookup, an
/// allocation and a release: about 1,500 of the 5,400 instructions callgrind counted per
/// object of the benchmark's Codable grid states (name, color, date). Reusing a container
/// leaves one metadata lookup (the returned `KeyedDecodingContainer<Key>`'s) and cut the
/// decode by 13.5% of its instructions. A cached container is repointed at the new frame when
/// it is reused. It is reused only while this cache holds its box's one reference, so a
/// container a value still holds (a parent's, while its children decode, or one kept past
/// `init(from:)`) is never pointed anywhere else.
struct CodableKeyedContainerCache {
    struct Entry {
        let key: ObjectIdentifier
        /// The container's box (see `storageObject(of:)`).
        var storage: AnyObject
        /// The container in the box, to repoint.
        let container: CodableKeyedContainerPlace
    }

    /// Containers of one key type live at once (nesting of one type), beyond which new ones are
    /// not cached: enough for the usual shapes, and the search stays short.
    static let capacity = 16

    private(set) var entries: ContiguousArray<Entry> = []

    /// The cached container keyed by `key` that nobody else holds, pointed at `frame`.
    @inline(__always)
    mutating func reuse(_ key: ObjectIdentifier, frame: Int, serial: Int) -> AnyObject? {
        for index in entries.indices where entries[index].key == key {
            if isKnownUniquelyReferenced(&entries[index].storage) {
                entries[index].container.point(at: frame, serial: serial)
                return entries[index].storage
            }
        }
        return nil
    }

    /// Whether no more containers are cached.
    var isFull: Bool { entries.count >= Self.capacity }

    /// Keeps the container `container`, whose box is `storage`, to hand out again.
    mutating func keep(_ storage: AnyObject, container: CodableKeyedContainerPlace, key: ObjectIdentifier) {
        entries.append(Entry(key: key, storage: storage, container: container))
    }

    /// Drops the containers: each refers to the decoder, which must not keep itself alive. A
    /// container kept by a value still finds its (finished) frame, which refuses to be read.
    mutating func release() {
        entries.removeAll()
    }
}
