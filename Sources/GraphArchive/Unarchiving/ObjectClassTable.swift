// Sources/GraphArchive/Unarchiving/ObjectClassTable.swift - the class of each decoded object, compactly

/// The class of each object an unarchiver built, so that a typed lookup need not read the
/// object itself (on a large graph that read is a cache miss per reference).
///
/// Kept as the archive's type id of each object rather than its class: one byte an object when
/// the archive has at most 256 types, four otherwise, and nothing at all when it has one
/// object type (a chain of links, a tree of nodes), whose class every object then has. A table
/// of `ObjectIdentifier`s took 8 bytes an object, as much again as the object table: 8 MB of a
/// decode of a million links whose archive is 10 MB.
///
/// Usable from inline, with its exact-class test: the unarchiver's inlinable `decode` forms
/// make it.
@usableFromInline
struct ObjectClassTable: ~Copyable {
    /// The class of each type id (a placeholder for value types, which no object has).
    @usableFromInline let classes: [ObjectIdentifier]
    /// Bytes per object: 0 (one object type), 1 or 4.
    @usableFromInline let width: Int
    /// The one object type's class and type id, when `width` is 0.
    private let only: ObjectIdentifier
    private let onlyTypeID: Int
    /// The bits of `only` when `width` is 0, else 0 (no class's): a typed lookup's exact match
    /// is then one comparison, with no test of the width first (an optional's took seven
    /// instructions).
    @usableFromInline let soleClass: UInt
    @usableFromInline private(set) var narrow = PlainStack<UInt8>(capacity: 1)
    @usableFromInline private(set) var wide = PlainStack<UInt32>(capacity: 1)
    // No count of its own: the object table's, which grows with it, bounds its lookups (one
    // counter less to keep an object: callgrind, an instruction).

    /// A table for an archive whose type ids have the classes `classes` (nil for value types
    /// and types not registered), able to hold `capacity` objects without growing.
    init(classes: [ObjectIdentifier?], capacity: Int) {
        let placeholder = ObjectIdentifier(Never.self)
        self.classes = classes.map { $0 ?? placeholder }
        let objectTypes = classes.compactMap { $0 }
        width = Self.width(types: classes.count, objectTypes: objectTypes.count)
        only = objectTypes.first ?? placeholder
        onlyTypeID = classes.firstIndex { $0 != nil } ?? 0
        soleClass = width == 0 ? UInt(bitPattern: only) : 0
        switch width {
        case 1: narrow.reserveCapacity(capacity)
        case 4: wide.reserveCapacity(capacity)
        default: break
        }
    }

    /// Bytes per object for an archive of `types` types, `objectTypes` of them classes.
    private static func width(types: Int, objectTypes: Int) -> Int {
        objectTypes <= 1 ? 0 : types <= 1 << 8 ? 1 : 4
    }

    /// What the table of `capacity` objects allocates for an archive of `types` types,
    /// `objectTypes` of them classes: nothing for one class.
    static func bytes(capacity: Int, types: Int, objectTypes: Int) -> Int {
        let width = width(types: types, objectTypes: objectTypes)
        return width == 0 ? 0 : MemoryBudget.table(capacity, stride: width)
    }

    /// An empty table, for an unarchiver that builds no objects.
    init() {
        self.init(classes: [], capacity: 0)
    }

    /// Adds the next object, of type id `typeID`.
    @inline(__always)
    mutating func append(typeID: Int) {
        // One class first (one test), as in `holds`.
        if width != 0 {
            if width == 1 {
                narrow.append(UInt8(truncatingIfNeeded: typeID))
            } else {
                wide.append(UInt32(truncatingIfNeeded: typeID))
            }
        }
    }

    /// Whether object `index` is of exactly the class `id`; false at or past `count`, the
    /// object table's count.
    @inline(__always)
    func holds(_ id: ObjectIdentifier, at index: Int, below count: Int) -> Bool {
        // Unsigned, so that one comparison also keeps out a negative index.
        UInt(bitPattern: index) < UInt(bitPattern: count) && holds(id, checkedAt: index)
    }

    /// Whether object `index`, which the caller has just checked is below the object table's
    /// count (which this table grows with), is of exactly the class `id`: for one class,
    /// a comparison alone, with no check of `index` (nothing is read at it); for the other
    /// widths, the entry's read checks it.
    @inlinable @inline(__always)
    func holds(_ id: ObjectIdentifier, checkedAt index: Int) -> Bool {
        // One class first, before the other widths: a chain's or a tree's every reference.
        if soleClass == UInt(bitPattern: id) { return true }
        if width == 0 { return false }
        if width == 1 { return classes[Int(narrow[index])] == id }
        return classes[Int(wide[index])] == id
    }

    /// The archive's type id of object `index`, which the caller has checked is below the
    /// object table's count.
    func typeID(of index: Int) -> Int {
        switch width {
        case 0: return onlyTypeID
        case 1: return Int(narrow[index])
        default: return Int(wide[index])
        }
    }

    /// Reads the entries of the objects at `indexes[..<count]` (those below `tableCount`, the
    /// object table's count) so that they are in cache when looked up; returns a value the
    /// caller keeps, so the loads stay.
    func touch(_ indexes: Span<Int>, count: Int, tableCount: Int) -> UInt {
        guard width != 0 else { return 0 }
        var sink: UInt = 0
        for position in 0..<min(count, indexes.count) where indexes[position] >= 0 && indexes[position] < tableCount {
            sink ^= width == 1 ? UInt(narrow[indexes[position]]) : UInt(wide[indexes[position]])
        }
        return sink
    }
}
