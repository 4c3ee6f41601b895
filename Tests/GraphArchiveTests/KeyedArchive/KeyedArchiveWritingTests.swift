// Tests/GraphArchiveTests/KeyedArchive/KeyedArchiveWritingTests.swift - keyed archives written here, read by Foundation and back
//
// Foundation's own NSKeyedUnarchiver (swift-corelibs-foundation on Linux) decodes what the
// writer produces into NSObject, NSCoding classes; Foundation's NSKeyedArchiver writes archives
// the reader decodes into GraphCoding types.

import Foundation
import Testing

@testable import GraphArchive

// MARK: - Foundation's side: the seed app's classes as NSObject, NSCoding

/// The seed app's UAGridState as Foundation sees it.
final class FoundationGridState: NSObject, NSCoding {
    let name: String
    let color: Int
    let date: String

    init(name: String, color: Int, date: String) {
        self.name = name
        self.color = color
        self.date = date
    }

    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: "kEncodeKeyName")
        coder.encode(color, forKey: "kEncodeKeyColor")
        coder.encode(date, forKey: "kEncodeKeyDate")
    }

    init?(coder: NSCoder) {
        guard let name = coder.decodeObject(forKey: "kEncodeKeyName") as? String,
            let date = coder.decodeObject(forKey: "kEncodeKeyDate") as? String
        else { return nil }
        self.name = name
        self.color = coder.decodeInteger(forKey: "kEncodeKeyColor")
        self.date = date
    }
}

/// Every value kind, decoded the way an NSCoding class does.
final class FoundationKinds: NSObject, NSCoding {
    var int = 0
    var negative = 0
    var double = 0.0
    var float: Float = 0
    var flag = false
    var text: String?
    var bytes: Data?
    var date: Date?
    var numbers: [Int]?
    var strings: [String]?
    var table: [String: Int]?
    var point: FoundationPoint?
    var records: [FoundationGridState]?
    var nothing: Any?

    func encode(with coder: NSCoder) {}

    init?(coder: NSCoder) {
        int = coder.decodeInteger(forKey: "int")
        negative = coder.decodeInteger(forKey: "negative")
        double = coder.decodeDouble(forKey: "double")
        float = coder.decodeFloat(forKey: "float")
        flag = coder.decodeBool(forKey: "flag")
        text = coder.decodeObject(forKey: "text") as? String
        bytes = coder.decodeObject(forKey: "bytes") as? Data
        date = coder.decodeObject(forKey: "date") as? Date
        numbers = coder.decodeObject(forKey: "numbers") as? [Int]
        strings = coder.decodeObject(forKey: "strings") as? [String]
        table = coder.decodeObject(forKey: "table") as? [String: Int]
        point = coder.decodeObject(forKey: "point") as? FoundationPoint
        records = coder.decodeObject(forKey: "records") as? [FoundationGridState]
        nothing = coder.decodeObject(forKey: "nothing")
    }
}

final class FoundationPoint: NSObject, NSCoding {
    let x: Double
    let y: Double

    func encode(with coder: NSCoder) {}

    init?(coder: NSCoder) {
        x = coder.decodeDouble(forKey: "x")
        y = coder.decodeDouble(forKey: "y")
    }
}

// MARK: - Our side

struct KeyedPoint: GraphCoding, Equatable {
    var x: Double
    var y: Double

    init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(x, forKey: "x")
        try archiver.encode(y, forKey: "y")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        x = try unarchiver.decode(Double.self, forKey: "x")
        y = try unarchiver.decode(Double.self, forKey: "y")
    }
}

/// The same kinds, as a GraphCoding class.
final class Kinds: GraphCoding {
    var int = 42
    var negative = -1_000_000
    var double = 2.5
    var float: Float = 1.25
    var flag = true
    var text = "grüße, 世界 🌍"
    var bytes = Data([0, 1, 255])
    var date = Date(timeIntervalSinceReferenceDate: 1234.5)
    var numbers = [1, -2, 300_000]
    var strings = ["a", "b", "a"]
    var table = ["one": 1, "two": 2]
    var point = KeyedPoint(x: 1, y: -2)
    var records: [Record] = []
    var nothing: String? = nil

