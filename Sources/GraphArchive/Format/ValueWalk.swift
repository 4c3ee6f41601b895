// Sources/GraphArchive/Format/ValueWalk.swift - the one walk over tagged values (FORMAT.md §6)
//
// How long each tag's payload is and what it holds is known here and nowhere else: skipping and
// checking values (`ValueScanner`), copying them with their references renumbered
// (`ObjectOrdering`), counting their references and handing them to a `GraphVisitor` (the keyed
// writer, the JSON and tree outputs) are visitors of this walk. A new tag is one case here, and
// a hook in `TaggedValueVisitor` if it holds something no visitor has seen yet.

/// What a walk over tagged values reports, value by value, in the order the bytes hold them.
///
/// Every hook has a default that does nothing, so a visitor implements only what it needs;
/// the walk is generic and specialised for each visitor, so the hooks it leaves out cost
/// nothing. The walk has checked what it reports: tags, lengths, nesting depth, object
/// indexes and shape ids against its ``ValueScanner``'s limits.
protocol TaggedValueVisitor: ~Copyable {
    /// A value that holds no other value, already stepped over: its tag is at `start`, its
    /// payload (bytes, string or number, after any length) from `payload` to `reader.offset`.
    /// ``TaggedScalar/init(at:payload:in:)`` says what it is.
    mutating func scalar(at start: Int, payload: Int, in reader: ByteReader) throws(GraphArchiveError)
    /// An object reference (FORMAT.md §6.4) to object `index`.
    mutating func reference(_ index: Int, at start: Int) throws(GraphArchiveError)
    /// A packed reference array (§6.5) of `count` references, each reported by
    /// ``referenceArrayEntry(_:at:)``; then ``endReferenceArray()``. `reader` is at the first
    /// entry; `count` is as stored, not yet checked against the bytes left.
    mutating func beginReferenceArray(count: Int, at start: Int, in reader: ByteReader) throws(GraphArchiveError)
    mutating func referenceArrayEntry(_ index: Int, at offset: Int) throws(GraphArchiveError)
    mutating func endReferenceArray() throws(GraphArchiveError)
    /// An array, a dictionary or a record (an object's body, or a value record): then each
    /// value in it between ``beginElement(_:of:)`` and ``endElement(of:)``, then
    /// ``end(_:)``.
    mutating func begin(_ container: TaggedContainer, at start: Int) throws(GraphArchiveError)
    /// Before value `position` of `container` (a dictionary's keys and values alternate).
    mutating func beginElement(_ position: Int, of container: TaggedContainer) throws(GraphArchiveError)
    mutating func endElement(of container: TaggedContainer)
    mutating func end(_ container: TaggedContainer) throws(GraphArchiveError)
}

extension TaggedValueVisitor where Self: ~Copyable {
    @inline(__always)
    mutating func scalar(at start: Int, payload: Int, in reader: ByteReader) throws(GraphArchiveError) {}
    @inline(__always)
    mutating func reference(_ index: Int, at start: Int) throws(GraphArchiveError) {}
    @inline(__always)
    mutating func beginReferenceArray(count: Int, at start: Int, in reader: ByteReader) throws(GraphArchiveError) {}
    @inline(__always)
    mutating func referenceArrayEntry(_ index: Int, at offset: Int) throws(GraphArchiveError) {}
    @inline(__always)
    mutating func endReferenceArray() throws(GraphArchiveError) {}
    @inline(__always)
    mutating func begin(_ container: TaggedContainer, at start: Int) throws(GraphArchiveError) {}
    @inline(__always)
    mutating func beginElement(_ position: Int, of container: TaggedContainer) throws(GraphArchiveError) {}
    @inline(__always)
    mutating func endElement(of container: TaggedContainer) {}
    @inline(__always)
    mutating func end(_ container: TaggedContainer) throws(GraphArchiveError) {}
}

/// A tagged value that holds other values, as the walk reports it.
enum TaggedContainer {
    /// `count` values (§6.3).
    case array(count: Int)
    /// `count` key-value pairs: `2 * count` values (§6.6).
    case dictionary(count: Int)
    /// The values of `shape`, in key order: an object's body, or (`nested`) a value record
    /// inside another value (§6.7).
    case record(shape: Int, nested: Bool)
}

