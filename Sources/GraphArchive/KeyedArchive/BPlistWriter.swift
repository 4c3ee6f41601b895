// Sources/GraphArchive/KeyedArchive/BPlistWriter.swift - writes a binary property list ("bplist00")

/// Builds a binary property list object by object, into the bytes it returns.
///
/// Each object is written to the output where it gets its number: a scalar as it is added
/// (equal ASCII strings, numbers, booleans and UIDs are stored once, as CF's writer does), a
/// container when it closes. Containers are built on a stack: push the references of the
/// elements (for a dictionary: key, value, key, value…), then close the container from the
/// stack position where it began. A container's references are written
/// ``provisionalReferenceSize`` bytes wide, the width of every archive of 65,536 to 2^32 - 1
/// objects; ``finish(top:)`` writes the offset table after the objects, and only a smaller
/// archive, whose references are narrower, is copied once more to narrow them.
///
/// The tables kept while writing are 4 bytes an object (its offset) plus the string and number
/// tables, and the output is written once, front to back: a large archive's writing stays in
/// the caches longer than wide tables copied into the output at the end would let it.
struct BPlistWriter: ~Copyable {
    /// The magic, then every object's bytes, in the order of their numbers.
    private var output = ByteWriter(reservingCapacity: 1 << 12)
    /// Per object: where its bytes start in `output`.
    private var offsets = ObjectOffsets()
    /// References of containers being built.
    private var pending: [Int] = []

    /// The ASCII strings stored, by their bytes in `output`.
    private var strings = ByteStringTable()
    private var integers = WordTable()
    private var reals = WordTable()
    /// The object of each UID below the dense table's reach, plus 1; 0 for none yet.
    private var uids: [UInt32] = []
    /// The object of each UID beyond the dense table's reach, by value.
    private var sparseUIDs: [Int: Int] = [:]
    private var booleans: [Int] = [-1, -1]

    /// The width of the references in containers until ``finish(top:)``.
    static let provisionalReferenceSize = 4

    init() {
        output.writeBytes(BPlist.magic)
    }

    var objectCount: Int { offsets.count }

    // MARK: - Scalars

