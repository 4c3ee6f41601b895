// Sources/GraphArchive/KeyedArchive/BPlistScanner.swift - checks a binary property list and indexes its objects
//
// The "bplist00" format (CoreFoundation's CFBinaryPList.c): an 8-byte magic, the objects, an
// offset table giving each object's start, and a 32-byte trailer. Every multi-byte number is
// big endian. Containers hold object references (indexes into the offset table), never nested
// bytes, so walking one never recurses here; the keyed-archive layer above decides what nests.

/// Object markers: the high nibble names the type, the low nibble holds a size or a count.
enum BPlistMarker {
    static let null: UInt8 = 0x00
    static let falseValue: UInt8 = 0x08
    static let trueValue: UInt8 = 0x09
    /// 0x1n: an integer of 2^n bytes (1, 2 and 4 unsigned, 8 signed, 16 unsigned in the low half).
    static let integer: UInt8 = 0x10
    /// 0x22: Float32, 0x23: Float64.
    static let real: UInt8 = 0x20
    /// Float64 seconds since 2001-01-01, the whole byte.
    static let date: UInt8 = 0x33
    static let data: UInt8 = 0x40
    static let asciiString: UInt8 = 0x50
    /// UTF-16 big endian; the count is in code units.
    static let utf16String: UInt8 = 0x60
    /// 0x8n: a keyed-archive UID of n + 1 bytes.
    static let uid: UInt8 = 0x80
    static let array: UInt8 = 0xA0
    static let set: UInt8 = 0xC0
    static let dictionary: UInt8 = 0xD0

    /// ``describe(_:)`` after its article: "an array", "a UID", "an integer".
    static func describeWithArticle(_ marker: UInt8) -> String {
        withIndefiniteArticle(describe(marker))
    }

    /// A name for the object a marker starts, for error messages.
    static func describe(_ marker: UInt8) -> String {
        switch marker & 0xF0 {
        case 0x00:
            switch marker {
            case null: "null"
            case falseValue, trueValue: "boolean"
            default: "unknown marker 0x\(String(marker, radix: 16))"
            }
        case integer: "integer"
        case real: "real"
        case 0x30: marker == date ? "date" : "unknown marker 0x\(String(marker, radix: 16))"
        case data: "data"
        case asciiString, utf16String: "string"
        case uid: "UID"
        case array: "array"
        case set: "set"
        case dictionary: "dictionary"
        default: "unknown marker 0x\(String(marker, radix: 16))"
        }
    }
}

/// One object's marker and, for strings, data and containers, its count and where its content
/// starts. A container's count has been checked to fit before the offset table.
struct BPlistObject {
    var index: Int
    var marker: UInt8
    var count: Int
    var contentStart: Int

    var type: UInt8 { marker & 0xF0 }
}

/// A container's references, read in order.
struct BPlistReferences {
    var cursor: ByteReader
    let width: Int
    let objectCount: Int
    let container: Int

    @inline(__always)
    mutating func next() throws(GraphArchiveError) -> Int {
        let reference = try cursor.readBigEndian(width: width)
        guard reference < UInt64(objectCount) else { throw outOfRange(reference) }
        return Int(reference)
    }

    /// Steps over the next reference, unread: one that was read and checked before.
    @inline(__always)
    mutating func skip() {
        // Cannot overflow: the container's references were checked to lie within the list.
        cursor.offset &+= width
    }

    @inline(never)
    private func outOfRange(_ reference: UInt64) -> GraphArchiveError {
        GraphArchiveError(
            .badObjectReference,
            "object \(container) refers to object \(reference), but the property list has \(objectCount)",
            offset: cursor.offset - width
        )
    }
}

/// A binary property list whose trailer and offset table are checked: every object starts
/// between the magic and the offset table, and references are as wide as the trailer says.
/// Object headers are read when an object is used (most are used once or twice), and checked
/// then: no string, data or container may run into the offset table.
struct BPlist {
    static let magic: [UInt8] = Array("bplist00".utf8)
    static let trailerSize = 32

    /// A reader over the whole property list. Its bytes are owned by the caller (an
    /// `ArchiveBytes` it holds, or `Data` lent through `ArchiveBytes.lending`) for the plist's lifetime.
    let reader: ByteReader
    /// Where the offset table starts: no object may reach past it.
    let objectsEnd: Int
    /// Where each object starts. (32 bits: the table is as large as the object count, and
    /// half the width is half the memory traffic; files over 4 GiB are refused.)
    private let offsets: [UInt32]
    /// Width of an object reference in containers, in bytes.
    let referenceSize: Int
    /// The root object's index.
    let top: Int

    var objectCount: Int { offsets.count }

