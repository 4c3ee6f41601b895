// Tests/GraphArchiveTests/KeyedArchive/KeyedArchiveReadingTests.swift - NSKeyedArchiver archives read through GraphCoding
//
// The fixtures come from scripts/make-keyed-fixtures.py (plistlib, names as iOS apps write
// them: "UAGridState") and scripts/make-keyed-fixtures.swift (Foundation's NSKeyedArchiver on
// Linux, module-qualified names: "main.UAGridState").

import Foundation
import Testing

@testable import GraphArchive

// MARK: - The seed documents' models, as a library user declares them

/// Four optional string fields under fixed keys: the shape of seeds 000/001 and 003.
protocol FourStringFields: GraphCoding, AnyObject {
    static var keys: [String] { get }
    var fields: [String?] { get }
    init(fields: [String?])
}

extension FourStringFields {
    func encode(with archiver: GraphArchiver) throws {
        for (key, field) in zip(Self.keys, fields) { try archiver.encode(field, forKey: key) }
    }

    init(from unarchiver: GraphUnarchiver) throws {
        self.init(fields: try Self.keys.map { try unarchiver.decodeIfPresent(String.self, forKey: $0) })
    }
}

/// Seeds 000/001: `BIDFourLines` with "Field1"…"Field4" (archived under the app's class name).
final class BIDFourLines: FourStringFields {
    static let keys = ["Field1", "Field2", "Field3", "Field4"]
    let fields: [String?]

    init(fields: [String?]) { self.fields = fields }
}

/// Seed 003: `FourLines` with "field1"…"field4".
final class FourLines: FourStringFields {
    static let keys = ["field1", "field2", "field3", "field4"]
    let fields: [String?]

    init(fields: [String?]) { self.fields = fields }
}

/// Seed 002: the app's `BIDFourLines` holding an NSArray of lines under "kLinesKey".
final class LinesModel: GraphCoding {
    static var archivedTypeName: String { "BIDFourLines" }
    var lines: [String]

    init(lines: [String]) { self.lines = lines }

    func encode(with archiver: GraphArchiver) throws { try archiver.encode(lines, forKey: "kLinesKey") }

    init(from unarchiver: GraphUnarchiver) throws { lines = try unarchiver.decode([String].self, forKey: "kLinesKey") }
}

/// A ring node with a parent: every reference may close a cycle, so all decode later.
final class RingNode: GraphCoding {
    static var archivedTypeName: String { "Node" }
    var label: Int
    var next: RingNode?
    var parent: RingNode?
    var children: [RingNode] = []

    init(label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        try archiver.encodeLater(next, forKey: "next")
        try archiver.encodeLater(parent, forKey: "parent")
        try archiver.encode(children, forKey: "children")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        try unarchiver.decodeLater(RingNode?.self, forKey: "next") { [unowned self] in self.next = $0 }
        try unarchiver.decodeLater(RingNode?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
        try unarchiver.decodeLater([RingNode].self, forKey: "children") { [unowned self] in self.children = $0 }
    }
}

/// The fixtures' "Values" instance: one field of each Foundation value kind.
final class FoundationValues: GraphCoding {
    static var archivedTypeName: String { "Values" }
    var int = 0
    var bigUnsigned: UInt64 = 0
    var double = 0.0
    var flag = false
    var text = ""
    var unicode = ""
    var mutableText = ""
    var bytes = Data()
    var date = Date()
    var numbers: [Int] = []
    var tags: Set<String> = []
    var table: [String: Int] = [:]
    var nothing: String? = "not decoded"

    init() {}

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: GraphUnarchiver) throws {
        int = try unarchiver.decode(Int.self, forKey: "int")
        bigUnsigned = try unarchiver.decode(UInt64.self, forKey: "bigUnsigned")
        double = try unarchiver.decode(Double.self, forKey: "double")
        flag = try unarchiver.decode(Bool.self, forKey: "flag")
        text = try unarchiver.decode(String.self, forKey: "text")
        unicode = try unarchiver.decode(String.self, forKey: "unicode")
        mutableText = try unarchiver.decode(String.self, forKey: "mutableText")
        bytes = try unarchiver.decode(Data.self, forKey: "bytes")
        date = try unarchiver.decode(Date.self, forKey: "date")
        numbers = try unarchiver.decode([Int].self, forKey: "numbers")
        tags = try unarchiver.decode(Set<String>.self, forKey: "tags")
        table = try unarchiver.decode([String: Int].self, forKey: "table")
        nothing = try unarchiver.decode(String?.self, forKey: "nothing")
    }
}

/// A holder whose `next` may close a cycle, and which may hold a point (a value record) and
/// an inline array of records: each is a value that stops the reader writing records as it
/// numbers objects.
final class KeyedHolder: GraphCoding {
    static var archivedTypeName: String { "Holder" }
    var label: Int
    var next: KeyedHolder?
    var point: KeyedPoint?
    var records: [Record]