    /// A string object. ASCII strings are stored once each; others every time, since the
    /// equality that matters for them is canonical equivalence ("é" and "e" + U+0301, "K" and
    /// the Kelvin sign are equal `String`s), and each must keep its own bytes. (An ASCII string
    /// is equivalent to no other ASCII string.)
    mutating func string(_ value: String) -> Int {
        // Only ASCII has as many UTF-16 units as UTF-8 bytes (any other scalar takes more
        // bytes than units), and an ASCII string knows its UTF-16 count without a pass.
        let count = value.utf8.count
        guard count == value.utf16.count else {
            let id = beginScalar()
            Self.writeHeader(BPlistMarker.utf16String, count: value.utf16.count, into: &output)
            for unit in value.utf16 { output.writeBigEndian(UInt64(unit), width: 2) }
            return id
        }
        if let id = ByteReader.withUTF8(of: value, { asciiString($0, count: count) }) { return id }
        // Not reached (the bytes are ASCII and all there); stored without the table.
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.asciiString, count: count, into: &output)
        output.writeUTF8(value)
        return id
    }

    /// The string object of the `count` bytes at `reader`'s position if they are ASCII (stored
    /// once each), else nil: the caller reads them as UTF-8 and writes them with
    /// ``string(_:)``. Nil too if fewer than `count` bytes are left.
    mutating func asciiString(_ reader: ByteReader, count: Int) -> Int? {
        guard let (hash, isASCII) = ByteStringTable.fingerprint(reader, count: count), isASCII else { return nil }
        if let id = strings.id(of: reader, count: count, hash: hash, in: output) { return id }
        var end = reader
        guard (try? end.skip(count)) != nil else { return nil }
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.asciiString, count: count, into: &output)
        let offset = output.count
        end.copyPassed(from: reader.offset, into: &output)
        strings.insert(id: id, hash: hash, offset: offset, count: count)
        return id
    }

    /// Makes room for the objects of about `records` records, `bytes` bytes of strings and
    /// numbers among them, so that a large archive is written without growing (and copying)
    /// the tables as it goes.
    mutating func reserve(records: Int, bytes: Int) {
        // A record of a few values takes about eight objects (its dictionary, its values, the
        // UIDs of its values' entries) and a dozen references; most of its strings and numbers
        // are distinct.
        strings.reserveCapacity(2 * records)
        integers.reserveCapacity(records)
        offsets.reserveCapacity(8 * records)
        uids.reserveCapacity(4 * records)
        guard output.count == BPlist.magic.count else { return }
        // A mapping of its own past `ByteWriter.largeCapacity`: outgrowing the estimate remaps
        // it rather than copying it.
        output = ByteWriter(reservingMapped: bytes + (Self.provisionalReferenceSize * 12 + 8 * 4) * records)
        output.writeBytes(BPlist.magic)
    }

    mutating func integer(_ value: Int64) -> Int {
        let bits = UInt64(bitPattern: value)
        if let id = integers.id(of: bits) { return id }
        let id = beginScalar()
        Self.writeInteger(value, into: &output)
        integers.insert(bits, id: id)
        return id
    }

    /// An unsigned integer; values above Int64.max take CF's 16-byte form.
    mutating func unsigned(_ value: UInt64) -> Int {
        guard value > UInt64(Int64.max) else { return integer(Int64(value)) }
        let id = beginScalar()
        output.writeByte(BPlistMarker.integer | 4)
        output.writeBigEndian(0, width: 8)
        output.writeBigEndian(value, width: 8)
        return id
    }

    /// A 16-byte integer of halves `high` and `low` (two's complement), as CF stores integers
    /// beyond 64 bits.
    mutating func integer128(high: Int64, low: UInt64) -> Int {
        let id = beginScalar()
        output.writeByte(BPlistMarker.integer | 4)
        output.writeBigEndian(UInt64(bitPattern: high), width: 8)
        output.writeBigEndian(low, width: 8)
        return id
    }

    mutating func double(_ value: Double) -> Int {
        let key = value.bitPattern
        if let id = reals.id(of: key) { return id }
        let id = beginScalar()
        output.writeByte(BPlistMarker.real | 3)
        output.writeBigEndian(key, width: 8)
        reals.insert(key, id: id)
        return id
    }

    mutating func float(_ value: Float) -> Int {
        let id = beginScalar()
        output.writeByte(BPlistMarker.real | 2)
        output.writeBigEndian(UInt64(value.bitPattern), width: 4)
        return id
    }

    /// A date: seconds since 2001-01-01, as CF's `<date>` (keyed archives store NSDate as a class).
    mutating func date(_ seconds: Double) -> Int {
        let id = beginScalar()
        output.writeByte(BPlistMarker.date)
        output.writeBigEndian(seconds.bitPattern, width: 8)
        return id
    }

    mutating func bool(_ value: Bool) -> Int {
        let slot = value ? 1 : 0
        if booleans[slot] >= 0 { return booleans[slot] }
        let id = beginScalar()
        output.writeByte(value ? BPlistMarker.trueValue : BPlistMarker.falseValue)
        booleans[slot] = id
        return id
    }

    mutating func data(_ bytes: [UInt8]) -> Int {
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.data, count: bytes.count, into: &output)
        output.writeBytes(bytes)
        return id
    }

    /// A keyed-archive UID, in the fewest of 1, 2, 4 or 8 bytes.
    mutating func uid(_ value: Int) -> Int {
        if !sparseUIDs.isEmpty, let id = sparseUIDs[value] { return id }
        // The dense table grows only as far as the output could refer: an XML plist of a few
        // bytes may name UID 2^32 - 1.
        let isDense = value < Swift.max(uids.capacity, Self.denseUIDMinimum, 2 * offsets.count)
        if isDense && value < uids.count && uids[value] != 0 { return Int(uids[value]) - 1 }
        let id = beginScalar()
        let width = Self.width(UInt64(value))
        output.writeByte(BPlistMarker.uid | UInt8(width - 1))
        output.writeBigEndian(UInt64(value), width: width)
        if isDense {
            if uids.count <= value { uids.append(contentsOf: repeatElement(0, count: value + 1 - uids.count)) }
            uids[value] = UInt32(truncatingIfNeeded: id + 1)
        } else {
            sparseUIDs[value] = id
        }
        return id
    }

    /// UIDs the dense table holds whatever the output's size.
    private static let denseUIDMinimum = 1 << 16

    /// Numbers the object whose bytes are written next.
    private mutating func beginScalar() -> Int {
        offsets.append(output.count)
        return offsets.count - 1
    }

    // MARK: - Containers

    /// Where the next container's references start on the stack.
    var stackPosition: Int { pending.count }

    mutating func push(_ reference: Int) {
        pending.append(reference)
    }

    /// Takes the references pushed since `start` off the stack.
    mutating func popReferences(from start: Int) -> [Int] {
        defer { pending.removeLast(pending.count - start) }
        return Array(pending[start...])
    }

    /// Closes an array of the references pushed since `start`.
    mutating func closeArray(from start: Int) -> Int {
        let id = writeArray(of: pending[start...])
        pending.removeLast(pending.count - start)
        return id
    }

    /// An array of `elements`, written without the stack (`$objects`, an entry a record).
    mutating func array(_ elements: [UInt32]) -> Int {
        writeArray(of: elements)
    }

    private mutating func writeArray<References: Collection>(
        of references: References
    ) -> Int where References.Element: BinaryInteger {
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.array, count: references.count, into: &output)
        output.reserve(Self.provisionalReferenceSize * references.count)
        for reference in references { writeReference(Int(reference)) }
        return id
    }

    /// Closes a dictionary of the key, value pairs pushed since `start`.
    mutating func closeDictionary(from start: Int) -> Int {
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.dictionary, count: (pending.count - start) / 2, into: &output)
        output.reserve(Self.provisionalReferenceSize * (pending.count - start))
        for position in stride(from: start, to: pending.count, by: 2) { writeReference(pending[position]) }
        for position in stride(from: start + 1, to: pending.count, by: 2) { writeReference(pending[position]) }
        pending.removeLast(pending.count - start)
        return id
    }

    @inline(__always)
    private mutating func writeReference(_ reference: Int) {
        output.writeLittleEndian(UInt64(UInt32(truncatingIfNeeded: reference).bigEndian), width: 4)
    }

    // MARK: - Finishing

    /// The property list's bytes, with object `top` as its root.
    ///
    /// - Throws: `.invalidValue` past 2^32 - 1 objects, more than 4-byte references can name
    ///   (an archive of that many would hold over 100 GB of tables and output).
    consuming func finish(top: Int) throws(GraphArchiveError) -> ByteWriter {
        let count = offsets.count
        guard count < Int(UInt32.max) else {
            throw GraphArchiveError(
                .invalidValue,
                "a keyed archive of \(count) objects is beyond this writer's 2^32 - 1"
            )
        }
        // Wide enough for the count itself, not only the highest reference: CF rejects an
        // archive of 256 objects with 1-byte references (its reader checks the count).
        let referenceSize = Self.width(UInt64(count))
        if referenceSize != Self.provisionalReferenceSize { narrowReferences(to: referenceSize) }
        let tableStart = output.count
        let offsetSize = Self.width(UInt64(tableStart))
        output.reserve(offsetSize * count + BPlist.trailerSize)
        offsets.forEveryOffset { output.writeBigEndian(UInt64($0), width: offsetSize) }
        // Trailer: 5 unused bytes, sort version, offset size, reference size, object count,
        // top object, offset table start.
        for _ in 0..<6 { output.writeByte(0) }
        output.writeByte(UInt8(offsetSize))
        output.writeByte(UInt8(referenceSize))
        output.writeBigEndian(UInt64(count), width: 8)
        output.writeBigEndian(UInt64(top), width: 8)
        output.writeBigEndian(UInt64(tableStart), width: 8)
        return output
    }

    /// Copies the objects into a new output with the references of every container
    /// `referenceSize` (1 or 2) bytes wide: an archive of fewer than 65,536 objects.
    private mutating func narrowReferences(to referenceSize: Int) {
        var starts: [Int] = []
        starts.reserveCapacity(offsets.count + 1)
        offsets.forEveryOffset { starts.append($0) }
        starts.append(output.count)
        var narrowed = ByteWriter(reservingCapacity: output.count)
        narrowed.writeBytes(BPlist.magic)
        var narrowedOffsets = ObjectOffsets()
        narrowedOffsets.reserveCapacity(offsets.count)
        do {
            try output.withReader { (reader) throws(GraphArchiveError) in
                for object in 0..<(starts.count - 1) {
                    narrowedOffsets.append(narrowed.count)
                    reader.offset = starts[object]
                    try Self.copyNarrowing(
                        &reader,
                        end: starts[object + 1],
                        into: &narrowed,
                        referenceSize: referenceSize
                    )
                }
            }
        } catch {
            // The bytes are this writer's own objects, each read within its own extent.
            preconditionFailure("a property list object written here did not read back: \(error)")
        }
        output = narrowed
        offsets = narrowedOffsets
    }

    /// Copies the object at `reader`'s position, which ends at `end`, into `narrowed`: a
    /// container with its references `referenceSize` bytes wide, anything else as it is.
    private static func copyNarrowing(
        _ reader: inout ByteReader,
        end: Int,
        into narrowed: inout ByteWriter,
        referenceSize: Int
    ) throws(GraphArchiveError) {
        let start = reader.offset
        let marker = try reader.readByte()
        let isDictionary = marker & 0xF0 == BPlistMarker.dictionary
        guard isDictionary || marker & 0xF0 == BPlistMarker.array else {
            try reader.skip(end - reader.offset)
            reader.copyPassed(from: start, into: &narrowed)
            return
        }
        // The header: the count in the low nibble, or 0xF then an integer object.
        var count = Int(marker & 0x0F)
        if count == 0x0F {
            let width = 1 << Int(try reader.readByte() & 0x0F)
            count = Int(truncatingIfNeeded: try reader.readBigEndian(width: width))
        }
        reader.copyPassed(from: start, into: &narrowed)
        for _ in 0..<(isDictionary ? 2 * count : count) {
            narrowed.writeBigEndian(try reader.readBigEndian(width: provisionalReferenceSize), width: referenceSize)
        }
    }

    /// A marker with its count: in the low nibble below 15, else 0xF and an integer object.
    private static func writeHeader(_ marker: UInt8, count: Int, into writer: inout ByteWriter) {
        if count < 15 {
            writer.writeByte(marker | UInt8(count))
        } else {
            writer.writeByte(marker | 0x0F)
            writeInteger(Int64(count), into: &writer)
        }
    }

    /// An integer object: 1, 2 or 4 bytes when non-negative and small enough, else 8.
    private static func writeInteger(_ value: Int64, into writer: inout ByteWriter) {
        let width = value < 0 ? 8 : Self.width(UInt64(value))
        writer.writeByte(BPlistMarker.integer | UInt8(width.trailingZeroBitCount))
        writer.writeBigEndian(UInt64(bitPattern: value), width: width)
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    static func width(_ value: UInt64) -> Int {
        value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
    }
}

