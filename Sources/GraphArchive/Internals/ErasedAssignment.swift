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

    /// The closure as it was made. `T` must be the type it was made with.
    consuming func assignment<T>(as _: T.Type) -> (T) throws -> Void {
        unsafeBitCast(holder, to: Holder<T>.self).assign
    }
}
