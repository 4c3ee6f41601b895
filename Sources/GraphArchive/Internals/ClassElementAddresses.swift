// Sources/GraphArchive/Internals/ClassElementAddresses.swift - the addresses of an array's objects, for any element type

extension Array {
    /// Calls `body` with the addresses of the objects at `positions`, read as words from the
    /// array's storage (a class reference is its object's address): `withBorrowedObjects(in:_:)`
    /// for generic code that knows only at run time that `Element` is a class (the Codable
    /// bridge's arrays of objects).
    ///
    /// - Precondition: `Element` is a class (the size is checked: any one-word element reads
    ///   as words safely, a wrong one only as meaningless addresses).
    @inline(__always)
    func withClassElementAddresses<Result>(
        in positions: Range<Int>,
        _ body: (UnsafeBufferPointer<UInt>) -> Result
    ) -> Result {
        precondition(positions.lowerBound >= 0 && positions.upperBound <= count)
        precondition(MemoryLayout<Element>.stride == MemoryLayout<UInt>.stride)
        assert(Element.self is AnyClass, "\(Element.self) is not a class")
        return withUnsafeBufferPointer { elements in
            let words = UnsafeRawBufferPointer(elements)
            let stride = MemoryLayout<UInt>.stride
            return UnsafeRawBufferPointer(
                rebasing: words[positions.lowerBound * stride..<positions.upperBound * stride]
            )
            .withMemoryRebound(to: UInt.self, body)
        }
    }
}
