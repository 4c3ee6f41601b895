// Sources/GraphArchive/Internals/LentReference.swift - a held reference that is lent, not copied, to its uses

/// A strong reference that its uses borrow without a retain and a release.
///
/// Reading a class reference out of an array element or another stored property to call a
/// method on it retains it for the call and releases it after: two atomic operations (a
/// callgrind count hides what they cost in time). `HeldReference` keeps the reference that
/// holds the object and lends it, unretained, to `withObject`'s body, while it holds it.
struct HeldReference<Object: AnyObject> {
    /// The reference that keeps the object alive.
    private(set) var object: Object
    private let lent: Unmanaged<Object>

    init(_ object: Object) {
        self.object = object
        lent = Unmanaged.passUnretained(object)
    }

    /// Calls `body` with the object, not retained for the call.
    @inline(__always)
    func withObject<Result>(_ body: (Object) throws -> Result) rethrows -> Result {
        try lent._withUnsafeGuaranteedRef(body)
    }

    /// Whether this is the object's only strong reference.
    @inline(__always)
    mutating func isUniquelyHeld() -> Bool {
        isKnownUniquelyReferenced(&object)
    }
}