extension ValueTag {
    /// The whole length of a value whose tag alone, or its tag and the length of a short
    /// string, says how long it is: nil, booleans, numbers, dates and strings under 64 bytes.
    /// 0 for every other tag (nested values, references, long strings, bytes, reserved tags).
    @inline(__always)
    static func plainLength(_ tag: UInt8) -> Int {
        if tag >= smallIntegerBase {
            guard tag < shortStringBase + 64 else { return 0 }
            return tag < shortStringBase ? 1 : 1 &+ Int(tag &- shortStringBase)
        }
        if tag >= unsignedBase { return tag <= negativeBase + 7 ? 2 &+ Int(tag & 7) : 0 }
        switch tag {
        case null, falseValue, trueValue: return 1
        case float32: return 5
        case float64, date: return 9
        default: return 0
        }
    }
}

extension ValueScanner {
    /// Walks one tagged value, reporting it to `visitor`, and moves `reader` past it.
    ///
    /// - Throws: `.truncated`, `.corrupt` for an unknown tag or shape, `.badObjectReference`,
    ///   `.limitExceeded` for values nested `maximumDepth` deep, and what `visitor` throws.
    @inline(__always)
    func walkValue<Visitor: TaggedValueVisitor & ~Copyable>(
        _ reader: inout ByteReader,
        depth: Int,
        _ visitor: inout Visitor
    ) throws(GraphArchiveError) {
        // Most values are scalars whose tag gives their length: stepped over in line, without
        // the call and the switch (a third of the instructions of laying records out in
        // columns, callgrind).
        let start = reader.offset
        if reader.skipPlainValue() {
            try visitor.scalar(at: start, payload: start &+ 1, in: reader)
        } else {
            try walkTaggedValueOutOfLine(&reader, depth: depth, &visitor)
        }
    }

    @inline(never)
    private func walkTaggedValueOutOfLine<Visitor: TaggedValueVisitor & ~Copyable>(
        _ reader: inout ByteReader,
        depth: Int,
        _ visitor: inout Visitor
    ) throws(GraphArchiveError) {
        try walkTaggedValue(&reader, depth: depth, &visitor)
    }

    /// Walks a record (an object's body): its shape id, then the shape's values at `depth`.
    func walkRecord<Visitor: TaggedValueVisitor & ~Copyable>(
        _ reader: inout ByteReader,
        depth: Int,
        _ visitor: inout Visitor
    ) throws(GraphArchiveError) {
        let start = reader.offset
        let shape = try readShape(&reader)
        try walkValues(of: .record(shape: shape, nested: false), at: start, &reader, depth: depth, &visitor)
    }

    /// ``walkValue(_:depth:_:)`` past its fast path: for a value `skipPlainValue()` did not
    /// step over. Inlined into the callers that call it out of line.
    @inline(__always)
    func walkTaggedValue<Visitor: TaggedValueVisitor & ~Copyable>(
        _ reader: inout ByteReader,
        depth: Int,
        _ visitor: inout Visitor
    ) throws(GraphArchiveError) {
        let start = reader.offset
        let tag = try reader.readByte()
        switch tag {
        case ValueTag.string, ValueTag.bytes:
            let length = try reader.readCount()
            let payload = reader.offset
            try reader.skip(length)
            try visitor.scalar(at: start, payload: payload, in: reader)
        case ValueTag.objectReference:
            let index = try reader.readVarint()
            try checkObjectIndex(index, at: start)
            try visitor.reference(Int(index), at: start)
        case ValueTag.referenceArray:
            let count = try reader.readCount()
            try visitor.beginReferenceArray(count: count, at: start, in: reader)
            var previous = -1
            for _ in 0..<count {
                let offset = reader.offset
                let index = try Self.nextReferenceIndex(&reader, previous: previous)
                try checkObjectIndex(UInt64(bitPattern: Int64(index)), at: offset)
                try visitor.referenceArrayEntry(index, at: offset)
                previous = index
            }
            try visitor.endReferenceArray()
        case ValueTag.array:
            let count = try collectionCount(&reader)
            try checkDepth(depth, at: start)
            try walkValues(of: .array(count: count), at: start, &reader, depth: depth + 1, &visitor)
        case ValueTag.dictionary:
            let count = try collectionCount(&reader)
            try checkDepth(depth, at: start)
            try walkValues(of: .dictionary(count: count), at: start, &reader, depth: depth + 1, &visitor)
        case ValueTag.valueRecord:
            try checkDepth(depth, at: start)
            let shape = try readShape(&reader)
            try walkValues(of: .record(shape: shape, nested: true), at: start, &reader, depth: depth + 1, &visitor)
        default:
            // A plain value cut short (``walkValue`` steps over whole ones), or no value.
            let length = ValueTag.plainLength(tag)
            guard length > 0 else {
                throw GraphArchiveError(.corrupt, "unknown value tag 0x\(String(tag, radix: 16))", offset: start)
            }
            try reader.skip(length - 1)
            try visitor.scalar(at: start, payload: start + 1, in: reader)
        }
    }

