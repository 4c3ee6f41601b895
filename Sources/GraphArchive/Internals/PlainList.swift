// Sources/GraphArchive/Internals/PlainList.swift - lists of plain values without copy-on-write checks

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable list of trivially copyable elements, owned by one noncopyable state, in memory
/// of `Memory`'s kind.
///
/// `ContiguousArray` checks that its buffer is uniquely referenced before every change of an
/// element, a runtime call: callgrind counted about a dozen of them per object decoded by the
/// Codable bridge, from its frames alone, and 16M in the encoder's lists for 500,000 objects
/// of the cycles graph. These lists belong to one noncopyable state and are never shared, so
/// the check guards nothing. Indexes are still checked (a precondition: they come from the
/// engine's own counts, or are checked before use, so one out of range is a bug, not bad
/// input).
///
/// Two kinds of memory serve: ``PlainStack`` for the coders' container stacks and the
/// unarchiver's tables, zeroed and looked up at random; ``GrowableBuffer`` for append-mostly
/// lists (the encoder's, the unarchiver's compact object table), grown in place.
///
/// Usable from inline, with its unchecked reads: the unarchiver's inlinable `decode` forms
/// look keys and objects up in its tables.
@usableFromInline
struct PlainList<Element: BitwiseCopyable, Memory: PlainListMemory>: ~Copyable {
    @usableFromInline private(set) var base: UnsafeMutablePointer<Element>
    @usableFromInline private(set) var capacity: Int
    @usableFromInline private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
        base = Memory.allocate(Element.self, capacity: self.capacity)
    }

    // Inlinable: the setters of the unarchiver state's stored properties that are usable from
    // inline destroy the value they replace, and the compiler (6.3.1) crashes inlining a
    // deinitializer that is not into them.
    @inlinable deinit {
        // Elements are trivially copyable: nothing to deinitialize.
        Memory.deallocate(base, capacity: capacity)
    }

    @inlinable
    subscript(index: Int) -> Element {
        unsafeAddress { UnsafePointer(address(of: index)) }
        unsafeMutableAddress { address(of: index) }
    }

    /// Element `index`, which the caller has just checked is below `count`: not checked again.
    @inlinable @inline(__always)
    func element(checkedAt index: Int) -> Element {
        assert(index >= 0 && index < count, "index \(index) out of range (count \(count))")
        return base[index]
    }

    /// Replaces element `index`, which the caller has just checked is below `count`: not
    /// checked again.
    @inlinable @inline(__always)
    mutating func setElement(_ element: Element, checkedAt index: Int) {
        assert(index >= 0 && index < count, "index \(index) out of range (count \(count))")
        base[index] = element
    }

    /// Where element `index` (checked) is stored.
    @inlinable @inline(__always)
    func address(of index: Int) -> UnsafeMutablePointer<Element> {
        precondition(index >= 0 && index < count, "index \(index) out of range (count \(count))")
        return base + index
    }

    var isEmpty: Bool { count == 0 }

    /// The last element, or nil when empty.
    var last: Element? { count == 0 ? nil : base[count - 1] }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow(to: count + 1) }
        (base + count).initialize(to: element)
        count &+= 1
    }

    /// Appends `element` `times` times.
    mutating func append(repeating element: Element, count times: Int) {
        precondition(times >= 0)
        reserveCapacity(count + times)
        (base + count).initialize(repeating: element, count: times)
        count += times
    }

    /// Appends the integers `range` (a list of indexes).
    mutating func append(contentsOf range: Range<Int>) where Element == Int {
        reserveCapacity(count + range.count)
        for value in range {
            (base + count).initialize(to: value)
            count &+= 1
        }
    }

    /// Removes the last element and returns it.
    @discardableResult
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast() on an empty list")
        count -= 1
        return base[count]
    }

    /// Drops the elements from `newCount` on, keeping the capacity.
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        count = newCount
    }

    /// Makes room for `minimumCapacity` elements in all.
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        base = Memory.reallocate(base, count: count, capacity: capacity, to: minimumCapacity)
        capacity = minimumCapacity
    }

    @inline(never)
    private mutating func grow(to minimumCapacity: Int) {
        reserveCapacity(max(minimumCapacity, capacity * 2))
    }

    /// The elements as an array (a copy).
    var array: [Element] {
        withView { Array($0) }
    }

    /// Calls `body` with a read-only view of the elements, valid only during the call (the
    /// view must not escape it).
    func withView<Result: ~Copyable, Failure: Error>(
        _ body: (BufferView<Element>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(BufferView(base: UnsafePointer(base), count: count))
    }

    /// Calls `body` with the elements' bytes.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count * MemoryLayout<Element>.stride))
    }
}

extension PlainList {
    /// A table of `count` places, left as allocated, for a caller that writes each before it
    /// reads it (`setElement(_:checkedAt:)`) and counts what it wrote itself.
    init(unwrittenCount count: Int) {
        self.init(capacity: count)
        self.count = count
    }