    init(label: Int) {
        self.label = label
        records = []
    }

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        point = try unarchiver.decodeIfPresent(KeyedPoint.self, forKey: "point")
        records = try unarchiver.decodeIfPresent([Record].self, forKey: "records") ?? []
        try unarchiver.decodeLater(KeyedHolder?.self, forKey: "next") { [unowned self] in self.next = $0 }
    }
}

/// Reads a fixture from Fixtures/KeyedArchives.
func keyedFixture(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Data {
    let url = try #require(
        Bundle.module.url(forResource: name, withExtension: "plist", subdirectory: "Fixtures/KeyedArchives"),
        "missing fixture \(name).plist",
        sourceLocation: sourceLocation
    )
    return try Data(contentsOf: url)
}

/// A registry that reads the seed app's `UAGridState` as `Record`.
let gridStateRegistry: GraphTypeRegistry = {
    var registry = GraphTypeRegistry([Record.self])
    registry.register(Record.self, forName: "UAGridState")
    return registry
}()

/// Grid-state record `index` of the archives the listing tests build: `$class` is UID 3.
private func listingRecord(_ index: Int) -> PlistValue {
    .dictionary([
        "kEncodeKeyName": .string("name \(index)"), "kEncodeKeyColor": .integer(Int64(index)),
        "kEncodeKeyDate": .string("date \(index)"), "$class": .uid(3),
    ])
}

/// An NSArray of the archives the listing tests build: `$class` is UID 2.
private func listingArray(_ elements: [PlistValue]) -> PlistValue {
    .dictionary(["NS.objects": .array(elements), "$class": .uid(2)])
}

@Suite("Keyed archives: reading")
struct KeyedArchiveReadingTests {
    // MARK: - The seeds' shapes