    /// Reads the count of an array or a dictionary, which cannot exceed the
    /// bytes left (each element takes one at least), so that a visitor may reserve room for it.
    @inline(__always)
    private func collectionCount(_ reader: inout ByteReader) throws(GraphArchiveError) -> Int {
        let count = try reader.readCount()
        guard count <= reader.remaining else { throw reader.truncated("a collection") }
        return count
    }

    @inline(__always)
    private func walkValues<Visitor: TaggedValueVisitor & ~Copyable>(
        of container: TaggedContainer,
        at start: Int,
        _ reader: inout ByteReader,
        depth: Int,
        _ visitor: inout Visitor
    ) throws(GraphArchiveError) {
        let count =
            switch container {
            case .array(let count): count
            case .dictionary(let count): 2 * count
            case .record(let shape, _): shapeValueCounts[shape]
            }
        try visitor.begin(container, at: start)
        for position in 0..<count {
            try visitor.beginElement(position, of: container)
            try walkValue(&reader, depth: depth, &visitor)
            visitor.endElement(of: container)
        }
        try visitor.end(container)
    }
}

/// A scalar the walk stepped over, read back: what ``TaggedValueVisitor/scalar(at:payload:in:)``
/// reports, for visitors that want the value.
enum TaggedScalar {
    case null
    case bool(Bool)
    /// An integer in `Int64`.
    case integer(Int64)
    /// An unsigned integer above `Int64.max`.
    case unsignedInteger(UInt64)
    /// A negative integer below `Int64.min`, as the low 64 bits of its two's complement (the
    /// high 64 are all ones).
    case integerBelowInt64(low: UInt64)
    case float(Float)
    case double(Double)
    /// Seconds since 2001-01-01T00:00:00Z.
    case date(Double)
    /// UTF-8 bytes, `count` of them at the reader's position (unchecked).
    case string(count: Int)
    /// Raw bytes, `count` of them at the reader's position.
    case bytes(count: Int)

    /// The scalar whose tag is at `start` and payload from `payload` to the end of `reader`'s
    /// passed bytes; `reader` is left at the payload, for strings and bytes.
    init(at start: Int, payload: Int, in reader: inout ByteReader) throws(GraphArchiveError) {
        let end = reader.offset
        reader.offset = start
        let tag = try reader.readByte()
        reader.offset = payload
        let length = end - payload
        switch tag {
        case ValueTag.null: self = .null
        case ValueTag.falseValue, ValueTag.trueValue: self = .bool(tag == ValueTag.trueValue)
        case ValueTag.float32:
            self = .float(Float(bitPattern: UInt32(truncatingIfNeeded: try reader.readLittleEndian(width: length))))
        case ValueTag.float64: self = .double(Double(bitPattern: try reader.readLittleEndian(width: length)))
        case ValueTag.date: self = .date(Double(bitPattern: try reader.readLittleEndian(width: length)))
        case ValueTag.smallIntegerBase..<ValueTag.shortStringBase:
            self = .integer(Int64(tag - ValueTag.smallIntegerBase))
        case ValueTag.unsignedBase..<ValueTag.negativeBase:
            let value = try reader.readLittleEndian(width: length)
            self = value <= UInt64(Int64.max) ? .integer(Int64(value)) : .unsignedInteger(value)
        case ValueTag.negativeBase..<(ValueTag.negativeBase + 8):
            // Stored ~value: -1 - magnitude, below Int64.min when the magnitude passes Int64.max.
            let magnitude = try reader.readLittleEndian(width: length)
            self =
                magnitude <= UInt64(Int64.max)
                ? .integer(Int64(bitPattern: ~magnitude)) : .integerBelowInt64(low: ~magnitude)
        case ValueTag.bytes: self = .bytes(count: length)
        default: self = .string(count: length)
        }
    }
}
