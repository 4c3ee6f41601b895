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
        /// The place of the container in the box, to repoint (the container only lends it).
        let container: HeldReference<CodableKeyedContainerPlace>
        /// The `KeyedContainerRebuilder` of the container's type, which makes the container
        /// from its box.
        let rebuilder: HeldReference<AnyObject>
        /// The container only lends its place: see `release()`.
        let lendsPlace: Bool

        /// The container, of type `Container` (the one it was made as), pointed at `frame`.
        @inline(__always)
        func reused<Container>(as _: Container.Type, frame: Int, serial: Int) -> Container {
            container.withObject { $0.point(at: frame, serial: serial) }
            return storage.withObject { storage in
                rebuilder.withObject { KeyedContainerRebuilder<Container>.rebuild(storage, with: $0) }
            }
        }
    }

    /// Containers of one key type live at once (nesting of one type), beyond which new ones are
    /// not cached: enough for the usual shapes, and the search stays short.
    static let capacity = 16

    /// The first container kept, held apart from `entries`: a model's objects ask for the same
    /// key type object after object, and handing this one out again skips the array's
    /// uniqueness and bounds checks (callgrind: about 20 instructions a container).
    private var first: Entry?
    private(set) var entries: ContiguousArray<Entry> = []

    /// The container of type `Container` keyed by `Key` over `frame` of `coder`: a cached one
    /// nobody else holds, repointed, or else the one `make` builds around a new place, kept to
    /// hand out again. `lending`: a container kept only lends its place (see
    /// `CodableKeyedPlaceReference`), which pays where the standard library's box copies the
    /// container for each call (decoding), not where it calls it in place (encoding).
    @inline(__always)
    mutating func container<Key, Coder: AnyObject, Container>(
        keyedBy _: Key.Type,
        coder: Coder,
        lending: Bool,
        frame: Int,
        serial: Int,
        make: (CodableKeyedPlaceReference<Coder>) -> Container
    ) -> Container {
        // The entry for `Key` was made for `Container`: a coder asks for one type per key.
        if first?.key == ObjectIdentifier(Key.self) && first!.storage.isUniquelyHeld() {
            return first!.reused(as: Container.self, frame: frame, serial: serial)
        }
        guard let index = unheldEntry(ObjectIdentifier(Key.self)) else {
            return keepNew(make, coder: coder, frame: frame, serial: serial, lending: lending, key: Key.self)
        }
        return entries[index].reused(as: Container.self, frame: frame, serial: serial)
    }

    /// The entry of the cached container keyed by `key` that nobody else holds.
    @inline(__always)
    private mutating func unheldEntry(_ key: ObjectIdentifier) -> Int? {
        for index in entries.indices where entries[index].key == key {
            if entries[index].storage.isUniquelyHeld() { return index }
        }
        return nil
    }

    /// Makes a new container around a new place over `frame` of `coder` and keeps it, unless
    /// the cache is full. Out of line: a temporary of `Container` here would make every call
    /// look up its metadata, and a new place's key slots, made here, a stack buffer and its
    /// guard (callgrind: about 6 instructions a call).
    @inline(never)
    private mutating func keepNew<Coder, Key, Container>(
        _ make: (CodableKeyedPlaceReference<Coder>) -> Container,
        coder: Coder,
        frame: Int,
        serial: Int,
        lending: Bool,
        key: Key.Type
    ) -> Container {
        let place = CodableKeyedPlace(coder: coder, frame: frame, serial: serial)
        let kept = entries.count + (first == nil ? 0 : 1)
        guard kept < Self.capacity && isStorageObjectLayout(Container.self) else {
            return make(CodableKeyedPlaceReference(owning: place))
        }
        // Kept: the container may leave its place to the cache. The guard checked its layout.
        let container = make(lending ? CodableKeyedPlaceReference(lending: place) : .init(owning: place))
        let entry = Entry(
            key: ObjectIdentifier(key),
            storage: HeldReference(storageObject(of: container)),
            container: HeldReference(place),
            rebuilder: HeldReference(KeyedContainerRebuilder<Container>()),
            lendsPlace: lending
        )
        if first == nil {
            first = entry
        } else {
            entries.append(entry)
        }
        return container
    }

    /// Drops the containers: each refers to its coder, which must not keep itself alive. A
    /// container kept by a value still finds its (finished) frame, which refuses to be used;
    /// `LentObjects` keeps the place of one that only lends it as long as its box is held.
    mutating func release() {
        LentObjects.sweep()
        if let entry = first.take() { entries.append(entry) }
        for index in entries.indices where entries[index].lendsPlace && !entries[index].storage.isUniquelyHeld() {
            LentObjects.keep(entries[index].container.object, whileHeld: entries[index].storage.object)
        }
        entries.removeAll()
    }
}

/// Where a keyed container reads or writes: a frame and its serial number in its coder's state,
/// and the slots its keys were last found at (`CodableKeySlots`).
///
/// A class, so that the standard library's `_KeyedDecodingContainerBox` and
/// `_KeyedEncodingContainerBox`, which run unspecialized and copy their container for every
/// call, copy one reference rather than a struct of several fields through its value
/// witnesses (callgrind: about 70 instructions a call for the copy and its destruction), and
/// so that a coder's cache repoints a container it hands out again in place.
///
/// Unchecked (`UncheckedCell`): changed only by the coder's cache, between values, when nothing
/// else holds the container, and by its own short calls.
class CodableKeyedContainerPlace: UncheckedCell<CodableKeyedContainerPlace.State> {
    struct State {
        var frame: Int
        var serial: Int
        var keySlots = CodableKeySlots()
    }