    /// The error for input that does not start with ``magic``.
    static var badMagic: GraphArchiveError {
        GraphArchiveError(
            .badMagic,
            "not an NSKeyedArchiver archive (no \"bplist00\" binary property list magic)",
            offset: 0
        )
    }

    /// Whether `bytes` start like a binary property list.
    static func hasMagic(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: magic)
    }

    /// Checks the trailer and offset table of the property list `input` reads (from offset 0
    /// to its end) and indexes the objects.
    ///
    /// - Throws: `.badMagic` (not "bplist00"), `.truncated`, `.corrupt`, `.limitExceeded`.
    static func scan(_ input: ByteReader, maximumObjectCount: Int) throws(GraphArchiveError) -> BPlist {
        var reader = input
        reader.offset = 0
        let byteCount = reader.end
        let magicLength = min(magic.count, byteCount)
        for index in 0..<magicLength {
            guard try reader.readByte() == magic[index] else { throw badMagic }
        }
        // Magic, at least one object byte, and the trailer.
        guard byteCount >= magic.count + 1 + trailerSize else {
            throw GraphArchiveError(
                .truncated,
                "binary property list is too short (\(byteCount) bytes) to hold a trailer",
                offset: 0
            )
        }
        let trailerStart = byteCount - trailerSize
        reader.offset = trailerStart
        let trailer = try Trailer.read(&reader, byteCount: byteCount, maximumObjectCount: maximumObjectCount)
        let (tableStart, offsetSize) = (UInt64(trailer.tableStart), trailer.offsetSize)
        // Every offset once. The count is bounded by the table, itself bounded by the file.
        let count = trailer.objectCount
        let end = trailer.tableStart
        reader.offset = end
        let (offsets, outside) = try reader.bigEndianTable(
            count: count,
            width: offsetSize,
            within: UInt64(magic.count)..<tableStart
        )
        if let (index, offset) = outside {
            throw GraphArchiveError(
                .corrupt,
                "offset \(offset) of object \(index) lies outside the object data (8..<\(tableStart))",
                offset: end + index * offsetSize
            )
        }
        return BPlist(
            reader: input,
            objectsEnd: end,
            offsets: offsets,
            referenceSize: trailer.referenceSize,
            top: trailer.top
        )
    }

    /// The 32-byte trailer at the end of a binary property list, checked against the size of the
    /// whole list: a file's trailer is read and checked before the rest of the file is.
    struct Trailer {
        var offsetSize: Int
        var referenceSize: Int
        var objectCount: Int
        var top: Int
        var tableStart: Int

        /// Reads the trailer at `reader`'s offset, the last ``BPlist/trailerSize`` bytes of a
        /// property list of `byteCount` bytes.
        ///
        /// - Throws: `.corrupt` for a damaged trailer, `.limitExceeded` for a list over 4 GiB
        ///   or more objects than `maximumObjectCount`.
        static func read(
            _ reader: inout ByteReader,
            byteCount: Int,
            maximumObjectCount: Int
        ) throws(GraphArchiveError) -> Trailer {
            let trailerStart = byteCount - trailerSize
            try reader.skip(6)
            let offsetSize = Int(try reader.readByte())
            let referenceSize = Int(try reader.readByte())
            let objectCount = try reader.readBigEndian(width: 8)
            let top = try reader.readBigEndian(width: 8)
            let tableStart = try reader.readBigEndian(width: 8)

            func damaged(_ why: String) -> GraphArchiveError {
                GraphArchiveError(.corrupt, "binary property list trailer is damaged: \(why)", offset: trailerStart)
            }
            // Widths above 8 cannot be read into 64 bits; 0 cannot address anything.
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw damaged("offset size \(offsetSize) and reference size \(referenceSize) must be 1...8")
            }
            guard objectCount >= 1, top < objectCount else {
                throw damaged("top object \(top) is not one of the \(objectCount) objects")
            }
            // The objects lie between the magic and the offset table, which ends at the trailer.
            guard tableStart > UInt64(magic.count), tableStart < UInt64(trailerStart) else {
                throw damaged("offset table at \(tableStart) is outside the file")
            }
            let (tableSize, overflow) = objectCount.multipliedReportingOverflow(by: UInt64(offsetSize))
            guard !overflow, tableSize == UInt64(trailerStart) - tableStart else {
                throw damaged("\(objectCount) offsets of \(offsetSize) bytes do not fill the offset table")
            }
            // References must be wide enough to reach every object (CF refuses the file otherwise).
            guard referenceSize == 8 || objectCount <= 1 << (8 * UInt64(referenceSize)) else {
                throw damaged("\(referenceSize)-byte references cannot address \(objectCount) objects")
            }
            guard byteCount <= Int(UInt32.max) else {
                throw GraphArchiveError(.limitExceeded, "binary property lists over 4 GiB are not supported", offset: 0)
            }
            guard objectCount <= UInt64(maximumObjectCount) else {
                throw GraphArchiveError(
                    .limitExceeded,
                    "property list holds \(objectCount) objects, over maximumObjectCount (\(maximumObjectCount))",
                    offset: trailerStart + 8
                )
            }
            return Trailer(
                offsetSize: offsetSize,
                referenceSize: referenceSize,
                objectCount: Int(objectCount),
                top: Int(top),
                tableStart: Int(tableStart)
            )
        }
    }

    // MARK: - Objects

    /// The marker of object `index` and, for strings, data and containers, its count and where
    /// its content starts; for a UID, its value (UInt32.max if larger) as the count.
    ///
    /// - Throws: `.badObjectReference` for an index outside the table, `.corrupt` for a
    ///   malformed length or content that would run into the offset table.
    func object(_ index: Int) throws(GraphArchiveError) -> BPlistObject {
        guard index >= 0 && index < offsets.count else { throw outOfRange(index) }
        var cursor = reader
        cursor.offset = Int(offsets[index])
        let marker = try cursor.readByte()
        let nibble = Int(marker & 0x0F)
        let unit: Int
        switch marker & 0xF0 {
        case BPlistMarker.data, BPlistMarker.asciiString: unit = 1
        case BPlistMarker.utf16String: unit = 2
        case BPlistMarker.array, BPlistMarker.set: unit = referenceSize
        case BPlistMarker.dictionary: unit = 2 * referenceSize
        case BPlistMarker.uid:
            guard nibble < 8, nibble < objectsEnd - cursor.offset else {
                throw malformed(index, "is \(nibble + 1) bytes wide")
            }
            let value = try cursor.readBigEndian(width: nibble + 1)
            return BPlistObject(
                index: index,
                marker: marker,
                count: Int(UInt32(clamping: value)),
                contentStart: cursor.offset
            )
        default:
            // Fixed-size content is checked to fit when interpreted.
            return BPlistObject(index: index, marker: marker, count: 0, contentStart: cursor.offset)
        }
        var count = nibble
        if count == 0x0F {
            // A one-byte length (15...255: dates and names as strings, most arrays) is read
            // here; wider ones by `readLength`, which checks them.
            var length = cursor
            if try length.readByte() == BPlistMarker.integer {
                count = Int(try length.readBigEndian(width: 1))
                cursor = length
            } else {
                count = try readLength(&cursor, object: index)
            }
        }
        let (size, overflow) = count.multipliedReportingOverflow(by: unit)
        guard !overflow, size <= objectsEnd - cursor.offset else {
            throw malformed(index, "claims \(count) elements, more than the object data holds")
        }
        return BPlistObject(index: index, marker: marker, count: count, contentStart: cursor.offset)
    }

    /// Object `index` if it is an array or dictionary whose count is in its marker (under 15)
    /// and whose references end before the offset table, as ``object(_:)`` reads it; nil for
    /// anything else, which `object(_:)` then reads and checks (and reports, if damaged).
    /// Nothing is thrown: the short way for the instance dictionaries classified, with no call
    /// (`object(_:)` cost about 60 instructions an instance).
    @inline(__always)
    func smallContainer(_ index: Int) -> BPlistObject? {
        guard let (words, start) = leadingWords(index) else { return nil }
        let marker = UInt8(truncatingIfNeeded: words.0)
        let count = Int(marker & 0x0F)
        let unit: Int
        switch marker & 0xF0 {
        case BPlistMarker.dictionary: unit = 2 &* referenceSize
        case BPlistMarker.array: unit = referenceSize
        default: return nil
        }
        // `&*` and `&-`: count is below 15, the reference size at most 8, and the object
        // starts before the offset table.
        guard count < 0x0F && count &* unit <= objectsEnd &- (start &+ 1) else { return nil }
        return BPlistObject(index: index, marker: marker, count: count, contentStart: start &+ 1)
    }

    /// Container `index`, which ``object(_:)`` has read without error: when its count is in its
    /// marker (under 15) its size was checked then, and only the marker is read again.
    @inline(__always)
    func checkedContainer(_ index: Int) throws(GraphArchiveError) -> BPlistObject {
        let marker = try marker(index)
        // A count written as a separate length (allowed, if unusual) is read the whole way.
        guard marker & 0x0F < 0x0F else { return try object(index) }
        let contentStart = Int(offsets[index]) &+ 1
        return BPlistObject(index: index, marker: marker, count: Int(marker & 0x0F), contentStart: contentStart)
    }

    // This and `outOfRange` are static, given what they report: as methods they needed the
    // list in memory, and a caller reading it through the keyed index (a `let` of a `mutating`
    // method's `self`) copied all of it first, thrown or not (callgrind: a 64-byte copy, about
    // 14 instructions, per UID read).
    @inline(never)
    private static func malformed(_ index: Int, at offset: Int, in reader: ByteReader, _ problem: String)
        -> GraphArchiveError
    {
        var cursor = reader
        cursor.offset = offset
        let marker = (try? cursor.readByte()) ?? 0
        return GraphArchiveError(
            .corrupt,
            "\(BPlistMarker.describe(marker)) object \(index) \(problem)",
            offset: offset
        )
    }

    @inline(__always)
    private func malformed(_ index: Int, _ problem: String) -> GraphArchiveError {
        Self.malformed(index, at: Int(offsets[index]), in: reader, problem)
    }

    /// ``uidValue(_:)`` from one load of the object's first eight bytes, when they lie before
    /// the offset table and a UID there is at most four bytes wide (nearly every one): no
    /// cursor, and only the checks those bytes still need, for the values of every instance
    /// read. Anything else is left to ``uidValue(_:)``, which reads it as before and reports it.
    @inline(__always)
    func uidValueReadingOnce(_ index: Int) throws(GraphArchiveError) -> Int? {
        guard let (isUID, value) = shortUID(index) else { return try uidValue(index) }
        return isUID ? value : nil
    }

    /// The value of object `index` if it is a UID that ``uidValueReadingOnce(_:)`` reads from
    /// one load, else nil; nothing is thrown. For loading ahead of use what an array's
    /// elements refer to: an answer only makes a later read cheaper, never different.
    @inline(__always)
    func peekedUIDValue(_ index: Int) -> Int? {
        guard let (isUID, value) = shortUID(index), isUID else { return nil }
        return value
    }

    /// Whether object `index` is a UID, and its value, read from the object's first eight
    /// bytes; nil where they do not lie before the offset table or a UID is over four bytes wide.
    @inline(__always)
    private func shortUID(_ index: Int) -> (isUID: Bool, value: Int)? {
        guard index >= 0 && index < offsets.count else { return nil }
        let start = Int(offsets[index])
        guard start <= objectsEnd &- 8, let (head, _, _) = reader.paddedWords(at: start, count: 8) else { return nil }
        let marker = UInt8(truncatingIfNeeded: head)
        guard marker & 0xF0 == BPlistMarker.uid else { return (false, 0) }
        let width = Int(marker & 0x0F) &+ 1
        guard width <= 4 else { return nil }
        // The `width` bytes after the marker, big endian: byte-swapped, they are the highest.
        return (true, Int(truncatingIfNeeded: (head &>> 8).byteSwapped &>> UInt64(64 &- 8 &* width)))
    }

    /// The value of object `index` if it is a UID (UInt32.max if larger), else nil: the
    /// short way past `object(_:)` for the most common value in a keyed archive.
    @inline(__always)
    func uidValue(_ index: Int) throws(GraphArchiveError) -> Int? {
        guard index >= 0 && index < offsets.count else { throw outOfRange(index) }
        var cursor = reader
        cursor.offset = Int(offsets[index])
        let marker = try cursor.readByte()
        guard marker & 0xF0 == BPlistMarker.uid else { return nil }
        guard marker & 0x0F < 8, Int(marker & 0x0F) < objectsEnd - cursor.offset else {
            throw malformed(index, "is \(marker & 0x0F + 1) bytes wide")
        }
        return Int(UInt32(clamping: try cursor.readBigEndian(width: Int(marker & 0x0F) + 1)))
    }

    /// The bytes of object `index` as three zero-padded little-endian words and the length, if
    /// it is an ASCII string of at most 24 bytes, else nil: the short way for dictionary keys,
    /// compared without making a `String`.
    @inline(__always)
    func shortASCIIWords(_ index: Int) throws(GraphArchiveError) -> (
        first: UInt64, second: UInt64, third: UInt64, length: Int
    )? {
        guard index >= 0 && index < offsets.count else { throw outOfRange(index) }
        var cursor = reader
        cursor.offset = Int(offsets[index])
        let marker = try cursor.readByte()
        guard marker & 0xF0 == BPlistMarker.asciiString else { return nil }
        var length = Int(marker & 0x0F)
        if length == 0x0F {
            // A longer key ("kEncodeKeyColor" has 15 bytes) has its length in a 1-byte integer
            // object next; longer lengths take the general path.
            guard try cursor.readByte() == BPlistMarker.integer else { return nil }
            length = Int(try cursor.readByte())
            guard length <= 24 else { return nil }
        }
        guard length <= objectsEnd - cursor.offset else {
            throw malformed(index, "claims \(length) elements, more than the object data holds")
        }
        let first = length > 0 ? try cursor.readPadded(min(length, 8)) : 0
        let second = length > 8 ? try cursor.readPadded(min(length - 8, 8)) : 0
        let third = length > 16 ? try cursor.readPadded(length - 16) : 0
        return (first, second, third, length)
    }

    /// Object `index` as a dictionary key's words if it is an ASCII string of at most 24 bytes
    /// that ends before the offset table (its length in the marker, or in a one-byte integer
    /// after 0x5F) and has 24 bytes after its content start; nil for anything else, which
    /// the caller then examines the thorough way. Nothing is thrown: the short way for the
    /// keys Foundation writes anew for every instance.
    @inline(__always)
    func shortASCIIKey(_ index: Int) -> KeyWords? {
        guard index >= 0 && index < offsets.count else { return nil }
        let start = Int(offsets[index])
        guard let head = reader.paddedWords(at: start, count: 3), head.0 & 0xF0 == UInt64(BPlistMarker.asciiString)
        else { return nil }
        var length = Int(head.0 & 0x0F)
        var content = start &+ 1
        if length == 0x0F {
            // 0x5F, then the length as a one-byte integer (0x10, length).
            guard head.0 >> 8 & 0xFF == UInt64(BPlistMarker.integer) else { return nil }
            length = Int(head.0 >> 16 & 0xFF)
            content &+= 2
        }
        guard length <= KeyWords.maximumLength && length <= objectsEnd &- content,
            let words = reader.paddedWords(at: content, count: length)
        else { return nil }
        return KeyWords(words, length: length)
    }

    /// Object `index` whole (marker, length and text) as zero-padded words and its length in
    /// bytes, if it is an ASCII string that fits 24 bytes so and ends before the offset table;
    /// else nil. Two such strings are equal if their images are.
    @inline(__always)
    func shortASCIIImage(_ index: Int) -> KeyWords? {
        guard index >= 0 && index < offsets.count else { return nil }
        let start = Int(offsets[index])
        guard let head = reader.paddedWords(at: start, count: KeyWords.maximumLength),
            head.0 & 0xF0 == UInt64(BPlistMarker.asciiString)
        else { return nil }
        var length = Int(head.0 & 0x0F) &+ 1
        if length == 0x10 {
            // 0x5F, then the length as a one-byte integer (0x10, length).
            guard head.0 >> 8 & 0xFF == UInt64(BPlistMarker.integer) else { return nil }
            length = Int(head.0 >> 16 & 0xFF) &+ 3
        }
        guard length <= KeyWords.maximumLength && length <= objectsEnd &- start else { return nil }
        // The words already read, cut to the string's bytes.
        let bits = UInt64(truncatingIfNeeded: length &* 8)
        let low: (UInt64) -> UInt64 = { $0 >= 64 ? ~0 : (1 &<< $0) &- 1 }
        return KeyWords(
            (head.0 & low(bits), bits > 64 ? head.1 & low(bits &- 64) : 0, bits > 128 ? head.2 & low(bits &- 128) : 0),
            length: length
        )
    }

    /// The 24 bytes from the start of object `index` as little-endian words, and where it
    /// starts, if the list holds 24 bytes there; nil otherwise, or for an index out of range.
    @inline(__always)
    func leadingWords(_ index: Int) -> (words: (UInt64, UInt64, UInt64), start: Int)? {
        guard index >= 0 && index < offsets.count else { return nil }
        let start = Int(offsets[index])
        guard let words = reader.paddedWords(at: start, count: 24) else { return nil }
        return (words, start)
    }

    /// The key references of dictionary `object` as little-endian words, zero past them, if
    /// they take at most 24 bytes and the list holds 24 bytes from their start; nil otherwise.
    /// Two dictionaries with the same words list the same key objects in the same order.
    @inline(__always)
    func keyReferenceWords(of object: BPlistObject) -> (UInt64, UInt64, UInt64)? {
        let length = object.count &* referenceSize
        guard length <= 24 else { return nil }
        return reader.paddedWords(at: object.contentStart, count: length)
    }

    /// Where the key objects of dictionary `object` lie, if it has 1 to 8 keys whose objects
    /// start less than 64 bytes after the first key's, the one that starts last is an ASCII
    /// string's header (0x5n, or 0x5F 0x10 and a length) whose string ends within 64 bytes of
    /// the first key's start, and the list holds 64 bytes from there (as Foundation on Linux
    /// writes keys: each instance's anew, one after another); nil otherwise, or for a
    /// reference out of range. Nothing is thrown.
    /// `masks` is ``EightWords/masks``, which the caller keeps.
    @inline(__always)
    func keyLayout(of object: BPlistObject, masks: [EightWords]) -> KeyLayout? {
        let count = object.count
        guard count >= 1 && count <= KeyLayout.maximumKeys else { return nil }
        var keys = references(of: object)
        guard let first = try? keys.next() else { return nil }
        let start = Int(offsets[first])
        var distances: UInt64 = 0
        var last = 0
        for position in 1..<count {
            guard let key = try? keys.next() else { return nil }
            let distance = Int(offsets[key]) &- start
            guard distance >= 0 && distance < 64 else { return nil }
            distances |= UInt64(truncatingIfNeeded: distance) &<< UInt64(8 &* position)
            last = max(last, distance)
        }
        // The header of the string that starts last tells where the keys end.
        guard let (header, _, _) = reader.paddedWords(at: start &+ last, count: 3) else { return nil }
        var end = last &+ 1 &+ Int(truncatingIfNeeded: header & 0x0F)
        switch header & 0xFF {
        case 0x50..<0x5F: break
        case 0x5F where header &>> 8 & 0xFF == UInt64(BPlistMarker.integer):
            end = last &+ 3 &+ Int(truncatingIfNeeded: header &>> 16 & 0xFF)
        default: return nil
        }
        guard let bytes = reader.eightWords(at: start, count: end, masks: masks) else { return nil }
        return KeyLayout(start: start, distances: distances, length: end, bytes: bytes)
    }

    /// The marker of object `index`, which must exist.
    @inline(__always)
    func marker(_ index: Int) throws(GraphArchiveError) -> UInt8 {
        var cursor = reader
        cursor.offset = Int(offsets[index])
        return try cursor.readByte()
    }

    @inline(never)
    private static func outOfRange(_ index: Int, objectCount: Int) -> GraphArchiveError {
        GraphArchiveError(
            .badObjectReference,
            "reference to object \(index), but the property list has \(objectCount)"
        )
    }

    @inline(__always)
    private func outOfRange(_ index: Int) -> GraphArchiveError {
        Self.outOfRange(index, objectCount: offsets.count)
    }

    /// Reads the integer object that follows a 0xF count nibble.
    private func readLength(_ cursor: inout ByteReader, object: Int) throws(GraphArchiveError) -> Int {
        let start = cursor.offset
        let marker = try cursor.readByte()
        guard marker & 0xF0 == BPlistMarker.integer, marker & 0x0F <= 3 else {
            throw GraphArchiveError(
                .corrupt,
                "object \(object) has a malformed length (marker 0x\(String(marker, radix: 16)))",
                offset: start
            )
        }
        let length = try cursor.readBigEndian(width: 1 << Int(marker & 0x0F))
        guard length <= UInt64(Int.max) else {
            throw GraphArchiveError(.corrupt, "object \(object) has a negative length", offset: start)
        }
        return Int(length)
    }

    /// The object index held in slot `position` of an array or dictionary (a dictionary's
    /// values follow its `count` keys).
    @inline(__always)
    func reference(in container: BPlistObject, at position: Int) throws(GraphArchiveError) -> Int {
        var references = references(of: container, from: position)
        return try references.next()
    }

    /// The references of `container` from slot `position` on, to read one after another.
    @inline(__always)
    func references(of container: BPlistObject, from position: Int = 0) -> BPlistReferences {
        var cursor = reader
        // Cannot overflow: the scan checked count * unit against the bytes left.
        cursor.offset = container.contentStart &+ position &* referenceSize
        return BPlistReferences(
            cursor: cursor,
            width: referenceSize,
            objectCount: offsets.count,
            container: container.index
        )
    }

    /// Every reference of `container`, each checked to name an object of the list.
    func referenceTable(of container: BPlistObject) throws(GraphArchiveError) -> [UInt32] {
        var cursor = reader
        cursor.offset = container.contentStart
        let (table, outside) = try cursor.bigEndianTable(
            count: container.count,
            width: referenceSize,
            within: 0..<UInt64(offsets.count)
        )
        if let (position, reference) = outside {
            var references = references(of: container, from: position)
            _ = try references.next()
            // `next` throws for the reference `bigEndianTable` stopped at.
            throw GraphArchiveError(.badObjectReference, "object \(container.index) refers to object \(reference)")
        }
        return table
    }

    /// Appends the `count` bytes at `start` to `writer` as they are.
    @inline(__always)
    func copyBytes(from start: Int, count: Int, into writer: inout ByteWriter) throws(GraphArchiveError) {
        try reader.copyBytes(from: start, count: count, into: &writer)
    }

    /// The two plain values an instance's fields hold most, read from the object's first bytes
    /// without `object(_:)`.
    enum CommonValue {
        /// An ASCII string of at most 255 bytes: where its content starts, and its length.
        case asciiString(start: Int, count: Int)
        /// An integer of 1, 2 or 4 bytes (unsigned).
        case integer(UInt64)
    }

    /// Object `index` if it is one of the ``CommonValue``s and its content ends before the
    /// offset table; nil for anything else, which `object(_:)` then reads and checks (and
    /// reports, if damaged).
    @inline(__always)
    func commonValue(_ index: Int) -> CommonValue? {
        guard index >= 0 && index < offsets.count else { return nil }
        let start = Int(offsets[index])
        guard let (head, _, _) = reader.paddedWords(at: start, count: 8) else { return nil }
        let marker = UInt8(truncatingIfNeeded: head)
        switch marker {
        case BPlistMarker.asciiString..<(BPlistMarker.asciiString | 0x0F):
            let count = Int(marker & 0x0F)
            guard count <= objectsEnd &- (start &+ 1) else { return nil }
            return .asciiString(start: start &+ 1, count: count)
        case BPlistMarker.asciiString | 0x0F:
            // The length as a one-byte integer (0x10, length), as `object(_:)` reads it.
            guard head >> 8 & 0xFF == UInt64(BPlistMarker.integer) else { return nil }
            let count = Int(head >> 16 & 0xFF)
            guard count <= objectsEnd &- (start &+ 3) else { return nil }
            return .asciiString(start: start &+ 3, count: count)
        case BPlistMarker.integer...(BPlistMarker.integer | 2):
            let width = 1 &<< Int(marker & 0x0F)
            guard width <= objectsEnd &- (start &+ 1) else { return nil }
            // The `width` bytes after the marker, big endian.
            let bytes = head >> 8 & ((1 &<< UInt64(8 &* width)) &- 1)
            return .integer(bytes.byteSwapped &>> UInt64(64 &- 8 &* width))
        default:
            return nil
        }
    }

    /// The first 24 bytes of string or data `object` as three little-endian words, zero past
    /// its end (for comparing short keys without making a `String`).
    @inline(__always)
    func words(of object: BPlistObject) throws(GraphArchiveError) -> (UInt64, UInt64, UInt64) {
        var cursor = reader
        cursor.offset = object.contentStart
        var left = object.count
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        if left > 0 {
            words.0 = try cursor.readPadded(min(left, 8))
            left -= min(left, 8)
        }
        if left > 0 {
            words.1 = try cursor.readPadded(min(left, 8))
            left -= min(left, 8)
        }
        if left > 0 { words.2 = try cursor.readPadded(min(left, 8)) }
        return words
    }

    // MARK: - Scalars

    /// A UID's value (the keyed archive's index into `$objects`); a value beyond 32 bits comes
    /// back as UInt32.max, out of range of any `$objects`.
    @inline(__always)
    func uid(_ object: BPlistObject) -> Int { object.count }

    /// An integer object: its value, and whether it is the unsigned 64-bit form (16 bytes with
    /// a zero high half, how CF stores values above Int64.max).
    func integer(_ object: BPlistObject) throws(GraphArchiveError) -> (bits: UInt64, isUnsigned: Bool) {
        try checkFits(object, 1 << Int(min(object.marker & 0x0F, 4)))
        var cursor = reader
        cursor.offset = object.contentStart
        switch object.marker & 0x0F {
        case 0, 1, 2:
            return (try cursor.readBigEndian(width: 1 << Int(object.marker & 0x0F)), false)
        case 3:
            return (try cursor.readBigEndian(width: 8), false)
        case 4:
            let high = try cursor.readBigEndian(width: 8)
            let low = try cursor.readBigEndian(width: 8)
            guard high == 0 else {
                throw GraphArchiveError(
                    .valueOutOfRange,
                    "128-bit integer object \(object.index) does not fit 64 bits",
                    offset: Int(offsets[object.index])
                )
            }
            return (low, true)
        default:
            throw GraphArchiveError(
                .corrupt,
                "integer object \(object.index) has an invalid size",
                offset: Int(offsets[object.index])
            )
        }
    }

    /// An integer object as the high and low halves of a 128-bit two's complement number:
    /// 1, 2 and 4-byte integers are unsigned, 8-byte ones signed, 16-byte ones as stored (CF's
    /// form for values above Int64.max, and for any 128-bit number).
    func wideInteger(_ object: BPlistObject) throws(GraphArchiveError) -> (high: Int64, low: UInt64) {
        guard object.marker & 0x0F == 4 else {
            let (bits, _) = try integer(object)
            // 8-byte integers are signed: their sign fills the high half.
            let isNegative = object.marker & 0x0F == 3 && Int64(bitPattern: bits) < 0
            return (isNegative ? -1 : 0, bits)
        }
        try checkFits(object, 16)
        var cursor = reader
        cursor.offset = object.contentStart
        let high = try cursor.readBigEndian(width: 8)
        return (Int64(bitPattern: high), try cursor.readBigEndian(width: 8))
    }

    /// A real or date object's value; `isSingle` for a 4-byte real.
    func real(_ object: BPlistObject) throws(GraphArchiveError) -> (value: Double, isSingle: Bool) {
        try checkFits(object, object.marker == BPlistMarker.real | 2 ? 4 : 8)
        var cursor = reader
        cursor.offset = object.contentStart
        switch object.marker {
        case BPlistMarker.real | 2:
            return (Double(Float(bitPattern: UInt32(try cursor.readBigEndian(width: 4)))), true)
        case BPlistMarker.real | 3, BPlistMarker.date:
            return (Double(bitPattern: try cursor.readBigEndian(width: 8)), false)
        default:
            throw GraphArchiveError(
                .corrupt,
                "real object \(object.index) has an invalid size",
                offset: Int(offsets[object.index])
            )
        }
    }

    /// Checks that `size` bytes of fixed-size content fit before the offset table.
    @inline(__always)
    private func checkFits(_ object: BPlistObject, _ size: Int) throws(GraphArchiveError) {
        guard size <= objectsEnd - object.contentStart else {
            throw malformed(object.index, "runs into the offset table")
        }
    }

    /// A string object's text (ASCII or UTF-16 big endian).
    func string(_ object: BPlistObject) throws(GraphArchiveError) -> String {
        var cursor = reader
        cursor.offset = object.contentStart
        switch object.type {
        case BPlistMarker.asciiString:
            // Validated as UTF-8, a superset of ASCII: a stray high byte is an error, not a crash.
            return try cursor.readString(count: object.count)
        case BPlistMarker.utf16String:
            let bytes = try cursor.readBytes(count: 2 * object.count)
            var units: [UInt16] = []
            units.reserveCapacity(object.count)
            for index in 0..<object.count {
                units.append(UInt16(bytes[2 * index]) << 8 | UInt16(bytes[2 * index + 1]))
            }
            guard let string = String(validating: units, as: UTF16.self) else {
                throw GraphArchiveError(
                    .invalidUTF8,
                    "string object \(object.index) is not valid UTF-16",
                    offset: Int(offsets[object.index])
                )
            }
            return string
        default:
            throw GraphArchiveError(
                .typeMismatch,
                "expected a string, found \(BPlistMarker.describeWithArticle(object.marker)) (object \(object.index))",
                offset: Int(offsets[object.index])
            )
        }
    }

    /// A data object's bytes.
    func data(_ object: BPlistObject) throws(GraphArchiveError) -> [UInt8] {
        var cursor = reader
        cursor.offset = object.contentStart
        return try cursor.readBytes(count: object.count)
    }

    /// The byte offset of object `index`, for error messages.
    func offset(of index: Int) -> Int? {
        index >= 0 && index < offsets.count ? Int(offsets[index]) : nil
    }
}

