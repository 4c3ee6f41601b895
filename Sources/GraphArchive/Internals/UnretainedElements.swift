// Sources/GraphArchive/Internals/UnretainedElements.swift - visiting an array's objects without retaining them

extension Array where Element: AnyObject {
    /// Calls `body` with each object of `positions`, borrowed from the array's storage: no
    /// retain and release per element.
    ///
    /// A retain writes to the object's header, so walking a large array of objects that are
    /// not in cache costs a miss per element just to count a reference the array already holds
    /// (perf: a third of a 1M-slot encode). `body` must not keep the reference beyond the call
    /// unless the array outlives that use (the archiver keeps such arrays).
    @inline(__always)
    func forEachBorrowed(in positions: Range<Int>, _ body: (Element) throws -> Void) rethrows {
        try withUnsafeBufferPointer { buffer in
            for position in positions {
                try Unmanaged.passUnretained(buffer[position])._withUnsafeGuaranteedRef { try body($0) }
            }
        }
    }

    /// Calls `body` with the addresses of the objects at `positions`, read as words from the
    /// array's storage (a class reference is its object's address): no retain, and nothing is
    /// loaded from the objects themselves.
    @inline(__always)
    func withObjectAddresses<Result>(
        in positions: Range<Int>,
        _ body: (UnsafeBufferPointer<UInt>) -> Result
    ) -> Result {
        withClassElementAddresses(in: positions, body)
    }
}

extension Array {
    /// One reference that keeps the array's elements alive as long as it is held, as holding
    /// the array does: its storage. Boxing the array in an `Any` instead looks up the array
    /// type's metadata in generic code, about 330 instructions an array (callgrind: 4.1M of a
    /// 100,000-node tree's encode, one per children array kept).
    var storageReference: AnyObject {
        #if canImport(ObjectiveC)
        // A bridged array's word may be tagged: keep the array itself.
        return self as AnyObject
        #else
        // A native array is one strong reference to its storage object.
        return unsafeBitCast(self, to: AnyObject.self)
        #endif
    }
}