/// Where each object of a property list starts, 4 bytes an object: the low 32 bits of each
/// offset, and where the offsets pass each multiple of 4 GiB (they only grow).
struct ObjectOffsets {
    private var low: [UInt32] = []
    /// The first object at or past each multiple of 4 GiB, from the first.
    private var highStarts: [Int] = []

    var count: Int { low.count }

    mutating func reserveCapacity(_ capacity: Int) {
        low.reserveCapacity(capacity)
    }

    /// Records the next object's offset, no smaller than the last one's.
    @inline(__always)
    mutating func append(_ offset: Int) {
        if offset >> 32 > highStarts.count { passHigh(offset) }
        low.append(UInt32(truncatingIfNeeded: offset))
    }

    @inline(never)
    private mutating func passHigh(_ offset: Int) {
        while highStarts.count < offset >> 32 { highStarts.append(low.count) }
    }

    /// Calls `body` with each offset, in order.
    @inline(__always)
    func forEveryOffset(_ body: (Int) -> Void) {
        var high = 0
        var nextHigh = highStarts.first ?? Int.max
        for index in low.indices {
            while index >= nextHigh {
                high += 1
                nextHigh = high < highStarts.count ? highStarts[high] : Int.max
            }
            body(high << 32 | Int(low[index]))
        }
    }
}

