// Sources/GraphArchive/Internals/ErasedAssignment.swift - a decodeLater closure with its value type erased

/// A `decodeLater` closure `(T) throws -> Void` held without its `T`, so that a queue of them
/// needs no type made at run time per request.
///
/// Held as a generic wrapper in an existential, each request looked up the wrapper's metadata
/// for its `T` (callgrind: about 200 instructions a request, two a node of the cycles
/// benchmark). The closure is kept in a ``Holder`` instead, whose layout is the same for every
/// `T` (a function value: a code pointer and a context, copied and destroyed alike), as a
/// holder of `Never`, and given back as a holder of its own `T`: nothing is allocated, and
/// nothing is looked up.
struct ErasedAssignment {
    /// The closure in its field: a function of `T`, whatever `T`, at the same abstraction.
    private struct Holder<Value> {
        let assign: (Value) throws -> Void
    }

    /// A closure of an object and the value assigned to it: a function value too, of the same
    /// layout. Its parameters are constrained as those of the `decodeLater` forms that make
    /// them, so that their closures are held as they are passed: a closure of another
    /// abstraction (an unconstrained `Owner`, passed indirectly) is wrapped in a thunk, which
    /// allocates its context per request.
    private struct PairHolder<Owner: AnyObject, Value> {
        let assign: (Owner, Value) throws -> Void
    }

    /// A closure of an object and an optional reference (see `PairHolder`); `Target?` is never
    /// a type argument, whose metadata would be looked up per request (callgrind: about 330
    /// instructions each).
    private struct ReferenceHolder<Owner: AnyObject, Target: AnyObject> {
        let assign: (Owner, Target?) throws -> Void
    }

    /// The holder, reinterpreted; its closure never called as this type.
    private let holder: Holder<Never>

    private init(holder: Holder<Never>) {
        self.holder = holder
    }

    /// A closure that holds nothing, for a slot whose request has been taken.
    static var none: ErasedAssignment {
        ErasedAssignment(holder: Holder(assign: { _ in }))
    }

    init<T>(_ assign: @escaping (T) throws -> Void) {
        holder = unsafeBitCast(Holder(assign: assign), to: Holder<Never>.self)
    }

    init<Owner: AnyObject, T>(_ assign: @escaping (Owner, T) throws -> Void) {
        holder = unsafeBitCast(PairHolder(assign: assign), to: Holder<Never>.self)
    }

    @inline(__always)
    init<Owner: AnyObject, Target: AnyObject>(reference assign: @escaping (Owner, Target?) throws -> Void) {
        holder = unsafeBitCast(ReferenceHolder(assign: assign), to: Holder<Never>.self)
    }

    /// The closure as plain bits, if it captures nothing: its code, with no context to keep
    /// alive, so that a queue of requests can hold it without copying and destroying a closure
    /// per request (callgrind: about 110 instructions a request on the cycles benchmark).
    @inline(__always)
    var plain: PlainAssignment? {
        let (code, context) = unsafeBitCast(holder, to: (UInt, UInt).self)
        return context == 0 && code != 0 ? PlainAssignment(code: code) : nil
    }

    /// The closure that captures nothing whose bits `plain` holds.
    @inline(__always)
    init(_ plain: PlainAssignment) {
        holder = unsafeBitCast((plain.code, UInt(0)), to: Holder<Never>.self)
    }

    /// The closure as it was made. `T` must be the type it was made with.
    consuming func assignment<T>(as _: T.Type) -> (T) throws -> Void {
        unsafeBitCast(holder, to: Holder<T>.self).assign
    }

    /// The closure of two values as it was made. `Owner` and `T` must be the types it was made with.
    consuming func assignment<Owner: AnyObject, T>(as _: Owner.Type, _: T.Type) -> (Owner, T) throws -> Void {
        unsafeBitCast(holder, to: PairHolder<Owner, T>.self).assign
    }

    /// The closure of an object and an optional reference as it was made (`init(reference:)`),
    /// `Owner` and `Target` the types it was made with.
    @inline(__always)
    consuming func referenceAssignment<Owner: AnyObject, Target: AnyObject>(
        as _: Owner.Type,
        _: Target.Type
    ) -> (Owner, Target?) throws -> Void {
        unsafeBitCast(holder, to: ReferenceHolder<Owner, Target>.self).assign
    }
}

/// An ``ErasedAssignment`` whose closure captures nothing, as its code's address: trivially
/// copied and destroyed, and the same for every request of one closure.
struct PlainAssignment: BitwiseCopyable {
    fileprivate let code: UInt
}