    init() {}

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(int, forKey: "int")
        try archiver.encode(negative, forKey: "negative")
        try archiver.encode(double, forKey: "double")
        try archiver.encode(float, forKey: "float")
        try archiver.encode(flag, forKey: "flag")
        try archiver.encode(text, forKey: "text")
        try archiver.encode(bytes, forKey: "bytes")
        try archiver.encode(date, forKey: "date")
        try archiver.encode(numbers, forKey: "numbers")
        try archiver.encode(strings, forKey: "strings")
        try archiver.encode(table, forKey: "table")
        try archiver.encode(point, forKey: "point")
        try archiver.encode(records, forKey: "records")
        try archiver.encode(nothing, forKey: "nothing")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        int = try unarchiver.decode(Int.self, forKey: "int")
        negative = try unarchiver.decode(Int.self, forKey: "negative")
        double = try unarchiver.decode(Double.self, forKey: "double")
        float = try unarchiver.decode(Float.self, forKey: "float")
        flag = try unarchiver.decode(Bool.self, forKey: "flag")
        text = try unarchiver.decode(String.self, forKey: "text")
        bytes = try unarchiver.decode(Data.self, forKey: "bytes")
        date = try unarchiver.decode(Date.self, forKey: "date")
        numbers = try unarchiver.decode([Int].self, forKey: "numbers")
        strings = try unarchiver.decode([String].self, forKey: "strings")
        table = try unarchiver.decode([String: Int].self, forKey: "table")
        point = try unarchiver.decode(KeyedPoint.self, forKey: "point")
        records = try unarchiver.decode([Record].self, forKey: "records")
        nothing = try unarchiver.decode(String?.self, forKey: "nothing")
    }
}

/// Decodes `data` with Foundation's NSKeyedUnarchiver, mapping class names to classes.
func foundationDecode(_ data: Data, key: String = "root", classes: [String: AnyClass]) throws -> Any? {
    let unarchiver = try NSKeyedUnarchiver(forReadingFrom: data)
    unarchiver.requiresSecureCoding = false
    for (name, type): (String, AnyClass) in classes { unarchiver.setClass(type, forClassName: name) }
    defer { unarchiver.finishDecoding() }
    return unarchiver.decodeObject(forKey: key)
}

/// `count` records in `count + count / 2` slots, the extra slots sharing earlier records.
func sharedRecords(_ count: Int) -> [Record] {
    var records = (0..<count).map {
        Record(name: "record \($0)", color: $0 * 977 % 0xFF_FFFF, date: "2024-01-\($0 % 28 + 1)")
    }
    for index in 0..<(count / 2) { records.append(records[index * 7 % count]) }
    return records
}

@Suite("Keyed archives: writing")
struct KeyedArchiveWritingTests {
    static let uaGridState: KeyedArchive.Options = {
        var options = KeyedArchive.Options()
        options.setClassName("UAGridState", for: Record.self)
        return options
    }()

    @Test func foundationDecodesGridStatesWithSharing() throws {
        let records = sharedRecords(300)
        let data = try KeyedArchive.archivedData(withRootObject: records, options: Self.uaGridState)
        let decoded = try #require(
            try foundationDecode(data, classes: ["UAGridState": FoundationGridState.self]) as? NSArray
        )
        let states = try decoded.map { try #require($0 as? FoundationGridState) }
        #expect(states.count == records.count)
        for (state, record) in zip(states, records) {
            #expect(state.name == record.name && state.color == record.color && state.date == record.date)
        }
        // The same sharing: slot i and slot j hold one instance exactly when the records did.
        for index in 300..<records.count {
            let original = index - 300
            #expect(states[index] === states[original * 7 % 300])
        }
        #expect(Set(states.map(ObjectIdentifier.init)).count == 300)
    }

