// Sources/GraphArchive/KeyedArchive/BPlistWriter.swift - writes a binary property list ("bplist00")

/// Builds a binary property list object by object, then writes it in one go.
///
/// Scalars are encoded as they are added (equal ASCII strings, numbers, booleans and UIDs are
/// stored once, as CF's writer does); containers keep their references until
/// ``finish(top:)``, when the object count, and so the reference width, is known. Containers
/// are built on a stack: push the references of the elements (for a dictionary: key, value,
/// key, value…), then close the container from the stack position where it began.
struct BPlistWriter: ~Copyable {
    /// Encoded scalars, back to back.
    private var scalars = ByteWriter(reservingCapacity: 1 << 12)
    /// Per object: its offset in `scalars`, or -1 - its index among the containers.
    private var locations: [Int] = []
    private var containerMarkers: [UInt8] = []
    private var containerCounts: [Int] = []
    private var containerStarts: [Int] = []
    /// References of closed containers (a dictionary's keys, then its values).
    private var references: [Int] = []
    /// References of containers being built.
    private var pending: [Int] = []

    /// The ASCII strings stored, by their bytes in `scalars`.
    private var strings = ByteStringTable()
    private var integers = WordTable()
    private var reals = WordTable()
    private var uids: [Int] = []
    /// The object of each UID beyond the dense table's reach, by value.
    private var sparseUIDs: [Int: Int] = [:]
    private var booleans: [Int] = [-1, -1]