    @Test func valuesReadFromKeyedDataOutliveIt() throws {
        // The archive is read where the Data holds it: what comes back must own its bytes.
        let names = (0..<500).map { "record \($0) " + String(repeating: "n", count: $0 % 50) }
        var back: [String] = []
        do {
            let data = try KeyedArchive.archivedData(withRootObject: names)
            back = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromKeyedArchive: data)
        }
        // Memory the archive's bytes may have occupied, taken and written over.
        let overwrite = [UInt8](repeating: 0xA5, count: 1 << 16)
        #expect(overwrite.count == 1 << 16)
        #expect(back == names)
    }

    @Test func pythonGridStatesLoadWithSharing() throws {
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: keyedFixture("python-gridstates"),
            registry: gridStateRegistry
        )
        #expect(records.map(\.name) == ["Living room", "Kitchen", "Living room", "Hall", "Living room"])
        #expect(records.map(\.color) == [0xFF8800, 42, 0xFF8800, 0, 0xFF8800])
        #expect(records[3].date == "2013-05-03 09:15")
        #expect(records[0] === records[2] && records[0] === records[4])
        #expect(records[0] !== records[1] && records[1] !== records[3])
    }

    @Test func foundationGridStatesLoadWithSharing() throws {
        // Foundation wrote "main.UAGridState"; the registry knows "UAGridState": the reader
        // falls back to the unqualified name.
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: keyedFixture("foundation-gridstates"),
            registry: gridStateRegistry
        )
        #expect(records.count == 400)
        for index in 0..<300 {
            #expect(records[index].name == "grid \(index)")
            #expect(records[index].date == "2013-05-\(10 + index % 20) 10:00")
            #expect((0..<(1 << 24)).contains(records[index].color))
        }
        #expect(Set(records.map(ObjectIdentifier.init)).count == 300)
        for record in records[300...] {
            let index = try #require(Int(record.name.dropFirst(5)))
            #expect(record === records[index])
        }
    }

    @Test(arguments: ["python-fourlines-bid", "foundation-fourlines-bid"])
    func bidFourLinesLoadUnderDataKey(fixture: String) throws {
        // The seeds' flow: open, decode the root key, finish.
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: keyedFixture(fixture),
            registry: GraphTypeRegistry([BIDFourLines.self])
        )
        let lines = try unarchiver.decode(BIDFourLines.self, forKey: "Data")
        #expect(lines.fields == ["first line", "second line", "third line", "fourth line"])
    }

    @Test(arguments: ["python-fourlines", "foundation-fourlines"])
    func fourLinesLoadUnderDataKey(fixture: String) throws {
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: keyedFixture(fixture),
            registry: GraphTypeRegistry([FourLines.self])
        )
        let lines = try unarchiver.decode(FourLines.self, forKey: "Data")
        #expect(lines.fields == ["first line", "second line", "third line", "fourth line"])
    }

    @Test(arguments: ["python-lines", "foundation-lines"])
    func linesArrayLoadsUnderRootKey(fixture: String) throws {
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: keyedFixture(fixture),
            registry: GraphTypeRegistry([LinesModel.self])
        )
        #expect(try unarchiver.decode(LinesModel.self, forKey: "kRootKey").lines == ["one", "two", "three", "four"])
    }

    // MARK: - Values, sharing and cycles

    @Test(arguments: ["python-values", "foundation-values"])
    func foundationValueKindsDecode(fixture: String) throws {
        let values = try GraphUnarchiver.unarchivedObject(
            ofType: FoundationValues.self,
            fromKeyedArchive: keyedFixture(fixture)
        )
        #expect(values.int == -7)
        #expect(values.bigUnsigned == UInt64.max)
        #expect(values.double == 2.5)
        #expect(values.flag)
        #expect(values.text == "plain ASCII")
        #expect(values.unicode == "grüße, 世界 🌍")
        #expect(values.mutableText == "mutable")
        #expect(values.bytes == Data([0, 1, 2, 255]))
        #expect(values.date == Date(timeIntervalSinceReferenceDate: 400_000_000.5))
        #expect(values.numbers == [1, 2, 3])
        #expect(values.tags == ["a", "b"])
        #expect(values.table == ["one": 1, "two": 2])
        #expect(values.nothing == nil)
    }

    @Test func foundationOnlyValueKindsDecode() throws {
        // The root's other keys, read through a second model of the same class name.
        final class Extras: GraphCoding {
            static var archivedTypeName: String { "Values" }
            let int64: Int64
            let float: Float
            let nested: [[Int]]
            func encode(with archiver: GraphArchiver) throws {}
            init(from unarchiver: GraphUnarchiver) throws {
                int64 = try unarchiver.decode(Int64.self, forKey: "int64")
                float = try unarchiver.decode(Float.self, forKey: "float")
                nested = try unarchiver.decode([[Int]].self, forKey: "nested")
            }
        }
        let extras = try GraphUnarchiver.unarchivedObject(
            ofType: Extras.self,
            fromKeyedArchive: keyedFixture("foundation-values")
        )
        #expect(extras.int64 == .min)
        #expect(extras.float == 1.25)
        #expect(extras.nested == [[1, 2], [3]])
    }

    @Test(arguments: ["python-ring", "foundation-ring"])
    func cyclesComeBackAsTheSameInstances(fixture: String) throws {
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: keyedFixture(fixture),
            registry: GraphTypeRegistry([RingNode.self])
        )
        let first = try unarchiver.decode(RingNode.self, forKey: "root")
        let parent = try unarchiver.decode(RingNode.self, forKey: "parent")
        let ring = [first, try #require(first.next), try #require(first.next?.next)]
        #expect(ring.map(\.label) == [0, 1, 2])
        #expect(ring[2].next === first)
        #expect(parent.label == 99)
        #expect(parent.parent == nil)
        #expect(parent.children.count == 3 && zip(parent.children, ring).allSatisfy { $0 === $1 })
        #expect(ring.allSatisfy { $0.parent === parent && $0.children.isEmpty })
        for node in ring { node.next = nil }
        parent.children = []
    }

    @Test func unknownClassIsRefusedByName() throws {
        #expect {
            try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                fromKeyedArchive: keyedFixture("python-hostile-unknown-class"),
                registry: gridStateRegistry
            )
        } throws: { error in
            (error as? GraphArchiveError)?.code == .unknownType && "\(error)".contains("UAEvilPayload")
        }
    }

    @Test func classNamesFallBackAlongClassesList() throws {
        // An app subclass the registry does not know decodes as its registered superclass.
        let data = keyedArchive(
            top: ["root": .uid(1)],
            objects: [
                .dictionary([
                    "kEncodeKeyName": .uid(3), "kEncodeKeyColor": .integer(7), "kEncodeKeyDate": .uid(3),
                    "$class": .uid(2),
                ]),
                .dictionary([
                    "$classname": .string("UASpecialGridState"),
                    "$classes": .array([.string("UASpecialGridState"), .string("UAGridState"), .string("NSObject")]),
                ]),
                .string("same"),
            ]
        )
        let record = try GraphUnarchiver.unarchivedObject(
            ofType: Record.self,
            fromKeyedArchive: data,
            registry: gridStateRegistry
        )
        #expect(record.name == "same" && record.color == 7 && record.date == "same")
    }

    /// An array starts as packed references and falls back to tagged values at its first
    /// element that is not an object (nil here), keeping the objects before it and their sharing;
    /// one of objects only stays packed and reads as optionals all the same.
    @Test func arrayOfObjectsThenNilIsReadWhole() throws {
        let record: (Int) -> PlistValue = { index in
            .dictionary([
                "kEncodeKeyName": .string("name \(index)"), "kEncodeKeyColor": .integer(Int64(index)),
                "kEncodeKeyDate": .string("date \(index)"), "$class": .uid(3),
            ])
        }
        let cases: [(elements: [Int], colors: [Int?])] = [
            ([4, 5, 0, 4], [0, 1, nil, 0]), ([5, 4, 5, 0], [1, 0, 1, nil]), ([0, 5], [nil, 1]),
            ([4, 5, 4], [0, 1, 0]),
        ]
        for (elements, expected) in cases {
            let objects: [PlistValue] = [
                .dictionary(["NS.objects": .array(elements.map { .uid($0) }), "$class": .uid(2)]),
                .dictionary(["$classname": .string("NSArray")]),
                .dictionary(["$classname": .string("UAGridState")]),
                record(0), record(1),
            ]
            let back = try GraphUnarchiver.unarchivedObject(
                ofType: [Record?].self,
                fromKeyedArchive: keyedArchive(top: ["root": .uid(1)], objects: objects),
                registry: gridStateRegistry
            )
            #expect(back.map { $0?.color } == expected, "\(elements)")
            let first = expected.firstIndex(of: 1)!
            #expect(back.indices.allSatisfy { expected[$0] != 1 || back[$0] === back[first] }, "\(elements)")
        }
    }

    /// Arrays of objects are written from the objects ordering listed for them: an array
    /// shared by two places, arrays inside one that is not all objects (its list cut short
    /// before theirs), and arrays of plain values or nil, which are not listed, all read back.
    @Test func arraysListedWhileOrderingAreWrittenFromTheirLists() throws {
        let objects: [PlistValue] = [
            listingArray([.uid(6), .uid(6), .uid(7), .uid(8)]),
            .dictionary(["$classname": .string("NSArray")]),
            .dictionary(["$classname": .string("UAGridState")]),
            listingRecord(0), listingRecord(1),
            // 6: shared; 7: after a shared one; 8: empty.
            listingArray([.uid(4), .uid(5), .uid(4)]), listingArray([.uid(5)]), listingArray([]),
            // 9: integers inline; 10: strings by UID; 11: nil between objects.
            listingArray([.integer(7), .integer(8)]), listingArray([.uid(12), .uid(12)]),
            listingArray([.uid(4), .uid(0), .uid(5)]),
            .string("text"),
        ]
        let data = keyedArchive(
            top: ["root": .uid(1), "numbers": .uid(9), "texts": .uid(10), "optionals": .uid(11)],
            objects: objects
        )
        let unarchiver = try GraphUnarchiver(forReadingKeyedArchive: data, registry: gridStateRegistry)
        let root = try unarchiver.decode([[Record]].self, forKey: "root")
        #expect(root.map { $0.map(\.color) } == [[0, 1, 0], [0, 1, 0], [1], []])
        #expect(root[0][0] === root[0][2] && root[0][0] === root[1][0] && root[0][1] === root[2][0])
        #expect(try unarchiver.decode([Int].self, forKey: "numbers") == [7, 8])
        #expect(try unarchiver.decode([String].self, forKey: "texts") == ["text", "text"])
        let optionals = try unarchiver.decode([Record?].self, forKey: "optionals")
        #expect(optionals.map { $0?.color } == [0, nil, 1])
        #expect(optionals[0] === root[0][0])
    }

    /// Entries met again once classified (an object, an array, a string, nil, a class
    /// definition where a value belongs) are taken from their kinds, not their bytes: sharing
    /// is kept, plain values are copied, and a class definition is still refused.
    @Test func entriesMetAgainAreReadFromTheirKinds() throws {
        let objects: [PlistValue] = [
            listingArray([.uid(6), .uid(9), .uid(6), .uid(10), .uid(9)]),
            .dictionary(["$classname": .string("NSArray")]),
            .dictionary(["$classname": .string("UAGridState")]),
            listingRecord(0), listingRecord(1),
            // 6 and 9: met twice, holding objects met before them.
            listingArray([.uid(5), .uid(4)]),
            // 7: a string met twice, with nil between.
            listingArray([.uid(8), .uid(0), .uid(8)]), .string("again"),
            listingArray([.uid(4)]), listingArray([.uid(5)]),
        ]
        let data = keyedArchive(top: ["root": .uid(1), "texts": .uid(7)], objects: objects)
        let unarchiver = try GraphUnarchiver(forReadingKeyedArchive: data, registry: gridStateRegistry)
        let root = try unarchiver.decode([[Record]].self, forKey: "root")
        #expect(root.map { $0.map(\.color) } == [[1, 0], [0], [1, 0], [1], [0]])
        #expect(root[0][1] === root[1][0] && root[1][0] === root[4][0] && root[0][0] === root[3][0])
        #expect(root[2][0] === root[0][0])
        #expect(try unarchiver.decode([String?].self, forKey: "texts") == ["again", nil, "again"])

        // The class definition (UID 3), met first as a record's class, then as an element.
        let misplaced = keyedArchive(
            top: ["root": .uid(1)],
            objects: [
                listingArray([.uid(4), .uid(3)]), .dictionary(["$classname": .string("NSArray")]),
                .dictionary(["$classname": .string("UAGridState")]), listingRecord(0),
            ]
        )
        #expect {
            try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                fromKeyedArchive: misplaced,
                registry: gridStateRegistry
            )
        } throws: { error in
            let error = error as? GraphArchiveError
            return error?.code == .corrupt && error?.message.contains("$objects[3] is a class definition") == true
        }
    }

    /// Instances with the same keys in any order, under two class names, and with other keys
    /// read alike: the first of a kind is read key by key, the rest by their keys' bytes.
    @Test func instancesWithTheSameKeysInAnyOrderDecode() throws {
        var registry = gridStateRegistry
        registry.register(Record.self, forName: "UAOtherGridState")
        let orders = [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1], [0, 2, 1, 3]]
        let count = 24
        var objects: [PlistValue] = [
            .dictionary(["NS.objects": .array((0..<count).map { .uid(5 + $0) }), "$class": .uid(2)]),
            .dictionary(["$classname": .string("NSArray")]),
            .dictionary(["$classname": .string("UAGridState")]),
            .dictionary(["$classname": .string("UAOtherGridState")]),
        ]
        for index in 0..<count {
            let fields: [(String, PlistValue)] = [
                ("kEncodeKeyName", .string("name \(index)")), ("kEncodeKeyColor", .integer(Int64(index))),
                ("kEncodeKeyDate", .string("date \(index)")), ("$class", .uid(index % 3 == 0 ? 4 : 3)),
            ]
            var ordered = orders[index % orders.count].map { fields[$0] }
            if index % 7 == 6 { ordered.append(("extra", .integer(1))) }
            objects.append(.fields(ordered))
        }
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: keyedArchive(top: ["root": .uid(1)], objects: objects),
            registry: registry
        )
        #expect(records.map(\.name) == (0..<count).map { "name \($0)" })
        #expect(records.map(\.color) == Array(0..<count))
        #expect(records.map(\.date) == (0..<count).map { "date \($0)" })
    }

    /// The first instance of a set of keys teaches it; later ones, in any order, are matched by
    /// their keys' bytes.
    @Test func instancesAreMatchedByTheirKeysBytes() throws {
        let fields: [(String, PlistValue)] = [
            ("kEncodeKeyName", .string("a")), ("kEncodeKeyColor", .integer(1)), ("kEncodeKeyDate", .string("b")),
            ("$class", .uid(3)),
        ]
        let data = keyedArchive(
            top: ["root": .uid(1)],
            objects: [
                .dictionary(["NS.objects": .array([.uid(4), .uid(5), .uid(6)]), "$class": .uid(2)]),
                .dictionary(["$classname": .string("NSArray")]),
                .dictionary(["$classname": .string("UAGridState")]),
                .fields(fields), .fields(fields.reversed()), .fields([fields[2], fields[3], fields[0], fields[1]]),
            ]
        )
        try ArchiveBytes.lending(data) { (bytes) throws(GraphArchiveError) in
            var index = try KeyedArchiveIndex(
                plist: BPlist.scan(bytes.reader(), maximumObjectCount: 100),
                registry: gridStateRegistry
            )
            for uid in 4...6 { #expect(try index.kind(of: uid) == .object) }
            #expect(index.templates.count == 1)
            #expect((4...6).allSatisfy { index.keys(ofInstance: $0) != 0 })
        }
    }

    /// Archives that store each key once (Foundation on Apple platforms, plistlib, gridstore)
    /// give instances of a class the same key objects: an instance listing an earlier one's in
    /// its order is matched as that one was, by the references, and reads its own values; one
    /// in another order or with another key is matched by its keys' bytes, even after more key
    /// sets than the index keeps templates for came between.
    @Test func instancesListingEarlierKeyObjectsAreMatchedAsThoseWere() throws {
        func fields(_ order: [Int], _ number: Int) -> PlistValue {
            let all: [(String, PlistValue)] = [
                ("kEncodeKeyName", .string("name \(number)")), ("kEncodeKeyColor", .integer(Int64(number))),
                ("kEncodeKeyDate", .string("date \(number)")), ("$class", .uid(3)),
            ]
            return .fields(order.map { all[$0] })
        }
        let inOrder = [0, 1, 2, 3]
        let reversed = [3, 2, 1, 0]
        // Five other key sets (an extra key each), so that the first template is let go.
        let extras: [PlistValue] = (0..<5).map { extra in
            .fields([
                ("kEncodeKeyName", .string("extra \(extra)")), ("kEncodeKeyColor", .integer(100 + Int64(extra))),
                ("kEncodeKeyDate", .string("d")), ("more\(extra)", .integer(0)), ("$class", .uid(3)),
            ])
        }
        let instances =
            [fields(inOrder, 0), fields(inOrder, 1), fields(reversed, 2), fields(inOrder, 3)] + extras
            + [fields(inOrder, 4), fields(reversed, 5)]
        let data = gridStateArrayArchive(instances)
        try ArchiveBytes.lending(data) { (bytes) throws(GraphArchiveError) in
            var index = try KeyedArchiveIndex(
                plist: BPlist.scan(bytes.reader(), maximumObjectCount: 200),
                registry: gridStateRegistry
            )
            for uid in 4..<(4 + instances.count) { #expect(try index.kind(of: uid) == .object) }
            // The first four share one template: the second and fourth as the first, the third
            // reordered. Six templates are learned in all, the first one a second time at the end.
            #expect(index.keys(ofInstance: 5) == index.keys(ofInstance: 4))
            #expect(index.keys(ofInstance: 7) == index.keys(ofInstance: 4))
            #expect(index.keys(ofInstance: 6) & 0xFFFF == 1 && index.keys(ofInstance: 6) != index.keys(ofInstance: 4))
            #expect((8...12).map { index.keys(ofInstance: $0) & 0xFFFF } == [2, 3, 4, 5, 6])
            #expect(index.keys(ofInstance: 13) & 0xFFFF == 7 && index.keys(ofInstance: 14) & 0xFFFF == 7)
        }
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: data,
            registry: gridStateRegistry
        )
        let numbers = [0, 1, 2, 3, 100, 101, 102, 103, 104, 4, 5]
        #expect(records.map(\.color) == numbers)
        #expect(records.map(\.name) == numbers.map { $0 >= 100 ? "extra \($0 - 100)" : "name \($0)" })
        #expect(records.map(\.date) == numbers.map { $0 >= 100 ? "d" : "date \($0)" })
    }

    /// Keys matched by their bytes match only whole: a key one byte shorter or longer than a
    /// template's, or differing in its first, second or third word, makes another template.
    @Test func keysDifferingInAnyByteOrLengthAreNotMatched() throws {
        let long = "kEncodeKeyNameMore01"
        let keySets: [[String]] = [
            ["$class", "a", long], [long, "$class", "a"], ["$class", "a", "kEncodeKeyNameMore02"],
            ["$class", "b", long], ["$class", "aa", long], ["a", long, "$class"],
            ["a", "$class", "kEncodeKeyNameMore0"], ["$class", "a", "kEncodeKeyNamfMore01"],
        ]
        // The template generation each instance is classified by: the first teaches one, and
        // only the reordered ones (the second and the sixth, while it is among the four kept)
        // reuse it.
        let generations: [UInt64] = [1, 1, 2, 3, 4, 1, 5, 6]
        let instances = keySets.map { keys in
            PlistValue.fields(keys.map { ($0, $0 == "$class" ? .uid(3) : .integer(1)) })
        }
        let data = gridStateArrayArchive(instances)
        try ArchiveBytes.lending(data) { (bytes) throws(GraphArchiveError) in
            var index = try KeyedArchiveIndex(
                plist: BPlist.scan(bytes.reader(), maximumObjectCount: 100),
                registry: gridStateRegistry
            )
            for (offset, generation) in generations.enumerated() {
                #expect(try index.kind(of: 4 + offset) == .object)
                #expect(index.keys(ofInstance: 4 + offset) & 0xFFFF == generation, "instance \(offset)")
            }
        }
    }

    /// Instances whose key objects lie as an earlier instance's did (Foundation on Linux writes
    /// each instance's keys anew, one after another) are matched by those bytes; one laid out
    /// the same whose key differs in a byte is not, and teaches a template of its own.
    @Test func instancesLaidOutLikeEarlierOnesAreMatchedByTheirBytes() throws {
        let fixture = try keyedFixture("foundation-gridstates")
        var changed = fixture
        // The last "kEncodeKeyName" becomes "kEncodeKeyNamf": same length, same place.
        let name = try #require(changed.range(of: Data("kEncodeKeyName".utf8), options: .backwards))
        changed[name.upperBound - 1] = UInt8(ascii: "f")
        let cases: [(data: Data, generations: [UInt64: Int])] = [(fixture, [1: 300]), (changed, [1: 299, 2: 1])]
        for (data, expected) in cases {
            let generations = try ArchiveBytes.lending(data) { (bytes) throws(GraphArchiveError) -> [UInt64: Int] in
                var index = try KeyedArchiveIndex(
                    plist: BPlist.scan(bytes.reader(), maximumObjectCount: 10_000),
                    registry: gridStateRegistry
                )
                var generations: [UInt64: Int] = [:]
                for uid in 0..<index.entryCount where try index.kind(of: uid) == .object {
                    generations[index.keys(ofInstance: uid) & 0xFFFF, default: 0] += 1
                }
                return generations
            }
            #expect(generations == expected)
        }
    }

    /// Key layouts are compared by their bytes whole: a byte changed anywhere within their
    /// length tells two apart, one past it does not; fewer than 64 bytes left gives no words.
    @Test func keyLayoutBytesDifferInAnyByteWithinTheirLength() {
        let bytes = (0..<80).map { UInt8($0) }
        let original = ArchiveBytes(copying: bytes)
        for count in [0, 1, 7, 8, 9, 55, 63, 64] {
            let words = original.reader().eightWords(at: 0, count: count)
            for position in 0..<64 {
                var changed = bytes
                changed[position] ^= 0x20
                let other = ArchiveBytes(copying: changed)
                let otherWords = other.reader().eightWords(at: 0, count: count)
                #expect((words == otherWords) == (position >= count), "count \(count), byte \(position)")
            }
        }
        #expect(original.reader().eightWords(at: 16, count: 8) != nil)
        #expect(original.reader().eightWords(at: 17, count: 8) == nil)
        #expect(original.reader().eightWords(at: 0, count: 65) == nil)
    }

    /// An instance after others with its keys is checked as thoroughly as the first.
    @Test func instancesAfterOthersWithTheirKeysAreChecked() {
        let good: PlistValue = .dictionary([
            "kEncodeKeyName": .string("a"), "kEncodeKeyColor": .integer(1), "kEncodeKeyDate": .string("b"),
            "$class": .uid(3),
        ])
        let bad: [(PlistValue, GraphArchiveError.Code, String)] = [
            (
                .dictionary([
                    "kEncodeKeyColor": .integer(1), "kEncodeKeyColor": .integer(2), "kEncodeKeyDate": .string("b"),
                    "$class": .uid(3),
                ]), .corrupt, "twice"
            ),
            (
                .dictionary([
                    "kEncodeKeyDate": .string("b"), "kEncodeKeyName": .array([]), "$class": .uid(3),
                    "kEncodeKeyColor": .integer(1),
                ]), .corrupt, "where a UID or a plain value belongs"
            ),
            (
                .dictionary([
                    "kEncodeKeyDate": .string("b"), "kEncodeKeyName": .string("a"), "$class": .uid(99),
                    "kEncodeKeyColor": .integer(1),
                ]), .badObjectReference, "UID 99 is out of range"
            ),
            (
                .dictionary([
                    "kEncodeKeyDate": .string("b"), "kEncodeKeyName": .uid(77), "$class": .uid(3),
                    "kEncodeKeyColor": .integer(1),
                ]), .badObjectReference, "UID 77 is out of range"
            ),
        ]
        for (instance, code, message) in bad {
            let objects: [PlistValue] = [
                .dictionary(["NS.objects": .array([.uid(4), .uid(5), .uid(6)]), "$class": .uid(2)]),
                .dictionary(["$classname": .string("NSArray")]),
                .dictionary(["$classname": .string("UAGridState")]),
                good, good, instance,
            ]
            expectRefused(code, mentioning: message) {
                _ = try GraphUnarchiver.unarchivedObject(
                    ofType: [Record].self,
                    fromKeyedArchive: keyedArchive(top: ["root": .uid(1)], objects: objects),
                    registry: gridStateRegistry
                )
            }
        }
    }

    /// Records are written as their objects are numbered until one holds a value that is not
    /// a plain value, nil or an object numbered before it (a reference closing a cycle, a value
    /// record, an inline array); the rest are written after ordering. Both parts read back, in
    /// any place the stop comes.
    @Test(arguments: ["cycle", "point", "records"], [false, true])
    func recordsWrittenWhileOrderingAndAfterReadBack(stop: String, holderFirst: Bool) throws {
        var registry = gridStateRegistry
        registry.register(KeyedHolder.self)
        let second: PlistValue = .dictionary([
            "label": .integer(2), "next": .uid(stop == "cycle" ? 6 : 0), "$class": .uid(8),
        ])
        var first: [(String, PlistValue)] = [("label", .integer(1)), ("next", .uid(7)), ("$class", .uid(8))]
        if stop == "point" { first.append(("point", .uid(9))) }
        if stop == "records" { first.append(("records", .uid(10))) }
        let objects: [PlistValue] = [
            // 1: before the holder; 4, 5: records.
            listingArray([.uid(4), .uid(5)]),
            .dictionary(["$classname": .string("NSArray")]),
            .dictionary(["$classname": .string("UAGridState")]),
            listingRecord(0), listingRecord(1),
            // 6, 7: the holders; 8: their class.
            .fields(first), second, .dictionary(["$classname": .string("Holder")]),
            // 9: a point, 10: an array of record 12, 11: the point's class.
            .dictionary(["x": .real(1.5), "y": .real(-2), "$class": .uid(11)]),
            listingArray([.uid(12)]),
            .dictionary(["$classname": .string("KeyedPoint")]),
            listingRecord(2),
            // 13: after the holder, sharing record 5; 14: a record.
            listingArray([.uid(12), .uid(5), .uid(14)]), listingRecord(3),
        ]
        let top: KeyValuePairs<String, PlistValue> =
            holderFirst
            ? ["holder": .uid(6), "before": .uid(1), "after": .uid(13)]
            : ["before": .uid(1), "holder": .uid(6), "after": .uid(13)]
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: keyedArchive(top: top, objects: objects),
            registry: registry,
            valueTypes: [KeyedPoint.self]
        )
        let before = try unarchiver.decode([Record].self, forKey: "before")
        let holder = try unarchiver.decode(KeyedHolder.self, forKey: "holder")
        let after = try unarchiver.decode([Record].self, forKey: "after")
        #expect(before.map(\.name) == ["name 0", "name 1"])
        #expect(after.map(\.name) == ["name 2", "name 1", "name 3"] && after.map(\.color) == [2, 1, 3])
        #expect(after[1] === before[1])
        let next = try #require(holder.next)
        #expect(holder.label == 1 && next.label == 2)
        #expect((next.next === holder) == (stop == "cycle"))
        #expect(holder.point == (stop == "point" ? KeyedPoint(x: 1.5, y: -2) : nil))
        #expect(holder.records.map(\.date) == (stop == "records" ? ["date 2"] : []))
        if stop == "records" { #expect(holder.records[0] === after[0]) }
    }

    @Test func registryNamesDecideWhatIsCreated() throws {
        // Without the "UAGridState" registration the seed archive's class is unknown.
        #expect {
            try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                fromKeyedArchive: keyedFixture("python-gridstates")
            )
        } throws: { ($0 as? GraphArchiveError)?.code == .unknownType }
    }

    @Test func anyArchiveOpensBothFormats() throws {
        let keyed = try keyedFixture("python-gridstates")
        let native = try GraphArchiver.archivedData(withRootObject: [Record(name: "n", color: 1, date: "d")])
        for data in [keyed, native] {
            let unarchiver = try GraphUnarchiver(forReadingAnyArchive: data, registry: gridStateRegistry)
            #expect(try !unarchiver.decode([Record].self, forKey: "root").isEmpty)
        }
        #expect(ArchiveKind.detect(keyed) == .keyedArchive)
        #expect(ArchiveKind.detect(native) == .gridstore)
        #expect(ArchiveKind.detect(Data("hello".utf8)) == .unknown)
    }

    @Test func keyedArchiveInfoCountsObjectsAndSharing() throws {
        let data = try keyedFixture("python-gridstates")
        let info = try KeyedArchive.archiveInfo(fromKeyedArchive: data)
        #expect(info.objectCount == 3)
        #expect(info.referenceCount == 5)
        #expect(info.sharedReferenceCount == 2)
        #expect(info.rootElementCount == 5)
        #expect(info.typeNames == ["UAGridState"])
        #expect(info.topLevelKeys == ["root"])
        #expect(info.archiveBytes == data.count)
        #expect(info.formatVersion == "NSKeyedArchiver 100000")
    }

    @Test func keyedArchiveConvertsToANativeArchive() throws {
        let native = try KeyedArchive.gridstoreArchiveData(fromKeyedArchive: keyedFixture("python-gridstates"))
        #expect(ArchiveKind.detect(native) == .gridstore)
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            from: native,
            registry: gridStateRegistry
        )
        #expect(records.count == 5 && records[0] === records[4])
    }
}

