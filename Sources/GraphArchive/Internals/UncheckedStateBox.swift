// Sources/GraphArchive/Internals/UncheckedStateBox.swift - hot mutable state without dynamic exclusivity checks

/// Heap storage for an archiver's or unarchiver's state, held in the box itself.
///
/// A stored `var` of a class pays a dynamic exclusivity check (`swift_beginAccess`) on every
/// access; callgrind showed those checks at over 10% of a 1M-record encode, since every
/// `encode(_:forKey:)` touches the state. The state is only ever mutated by the engine's own
/// short, non-reentrant methods (user code runs between them, never inside them), so the
/// dynamic check guards nothing here, and ``value`` goes without it. It lies in the box rather
/// than behind a pointer the box allocated: one load less on every access (callgrind: about 9
/// instructions a link of a chain's decode). The owner forwards to it:
///
/// ```swift
/// var state: EncodingState {
///     _read { yield storage.value }
///     _modify { yield &storage.value }
/// }
/// ```
///
/// Usable from inline: `GraphUnarchiver`'s inlinable `decode` forms reach the state through it.
@usableFromInline
final class UncheckedStateBox<State: ~Copyable> {
    /// The state, read and written where it lies, with no run-time exclusivity check.
    ///
    /// The caller guarantees that two accesses never overlap: no method that holds the state
    /// `inout` calls anything (user code included) that reaches it again.
    @usableFromInline @exclusivity(unchecked) final var value: State

    init(_ state: consuming State) {
        value = state
    }
}

/// A value a class holds and reaches with no run-time exclusivity check.
///
/// A class's stored `var` pays a dynamic exclusivity check (`swift_beginAccess` and its
/// thread-local set) on every access, reads included; for a buffer appended to once per cell,
/// or a container's place read on every call, the checks cost more than the work (callgrind:
/// 11% of a zstd encode's instructions for the block writer's buffers). Hold such a field in a
/// cell, or subclass one, and reach it through ``value``.
///
/// The caller guarantees that two accesses to ``value`` never overlap: a method that holds it
/// `inout` calls nothing that reaches it again.
class UncheckedCell<Value: ~Copyable> {
    @exclusivity(unchecked) final var value: Value

    init(_ value: consuming Value) {
        self.value = value
    }
}
