// Sources/GraphArchive/Internals/ObjectSlots.swift - the Codable decoder's objects by index, without copy-on-write checks

/// A fixed number of `AnyObject?` slots, all nil at first, owned by one noncopyable state: the
/// Codable decoder's table of the objects it built (and marks for those being built).
///
/// A `ContiguousArray` here checked that its buffer was uniquely referenced, and called out to
/// end the mutation, on each of the two writes per decoded object (callgrind: about 50
/// instructions an object); the table is never shared, so the check guards nothing. Writes
/// retain the new reference and release the old one, as an array's do. Indexes are checked (a
/// precondition: callers check object indexes read from the archive against the count first).
///
/// An object built as an element of the root array can be handed over (``handOver(_:at:)``):
/// the slot then holds it without a reference of its own, and the array's reference keeps it
/// alive, as `DecodedObjects` does for the native decoder. The end of a decode then releases
/// only the other objects: releasing every object at the end touched each one again long after
/// it was built, out of cache on a large graph, and retaining it when it was stored cost a
/// call. Only a caller that runs no user code between the hand-over and the end of the table
/// that could drop the array may hand objects over, and none may overwrite a handed-over slot.
///
/// A slot can also hold the table's mark (``mark(_:)``), which says its object is being built.
/// The table holds the mark once and slots hold it without a reference of their own: marking
/// and unmarking retained and released the one shared mark object for every decoded object,
/// two atomic operations (callgrind: about 40 instructions an object with the release of the
/// nil the mark replaced).
struct ObjectSlots: ~Copyable {
    private let base: UnsafeMutablePointer<AnyObject?>
    let count: Int
    /// Bit `i` set: slot `i` holds its object without a reference. Empty until the first
    /// hand-over. Not an `Array`, whose write checked its buffer's uniqueness, a runtime call,
    /// for every object handed over.
    private var handedOver = PlainStack<UInt64>(capacity: 1)
    /// What a marked slot holds, and its address.
    private let markObject: AnyObject
    private let markAddress: UnsafeMutableRawPointer
    /// Slots holding the mark.
    private var marked = 0

    init(count: Int, mark: AnyObject) {
        self.count = count
        markObject = mark
        markAddress = Unmanaged.passUnretained(mark).toOpaque()
        base = ZeroedMemory.allocateTable(AnyObject?.self, count: max(count, 1))
        base.initialize(repeating: nil, count: count)
    }

    deinit {
        if handedOver.isEmpty && marked == 0 {
            base.deinitialize(count: count)
        } else {
            for index in 0..<count where !isHandedOver(index) && !isMarked(index) {
                (base + index).deinitialize(count: 1)
            }
        }
        ZeroedMemory.deallocate(base, count: max(count, 1))
    }

    /// Puts the mark in empty slot `index`, without a reference of the slot's own.
    @inline(__always)
    mutating func mark(_ index: Int) {
        precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
        precondition(word(at: index) == nil, "object \(index) marked twice")
        UnsafeMutableRawPointer(base + index).storeBytes(of: markAddress, as: UnsafeMutableRawPointer.self)
        marked += 1
    }

    /// Whether slot `index` holds the mark.
    @inline(__always)
    func isMarked(_ index: Int) -> Bool {
        precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
        return word(at: index) == markAddress
    }

    /// The slot's word: the address of the object it holds, or nil.
    @inline(__always)
    private func word(at index: Int) -> UnsafeMutableRawPointer? {
        UnsafeRawPointer(base + index).load(as: UnsafeMutableRawPointer?.self)
    }

    /// Empties slot `index`: releases its object, or forgets the mark, which it does not hold.
    @inline(__always)
    private mutating func empty(_ index: Int) {
        if word(at: index) == markAddress {
            UnsafeMutableRawPointer(base + index).storeBytes(of: nil, as: UnsafeMutableRawPointer?.self)
            marked -= 1
        } else {
            (base + index).pointee = nil
        }
    }

    /// What the bits of the hand-over allocate, for a table of `count` objects.
    static func handOverBytes(count: Int) -> Int {
        DecodedObjects.handOverBytes(count: count)
    }

    /// Puts `object` in slot `index` without retaining it, releasing what the slot held: the
    /// caller's reference is the one that keeps the object alive (see the type's comment).
    @inline(__always)
    mutating func handOver(_ object: AnyObject, at index: Int) {
        precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
        empty(index)
        storeHandedOver(object, at: index)
    }

    /// Puts `object` in empty slot `index` without retaining it (see ``handOver(_:at:)``).
    @inline(__always)
    private mutating func storeHandedOver(_ object: AnyObject, at index: Int) {
        if handedOver.isEmpty { handedOver.append(repeating: 0, count: (count + 63) / 64) }
        UnsafeMutableRawPointer(base + index).storeBytes(
            of: Unmanaged.passUnretained(object).toOpaque(),
            as: UnsafeMutableRawPointer.self
        )
        handedOver[index >> 6] |= 1 << UInt64(index & 63)
    }

    /// Puts `object` in slot `index` in place of the mark: retained, or handed over (see
    /// ``handOver(_:at:)``) when `handingOver` is true.
    @inline(__always)
    mutating func replaceMark(at index: Int, with object: AnyObject, handingOver: Bool) {
        precondition(isMarked(index), "object \(index) is not marked")
        // The slot held the mark, so `marked` is at least 1.
        marked &-= 1
        if handingOver {
            storeHandedOver(object, at: index)
        } else {
            (base + index).initialize(to: object)
        }
    }

    @inline(__always)
    private func isHandedOver(_ index: Int) -> Bool {
        !handedOver.isEmpty && handedOver[index >> 6] & (1 << UInt64(index & 63)) != 0
    }

    /// The object in slot `index` (the mark, if it holds it).
    subscript(index: Int) -> AnyObject? {
        unsafeAddress {
            precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
            return UnsafePointer(base + index)
        }
        set {
            precondition(index >= 0 && index < count, "object \(index) out of range (count \(count))")
            empty(index)
            (base + index).initialize(to: newValue)
        }
    }

    /// Calls `body` with the slots' bytes: each slot is one word, the object's address or 0.
    ///
    /// - Warning: Do not escape the pointer.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: base, count: count * MemoryLayout<AnyObject?>.stride))
    }
}