extension ByteReader {
    /// Reads `width` (1...8) bytes as a big-endian unsigned integer.
    @inline(__always)
    mutating func readBigEndian(width: Int) throws(GraphArchiveError) -> UInt64 {
        // A little-endian read puts the first byte lowest; swapping and shifting puts it
        // highest. Where 8 bytes remain (nearly always), one unaligned load and a step back
        // beat a byte loop; this path is kept small so it inlines into every table walk.
        guard remaining >= 8 else { return try readBigEndianNearEnd(width: width) }
        let word = try readLittleEndian(width: 8)
        offset &-= 8 &- width  // cannot overflow: width is 1...8 and 8 bytes were just read
        // Masking shifts: the amount is 0...56, and a plain `>>` checks for 64 and beyond.
        return word.byteSwapped &>> UInt64(64 &- 8 &* width)
    }

    @inline(never)
    private mutating func readBigEndianNearEnd(width: Int) throws(GraphArchiveError) -> UInt64 {
        try readLittleEndian(width: width).byteSwapped &>> UInt64(64 - 8 * width)
    }
}

extension ByteReader {
    /// Reads `width` (1...8) bytes little endian, as a word whose higher bytes are zero.
    @inline(__always)
    mutating func readPadded(_ width: Int) throws(GraphArchiveError) -> UInt64 {
        guard width < 8 && remaining >= 8 else { return try readLittleEndian(width: width) }
        let word = try readLittleEndian(width: 8)
        offset -= 8 - width
        return word & ((1 &<< UInt64(8 &* width)) &- 1)
    }
}

extension ByteWriter {
    /// Writes the low `width` (1...8) bytes of `value`, big endian.
    mutating func writeBigEndian(_ value: UInt64, width: Int) {
        writeLittleEndian(value.byteSwapped &>> UInt64(64 - 8 * width), width: width)
    }
}
