// Sources/GraphArchive/Internals/GrowableBuffer.swift - an append-mostly list grown in place by realloc

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable list of trivially copyable elements, owned by one noncopyable state, that grows
/// with `realloc`.
///
/// The encoder appends to a few lists once or more per object written (the queue of bodies
/// owed, each body's references and where they sit, each body's start). As arrays, every
/// append checked that the buffer was uniquely referenced, a runtime call, and every doubling
/// copied the whole list (callgrind: 16M uniqueness checks and 34M instructions of copying in
/// 500,000 objects of the cycles graph). Owned by one noncopyable state, these lists are never
/// shared, so the check guards nothing; and `realloc` moves a large block by remapping its
/// pages instead of copying them. Indexes are checked (a precondition: they come from the
/// encoder's own counts, so one out of range is a bug, not bad input).
///
/// Unlike ``PlainStack`` the storage is not zeroed: elements exist only once appended.
struct GrowableBuffer<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private(set) var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
        base = Self.reallocate(nil, to: self.capacity)
    }

    deinit {
        // Elements are trivially copyable: nothing to deinitialize.
        free(base)
    }

    private static func reallocate(_ memory: UnsafeMutablePointer<Element>?, to capacity: Int)
        -> UnsafeMutablePointer<Element>
    {
        let bytes = capacity * MemoryLayout<Element>.stride
        guard let grown = realloc(memory.map { UnsafeMutableRawPointer($0) }, bytes) else {
            fatalError("out of memory growing to \(bytes) bytes")
        }
        return grown.bindMemory(to: Element.self, capacity: capacity)
    }

    subscript(index: Int) -> Element {
        unsafeAddress { UnsafePointer(address(of: index)) }
        unsafeMutableAddress { address(of: index) }
    }

    /// Where element `index` (checked) is stored.
    @inline(__always)
    private func address(of index: Int) -> UnsafeMutablePointer<Element> {
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

    /// Drops the elements from `newCount` on, keeping the capacity.
    mutating func truncate(to newCount: Int) {
        precondition(newCount >= 0 && newCount <= count)
        count = newCount
    }

    /// Makes room for `minimumCapacity` elements in all.
    mutating func reserveCapacity(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        base = Self.reallocate(base, to: minimumCapacity)
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
}

/// The elements of a ``GrowableBuffer`` during its `withView`: a borrowed, read-only list with
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
}