// MARK: - Building keyed archives in tests

/// A property list value, for building keyed archives by hand.
indirect enum PlistValue {
    case string(String)
    case integer(Int64)
    case real(Double)
    case bool(Bool)
    case data([UInt8])
    case uid(Int)
    case array([PlistValue])
    case dictionary(KeyValuePairs<String, PlistValue>)
    /// A dictionary built from pairs in a computed order.
    case fields([(String, PlistValue)])

    /// Adds this value to `writer` and returns its object index.
    func write(to writer: inout BPlistWriter) -> Int {
        switch self {
        case .string(let value): return writer.string(value)
        case .integer(let value): return writer.integer(value)
        case .real(let value): return writer.double(value)
        case .bool(let value): return writer.bool(value)
        case .data(let value): return writer.data(value)
        case .uid(let value): return writer.uid(value)
        case .array(let elements):
            let references = elements.map { $0.write(to: &writer) }
            let start = writer.stackPosition
            for reference in references { writer.push(reference) }
            return writer.closeArray(from: start)
        case .dictionary(let pairs):
            return PlistValue.fields(pairs.map { ($0.key, $0.value) }).write(to: &writer)
        case .fields(let pairs):
            let references = pairs.map { (writer.string($0.0), $0.1.write(to: &writer)) }
            let start = writer.stackPosition
            for (key, value) in references {
                writer.push(key)
                writer.push(value)
            }
            return writer.closeDictionary(from: start)
        }
    }
}

