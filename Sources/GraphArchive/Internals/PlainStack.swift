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
struct PlainStack<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        self.capacity = max(capacity, 1)
        base = UnsafeMutablePointer<Element>.allocate(capacity: self.capacity)
    }

    deinit {
        // Elements are trivially copyable: nothing to deinitialize.
        base.deallocate()
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

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }
}
