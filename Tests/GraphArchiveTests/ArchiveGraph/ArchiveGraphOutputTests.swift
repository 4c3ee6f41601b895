// Tests/GraphArchiveTests/ArchiveGraph/ArchiveGraphOutputTests.swift - the graph as JSON, as a tree, as counts

import Foundation
import Testing

@testable import GraphArchive

/// Every keyed fixture the tests hold: seed-shaped ones (Python and Linux Foundation) and
/// Apple's, binary and XML.
let everyKeyedFixture: [String] = {
    let seeds = [
        "foundation-fourlines-bid", "foundation-fourlines", "foundation-gridstates", "foundation-lines",
        "foundation-ring", "foundation-values", "python-fourlines-bid", "python-fourlines", "python-gridstates",
        "python-lines", "python-ring", "python-values", "python-hostile-billion-laughs",
        "python-hostile-self-containing-array", "python-hostile-unknown-class", "python-hostile-wrong-field-type",
    ]
    let apple = [
        "NSKeyedUnarchiver-ArrayTest", "NSKeyedUnarchiver-ComplexTest", "NSKeyedUnarchiver-ConcreteValueTest",
        "NSKeyedUnarchiver-EdgeInsetsTest", "NSKeyedUnarchiver-NotificationTest", "NSKeyedUnarchiver-OrderedSetTest",
        "NSKeyedUnarchiver-RangeTest", "NSKeyedUnarchiver-RectTest", "NSKeyedUnarchiver-URLTest",
        "NSKeyedUnarchiver-UUIDTest",
    ]
    let macOS = [
        "ByteCountFormatter-AllFieldsSet", "DateIntervalFormatter-ValuesSetWithTemplate",
        "ISO8601DateFormatter-OptionsSet", "NSAttributedString", "NSCountedSet-NumbersAppearingSeveralTimes",
        "NSIndexPath-ManyIndices", "NSIndexSet-ManyRanges", "NSMeasurement-Length", "NSMutableAttributedString",
        "NSMutableOrderedSet-Numbers", "NSMutableSet-Numbers", "NSOrderedSet-Empty",
        "NSTextCheckingResult-ComplexRegex",
    ]
    return seeds + apple.map { "apple:" + $0 } + macOS.map { "apple:macOS-10.14/" + $0 }
}()

/// A fixture of ``everyKeyedFixture``.
func anyKeyedFixture(_ name: String) throws -> Data {
    name.hasPrefix("apple:") ? try appleFixture(String(name.dropFirst(6))) : try keyedFixture(name)
}

/// Every string of a parsed JSON document, keys included.
func jsonStrings(_ value: Any, into strings: inout Set<String>) {
    switch value {
    case let string as String:
        strings.insert(string)
    case let array as [Any]:
        for element in array { jsonStrings(element, into: &strings) }
    case let dictionary as [String: Any]:
        for (key, element) in dictionary {
            strings.insert(key)
            jsonStrings(element, into: &strings)
        }
    default:
        break
    }
}

/// Every `{"$ref": ID}` of a parsed JSON document.
func jsonReferences(_ value: Any, into references: inout [Int]) {
    switch value {
    case let array as [Any]:
        for element in array { jsonReferences(element, into: &references) }
    case let dictionary as [String: Any]:
        if dictionary.count == 1, let id = dictionary["$ref"] as? Int {
            references.append(id)
            return
        }
        for element in dictionary.values { jsonReferences(element, into: &references) }
    default:
        break
    }
}

@Suite("Archive graph: JSON, tree and summary")
struct ArchiveGraphOutputTests {
    /// Foundation's classes whose instances may read as values (the rest are objects).
    static let valueClasses: Set<String> = [
        "NSString", "NSMutableString", "NSData", "NSMutableData", "NSDate", "NSNull", "NSArray", "NSMutableArray",
        "NSDictionary", "NSMutableDictionary",
    ]

