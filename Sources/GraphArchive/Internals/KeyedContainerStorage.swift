// Sources/GraphArchive/Internals/KeyedContainerStorage.swift - a KeyedDecodingContainer as its one storage object
//
// `KeyedDecodingContainer<Key>` wraps a decoder's container in a heap box, created per
// `container(keyedBy:)` call by generic code the caller's `Key` cannot specialize: callgrind put
// the box's metadata lookups, allocation and release at over a quarter of decoding the
// benchmark's Codable grid states. The bridge therefore reuses a container once nobody else holds it, which it
// can only see from the box's reference count. The standard library's
// `KeyedDecodingContainer` is a struct whose only stored property is that box (`_box`); these
// reinterpret it, and refuse (nil) if its size says it has become anything else.

/// The box `container` stores, or nil if `KeyedDecodingContainer` is not one reference.
@inline(__always)
func storageObject<Key>(of container: KeyedDecodingContainer<Key>) -> AnyObject? {
    guard MemoryLayout<KeyedDecodingContainer<Key>>.size == MemoryLayout<AnyObject>.size,
        MemoryLayout<KeyedDecodingContainer<Key>>.alignment == MemoryLayout<AnyObject>.alignment
    else { return nil }
    let storage = unsafeBitCast(container, to: AnyObject.self)
    assert(String(describing: type(of: storage)).hasPrefix("_KeyedDecodingContainerBox"), "\(type(of: storage))")
    return storage
}

/// The container whose box is `storage`.
///
/// - Precondition: `storage` came from ``storageObject(of:)`` for a container keyed by `Key`.
@inline(__always)
func keyedDecodingContainer<Key>(storage: AnyObject, keyedBy _: Key.Type) -> KeyedDecodingContainer<Key> {
    unsafeBitCast(storage, to: KeyedDecodingContainer<Key>.self)
}