    var objectCount: Int { locations.count }

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
            Self.writeHeader(BPlistMarker.utf16String, count: value.utf16.count, into: &scalars)
            for unit in value.utf16 { scalars.writeBigEndian(UInt64(unit), width: 2) }
            return id
        }
        if let id = ByteReader.withUTF8(of: value, { asciiString($0, count: count) }) { return id }
        // Not reached (the bytes are ASCII and all there); stored without the table.
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.asciiString, count: count, into: &scalars)
        scalars.writeUTF8(value)
        return id
    }

    /// The string object of the `count` bytes at `reader`'s position if they are ASCII (stored
    /// once each), else nil: the caller reads them as UTF-8 and writes them with
    /// ``string(_:)``. Nil too if fewer than `count` bytes are left.
    mutating func asciiString(_ reader: ByteReader, count: Int) -> Int? {
        guard let (hash, isASCII) = ByteStringTable.fingerprint(reader, count: count), isASCII else { return nil }
        if let id = strings.id(of: reader, count: count, hash: hash, in: scalars) { return id }
        var end = reader
        guard (try? end.skip(count)) != nil else { return nil }
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.asciiString, count: count, into: &scalars)
        let offset = scalars.count
        end.copyPassed(from: reader.offset, into: &scalars)
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
        locations.reserveCapacity(8 * records)
        references.reserveCapacity(12 * records)
        containerMarkers.reserveCapacity(2 * records)
        containerCounts.reserveCapacity(2 * records)
        containerStarts.reserveCapacity(2 * records)
        uids.reserveCapacity(4 * records)
        if scalars.count == 0 { scalars = ByteWriter(reservingCapacity: bytes) }
    }

    mutating func integer(_ value: Int64) -> Int {
        let bits = UInt64(bitPattern: value)
        if let id = integers.id(of: bits) { return id }
        let id = beginScalar()
        Self.writeInteger(value, into: &scalars)
        integers.insert(bits, id: id)
        return id
    }

    /// An unsigned integer; values above Int64.max take CF's 16-byte form.
    mutating func unsigned(_ value: UInt64) -> Int {
        guard value > UInt64(Int64.max) else { return integer(Int64(value)) }
        let id = beginScalar()
        scalars.writeByte(BPlistMarker.integer | 4)
        scalars.writeBigEndian(0, width: 8)
        scalars.writeBigEndian(value, width: 8)
        return id
    }

    /// A 16-byte integer of halves `high` and `low` (two's complement), as CF stores integers
    /// beyond 64 bits.
    mutating func integer128(high: Int64, low: UInt64) -> Int {
        let id = beginScalar()
        scalars.writeByte(BPlistMarker.integer | 4)
        scalars.writeBigEndian(UInt64(bitPattern: high), width: 8)
        scalars.writeBigEndian(low, width: 8)
        return id
    }

    mutating func double(_ value: Double) -> Int {
        let key = value.bitPattern
        if let id = reals.id(of: key) { return id }
        let id = beginScalar()
        scalars.writeByte(BPlistMarker.real | 3)
        scalars.writeBigEndian(key, width: 8)
        reals.insert(key, id: id)
        return id
    }

    mutating func float(_ value: Float) -> Int {
        let id = beginScalar()
        scalars.writeByte(BPlistMarker.real | 2)
        scalars.writeBigEndian(UInt64(value.bitPattern), width: 4)
        return id
    }

    /// A date: seconds since 2001-01-01, as CF's `<date>` (keyed archives store NSDate as a class).
    mutating func date(_ seconds: Double) -> Int {
        let id = beginScalar()
        scalars.writeByte(BPlistMarker.date)
        scalars.writeBigEndian(seconds.bitPattern, width: 8)
        return id
    }

    mutating func bool(_ value: Bool) -> Int {
        let slot = value ? 1 : 0
        if booleans[slot] >= 0 { return booleans[slot] }
        let id = beginScalar()
        scalars.writeByte(value ? BPlistMarker.trueValue : BPlistMarker.falseValue)
        booleans[slot] = id
        return id
    }

    mutating func data(_ bytes: [UInt8]) -> Int {
        let id = beginScalar()
        Self.writeHeader(BPlistMarker.data, count: bytes.count, into: &scalars)
        scalars.writeBytes(bytes)
        return id
    }

    /// A keyed-archive UID, in the fewest of 1, 2, 4 or 8 bytes.
    mutating func uid(_ value: Int) -> Int {
        if !sparseUIDs.isEmpty, let id = sparseUIDs[value] { return id }
        // The dense table grows only as far as the output could refer: an XML plist of a few
        // bytes may name UID 2^32 - 1.
        let isDense = value < Swift.max(uids.capacity, Self.denseUIDMinimum, 2 * locations.count)
        if isDense && value < uids.count && uids[value] >= 0 { return uids[value] }
        let id = beginScalar()
        let width = Self.width(UInt64(value))
        scalars.writeByte(BPlistMarker.uid | UInt8(width - 1))
        scalars.writeBigEndian(UInt64(value), width: width)
        if isDense {
            while uids.count <= value { uids.append(-1) }
            uids[value] = id
        } else {
            sparseUIDs[value] = id
        }
        return id
    }

    /// UIDs the dense table holds whatever the output's size.
    private static let denseUIDMinimum = 1 << 16

    private mutating func beginScalar() -> Int {
        locations.append(scalars.count)
        return locations.count - 1
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
        let containerStart = references.count
        references.append(contentsOf: pending[start...])
        return close(BPlistMarker.array, count: pending.count - start, from: start, containerStart: containerStart)
    }

    /// Closes a dictionary of the key, value pairs pushed since `start`.
    mutating func closeDictionary(from start: Int) -> Int {
        let containerStart = references.count
        for position in stride(from: start, to: pending.count, by: 2) { references.append(pending[position]) }
        for position in stride(from: start + 1, to: pending.count, by: 2) { references.append(pending[position]) }
        return close(
            BPlistMarker.dictionary,
            count: (pending.count - start) / 2,
            from: start,
            containerStart: containerStart
        )
    }

    private mutating func close(_ marker: UInt8, count: Int, from start: Int, containerStart: Int) -> Int {
        containerMarkers.append(marker)
        containerCounts.append(count)
        containerStarts.append(containerStart)
        pending.removeLast(pending.count - start)
        locations.append(-containerMarkers.count)
        return locations.count - 1
    }

    // MARK: - Finishing

    /// The property list's bytes, with object `top` as its root.
    consuming func finish(top: Int) -> ByteWriter {
        let count = locations.count
        let referenceSize = Self.width(UInt64(max(count - 1, 0)))
        var output = ByteWriter(
            reservingCapacity: 8 + scalars.count + references.count * referenceSize + count * 8 + 32
        )
        output.writeBytes(BPlist.magic)
        let scalarBase = output.count
        output.writeBytes(of: scalars)
        var containerOffsets: [Int] = []
        containerOffsets.reserveCapacity(containerMarkers.count)
        for container in containerMarkers.indices {
            containerOffsets.append(output.count)
            Self.writeHeader(containerMarkers[container], count: containerCounts[container], into: &output)
            let start = containerStarts[container]
            let referenceCount =
                containerMarkers[container] == BPlistMarker.dictionary
                ? 2 * containerCounts[container] : containerCounts[container]
            for reference in references[start..<(start + referenceCount)] {
                output.writeBigEndian(UInt64(reference), width: referenceSize)
            }
        }
        let tableStart = output.count
        let offsetSize = Self.width(UInt64(tableStart))
        for location in locations {
            let offset = location >= 0 ? scalarBase + location : containerOffsets[-1 - location]
            output.writeBigEndian(UInt64(offset), width: offsetSize)
        }
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

/// Ids of 64-bit values (integers, the bits of reals), each stored once: an open-addressing
/// table in place of a `Dictionary`, which hashes with SipHash and checks uniqueness on every
/// lookup. A value not found within ``maximumProbes`` slots is reported new (and stored again
/// by the caller), so values crafted to collide cost a bounded search each.
struct WordTable {
    private var keys: [UInt64] = Array(repeating: 0, count: 64)
    /// Per slot: the id of the value in `keys`, or -1 for an empty slot.
    private var ids: [Int] = Array(repeating: -1, count: 64)
    private var count = 0

    static let maximumProbes = 32

    mutating func reserveCapacity(_ capacity: Int) {
        var size = ids.count
        while size < 2 * capacity { size *= 2 }
        if size > ids.count { rehash(size) }
    }

    @inline(__always)
    private static func slot(_ key: UInt64, mask: Int) -> Int {
        var mixed = key &* 0x9E37_79B9_7F4A_7C15
        mixed ^= mixed >> 29
        return Int(truncatingIfNeeded: mixed) & mask
    }

    /// The id stored for `key`, or nil.
    func id(of key: UInt64) -> Int? {
        let mask = ids.count &- 1
        var slot = Self.slot(key, mask: mask)
        for _ in 0..<Self.maximumProbes {
            let id = ids[slot]
            if id < 0 { return nil }
            if keys[slot] == key { return id }
            slot = (slot &+ 1) & mask
        }
        return nil
    }

    /// Records `key` under `id`; a key with no free slot within ``maximumProbes`` is not recorded.
    mutating func insert(_ key: UInt64, id: Int) {
        if 2 * (count + 1) > ids.count { rehash(2 * ids.count) }
        if place(key, id: id) { count += 1 }
    }

    private mutating func place(_ key: UInt64, id: Int) -> Bool {
        let mask = ids.count &- 1
        var slot = Self.slot(key, mask: mask)
        for _ in 0..<Self.maximumProbes {
            if ids[slot] < 0 {
                keys[slot] = key
                ids[slot] = id
                return true
            }
            slot = (slot &+ 1) & mask
        }
        return false
    }

    private mutating func rehash(_ size: Int) {
        let (oldKeys, oldIDs) = (keys, ids)
        keys = Array(repeating: 0, count: size)
        ids = Array(repeating: -1, count: size)
        count = 0
        for slot in oldIDs.indices where oldIDs[slot] >= 0 && place(oldKeys[slot], id: oldIDs[slot]) {
            count += 1
        }
    }
}