    @Test(arguments: everyKeyedFixture)
    func jsonListsEveryInstanceOnceAndEveryString(fixture: String) throws {
        let data = try anyKeyedFixture(fixture)
        let graph = try ArchiveGraph(data: data)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(graph.jsonData())) as? [String: Any])
        #expect(document["format"] as? String == "keyed-archive")
        let objects = try #require(document["objects"] as? [[String: Any]])
        let ids = objects.compactMap { $0["id"] as? Int }
        #expect(ids.count == objects.count && Set(ids).count == ids.count, "every object once")
        #expect(ids == graph.objectIDs)
        var references: [Int] = []
        jsonReferences(document, into: &references)
        #expect(Set(references).isSubset(of: Set(ids)), "every reference names a listed object")

        // What Foundation's property list reader finds in the archive.
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        let entries = try #require(plist["$objects"] as? [Any])
        var strings = Set<String>()
        jsonStrings(document, into: &strings)
        for (uid, entry) in entries.enumerated().dropFirst() {
            if let string = entry as? String {
                #expect(strings.contains(string), "\(fixture): string \"\(string)\" of $objects[\(uid)] is missing")
            }
            guard let instance = entry as? [String: Any], let className = Self.className(of: instance, in: entries)
            else { continue }
            // Every key of an object's dictionary and every class of its chain is printed.
            if Set(ids).contains(uid) {
                #expect(strings.contains(className))
                for key in instance.keys where key != "$class" {
                    #expect(strings.contains(key), "\(fixture): key \(key) of $objects[\(uid)] is missing")
                }
            }
        }
    }

    /// The `$classname` of instance dictionary `instance`, through its `$class` UID.
    static func className(of instance: [String: Any], in entries: [Any]) -> String? {
        guard let reference = instance["$class"],
            let uid = foundationUIDValue(reference),
            uid < entries.count
        else { return nil }
        return (entries[uid] as? [String: Any])?["$classname"] as? String
    }

    @Test(arguments: everyKeyedFixture)
    func instancesOfObjectClassesAreObjects(fixture: String) throws {
        let data = try anyKeyedFixture(fixture)
        let graph = try ArchiveGraph(data: data)
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        let entries = try #require(plist["$objects"] as? [Any])
        let objectIDs = Set(graph.objectIDs)
        var instances = 0
        for (uid, entry) in entries.enumerated() {
            guard let instance = entry as? [String: Any], let className = Self.className(of: instance, in: entries)
            else { continue }
            instances += 1
            if objectIDs.contains(uid) {
                let object = try graph.object(withID: uid)
                #expect(object.className == className && object.fields.count == instance.count - 1)
            } else {
                #expect(
                    Self.valueClasses.contains(className),
                    "\(fixture): $objects[\(uid)] (\(className)) is no object"
                )
            }
        }
        #expect(instances > 0, "\(fixture) has instances")
    }

    @Test func jsonTaggedFormsForEveryValueKind() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Everything())
        let graph = try ArchiveGraph(data: data)
        let text = String(decoding: try graph.jsonData(), as: UTF8.self)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let root = try #require((document["top"] as? [String: Any])?["root"] as? [String: Any])
        #expect(root["$record"] as? String == Everything.archivedTypeName)
        let fields = try #require(root["fields"] as? [String: Any])
        #expect((fields["int"] as? NSNumber)?.int64Value == Int64.min)
        #expect(fields["uint64"] as? [String: String] == ["$integer": "18446744073709551615"])
        #expect(fields["double"] as? [String: String] == ["$real": "inf"])
        #expect(fields["data"] as? [String: String] == ["$data": "CQgH"])
        #expect(fields["date"] as? [String: String] == ["$date": "2001-01-02T10:17:36.789Z"])
        #expect(fields["string"] as? String == "héllo, 世界 👋")
        #expect(fields["optional"] is NSNull)
        #expect(fields["dictionary"] as? [String: Int] == ["a": 1])
        let intKeys = try #require((fields["intKeys"] as? [String: Any])?["$dictionary"] as? [[Any]])
        #expect(intKeys.count == 1 && intKeys[0][0] as? Int == 7 && intKeys[0][1] as? String == "seven")
        #expect(text.contains("\"float\":-0.0"))
    }

    @Test func jsonOfDictionariesWithDollarKeysUsesThePairForm() throws {
        let data = try GraphArchiver.archivedData(withRootObject: ["$ref": 1, "plain": 2])
        let text = String(decoding: try ArchiveGraph(data: data).jsonData(), as: UTF8.self)
        #expect(text.contains("\"$dictionary\":["))
        #expect(!text.contains("{\"$ref\":1}"))
    }

    @Test func jsonStreamsInPieces() throws {
        let records = (0..<2_000).map { Record(name: "record \($0)", color: $0, date: "2024-01-01") }
        let graph = try ArchiveGraph(data: GraphArchiver.archivedData(withRootObject: records + records))
        var pieces: [[UInt8]] = []
        try graph.writeJSON(chunkSize: 4_096) { pieces.append($0) }
        #expect(pieces.count > 20)
        #expect(pieces.dropLast().allSatisfy { $0.count < 4_096 + 1_024 })
        #expect(pieces.joined().elementsEqual(try graph.jsonData()))
        let document = try #require(try JSONSerialization.jsonObject(with: Data(pieces.joined())) as? [String: Any])
        #expect((document["objects"] as? [Any])?.count == 2_000)
    }

    @Test func outputErrorsStopTheWalkAndPassThrough() throws {
        struct Stop: Error {}
        let graph = try ArchiveGraph(data: keyedFixture("foundation-gridstates"))
        #expect(throws: Stop.self) { try graph.writeJSON(chunkSize: 64) { _ in throw Stop() } }
        #expect(throws: Stop.self) { try graph.forEachObject { _ in throw Stop() } }
    }

    // MARK: - Tree

    func tree(_ graph: ArchiveGraph, depth: Int? = nil) throws -> String {
        var text: [UInt8] = []
        try graph.writeTree(maximumDepth: depth) { text += $0 }
        return String(decoding: text, as: UTF8.self)
    }

    @Test func treePrintsSharedObjectsOnceAndMarksCycles() throws {
        let shared = try tree(ArchiveGraph(data: keyedFixture("python-gridstates")))
        #expect(shared.components(separatedBy: "UAGridState {").count - 1 == 3)
        #expect(shared.contains("2 => → #4 UAGridState"))
        #expect(shared.hasPrefix("keyed archive (NSKeyedArchiver 100000, binary property list), "))
        let ring = try tree(ArchiveGraph(data: keyedFixture("foundation-ring")))
        #expect(ring.contains("(cycle)"))
        let xml = try tree(ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-RectTest")))
        #expect(xml.contains("XML property list") && xml.contains("\"NS.rectval\" => \"{{400, 300}, {200, 300}}\""))
    }

    @Test func treeDepthElidesDeeperLevels() throws {
        let text = try tree(ArchiveGraph(data: keyedFixture("python-gridstates")), depth: 1)
        #expect(text.contains("\"root\" => [… 5 items]"))
        #expect(!text.contains("kEncodeKeyName"))
    }

    @Test func longChainsPrintWithoutDeepIndentation() throws {
        var next: Link?
        for value in 0..<2_000 { next = Link(value: value, next: next) }
        let graph = try ArchiveGraph(data: GraphArchiver.archivedData(withRootObject: try #require(next)))
        let text = try tree(graph)
        let widest = text.split(separator: "\n").map(\.count).max() ?? 0
        #expect(widest < 2 * (GraphTreeWriter.objectNestingLimit + 4) + 60)
        #expect(text.components(separatedBy: " Link {").count - 1 == 2_000)
    }

    @Test func treeEscapesControlCharacters() throws {
        let data = try GraphArchiver.archivedData(withRootObject: ["\u{1B}[31mred": "bell\u{07}"])
        let text = try tree(ArchiveGraph(data: data))
        #expect(!text.contains("\u{1B}") && !text.contains("\u{07}"))
        #expect(text.contains("\\u001b[31mred"))
    }

    // MARK: - Summary

    @Test func summaryCountsClassesAndValues() throws {
        let summary = try ArchiveGraph(data: keyedFixture("foundation-gridstates")).summary()
        #expect(summary.objectCount == 300)
        #expect(summary.classes.map(\.className) == ["main.UAGridState"])
        #expect(summary.classes[0].objects == 300 && summary.classes[0].bytes > 0)
        let references = try #require(summary.values.first { $0.kind == "references" })
        #expect(references.count == 400)
        let strings = try #require(summary.values.first { $0.kind == "strings" })
        #expect(strings.count == 600 && strings.bytes > 0)
        #expect(summary.text.contains("main.UAGridState") && summary.text.contains("300"))
    }
}
