// Sources/GraphArchive/Internals/UncheckedStateBox.swift - hot mutable state without dynamic exclusivity checks

/// Heap storage for an archiver's or unarchiver's state, reached through an addressor.
///
/// A stored `var` of a class pays a dynamic exclusivity check (`swift_beginAccess`) on every
/// access; callgrind showed those checks at over 10% of a 1M-record encode, since every
/// `encode(_:forKey:)` touches the state. The state is only ever mutated by the engine's own
/// short, non-reentrant methods (user code runs between them, never inside them), so the
/// dynamic check guards nothing here. The owner exposes the state through
/// `unsafeAddress`/`unsafeMutableAddress`, which the compiler does not instrument.
final class UncheckedStateBox<State: ~Copyable> {
    let pointer: UnsafeMutablePointer<State>

    init(_ state: consuming State) {
        pointer = UnsafeMutablePointer<State>.allocate(capacity: 1)
        pointer.initialize(to: state)
    }

    deinit {
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }
}
