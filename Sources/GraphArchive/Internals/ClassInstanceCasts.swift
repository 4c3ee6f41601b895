// Sources/GraphArchive/Internals/ClassInstanceCasts.swift - class instances of a generic type, without runtime casts
//
// The Codable bridge handles values of an unspecialized generic `T` that it has found to be a
// class. `value as AnyObject` then goes through the runtime's bridging cast
// (`_bridgeAnythingToObjectiveC`, conformance lookups included), which perf put at a fifth of
// the Codable encode of a million records; `object as? T` pays a dynamic cast as well. A
// class instance already is a single reference, so these reinterpret it instead.

/// Calls `body` with `value` as `AnyObject`, lent rather than copied: a new reference would be
/// a retain and a release (atomic, and a write to the object's header) around a use that needs
/// none, such as looking the object up or reading its class.
///
/// - Precondition: `T` is a class type (checked only in debug builds).
@inline(__always)
func withClassInstance<T, Result>(_ value: T, _ body: (AnyObject) throws -> Result) rethrows -> Result {
    assert(T.self is AnyClass, "\(T.self) is not a class")
    // The reference's bits, read as a plain word: no retain. `value` holds the object.
    return try withObject(at: unsafeBitCast(value, to: UInt.self), body)
}

/// Calls `body` with the object whose address is `address` (a class reference's bits, as
/// `Array.withClassElementAddresses` reads them), lent: no retain, no access to the object.
///
/// - Precondition: something else holds the object for the whole call.
@inline(__always)
func withObject<Result>(at address: UInt, _ body: (AnyObject) throws -> Result) rethrows -> Result {
    guard let pointer = UnsafeRawPointer(bitPattern: address) else {
        preconditionFailure("an object's address is never 0")
    }
    return try Unmanaged<AnyObject>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
}

/// Calls `body` with the object at `address` as a `T`, an instance of class `T` or of a
/// subclass of it, lent: ``withObject(at:_:)`` for a class-constrained `T`, whose object
/// ``classReference(at:as:)`` would retain for the call and release after.
///
/// - Precondition: something else holds the object for the whole call.
@inline(__always)
func withObject<T: AnyObject, Result>(at address: UInt, as _: T.Type, _ body: (T) throws -> Result) rethrows
    -> Result
{
    guard let pointer = UnsafeRawPointer(bitPattern: address) else {
        preconditionFailure("an object's address is never 0")
    }
    return try Unmanaged<T>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
}

/// A new reference, as `T`, to the object at `address`, an instance of class `T` or of a
/// subclass of it (an element of a `[T]`, whose address `Array.withClassElementAddresses` read).
///
/// - Precondition: `T` is a class type, and something else holds the object for the call.
@inline(__always)
func classReference<T>(at address: UInt, as _: T.Type) -> T {
    withObject(at: address) { object in
        assert(object is T, "\(type(of: object)) is not \(T.self)")
        return unsafeBitCast(object, to: T.self)
    }
}

/// Whether `object`'s class is exactly `T` (no runtime cast, no `Optional<T>` metadata).
@inlinable @inline(__always)
func isInstance<T>(_ object: AnyObject, ofExactly _: T.Type) -> Bool {
    ObjectIdentifier(type(of: object)) == ObjectIdentifier(T.self)
}

/// `object` as `T`.
///
/// - Precondition: `isInstance(object, ofExactly: T.self)` (checked only in debug builds).
@inlinable @inline(__always)
func classInstance<T>(_ object: AnyObject, as _: T.Type) -> T {
    assert(isInstance(object, ofExactly: T.self))
    return unsafeBitCast(object, to: T.self)
}

extension Array {
    /// The array as `[Other]`, when `Other` is `Element` itself under another name (a generic
    /// parameter the caller knows to be the same type): no copy, no cast per element.
    ///
    /// - Precondition: `Other` is `Element`.
    @inline(__always)
    func reinterpreted<Other>(as _: Other.Type) -> [Other] {
        precondition(
            ObjectIdentifier(Element.self) == ObjectIdentifier(Other.self),
            "\(Element.self) is not \(Other.self)"
        )
        return unsafeBitCast(self, to: [Other].self)
    }
}

/// `value` as `Other`, when `Other` is `Value` itself under another name (a generic parameter
/// the caller knows to be the same type): a copy, where `value as! Other` was a runtime cast
/// (callgrind: about 80 instructions a value, about 290 to an existential).
///
/// - Precondition: `Other` is `Value` (checked only in debug builds).
@inline(__always)
func reinterpreted<Value, Other>(_ value: Value, as _: Other.Type) -> Other {
    assert(ObjectIdentifier(Value.self) == ObjectIdentifier(Other.self), "\(Value.self) is not \(Other.self)")
    return unsafeBitCast(value, to: Other.self)
}
