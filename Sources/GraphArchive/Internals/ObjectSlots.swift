// Sources/GraphArchive/Internals/ObjectSlots.swift - the Codable decoder's objects by index, without copy-on-write checks

/// A fixed number of `AnyObject?` slots, all nil at first, owned by one noncopyable state: the
/// Codable decoder's table of the objects it built (and marks for those being built).
///
/// A `ContiguousArray` here checked that its buffer was uniquely referenced, and called out to
/// end the mutation, on each of the two writes per decoded object (callgrind: about 50
/// instructions an object); the table is never shared, so the check guards nothing. Writes
/// retain the new reference and release the old one, as an array's do. Indexes are checked (a
/// precondition: callers check object indexes read from the archive against the count first).
struct ObjectSlots: ~Copyable {
    private let base: UnsafeMutablePointer<AnyObject?>
    let count: Int

    init(count: Int) {
        self.count = count
        base = ZeroedMemory.allocateTable(AnyObject?.self, count: max(count, 1))
        base.initialize(repeating: nil, count: count)
    }

    deinit {
        base.deinitialize(count: count)
        ZeroedMemory.deallocate(base, count: max(count, 1))
    }

    subscript(index: Int) -> AnyObject? {
        unsafeAddress {
            precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
            return UnsafePointer(base + index)
        }
        nonmutating unsafeMutableAddress {
            precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
            return base + index
        }
    }

    /// Calls `body` with the slots' bytes: each slot is one word, the object's address or 0.
    ///
    /// - Warning: Do not escape the pointer.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: base, count: count * MemoryLayout<AnyObject?>.stride))
    }
}
