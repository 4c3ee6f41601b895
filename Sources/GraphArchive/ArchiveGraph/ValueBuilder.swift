// Sources/GraphArchive/ArchiveGraph/ValueBuilder.swift - builds ArchiveValues from visitor events

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A visitor that builds the fields it is given (an object's, or the top level's) as
/// ``ArchiveField``s, containers and all; in a walk over all objects, hands each object's
/// fields to ``objectHandler`` and starts again.
struct ValueBuilder: GraphObjectVisitor {
    private enum Frame {
        case fields([ArchiveField], key: String)
        case array([ArchiveValue])
        case dictionary([ArchiveDictionaryEntry], key: ArchiveValue?)
        case record(typeName: String, [ArchiveField], key: String)
    }

    private var stack: [Frame] = [.fields([], key: "")]
    /// Called with each object's id, class index and fields as a walk over all objects ends it.
    var objectHandler: ((_ id: Int, _ classIndex: Int, _ fields: [ArchiveField]) throws -> Void)?
    /// What ``objectHandler`` threw, which stopped the walk.
    private(set) var handlerError: (any Error)?
    private var currentObject = (id: 0, classIndex: 0)

    /// The fields built, once every container is closed.
    var fields: [ArchiveField] {
        guard case .fields(let fields, _) = stack.first else { return [] }
        return fields
    }

    /// The value of the one field built (for a single value walked on its own).
    var singleValue: ArchiveValue? { fields.first?.value }

    mutating func beginObject(id: Int, classIndex: Int) {
        stack = [.fields([], key: "")]
        currentObject = (id, classIndex)
    }

    mutating func endObject(storedBytes: Int) throws(GraphArchiveError) {
        do {
            try objectHandler?(currentObject.id, currentObject.classIndex, fields)
        } catch {
            handlerError = error
            throw GraphArchiveError(.invalidState, "stopped: \(error)")
        }
    }

    mutating func field(_ key: String, keyID: Int) {
        switch stack[stack.count - 1] {
        case .fields(let fields, _): stack[stack.count - 1] = .fields(fields, key: key)
        case .record(let name, let fields, _): stack[stack.count - 1] = .record(typeName: name, fields, key: key)
        default: break
        }
    }

    private mutating func add(_ value: ArchiveValue) {
        switch stack.removeLast() {
        case .fields(var fields, let key):
            fields.append(ArchiveField(key: key, value: value))
            stack.append(.fields(fields, key: key))
        case .array(var elements):
            elements.append(value)
            stack.append(.array(elements))
        case .dictionary(var entries, let key):
            if let key {
                entries.append(ArchiveDictionaryEntry(key: key, value: value))
                stack.append(.dictionary(entries, key: nil))
            } else {
                stack.append(.dictionary(entries, key: value))
            }
        case .record(let name, var fields, let key):
            fields.append(ArchiveField(key: key, value: value))
            stack.append(.record(typeName: name, fields, key: key))
        }
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
        stack.append(.array([]))
    }

    mutating func endArray() {
        guard case .array(let elements) = stack.removeLast() else { return }
        add(.array(elements))
    }

    mutating func beginDictionary(count: Int, _ form: ValueForm) {
        stack.append(.dictionary([], key: nil))
    }

    mutating func endDictionary() {
        guard case .dictionary(let entries, _) = stack.removeLast() else { return }
        add(.dictionary(entries))
    }

    mutating func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) {
        stack.append(.record(typeName: typeName, [], key: ""))
    }

    mutating func endRecord() {
        guard case .record(let name, let fields, _) = stack.removeLast() else { return }
        add(.record(ArchiveRecord(typeName: name, fields: fields)))
    }
}