/// Ids of 64-bit values (integers, the bits of reals), each stored once: an open-addressing
/// table in place of a `Dictionary`, which hashes with SipHash and checks uniqueness on every
/// lookup. A value not found within ``maximumProbes`` slots is reported new (and stored again
/// by the caller), so values crafted to collide cost a bounded search each.
///
/// A value and its id share a slot, so a lookup touches one cache line: the colors of 10M
/// grid-state slots (24-bit, mostly distinct) take 2^25 slots (512 MB), looked up at random,
/// on huge pages (``PlainStack``).
struct WordTable: ~Copyable {
    struct Slot {
        var key: UInt64
        /// The id plus 1; 0 for an empty slot.
        var idPlusOne: UInt64
    }

    private var slots = PlainStack<Slot>(zeros: 64)
    private var count = 0

    static let maximumProbes = 32

    mutating func reserveCapacity(_ capacity: Int) {
        var size = slots.count
        while size < 2 * capacity { size *= 2 }
        if size > slots.count { rehash(size) }
    }

    @inline(__always)
    private static func slot(_ key: UInt64, mask: Int) -> Int {
        var mixed = key &* 0x9E37_79B9_7F4A_7C15
        mixed ^= mixed >> 29
        return Int(truncatingIfNeeded: mixed) & mask
    }