    final var frame: Int { value.frame }
    final var serial: Int { value.serial }

    init(frame: Int, serial: Int) {
        super.init(State(frame: frame, serial: serial))
    }

    /// Makes the container use `frame` from now on. Its key slots stay: a place serves one key
    /// type of one coder.
    final func point(at frame: Int, serial: Int) {
        value.frame = frame
        value.serial = serial
    }

    /// The key slot the key of bits `bits` was last found at, or -1 (see `CodableKeySlots`).
    @inline(__always)
    final func keySlot(for bits: UInt64) -> Int {
        value.keySlots.slot(for: bits)
    }

    /// Notes that the key of bits `bits` was found at key slot `slot`.
    @inline(__always)
    final func remember(_ slot: Int, for bits: UInt64) {
        value.keySlots.remember(slot, for: bits)
    }
}

/// Where the keys of a keyed container were last found, by their bits (`plainKeyBits`): the
/// slot of the coder's shape keys (`EncodingState.shapeKeyBits`, `ArchiveTables.shapeKeys`)
/// that held the key's string. A key whose bits map to the slot a record expects next is that
/// slot's key without a call to its `stringValue` and a release of the string: about 30
/// instructions a key (callgrind, the benchmark's `CodingKeys`).
///
/// Sound only because a place serves one key type (the bits of another type may mean another
/// key) and because a `stringValue` of a plain key type is taken to be a function of the key's
/// value, as CodableBridge.md says. Keys of any other type have no bits and are not cached.
struct CodableKeySlots {
    /// Entries, one per bits modulo the count: the cases of an enum of up to 8 keys, or
    /// integer keys 0 to 7, each have their own.
    private static let count = 8
    /// Entry `i`'s key bits at `2 * i` and its slot at `2 * i + 1`.
    private var entries = InlineArray<16, UInt64>(repeating: UInt64(bitPattern: -1))

    /// The slot the key of bits `bits` was last found at, or -1. Mutating, though it changes
    /// nothing, so that it reads the entries where they lie: a plain read copied them all.
    @inline(__always)
    mutating func slot(for bits: UInt64) -> Int {
        let entry = (Int(truncatingIfNeeded: bits) & (Self.count - 1)) &* 2
        guard entries[entry] == bits else { return -1 }
        return Int(truncatingIfNeeded: entries[entry &+ 1])
    }

    @inline(__always)
    mutating func remember(_ slot: Int, for bits: UInt64) {
        let entry = (Int(truncatingIfNeeded: bits) & (Self.count - 1)) &* 2
        entries[entry] = bits
        entries[entry &+ 1] = UInt64(truncatingIfNeeded: slot)
    }
}

/// The place of a keyed container of `Coder` (`CodableEncoder` or `CodableDecoder`).
final class CodableKeyedPlace<Coder: AnyObject>: CodableKeyedContainerPlace {
    let coder: Coder

    init(coder: Coder, frame: Int, serial: Int) {
        self.coder = coder
        super.init(frame: frame, serial: serial)
    }
}

/// How a keyed container of `Coder` refers to its place: lent by the coder's cache, or held.
///
/// The standard library's box copies its container for every call (see
/// `CodableKeyedContainerPlace`). A container the coder's cache keeps for reuse only lends its
/// place: the cache holds the place as long as the coder runs, and past it as long as anything
/// holds the container's box (see `CodableKeyedContainerCache.release()`). A copy of it is
/// then a plain word and a nil reference, where a copy of the place's reference was a retain
/// and a release, two atomic operations for every value coded through the container. Any
/// other container holds its place.
struct CodableKeyedPlaceReference<Coder: AnyObject> {
    private let place: LentReference<CodableKeyedPlace<Coder>>
    /// The place, held, unless the coder's cache holds it.
    private let owner: CodableKeyedPlace<Coder>?

    /// A reference that holds `place`.
    init(owning place: CodableKeyedPlace<Coder>) {
        self.place = LentReference(place)
        owner = place
    }

    /// A reference that holds a new place, over `frame` of `coder`.
    init(owning coder: Coder, frame: Int, serial: Int) {
        self.init(owning: CodableKeyedPlace(coder: coder, frame: frame, serial: serial))
    }

    /// A reference to `place`, which the caller keeps alive for as long as the reference (or a
    /// copy of it) may be used.
    init(lending place: CodableKeyedPlace<Coder>) {
        self.place = LentReference(place)
        owner = nil
    }

    /// The place, when the coder's cache holds it (`init(lending:)`); nil when this holds it.
    var lentPlace: LentReference<CodableKeyedPlace<Coder>>? { owner == nil ? place : nil }

    /// Calls `body` with the coder and the place's frame and serial.
    @inline(__always)
    func withFrame<R>(_ body: (_ coder: Coder, _ frame: Int, _ serial: Int) throws -> R) rethrows -> R {
        try place.withObject { try body($0.coder, $0.frame, $0.serial) }
    }

    /// Calls `body` with the place.
    @inline(__always)
    func withPlace<R>(_ body: (CodableKeyedPlace<Coder>) throws -> R) rethrows -> R {
        try place.withObject(body)
    }
}
