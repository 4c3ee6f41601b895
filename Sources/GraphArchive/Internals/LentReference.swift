// Sources/GraphArchive/Internals/LentReference.swift - references lent, not copied, to their uses

/// A strong reference that its uses borrow without a retain and a release.
///
/// Reading a class reference out of an array element or another stored property to call a
/// method on it retains it for the call and releases it after: two atomic operations (a
/// callgrind count hides what they cost in time). `HeldReference` keeps the reference that
/// holds the object and lends it, unretained, to `withObject`'s body, while it holds it.
struct HeldReference<Object: AnyObject> {
    /// The reference that keeps the object alive.
    private(set) var object: Object
    private let lent: LentReference<Object>

    init(_ object: Object) {
        self.object = object
        lent = LentReference(object)
    }

    /// Calls `body` with the object, not retained for the call.
    @inline(__always)
    func withObject<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        try lent.withObject(body)
    }

    /// Whether this is the object's only strong reference.
    @inline(__always)
    mutating func isUniquelyHeld() -> Bool {
        isKnownUniquelyReferenced(&object)
    }
}

/// A reference that does not hold its object: one plain word, which copying neither retains
/// nor releases. Whoever makes one keeps the object alive for as long as any copy is used
/// (see ``LentObjects`` for a copy that may outlive its maker).
struct LentReference<Object: AnyObject> {
    private let lent: Unmanaged<Object>

    @inline(__always)
    init(_ object: Object) {
        lent = Unmanaged.passUnretained(object)
    }

    /// The object at `address`, which something else keeps alive (an array's element, see
    /// ``BorrowedObjects``).
    @inline(__always)
    fileprivate init(address: UInt) {
        // An array's element: never nil, and not checked again for each one.
        lent = Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: address).unsafelyUnwrapped)
    }

    /// The object's address: its `ObjectIdentifier`'s bits.
    @inline(__always)
    var address: UInt { UInt(bitPattern: lent.toOpaque()) }

    /// The object's address as a pointer.
    @inline(__always)
    var pointer: UnsafeRawPointer { UnsafeRawPointer(lent.toOpaque()) }

    /// Calls `body` with the object, not retained for the call.
    @inline(__always)
    func withObject<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        try lent._withUnsafeGuaranteedRef(body)
    }

    /// Adds a strong reference to the object, which its taker releases.
    @inline(__always)
    func retain() {
        _ = lent.retain()
    }
}

/// A strong reference its caller gave up, held as one plain word until it is given up again
/// (to a holder that releases it later: the identity table) or, when dropped, released.
struct OwnedReference<Object: AnyObject>: ~Copyable {
    private let owned: Unmanaged<Object>

    /// Takes `object`'s reference: with the caller's copy consumed, no retain is left.
    @inline(__always)
    init(_ object: consuming Object) {
        owned = Unmanaged.passRetained(object)
    }

    /// The object, lent for as long as this holds it.
    @inline(__always)
    var lent: LentReference<Object> { LentReference(owned.takeUnretainedValue()) }

    /// Leaves the reference to whoever took the object's address from `lent`: not released.
    @inline(__always)
    consuming func giveUp() {
        discard self
    }

    deinit {
        owned.release()
    }
}

extension BorrowedObjects {
    /// Object `position` (below `count`), lent: no retain.
    @inline(__always)
    func lent(at position: Int) -> LentReference<Object> {
        LentReference(address: addresses[position])
    }
}

/// Objects kept alive for `LentReference`s that outlived what held their objects: each object
/// stays as long as its holder, an object that stores such references, is held by anyone else.
///
/// A coder's cache lends its containers' places (see `CodableKeyedContainerCache`); a container
/// a value kept past the decode still refers to its place, which then lives here until a later
/// sweep finds the container's box dropped.
enum LentObjects {
    private static let kept = Locked<[(holder: AnyObject, lent: AnyObject)]>([])

    /// Keeps `lent` alive while anything but this keeper holds `holder`.
    static func keep(_ lent: AnyObject, whileHeld holder: AnyObject) {
        kept.withLock { $0.append((holder, lent)) }
    }

    /// Lets go of the objects whose holders nobody else holds any more.
    static func sweep() {
        kept.withLock { pairs in
            guard !pairs.isEmpty else { return }
            var index = 0
            while index < pairs.count {
                if isKnownUniquelyReferenced(&pairs[index].holder) {
                    pairs.swapAt(index, pairs.count - 1)
                    pairs.removeLast()
                } else {
                    index += 1
                }
            }
        }
    }
}
