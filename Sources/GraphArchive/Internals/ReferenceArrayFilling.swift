// Sources/GraphArchive/Internals/ReferenceArrayFilling.swift - building a decoded array of objects in place

extension Array where Element: AnyObject {
    /// The `count` objects `next` returns, in order, written straight into the new array's
    /// storage.
    ///
    /// Decoding runs generic over the caller's class, and there a per-element `append` is a call
    /// into the standard library's unspecialized code (callgrind: about a quarter of the cost
    /// of each slot of a large root array); a reference stored in place is one retain.
    /// Reserves at most `capacity` (what the input can justify) and refuses more elements.
    static func filled(
        count: Int,
        capacity: Int,
        by next: () throws(GraphArchiveError) -> Element
    ) throws(GraphArchiveError) -> [Element] {
        // An empty array must not go through `init(unsafeUninitializedCapacity:)`: with capacity 0
        // the standard library stores the count into the shared empty-array singleton, a write
        // ThreadSanitizer reports as a race when two threads decode empty arrays at once.
        if count == 0 { return [] }
        guard capacity > 0 else { throw longerThanInput(count) }
        var failure: GraphArchiveError?
        let array = [Element](unsafeUninitializedCapacity: Swift.min(count, capacity)) { buffer, initialized in
            for index in 0..<count {
                guard index < buffer.count else {
                    failure = longerThanInput(count)
                    return
                }
                do throws(GraphArchiveError) {
                    (buffer.baseAddress! + index).initialize(to: try next())
                } catch {
                    failure = error
                    return
                }
                initialized = index + 1
            }
        }
        if let failure { throw failure }
        return array
    }

    private static func longerThanInput(_ count: Int) -> GraphArchiveError {
        GraphArchiveError(.corrupt, "array of \(count) elements is longer than its input")
    }
}