/// A keyed archive whose root is an NSArray of `instances`, from UID 4 on, after the array's
/// class (UID 2) and UAGridState's (UID 3), which the instances' `$class` may name.
func gridStateArrayArchive(_ instances: [PlistValue]) -> Data {
    keyedArchive(
        top: ["root": .uid(1)],
        objects: [
            .dictionary(["NS.objects": .array(instances.indices.map { .uid(4 + $0) }), "$class": .uid(2)]),
            .dictionary(["$classname": .string("NSArray")]),
            .dictionary(["$classname": .string("UAGridState")]),
        ] + instances
    )
}

/// The binary property list of `value`.
func bplist(_ value: PlistValue) -> Data {
    var writer = BPlistWriter()
    let top = value.write(to: &writer)
    // A test's few objects: `finish` throws only past 2^32 - 1.
    return try! writer.finish(top: top).withUnsafeBytes { Data($0) }
}

/// A keyed archive of `$top` and `$objects` (after "$null", so the first entry is UID 1).
func keyedArchive(
    top: KeyValuePairs<String, PlistValue>,
    objects: [PlistValue],
    archiver: String = "NSKeyedArchiver",
    version: Int64 = 100_000
) -> Data {
    bplist(
        .dictionary([
            "$archiver": .string(archiver), "$version": .integer(version), "$top": .dictionary(top),
            "$objects": .array([.string("$null")] + objects),
        ])
    )
}
