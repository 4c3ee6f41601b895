// Tests/GraphArchiveTests/ArchiveGraph/LosslessConversionTests.swift - keyed → gridstore → keyed gives back the same graph

import Foundation
import Testing

@testable import GraphArchive

/// `graph` in a form two archives of the same graph share whatever their ids: objects numbered
/// by first appearance (top level first, in key order, then the objects it does not reach),
/// each with its class, chain and fields. `sortingKeys`: fields and dictionary entries in key
/// order rather than stored order (two archivings by Foundation store them in hash order).
func canonicalForm(_ graph: ArchiveGraph, sortingKeys: Bool = false) throws -> [String] {
    var numbers: [Int: Int] = [:]
    var queue: [Int] = []
    func number(_ id: Int) -> Int {
        if let known = numbers[id] { return known }
        numbers[id] = numbers.count
        queue.append(id)
        return numbers[id]!
    }
    func text(_ value: ArchiveValue) -> String {
        switch value {
        case .object(let id): return "#\(number(id))"
        case .array(let elements): return "[" + elements.map(text).joined(separator: ", ") + "]"
        case .dictionary(let entries):
            let ordered = sortingKeys ? entries.sorted { "\($0.key)" < "\($1.key)" } : entries
            return "{" + ordered.map { text($0.key) + ": " + text($0.value) }.joined(separator: ", ") + "}"
        case .record(let record):
            return record.typeName + "{" + record.fields.map { $0.key + ": " + text($0.value) }.joined(separator: ", ")
                + "}"
        case .double(let value) where value.isNaN: return "nan"
        case .float(let value) where value.isNaN: return "nan(float)"
        case .data(let bytes): return "data(" + bytes.map { String($0, radix: 16) }.joined(separator: " ") + ")"
        case .date(let date): return "date(\(date.timeIntervalSinceReferenceDate))"
        default: return "\(value)"
        }
    }
    func ordered(_ fields: [ArchiveField]) -> [ArchiveField] {
        sortingKeys ? fields.sorted { $0.key < $1.key } : fields
    }
    var lines = try ordered(graph.topLevelFields()).map { "top \($0.key) = \(text($0.value))" }
    var position = 0
    var unreached = graph.objectIDs.makeIterator()
    while true {
        if position == queue.count {
            guard let next = unreached.next() else { break }
            if numbers[next] != nil { continue }
            _ = number(next)
        }
        let object = try graph.object(withID: queue[position])
        lines.append("#\(position) \(object.className) \(object.classChain)")
        for field in ordered(object.fields) { lines.append("  \(field.key) = \(text(field.value))") }
        position += 1
    }
    return lines
}

/// Foundation's NSKeyedUnarchiver's reading of the root of keyed archive `data`.
func foundationRoot(_ data: Data) throws -> Any? {
    let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
    unarchiver.requiresSecureCoding = false
    defer { unarchiver.finishDecoding() }
    return unarchiver.decodeObject(forKey: NSKeyedArchiveRootObjectKey)
}

@Suite("Archive graph: lossless conversion")
struct LosslessConversionTests {
    @Test(arguments: everyKeyedFixture)
    func keyedToGridstoreAndBackKeepsTheGraph(fixture: String) throws {
        let original = try ArchiveGraph(data: anyKeyedFixture(fixture))
        let native = try original.gridstoreArchiveData()
        #expect(ArchiveKind.detect(native) == .gridstore)
        let nativeGraph = try ArchiveGraph(data: native)
        #expect(try canonicalForm(nativeGraph) == canonicalForm(original), "keyed → gridstore")
        let back = try ArchiveGraph(data: nativeGraph.keyedArchiveData())
        #expect(try canonicalForm(back) == canonicalForm(original), "gridstore → keyed")
        // And once more: nothing drifts.
        let again = try ArchiveGraph(data: ArchiveGraph(data: back.gridstoreArchiveData()).keyedArchiveData())
        #expect(try canonicalForm(again) == canonicalForm(original))
    }

    @Test(arguments: [
        "NSKeyedUnarchiver-ArrayTest", "NSKeyedUnarchiver-ComplexTest", "NSKeyedUnarchiver-OrderedSetTest",
        "NSKeyedUnarchiver-RangeTest", "NSKeyedUnarchiver-URLTest", "NSKeyedUnarchiver-UUIDTest",
        "NSKeyedUnarchiver-NotificationTest", "macOS-10.14/NSCountedSet-NumbersAppearingSeveralTimes",
        "macOS-10.14/NSMutableOrderedSet-Numbers", "macOS-10.14/NSSet-Numbers", "macOS-10.14/NSMutableSet-Numbers",
        "macOS-10.14/NSIndexSet-ManyRanges", "macOS-10.14/NSIndexPath-ManyIndices", "macOS-10.14/NSMeasurement-Length",
        "macOS-10.14/NSAttributedString",
    ])
    func foundationReadsTheConvertedArchiveAsTheOriginal(fixture: String) throws {
        let data = try appleFixture(fixture)
        let expected = try #require(try foundationRoot(data) as? NSObject, "Foundation reads \(fixture)")
        let native = try ArchiveGraph(data: data).gridstoreArchiveData()
        let converted = try ArchiveGraph(data: native).keyedArchiveData()
        let actual = try #require(try foundationRoot(converted) as? NSObject, "Foundation reads it converted")
        #expect(type(of: actual) == type(of: expected))
        if let notification = actual as? NSNotification, let original = expected as? NSNotification {
            // NSNotification compares by identity: compare what it holds.
            #expect(notification.name == original.name && notification.object as? String == original.object as? String)
            #expect(notification.userInfo as? [String: String] == original.userInfo as? [String: String])
        } else {
            #expect(actual.isEqual(expected), "\(actual) != \(expected)")
        }
    }

