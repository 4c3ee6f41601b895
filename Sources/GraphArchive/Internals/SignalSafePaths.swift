// Sources/GraphArchive/Internals/SignalSafePaths.swift - C paths a signal handler may read and unlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Slots of C paths in memory allocated once and never freed, so that a signal handler may
/// read them, and a scratch slot the handler copies a path into before unlinking it.
///
/// Nothing here synchronizes: the caller guarantees that one thread at a time writes a slot,
/// and decides from state of its own whether what the handler copied may be unlinked (see
/// `TemporaryFileCleanup`).
struct SignalSafePaths: @unchecked Sendable {
    /// Slots for paths.
    let slotCount: Int
    /// Bytes a slot holds, its terminating NUL included.
    let slotCapacity: Int
    /// `slotCount` slots, then the scratch slot.
    private let memory: UnsafeMutablePointer<CChar>

    init(slotCount: Int, slotCapacity: Int) {
        self.slotCount = slotCount
        self.slotCapacity = slotCapacity
        memory = .allocate(capacity: (slotCount + 1) * slotCapacity)
    }

    /// Writes `path` (a C string, its NUL included, of at most ``slotCapacity`` bytes) into
    /// `slot`.
    func store(_ path: [CChar], in slot: Int) {
        precondition(slot >= 0 && slot < slotCount && path.count <= slotCapacity && path.last == 0)
        let start = memory + slot * slotCapacity
        for (index, byte) in path.enumerated() { start[index] = byte }
    }

    /// Copies the path in `slot` into the scratch slot: async-signal-safe.
    func copyToScratch(_ slot: Int) {
        let start = memory + slot * slotCapacity
        let copy = memory + slotCount * slotCapacity
        var index = 0
        while index < slotCapacity - 1 && start[index] != 0 {
            copy[index] = start[index]
            index += 1
        }
        copy[index] = 0
    }

    /// Unlinks the path in the scratch slot: async-signal-safe.
    func unlinkScratch() {
        unlink(memory + slotCount * slotCapacity)
    }
}
