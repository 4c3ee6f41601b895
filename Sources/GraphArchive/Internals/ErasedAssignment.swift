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

        @inline(__always)
        init(assign: @escaping (Value) throws -> Void) {
            self.assign = assign
        }
    }

    /// A closure of an object and the value assigned to it: a function value too, of the same
    /// layout. Its parameters are constrained as those of the `decodeLater` forms that make
    /// them, so that their closures are held as they are passed: a closure of another
    /// abstraction (an unconstrained `Owner`, passed indirectly) is wrapped in a thunk, which
    /// allocates its context per request.
    private struct PairHolder<Owner: AnyObject, Value> {
        let assign: (Owner, Value) throws -> Void

        @inline(__always)
        init(assign: @escaping (Owner, Value) throws -> Void) {
            self.assign = assign
        }
    }

    /// A closure of an object and an optional reference (see `PairHolder`); `Target?` is never
    /// a type argument, whose metadata would be looked up per request (callgrind: about 330
    /// instructions each).
    private struct ReferenceHolder<Owner: AnyObject, Target: AnyObject> {
        let assign: (Owner, Target?) throws -> Void

        @inline(__always)
        init(assign: @escaping (Owner, Target?) throws -> Void) {
            self.assign = assign
        }
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

    @inline(__always)
    init<T>(_ assign: @escaping (T) throws -> Void) {
        holder = unsafeBitCast(Holder(assign: assign), to: Holder<Never>.self)
    }

    @inline(__always)
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

    /// The closure that captures nothing whose code `plain` holds, made at its call: its
    /// context a constant nil, which nothing retains or releases. `T` must be the type it was
    /// made with.
    @inline(__always)
    static func assignment<T>(_ plain: PlainAssignment, as _: T.Type) -> (T) throws -> Void {
        unsafeBitCast((plain.code, UInt(0)), to: Holder<T>.self).assign
    }

    /// The same for a closure of two values (`init(_:)` of an `Owner` and a `T`).
    @inline(__always)
    static func assignment<Owner: AnyObject, T>(
        _ plain: PlainAssignment,
        as _: Owner.Type,
        _: T.Type
    ) -> (Owner, T) throws -> Void {
        unsafeBitCast((plain.code, UInt(0)), to: PairHolder<Owner, T>.self).assign
    }

    /// The same for a closure of an object and an optional reference (`init(reference:)`).
    @inline(__always)
    static func referenceAssignment<Owner: AnyObject, Target: AnyObject>(
        _ plain: PlainAssignment,
        as _: Owner.Type,
        _: Target.Type
    ) -> (Owner, Target?) throws -> Void {
        unsafeBitCast((plain.code, UInt(0)), to: ReferenceHolder<Owner, Target>.self).assign
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

/// A `decodeLater` request's closure on its way to its queue and back to the call: its code
/// alone (`PlainAssignment`) when it captures nothing, else the closure.
///
/// Carried as an ``ErasedAssignment`` whatever it captured, a closure of no context was still
/// copied into one and destroyed, then made again from its code and copied out of it to be
/// called: each copy retained and each destroy released the nil context, runtime calls that
/// did nothing (callgrind: about 55 instructions a request, two requests a node of the
/// cycles benchmark). Made from its code where it is called (`ErasedAssignment.assignment`),
/// its context is a constant nil, which nothing retains or releases.
enum QueuedAssignment {
    case plain(PlainAssignment)
    case closure(ErasedAssignment)

    /// `assign`, as its code alone if it captures nothing.
    @inline(__always)
    private init(_ assign: consuming ErasedAssignment) {
        if let plain = assign.plain {
            self = .plain(plain)
        } else {
            self = .closure(assign)
        }
    }

    @inline(__always)
    init<T>(_ assign: @escaping (T) throws -> Void) {
        self.init(ErasedAssignment(assign))
    }

    @inline(__always)
    init<Owner: AnyObject, T>(_ assign: @escaping (Owner, T) throws -> Void) {
        self.init(ErasedAssignment(assign))
    }

    @inline(__always)
    init<Owner: AnyObject, Target: AnyObject>(reference assign: @escaping (Owner, Target?) throws -> Void) {
        self.init(ErasedAssignment(reference: assign))
    }

    /// The code, if the closure captures nothing.
    var plainCode: PlainAssignment? {
        if case .plain(let plain) = self { return plain }
        return nil
    }

    /// The closure of a value (`ErasedAssignment.init(_:)` of a `T`).
    @inline(__always)
    consuming func assignment<T>(as _: T.Type) -> (T) throws -> Void {
        switch consume self {
        case .plain(let plain): ErasedAssignment.assignment(plain, as: T.self)
        case .closure(let assign): assign.assignment(as: T.self)
        }
    }

    /// The closure of an object and a value.
    @inline(__always)
    consuming func assignment<Owner: AnyObject, T>(as _: Owner.Type, _: T.Type) -> (Owner, T) throws -> Void {
        switch consume self {
        case .plain(let plain): ErasedAssignment.assignment(plain, as: Owner.self, T.self)
        case .closure(let assign): assign.assignment(as: Owner.self, T.self)
        }
    }
}