    /// The id stored for `key`, or nil.
    func id(of key: UInt64) -> Int? {
        let mask = slots.count &- 1
        var slot = Self.slot(key, mask: mask)
        for _ in 0..<Self.maximumProbes {
            let entry = slots[slot]
            if entry.idPlusOne == 0 { return nil }
            if entry.key == key { return Int(entry.idPlusOne) &- 1 }
            slot = (slot &+ 1) & mask
        }
        return nil
    }

    /// Records `key` under `id`; a key with no free slot within ``maximumProbes`` is not recorded.
    mutating func insert(_ key: UInt64, id: Int) {
        if 2 * (count + 1) > slots.count { rehash(2 * slots.count) }
        if place(key, id: id) { count += 1 }
    }

    private mutating func place(_ key: UInt64, id: Int) -> Bool {
        let mask = slots.count &- 1
        var slot = Self.slot(key, mask: mask)
        for _ in 0..<Self.maximumProbes {
            if slots[slot].idPlusOne == 0 {
                slots[slot] = Slot(key: key, idPlusOne: UInt64(id) &+ 1)
                return true
            }
            slot = (slot &+ 1) & mask
        }
        return false
    }

    private mutating func rehash(_ size: Int) {
        var old = PlainStack<Slot>(zeros: size)
        swap(&old, &slots)
        count = 0
        for index in 0..<old.count {
            let entry = old[index]
            if entry.idPlusOne != 0 && place(entry.key, id: Int(entry.idPlusOne) &- 1) { count += 1 }
        }
    }
}
