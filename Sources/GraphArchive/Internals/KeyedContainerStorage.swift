// Sources/GraphArchive/Internals/KeyedContainerStorage.swift - a keyed container as its one storage object
//
// `KeyedEncodingContainer<Key>` and `KeyedDecodingContainer<Key>` wrap a coder's container in a
// heap box, created per `container(keyedBy:)` call by generic code the caller's `Key` cannot
// specialize: callgrind put the box's metadata lookups, allocation and release at over a
// quarter of decoding the benchmark's Codable grid states, and a fifth of encoding them. The
// bridge therefore reuses a container once nobody else holds it, which it can only see from
// the box's reference count. The standard library's keyed containers are structs whose only
// stored property is that box (`_box`); these reinterpret one, and the bridge uses them only
// after `isStorageObjectLayout` said its size has not become anything else.

/// The box `container` (a `KeyedEncodingContainer` or `KeyedDecodingContainer`) stores.
///
/// - Precondition: `isStorageObjectLayout(Container.self)`.
@inline(__always)
func storageObject<Container>(of container: Container) -> AnyObject {
    let storage = unsafeBitCast(container, to: AnyObject.self)
    assert(String(describing: type(of: storage)).hasPrefix("_Keyed"), "\(type(of: storage))")
    return storage
}

/// Whether a `Container` has the size and alignment of one reference (see ``storageObject(of:)``).
@inline(__always)
func isStorageObjectLayout<Container>(_: Container.Type) -> Bool {
    MemoryLayout<Container>.size == MemoryLayout<AnyObject>.size
        && MemoryLayout<Container>.alignment == MemoryLayout<AnyObject>.alignment
}

/// The container of type `Container` whose box is `storage`.
///
/// - Precondition: `storage` came from ``storageObject(of:)`` for a container of type `Container`.
@inline(__always)
func keyedContainer<Container>(storage: AnyObject, as _: Container.Type) -> Container {
    unsafeBitCast(storage, to: Container.self)
}

/// Turns a box back into its container of type `Container` (see ``keyedContainer(storage:as:)``)
/// without looking up `Container`'s metadata: an instance's class keeps that metadata.
///
/// A coder's `container(keyedBy:)` is generic over a `Key` known only at run time, so naming
/// `KeyedDecodingContainer<Key>` (or `KeyedEncodingContainer<Key>`), a resilient type of the
/// standard library, there costs a generic metadata lookup: a hash table search, about 220
/// instructions a call (callgrind, the benchmark's Codable grid states), for every object
/// coded. A container handed out again is returned by ``rebuild``, through which it is written
/// straight into the caller's result.
final class KeyedContainerRebuilder<Container> {
    /// The container whose box is `storage`.
    ///
    /// - Precondition: as for ``keyedContainer(storage:as:)``.
    func rebuild(_ storage: AnyObject) -> Container {
        keyedContainer(storage: storage, as: Container.self)
    }

    /// The container whose box is `storage`, made by `rebuilder`, a rebuilder made for `Container`.
    ///
    /// - Precondition: `rebuilder` is a `KeyedContainerRebuilder<Container>`.
    @inline(__always)
    static func rebuild(_ storage: AnyObject, with rebuilder: AnyObject) -> Container {
        unsafeDowncast(rebuilder, to: KeyedContainerRebuilder<Container>.self).rebuild(storage)
    }
}