    @Test func foundationDecodesEveryValueKind() throws {
        let kinds = Kinds()
        let shared = Record(name: "shared", color: 1, date: "d")
        kinds.records = [shared, Record(name: "other", color: 2, date: "e"), shared]
        var options = Self.uaGridState
        options.setClassName("FoundationKinds", for: Kinds.self)
        let data = try KeyedArchive.archivedData(withRootObject: kinds, options: options)
        let decoded = try #require(
            try foundationDecode(
                data,
                classes: [
                    "FoundationKinds": FoundationKinds.self, "UAGridState": FoundationGridState.self,
                    "KeyedPoint": FoundationPoint.self,
                ]
            ) as? FoundationKinds
        )
        #expect(decoded.int == 42 && decoded.negative == -1_000_000)
        #expect(decoded.double == 2.5 && decoded.float == 1.25 && decoded.flag)
        #expect(decoded.text == "grüße, 世界 🌍")
        #expect(decoded.bytes == Data([0, 1, 255]))
        #expect(decoded.date == Date(timeIntervalSinceReferenceDate: 1234.5))
        #expect(decoded.numbers == [1, -2, 300_000])
        #expect(decoded.strings == ["a", "b", "a"])
        #expect(decoded.table == ["one": 1, "two": 2])
        #expect(decoded.point?.x == 1 && decoded.point?.y == -2)
        let records = try #require(decoded.records)
        #expect(records.map(\.name) == ["shared", "other", "shared"])
        #expect(records[0] === records[2] && records[0] !== records[1])
        #expect(decoded.nothing == nil)
    }

    @Test func foundationArchivesDecodeIntoGraphCodingTypes() throws {
        let first = FoundationGridState(name: "first", color: 0xABCDEF, date: "2013-05-01")
        let second = FoundationGridState(name: "second", color: -3, date: "2013-05-02")
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(NSMutableArray(array: [first, second, first, first]), forKey: NSKeyedArchiveRootObjectKey)
        archiver.finishEncoding()
        // Foundation writes "GraphArchiveTests.FoundationGridState": registered unqualified.
        var registry = GraphTypeRegistry()
        registry.register(Record.self, forName: "FoundationGridState")
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: archiver.encodedData,
            registry: registry
        )
        #expect(records.map(\.name) == ["first", "second", "first", "first"])
        #expect(records.map(\.color) == [0xABCDEF, -3, 0xABCDEF, 0xABCDEF])
        #expect(records[0] === records[2] && records[0] === records[3] && records[0] !== records[1])
    }

    @Test func everyValueKindRoundTripsThroughAKeyedArchive() throws {
        let kinds = Kinds()
        kinds.records = sharedRecords(10)
        let data = try KeyedArchive.archivedData(withRootObject: kinds, options: Self.uaGridState)
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: Kinds.self,
            fromKeyedArchive: data,
            registry: gridStateRegistry,
            valueTypes: [KeyedPoint.self]
        )
        #expect(back.int == kinds.int && back.negative == kinds.negative && back.double == kinds.double)
        #expect(back.float == kinds.float && back.flag == kinds.flag && back.text == kinds.text)
        #expect(back.bytes == kinds.bytes && back.date == kinds.date && back.numbers == kinds.numbers)
        #expect(back.strings == kinds.strings && back.table == kinds.table && back.point == kinds.point)
        #expect(back.nothing == nil)
        #expect(back.records.map(\.name) == kinds.records.map(\.name))
        #expect(back.records[10] === back.records[0] && back.records[11] === back.records[7])
    }

    @Test func canonicallyEquivalentStringsKeepTheirBytes() throws {
        // Swift's == calls these equal (é precomposed and decomposed, K and the Kelvin sign);
        // a string table keyed by String would store one for both and lose the other's bytes.
        let strings = ["caf\u{E9}", "cafe\u{301}", "K", "\u{212A}", "caf\u{E9}", "K"]
        let data = try KeyedArchive.archivedData(withRootObject: strings)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromKeyedArchive: data)
        #expect(back.map { Array($0.utf8) } == strings.map { Array($0.utf8) })
        let foundation = try #require(
            try NSKeyedUnarchiver.unarchivedObject(ofClasses: [NSArray.self, NSString.self], from: data) as? [String]
        )
        #expect(foundation.map { Array($0.utf8) } == strings.map { Array($0.utf8) })
    }

    @Test func equalASCIIStringsAreStoredOnceAndDistinctOnesAllKept() throws {
        // 3,000 distinct strings (the writer's table grows several times), each three times,
        // some of them equal to keys the archive also holds.
        let distinct = (0..<3_000).map { "s\($0)-" + String(repeating: "x", count: $0 % 40) } + ["$class", "root"]
        let strings = distinct + distinct.reversed() + distinct
        let data = try KeyedArchive.archivedData(withRootObject: strings)
        #expect(try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromKeyedArchive: data) == strings)
        let bytes = ArchiveBytes(copying: data)
        let plist = try BPlist.scan(bytes.reader(), maximumObjectCount: .max)
        var stored: [String: Int] = [:]
        for index in 0..<plist.objectCount {
            let object = try plist.object(index)
            guard object.type == BPlistMarker.asciiString else { continue }
            try stored[plist.string(object), default: 0] += 1
        }
        withExtendedLifetime(bytes) {}
        #expect(stored.values.allSatisfy { $0 == 1 })
        #expect(Set(distinct).isSubset(of: stored.keys))
    }

    @Test func byteStringTableGivesUpAfterBoundedProbes() {
        // Strings whose hashes all land on one slot: past the probe limit a string is reported
        // new rather than searched for further, and the ones placed are still found.
        var storage = ByteWriter()
        var table = ByteStringTable()
        let hash: UInt64 = 7
        var placed: [(offset: Int, count: Int, id: Int)] = []
        for id in 0..<(ByteStringTable.maximumProbes + 4) {
            let offset = storage.count
            storage.writeUTF8("k\(id)")
            table.insert(id: id, hash: hash, offset: offset, count: storage.count - offset)
            placed.append((offset, storage.count - offset, id))
        }
        let bytes = ArchiveBytes(copying: Data(storage.bytes))
        for entry in placed {
            let reader = bytes.reader(entry.offset..<(entry.offset + entry.count))
            let found = table.id(of: reader, count: entry.count, hash: hash, in: storage)
            #expect(found == (entry.id < ByteStringTable.maximumProbes ? entry.id : nil))
        }
        withExtendedLifetime(bytes) {}
    }

    @Test func structRootRoundTripsAsAValueType() throws {
        // Everything holds every primitive width, nested arrays and dictionaries with Int keys.
        let data = try KeyedArchive.archivedData(withRootObject: Everything())
        #expect(try GraphUnarchiver.unarchivedObject(ofType: Everything.self, fromKeyedArchive: data) == Everything())
    }

    @Test func cyclesRoundTripThroughAKeyedArchive() throws {
        let nodes = (0..<4).map(RingNode.init)
        let parent = RingNode(label: 99)
        for (index, node) in nodes.enumerated() {
            node.next = nodes[(index + 1) % nodes.count]
            node.parent = parent
        }
        parent.children = nodes
        let data = try KeyedArchive.archivedData(withRootObject: parent)
        let back = try GraphUnarchiver.unarchivedObject(ofType: RingNode.self, fromKeyedArchive: data)
        #expect(back.children.map(\.label) == [0, 1, 2, 3])
        #expect(back.children.allSatisfy { $0.parent === back })
        #expect(back.children[3].next === back.children[0])
        for node in nodes + back.children { node.next = nil }
        parent.children = []
        back.children = []
    }

    @Test func longChainsNeedNoDeepStack() throws {
        var head: Link? = nil
        for value in 0..<20_000 { head = Link(value: value, next: head) }
        let data = try KeyedArchive.archivedData(withRootObject: head)
        let back = try GraphUnarchiver.unarchivedObject(ofType: Link.self, fromKeyedArchive: data)
        var count = 0
        var walk: Link? = back
        while let link = walk {
            #expect(link.value == 19_999 - count)
            count += 1
            walk = link.next
        }
        #expect(count == 20_000)
    }

    @Test func nilInsideAnArrayIsRefused() throws {
        #expect {
            try KeyedArchive.archivedData(withRootObject: ["a", nil, "c"] as [String?])
        } throws: { ($0 as? GraphArchiveError)?.code == .invalidValue }
    }

    @Test func writerUsesTheMappedClassName() throws {
        let data = try KeyedArchive.archivedData(
            withRootObject: [Record(name: "n", color: 1, date: "d")],
            options: Self.uaGridState
        )
        #expect(try KeyedArchive.archiveInfo(fromKeyedArchive: data).typeNames == ["UAGridState"])
        #expect(Self.uaGridState.className(for: Record.self) == "UAGridState")
        #expect(KeyedArchive.Options().className(for: Record.self) == "Record")
    }

    @Test func multiKeyArchivesKeepTheirKeys() throws {
        let archiver = GraphArchiver()
        try archiver.encode(BIDFourLines(fields: ["a", "b", nil, "d"]), forKey: "Data")
        try archiver.encode(7, forKey: "version")
        try archiver.finishEncoding()
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: archiver.keyedArchiveData(),
            registry: GraphTypeRegistry([BIDFourLines.self])
        )
        #expect(try unarchiver.decode(BIDFourLines.self, forKey: "Data").fields == ["a", "b", nil, "d"])
        #expect(try unarchiver.decode(Int.self, forKey: "version") == 7)
    }

    @Test func keyedArchiveBeforeFinishingIsAnError() throws {
        let archiver = GraphArchiver()
        try archiver.encode(1, forKey: "x")
        #expect { try archiver.keyedArchiveData() } throws: { ($0 as? GraphArchiveError)?.code == .invalidState }
    }

    @Test func nativeArchivesConvertToKeyedAndBack() throws {
        let records = sharedRecords(50)
        let native = try GraphArchiver.archivedData(withRootObject: records)
        let keyed = try KeyedArchive.keyedArchiveData(fromGridstoreArchive: native, options: Self.uaGridState)
        #expect(ArchiveKind.detect(keyed) == .keyedArchive)
        let again = try KeyedArchive.gridstoreArchiveData(fromKeyedArchive: keyed)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: again, registry: gridStateRegistry)
        #expect(back.map(\.name) == records.map(\.name))
        #expect(back[50] === back[0] && back[51] === back[7])
        // The conversion keeps the object and reference counts.
        let before = try GraphUnarchiver.archiveInfo(from: native)
        let after = try GraphUnarchiver.archiveInfo(from: again)
        #expect(after.objectCount == before.objectCount && after.referenceCount == before.referenceCount)
    }

    @Test func filesAreWrittenAtomicallyAndReadBack() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keyed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("grid.archive").path
        let records = sharedRecords(20)
        try KeyedArchive.archiveRootObject(records, toFile: path, options: Self.uaGridState)
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchiveFile: path,
            registry: gridStateRegistry
        )
        #expect(back.count == 30 && back[20] === back[0])
        // Any-archive opening detects the format from the file itself.
        let unarchiver = try GraphUnarchiver(contentsOfAnyArchiveFile: path, registry: gridStateRegistry)
        #expect(try unarchiver.decode([Record].self, forKey: "root").count == 30)

        // A failed save leaves the previous archive whole.
        #expect(throws: GraphArchiveError.self) {
            try KeyedArchive.archiveRootObject(["x", nil] as [String?], toFile: path)
        }
        #expect(
            try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                fromKeyedArchiveFile: path,
                registry: gridStateRegistry
            ).count == 30
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["grid.archive"])

        // File conversions in both directions.
        let native = folder.appendingPathComponent("grid.gridstore").path
        try KeyedArchive.writeGridstoreArchive(fromKeyedArchiveFile: path, toFile: native)
        let keyed = folder.appendingPathComponent("grid.plist").path
        try KeyedArchive.writeKeyedArchive(fromGridstoreArchiveFile: native, toFile: keyed, options: Self.uaGridState)
        #expect(
            try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: native, registry: gridStateRegistry)
                .count == 30
        )
        #expect(try KeyedArchive.archiveInfo(fromKeyedArchiveFile: keyed).referenceCount == 30)
        let decoded = try foundationDecode(
            Data(contentsOf: URL(fileURLWithPath: keyed)),
            classes: ["UAGridState": FoundationGridState.self]
        )
        #expect((decoded as? NSArray)?.count == 30)
    }
}