    @Test func gridStatesConvertedFromKeyedReadTyped() throws {
        let native = try KeyedArchive.gridstoreArchiveData(fromKeyedArchive: keyedFixture("foundation-gridstates"))
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            from: native,
            registry: gridStateRegistry
        )
        #expect(records.count == 400 && Set(records.map(ObjectIdentifier.init)).count == 300)
        // The class chain and names stay with the archive.
        let graph = try ArchiveGraph(data: native)
        #expect(graph.topLevelKeys == ["root"])
        #expect(try graph.object(withID: 0).classChain == ["main.UAGridState", "NSObject"])
    }

    @Test func storageFormsSurviveTheRoundTrip() throws {
        // NS.rangeval.* are numbers stored by UID, NS.uuidbytes data stored in place: the
        // converted archive stores them the same way (Foundation reads only that way).
        for fixture in ["NSKeyedUnarchiver-RangeTest", "NSKeyedUnarchiver-UUIDTest"] {
            let native = try ArchiveGraph(data: appleFixture(fixture)).gridstoreArchiveData()
            let keyed = try ArchiveGraph(data: native).keyedArchiveData()
            let plist = try #require(
                try PropertyListSerialization.propertyList(from: keyed, format: nil) as? [String: Any]
            )
            let objects = try #require(plist["$objects"] as? [Any])
            let root = try #require(objects.compactMap { $0 as? [String: Any] }.first { $0["$class"] != nil })
            if fixture.hasSuffix("RangeTest") {
                #expect(foundationUIDValue(try #require(root["NS.rangeval.length"])) != nil)
                #expect(root["NS.special"] as? Int == 4)
            } else {
                #expect((root["NS.uuidbytes"] as? Data)?.count == 16)
            }
        }
    }

    @Test func classEntriesWithoutClassesStayWithout() throws {
        let data = keyedArchive(
            top: ["root": .uid(1)],
            objects: [
                .dictionary(["value": .integer(1), "$class": .uid(2)]), .dictionary(["$classname": .string("Bare")]),
            ]
        )
        let keyed = try ArchiveGraph(data: ArchiveGraph(data: data).gridstoreArchiveData()).keyedArchiveData()
        let plist = try #require(try PropertyListSerialization.propertyList(from: keyed, format: nil) as? [String: Any])
        let objects = try #require(plist["$objects"] as? [Any])
        let definition = try #require(objects.compactMap { $0 as? [String: Any] }.first { $0["$classname"] != nil })
        #expect(definition["$classname"] as? String == "Bare" && definition["$classes"] == nil)
    }

    @Test func sixteenByteIntegersSurvive() throws {
        let data = bplistWithInteger128(high: 1, low: 2)
        let graph = try ArchiveGraph(data: ArchiveGraph(data: data).gridstoreArchiveData())
        #expect(try graph.topLevelValue(forKey: "root") == .integer128(high: 1, low: 2))
        let back = try ArchiveGraph(data: graph.keyedArchiveData())
        #expect(try back.topLevelValue(forKey: "root") == .integer128(high: 1, low: 2))
    }

    @Test func gridstoreGraphsConvertToKeyedAndBack() throws {
        let shared = Record(name: "shared", color: 1, date: "d")
        let records = [shared, Record(name: "other", color: 2, date: "e"), shared]
        let keyed = try ArchiveGraph(data: GraphArchiver.archivedData(withRootObject: records)).keyedArchiveData()
        let back = try ArchiveGraph(data: keyed).gridstoreArchiveData()
        let decoded = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: back)
        #expect(decoded.map(\.name) == ["shared", "other", "shared"] && decoded[0] === decoded[2])
        // A struct becomes an object of its type's name: a keyed archive has no value types.
        var everything = Everything()
        everything.double = 2.5
        let structGraph = try ArchiveGraph(data: GraphArchiver.archivedData(withRootObject: everything))
        let converted = try ArchiveGraph(
            data: ArchiveGraph(data: structGraph.keyedArchiveData()).gridstoreArchiveData()
        )
        let root = try #require(objectID(converted.topLevelValue(forKey: "root")))
        let object = try converted.object(withID: root)
        #expect(object.className == Everything.archivedTypeName && object["double"] == .double(2.5))
        #expect(object["intKeys"] == .dictionary([ArchiveDictionaryEntry(key: .integer(7), value: .string("seven"))]))
    }

    @Test func nilInsideAnArrayIsRefusedForKeyedOutput() throws {
        let graph = try ArchiveGraph(data: GraphArchiver.archivedData(withRootObject: [1, nil, 3] as [Int?]))
        expectRefused(.invalidValue, mentioning: "nil") { _ = try graph.keyedArchiveData() }
    }

    @Test func compressedOutputReadsBack() throws {
        guard ArchiveCompression.isZstdAvailable else { return }
        let graph = try ArchiveGraph(data: keyedFixture("foundation-gridstates"))
        let compressed = try graph.gridstoreArchiveData(compression: .zstd)
        #expect(try canonicalForm(ArchiveGraph(data: compressed)) == canonicalForm(graph))
    }
}
