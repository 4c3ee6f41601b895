// Sources/GraphArchive/Codable/CodableKeyedContainerCache.swift - keyed containers handed out again

/// Keyed containers a coder has made, handed out again by later `container(keyedBy:)` calls
/// with the same key type once nobody else holds them. The encoder and the decoder each keep one.
///
/// A `KeyedEncodingContainer` or `KeyedDecodingContainer` boxes the coder's container on the
/// heap, and making one from a `Key` known only at run time costs two generic metadata
/// lookups, a witness table lookup, an allocation and a release: about 1,500 of the 5,400
/// instructions callgrind counted per object decoded of the benchmark's Codable grid states
/// (name, color, date), and about 1,000 of 4,200 per object encoded. Reusing a container
/// leaves no metadata lookup (see `KeyedContainerRebuilder`). A cached container is repointed at
/// the new frame when it is reused. It is reused only while this cache holds its box's one
/// reference, so a container a value still holds (a parent's, while its children are coded,
/// or one kept past `init(from:)` or `encode(to:)`) is never pointed anywhere else.
struct CodableKeyedContainerCache {
    /// Its references are lent to their uses (`HeldReference`), so that handing a container out
    /// retains only the box it returns.
    struct Entry {
        let key: ObjectIdentifier
        /// The container's box (see `storageObject(of:)`).
        var storage: HeldReference<AnyObject>
        /// The container in the box, to repoint.
        let container: HeldReference<CodableKeyedContainerPlace>
        /// The `KeyedContainerRebuilder` of the container's type, which makes the container
        /// from its box.
        let rebuilder: HeldReference<AnyObject>
    }

    /// Containers of one key type live at once (nesting of one type), beyond which new ones are
    /// not cached: enough for the usual shapes, and the search stays short.
    static let capacity = 16

    private(set) var entries: ContiguousArray<Entry> = []

    /// The container of type `Container` keyed by `Key` over `frame`: a cached one nobody else
    /// holds, repointed, or else the one `make` builds (its place and the container around it),
    /// kept to hand out again.
    @inline(__always)
    mutating func container<Key, Container>(
        keyedBy _: Key.Type,
        frame: Int,
        serial: Int,
        make: () -> (place: CodableKeyedContainerPlace, container: Container)
    ) -> Container {
        guard let index = reuse(ObjectIdentifier(Key.self), frame: frame, serial: serial) else {
            return keepNew(make, key: ObjectIdentifier(Key.self))
        }
        // The entry for `Key` was made for `Container`: a coder asks for one type per key.
        return entries[index].storage.withObject { storage in
            entries[index].rebuilder.withObject { KeyedContainerRebuilder<Container>.rebuild(storage, with: $0) }
        }
    }

    /// The entry of the cached container keyed by `key` that nobody else holds, pointed at `frame`.
    @inline(__always)
    private mutating func reuse(_ key: ObjectIdentifier, frame: Int, serial: Int) -> Int? {
        for index in entries.indices where entries[index].key == key {
            if entries[index].storage.isUniquelyHeld() {
                entries[index].container.withObject { $0.point(at: frame, serial: serial) }
                return index
            }
        }
        return nil
    }

    /// Makes a new container and keeps it, unless the cache is full. Out of line: a temporary
    /// of `Container` here would make every call look up its metadata.
    @inline(never)
    private mutating func keepNew<Container>(
        _ make: () -> (place: CodableKeyedContainerPlace, container: Container),
        key: ObjectIdentifier
    ) -> Container {
        let made = make()
        if entries.count < Self.capacity, let storage = storageObject(of: made.container) {
            entries.append(
                Entry(
                    key: key,
                    storage: HeldReference(storage),
                    container: HeldReference(made.place),
                    rebuilder: HeldReference(KeyedContainerRebuilder<Container>())
                )
            )
        }
        return made.container
    }

    /// Drops the containers: each refers to its coder, which must not keep itself alive. A
    /// container kept by a value still finds its (finished) frame, which refuses to be used.
    mutating func release() {
        entries.removeAll()
    }
}

/// Where a keyed container reads or writes: a frame and its serial number in its coder's state.
///
/// A class, so that the standard library's `_KeyedDecodingContainerBox` and
/// `_KeyedEncodingContainerBox`, which run unspecialized and copy their container for every
/// call, copy one reference rather than a struct of several fields through its value
/// witnesses (callgrind: about 70 instructions a call for the copy and its destruction), and
/// so that a coder's cache repoints a container it hands out again in place.
///
/// Unchecked (`UncheckedCell`): changed only by the coder's cache, between values, when nothing
/// else holds the container; read by its own short calls.
class CodableKeyedContainerPlace: UncheckedCell<(frame: Int, serial: Int)> {
    final var frame: Int { value.frame }
    final var serial: Int { value.serial }

    init(frame: Int, serial: Int) {
        super.init((frame, serial))
    }

    /// Makes the container use `frame` from now on.
    final func point(at frame: Int, serial: Int) {
        value = (frame, serial)
    }
}
