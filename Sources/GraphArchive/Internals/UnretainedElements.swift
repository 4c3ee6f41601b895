// Sources/GraphArchive/Internals/UnretainedElements.swift - visiting an array's objects without retaining them

extension Array where Element: AnyObject {
    /// Calls `body` once with the objects of `positions`, borrowed from the array's storage:
    /// no retain and release per element.
    ///
    /// A retain writes to the object's header, so walking a large array of objects that are
    /// not in cache costs a miss per element just to count a reference the array already holds
    /// (perf: a third of a 1M-slot encode). `body` walks the objects itself: a closure called
    /// once per element is not inlined in generic code, and its call and frame cost about 35
    /// instructions an element (callgrind, a tree's children). Nothing may keep an object
    /// beyond the call unless the array outlives that use (the archiver keeps such arrays).
    @inline(__always)
    func withBorrowedObjects<Result>(
        in positions: Range<Int>,
        _ body: (BorrowedObjects<Element>) -> Result
    ) -> Result {
        withClassElementAddresses(in: positions) { body(BorrowedObjects(addresses: $0)) }
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

/// Objects of an array, by their addresses in its storage, lent for the call that has them
/// (see `Array.withBorrowedObjects(in:_:)`).
struct BorrowedObjects<Object: AnyObject> {
    /// The objects' addresses, read from the array's storage.
    let addresses: UnsafeBufferPointer<UInt>

    var count: Int { addresses.count }
}
