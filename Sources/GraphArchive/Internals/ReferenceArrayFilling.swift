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

/// Makes the elements of an array one by one, for `Array.moving(capacity:from:)`.
protocol ArrayElementProducer<Element> {
    associatedtype Element
    /// Whether there is another element to make.
    mutating func hasNext() throws -> Bool
    /// The next element.
    mutating func next() throws -> Element
}

extension Array {
    /// The elements `producer` makes, each moved straight into the new array's storage.
    /// Reserves `capacity` (what the input can justify) and throws if `producer` has more
    /// elements than that.
    ///
    /// For an `Element` known only at run time (the Codable decoder's), `append` is a call into
    /// the standard library's unspecialized code, and a class instance a generic call returned
    /// was copied into an array of `AnyObject` and then destroyed: a retain and a release
    /// (callgrind: about 70 instructions an element). Here the element is moved, with no copy.
    /// A producer rather than two closures: the standard library's initializer is not inlined
    /// here, so closures ran through their contexts and partial-application thunks (callgrind:
    /// about 17 instructions an element more than the producer's witness calls).
    @inline(__always)
    static func moving<Producer: ArrayElementProducer<Element>>(
        capacity: Int,
        from producer: inout Producer
    ) throws -> [Element] {
        // An empty array must not go through `init(unsafeUninitializedCapacity:)` (see `filled`).
        guard capacity > 0 else {
            guard try !producer.hasNext() else { throw longerThanInput() }
            return []
        }
        return try [Element](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            while try producer.hasNext() {
                guard initialized < buffer.count else { throw longerThanInput() }
                (buffer.baseAddress! + initialized).initialize(to: try producer.next())
                initialized += 1
            }
        }
    }

    private static func longerThanInput() -> GraphArchiveError {
        GraphArchiveError(.corrupt, "array is longer than its input")
    }
}
