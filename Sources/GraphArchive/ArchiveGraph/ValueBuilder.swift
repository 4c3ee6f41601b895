// Sources/GraphArchive/ArchiveGraph/ValueBuilder.swift - builds ArchiveValues from visitor events

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A visitor that builds the fields it is given (an object's, or the top level's) as
/// ``ArchiveField``s, containers and all; in a walk over all objects, hands each object's
/// fields to ``objectHandler`` and starts again.
///
/// Values wait on one scratch stack, keys on another, and a container takes its elements off
/// them when it ends: each container and each object costs one allocation for what it holds,
/// and nothing is copied as it grows (callgrind: a stack of containers each holding its own
/// array copied them on every append, 18% of reading a keyed archive's objects).
struct ValueBuilder: GraphObjectVisitor {
    private enum Frame {
        /// Fields (the outermost level, or a record's): their values and keys start here.
        case fields(valueStart: Int, keyStart: Int, typeName: String)
        case array(valueStart: Int)
        case dictionary(valueStart: Int)
    }

    private var frames: [Frame] = []
    /// Values of open containers and records.
    private var values: [ArchiveValue] = []
    private var keys: [String] = []
    /// The outermost level's fields, each made when its value is complete.
    private(set) var fields: [ArchiveField] = []
    private var pendingKey = ""
    /// Called with each object's id, class index and fields as a walk over all objects ends it.
    var objectHandler: ((_ id: Int, _ classIndex: Int, _ fields: [ArchiveField]) throws -> Void)?
    /// What ``objectHandler`` threw, which stopped the walk.
    private(set) var handlerError: (any Error)?
    private var currentObject = (id: 0, classIndex: 0)

    /// The value of the one field built (for a single value walked on its own).
    var singleValue: ArchiveValue? { fields.first?.value }

    mutating func beginObject(id: Int, classIndex: Int) {
        // A new array for each object's fields, sized like the last object's.
        fields = []
        fields.reserveCapacity(lastFieldCount)
        currentObject = (id, classIndex)
    }

    private var lastFieldCount = 4

    mutating func endObject(storedBytes: Int) throws(GraphArchiveError) {
        lastFieldCount = max(fields.count, 1)
        do {
            try objectHandler?(currentObject.id, currentObject.classIndex, fields)
        } catch {
            handlerError = error
            throw GraphArchiveError(.invalidState, "stopped: \(error)")
        }
    }

    mutating func field(_ key: String, keyID: Int) {
        if frames.isEmpty { pendingKey = key } else { keys.append(key) }
    }

    /// Adds a finished value: a field of the outermost level, or an element.
    @inline(__always)
    private mutating func add(_ value: ArchiveValue) {
        if frames.isEmpty {
            fields.append(ArchiveField(key: pendingKey, value: value))
        } else {
            values.append(value)
        }
    }

    /// The elements from `start` on, taken off the value stack.
    private mutating func takeValues(from start: Int) -> [ArchiveValue] {
        let taken = Array(values[start...])
        values.removeSubrange(start...)
        return taken
    }

    mutating func null(_ form: ValueForm) { add(.null) }
    mutating func bool(_ value: Bool, _ form: ValueForm) { add(.bool(value)) }
    mutating func integer(_ value: Int64, _ form: ValueForm) { add(.integer(value)) }
    mutating func unsignedInteger(_ value: UInt64, _ form: ValueForm) { add(.unsignedInteger(value)) }
    mutating func integer128(high: Int64, low: UInt64, _ form: ValueForm) { add(.integer128(high: high, low: low)) }
    mutating func float(_ value: Float, _ form: ValueForm) { add(.float(value)) }
    mutating func double(_ value: Double, _ form: ValueForm) { add(.double(value)) }
    mutating func string(_ value: String, _ form: ValueForm) { add(.string(value)) }
    mutating func data(_ value: [UInt8], _ form: ValueForm) { add(.data(Data(value))) }
    mutating func date(_ seconds: Double, _ form: ValueForm) {
        add(.date(Date(timeIntervalSinceReferenceDate: seconds)))
    }
    mutating func object(_ id: Int, _ form: ValueForm) { add(.object(id)) }

    mutating func beginArray(count: Int, _ form: ValueForm) {
        frames.append(.array(valueStart: values.count))
    }

    mutating func endArray() {
        guard case .array(let start) = frames.removeLast() else { return }
        add(.array(takeValues(from: start)))
    }

    mutating func beginDictionary(count: Int, _ form: ValueForm) {
        frames.append(.dictionary(valueStart: values.count))
    }

    mutating func endDictionary() {
        guard case .dictionary(let start) = frames.removeLast() else { return }
        let flat = takeValues(from: start)
        var entries: [ArchiveDictionaryEntry] = []
        entries.reserveCapacity(flat.count / 2)
        for position in stride(from: 0, to: flat.count - 1, by: 2) {
            entries.append(ArchiveDictionaryEntry(key: flat[position], value: flat[position + 1]))
        }
        add(.dictionary(entries))
    }

    mutating func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) {
        frames.append(.fields(valueStart: values.count, keyStart: keys.count, typeName: typeName))
    }

    mutating func endRecord() {
        guard case .fields(let valueStart, let keyStart, let typeName) = frames.removeLast() else { return }
        let recordValues = takeValues(from: valueStart)
        let recordFields = zip(keys[keyStart...], recordValues).map { ArchiveField(key: $0, value: $1) }
        keys.removeSubrange(keyStart...)
        add(.record(ArchiveRecord(typeName: typeName, fields: recordFields)))
    }
}
