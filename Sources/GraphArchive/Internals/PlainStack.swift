// Sources/GraphArchive/Internals/PlainStack.swift - a stack of plain values without copy-on-write checks

/// A growable stack of trivially copyable elements, owned by one noncopyable state.
///
/// `ContiguousArray` checks that its buffer is uniquely referenced before every change of an
/// element, a runtime call: callgrind counted about a dozen of them per object decoded by the
/// Codable bridge, from its frames alone. The bridge's frames (and its record offsets) belong
/// to one noncopyable state and are never shared, so the check guards nothing; this stack is a
/// buffer the state owns outright. Indexes are still checked (a precondition: callers check
/// frame numbers that come from containers before using them, so an index out of range is a
/// bug, not bad input).
///
/// The coders' container stacks and the unarchiver's object table and classes are such
/// stacks; the storage comes from `ZeroedMemory.allocateTable`, so a large one has pages of its
/// own, asked to be huge.
struct PlainStack<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
        base = Self.allocate(self.capacity)
    }

    /// `count` elements whose bytes are all zero (an `Int` 0), as a fixed table.
    init(zeros count: Int) {
        self.init(capacity: count)
        self.count = count
    }

    deinit {
        // Elements are trivially copyable: nothing to deinitialize.
        ZeroedMemory.deallocate(base, count: capacity)
    }

    /// Storage for a table: the unarchiver's object table and its classes are stacks.
    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        ZeroedMemory.allocateTable(Element.self, count: capacity)
    }

    subscript(index: Int) -> Element {
        unsafeAddress {
            precondition(index >= 0 && index < count, "index \(index) out of range (count \(count))")
            return UnsafePointer(base + index)
        }
        unsafeMutableAddress {
            precondition(index >= 0 && index < count, "index \(index) out of range (count \(count))")
            return base + index
        }
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow() }
        (base + count).initialize(to: element)
        count += 1
    }

    /// Drops the elements from `newCount` on.
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        count = newCount
    }

    var isEmpty: Bool { count == 0 }

    /// Removes the top element and returns it.
    @discardableResult
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast() on an empty stack")
        count -= 1
        return base[count]
    }

    /// Makes room for `minimumCapacity` elements in all.
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        let larger = Self.allocate(minimumCapacity)
        larger.moveInitialize(from: base, count: count)
        ZeroedMemory.deallocate(base, count: capacity)
        base = larger
        capacity = minimumCapacity
    }

    /// Calls `body` with the elements' bytes.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count * MemoryLayout<Element>.stride))
    }

    @inline(never)
    private mutating func grow() {
        reserveCapacity(capacity * 2)
    }
}