    /// Grows a table of unwritten places (`init(unwrittenCount:)`) to `newCount`, keeping
    /// what it holds.
    mutating func extend(unwrittenTo newCount: Int) {
        reserveCapacity(newCount)
        count = max(count, newCount)
    }
}

extension PlainList where Memory == TableMemory {
    /// `count` elements whose bytes are all zero (an `Int` 0), as a fixed table.
    init(zeros count: Int) {
        self.init(capacity: count)
        self.count = count
    }
}

/// A list for stacks and tables: zeroed memory from `ZeroedMemory.allocateTable`, so a large
/// one has pages of its own, asked to be huge, and is given back whole when freed.
@usableFromInline typealias PlainStack<Element: BitwiseCopyable> = PlainList<Element, TableMemory>

/// A list for append-mostly lists (the encoder's queue of bodies owed, each body's references
/// and where they sit, each body's start; the decoders' compact object tables), grown with
/// `realloc`: a large block moves by remapping its pages instead of being copied. Not zeroed:
/// elements exist only once appended.
@usableFromInline typealias GrowableBuffer<Element: BitwiseCopyable> = PlainList<Element, HeapMemory>

/// Where a ``PlainList`` keeps its elements.
@usableFromInline
protocol PlainListMemory {
    static func allocate<Element>(_ type: Element.Type, capacity: Int) -> UnsafeMutablePointer<Element>
    /// Storage for `newCapacity` elements holding the first `count` of `memory` (which holds
    /// `capacity`), which it frees.
    static func reallocate<Element>(
        _ memory: UnsafeMutablePointer<Element>,
        count: Int,
        capacity: Int,
        to newCapacity: Int
    ) -> UnsafeMutablePointer<Element>
    static func deallocate<Element>(_ memory: UnsafeMutablePointer<Element>, capacity: Int)
}

/// Zeroed blocks from ``ZeroedMemory/allocateTable(_:count:)``, moved into a larger one to grow.
@usableFromInline
enum TableMemory: PlainListMemory {
    @usableFromInline
    static func allocate<Element>(_ type: Element.Type, capacity: Int) -> UnsafeMutablePointer<Element> {
        ZeroedMemory.allocateTable(type, count: capacity)
    }

    @usableFromInline
    static func reallocate<Element>(
        _ memory: UnsafeMutablePointer<Element>,
        count: Int,
        capacity: Int,
        to newCapacity: Int
    ) -> UnsafeMutablePointer<Element> {
        let larger = allocate(Element.self, capacity: newCapacity)
        larger.moveInitialize(from: memory, count: count)
        deallocate(memory, capacity: capacity)
        return larger
    }

    @usableFromInline
    static func deallocate<Element>(_ memory: UnsafeMutablePointer<Element>, capacity: Int) {
        ZeroedMemory.deallocate(memory, count: capacity)
    }
}

/// Heap blocks from `malloc`, grown by `realloc`.
@usableFromInline
enum HeapMemory: PlainListMemory {
    @usableFromInline
    static func allocate<Element>(_ type: Element.Type, capacity: Int) -> UnsafeMutablePointer<Element> {
        resize(nil, to: capacity)
    }

    @usableFromInline
    static func reallocate<Element>(
        _ memory: UnsafeMutablePointer<Element>,
        count: Int,
        capacity: Int,
        to newCapacity: Int
    ) -> UnsafeMutablePointer<Element> {
        resize(memory, to: newCapacity)
    }

    @usableFromInline
    static func deallocate<Element>(_ memory: UnsafeMutablePointer<Element>, capacity: Int) {
        free(memory)
    }

    private static func resize<Element>(_ memory: UnsafeMutablePointer<Element>?, to capacity: Int)
        -> UnsafeMutablePointer<Element>
    {
        let bytes = capacity * MemoryLayout<Element>.stride
        guard let resized = realloc(memory.map { UnsafeMutableRawPointer($0) }, bytes) else {
            fatalError("out of memory growing to \(bytes) bytes")
        }
        return resized.bindMemory(to: Element.self, capacity: capacity)
    }
}

/// The elements of a ``PlainList`` during its `withView`: a borrowed, read-only list with
/// checked indexes, so the reordering pass reads the encoder's lists where they are.
struct BufferView<Element: BitwiseCopyable>: RandomAccessCollection {
    private let base: UnsafePointer<Element>
    let count: Int

    fileprivate init(base: UnsafePointer<Element>, count: Int) {
        self.base = base
        self.count = count
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    @inline(__always)
    subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "index \(index) out of range (count \(count))")
        return base[index]
    }

    /// Element `index`, which the caller has checked is below `count` (a loop over a range it
    /// checked once): not checked again.
    @inline(__always)
    func element(checkedAt index: Int) -> Element {
        assert(index >= 0 && index < count, "index \(index) out of range (count \(count))")
        return base[index]
    }
}
