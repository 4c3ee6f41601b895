// Tests/GraphArchiveTests/ArchiveGraph/ArchiveGraphTests.swift - any archive opened without its model types

import Foundation
import Testing

@testable import GraphArchive

/// `value`'s object id, or nil.
func objectID(_ value: ArchiveValue?) -> Int? {
    guard case .object(let id) = value else { return nil }
    return id
}

/// `value`'s elements, or nil.
func elements(_ value: ArchiveValue?) -> [ArchiveValue]? {
    guard case .array(let elements) = value else { return nil }
    return elements
}

@Suite("Archive graph: any archive without its model types")
struct ArchiveGraphTests {
    // MARK: - Both formats, one model

    @Test func keyedGridStatesShowObjectsOnceAndSharing() throws {
        let graph = try ArchiveGraph(data: keyedFixture("python-gridstates"))
        #expect(graph.format == .keyedArchive)
        #expect(graph.topLevelKeys == ["root"])
        let slots = try #require(elements(graph.topLevelValue(forKey: "root")))
        let ids = slots.map(objectID)
        #expect(ids.count == 5 && ids.allSatisfy { $0 != nil })
        #expect(ids[0] == ids[2] && ids[0] == ids[4] && ids[0] != ids[1] && ids[1] != ids[3])
        #expect(graph.objectCount == 3)
        let first = try graph.object(withID: try #require(ids[0]))
        #expect(first.className == "UAGridState")
        #expect(first["kEncodeKeyName"] == .string("Living room"))
        #expect(first["kEncodeKeyColor"] == .integer(0xFF8800))
        #expect(first.fields.map(\.key).sorted() == ["kEncodeKeyColor", "kEncodeKeyDate", "kEncodeKeyName"])
    }

    @Test func gridstoreArchivesReadTheSameWay() throws {
        let shared = Record(name: "n", color: 7, date: "d")
        let data = try GraphArchiver.archivedData(withRootObject: [
            shared, Record(name: "m", color: 8, date: "e"), shared,
        ])
        let graph = try ArchiveGraph(data: data)
        #expect(graph.format == .gridstore)
        #expect(graph.objectIDs == [0, 1])
        let slots = try #require(elements(graph.topLevelValue(forKey: "root")))
        #expect(slots.map(objectID) == [0, 1, 0])
        let object = try graph.object(withID: 0)
        #expect(object.className == Record.archivedTypeName && object.classChain == [Record.archivedTypeName])
        #expect(object["kEncodeKeyName"] == .string("n") && object["kEncodeKeyColor"] == .integer(7))
        var seen: [Int] = []
        try graph.forEachObject { seen.append($0.id) }
        #expect(seen == [0, 1])
    }

    @Test func compressedGridstoreArchivesOpen() throws {
        guard ArchiveCompression.isZstdAvailable else { return }
        let records = (0..<100).map { Record(name: "r\($0)", color: $0, date: "d") }
        let archiver = GraphArchiver(options: GraphArchiver.Options(compression: .zstd))
        try archiver.encode(records, forKey: "root")
        try archiver.finishEncoding()
        let graph = try ArchiveGraph(data: archiver.encodedData)
        #expect(graph.objectCount == 100)
        #expect(try graph.object(withID: 42)["kEncodeKeyName"] == .string("r42"))
    }

    @Test func cyclesShowAsReferencesBack() throws {
        for fixture in ["python-ring", "foundation-ring"] {
            let graph = try ArchiveGraph(data: keyedFixture(fixture))
            let first = try #require(objectID(graph.topLevelValue(forKey: "root")))
            let second = try #require(objectID(graph.object(withID: first)["next"]))
            let third = try #require(objectID(graph.object(withID: second)["next"]))
            #expect(objectID(try graph.object(withID: third)["next"]) == first, "\(fixture)")
        }
    }

    // MARK: - Apple's archives

    @Test func appleComplexArchiveResolvesValuesAndKeepsObjects() throws {
        let graph = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-ComplexTest"))
        guard case .dictionary(let entries) = try graph.topLevelValue(forKey: "root") else {
            Issue.record("root is not a dictionary")
            return
        }
        let root = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
        #expect(root[.string("string")] == .string("hello"))
        let array = try #require(elements(root[.string("array")]))
        #expect(array[0] == .null)  // NSNull
        #expect(array[1] == .string("hello") && array[2] == .integer(34545))
        #expect(array[3] == .dictionary([ArchiveDictionaryEntry(key: .string("key"), value: .string("val"))]))
        let url = try graph.object(withID: try #require(objectID(root[.string("url")])))
        #expect(url.className == "NSURL" && url.classChain == ["NSURL", "NSObject"])
        #expect(url["NS.relative"] == .string("index.xml"))
        let base = try graph.object(withID: try #require(objectID(url["NS.base"])))
        #expect(base["NS.base"] == .null && base["NS.relative"] == .string("https://www.swift.org"))
        let uuid = try graph.object(withID: try #require(objectID(root[.string("uuid")])))
        #expect(uuid.className == "NSUUID")
        guard case .data(let bytes) = uuid["NS.uuidbytes"] else {
            Issue.record("NS.uuidbytes is not data")
            return
        }
        #expect(bytes.count == 16)
        // Objects: the two URLs and the UUID; the dictionaries, array, strings and NSNull are values.
        #expect(graph.objectCount == 3)
    }

    @Test func appleClassesWithChainsAndNumberedKeys() throws {
        let counted = try ArchiveGraph(data: appleFixture("macOS-10.14/NSCountedSet-NumbersAppearingSeveralTimes"))
        let set = try counted.object(withID: try #require(objectID(counted.topLevelValue(forKey: "root"))))
        #expect(set.classChain == ["NSCountedSet", "NSMutableSet", "NSSet", "NSObject"])
        #expect(set["NS.count"] == .integer(5) && set["NS.count0"] == .integer(5))
        let ordered = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-OrderedSetTest"))
        let object = try ordered.object(withID: try #require(objectID(ordered.topLevelValue(forKey: "root"))))
        #expect(object.className == "NSOrderedSet")
        #expect(object["NS.object.1"] == .string("nico"))
    }

    @Test func appleAttributedStringKeepsItsParts() throws {
        let graph = try ArchiveGraph(data: appleFixture("macOS-10.14/NSAttributedString"))
        let string = try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "root"))))
        #expect(string.className == "NSAttributedString")
        #expect(string["NSString"] == .string("0123456789"))
        let attributes = try #require(elements(string["NSAttributes"]))
        #expect(attributes.count == 4)
        guard case .data(let info) = string["NSAttributeInfo"] else {
            Issue.record("NSAttributeInfo (an NSMutableData) is not data")
            return
        }
        #expect(info.count == 12)
    }

    @Test func appleValueFormsReadAsTheyAreStored() throws {
        let range = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-RangeTest"))
        let value = try range.object(withID: 1)
        #expect(value.className == "NSValue")
        #expect(value["NS.rangeval.length"] == .integer(98345) && value["NS.special"] == .integer(4))
        let rect = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-RectTest"))
        #expect(try rect.object(withID: 1)["NS.rectval"] == .string("{{400, 300}, {200, 300}}"))
        let old = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-ConcreteValueTest"))
        let outer = try old.object(withID: 1)
        let array = try old.object(withID: try #require(objectID(outer["$1"])))
        #expect(array.className == "_NSKeyedCoderOldStyleArray")
        #expect(array["$0"] == .integer(1) && array["NS.count"] == .integer(3) && array["NS.type"] == .integer(105))
    }

    @Test func foundationValuesReadTyped() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-values"))
        let values = try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "root"))))
        #expect(values.className == "main.Values")
        #expect(values["int64"] == .integer(.min) && values["int"] == .integer(-7))
        #expect(values["bigUnsigned"] == .unsignedInteger(.max))
        #expect(values["double"] == .double(2.5) && values["float"] == .float(1.25) && values["flag"] == .bool(true))
        #expect(values["unicode"] == .string("grüße, 世界 🌍"))
        #expect(values["bytes"] == .data(Data([0, 1, 2, 255])))
        #expect(values["date"] == .date(Date(timeIntervalSinceReferenceDate: 400_000_000.5)))
        #expect(values["numbers"] == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(values["nested"] == .array([.array([.integer(1), .integer(2)]), .array([.integer(3)])]))
        #expect(values["nothing"] == .null)
        // An NSSet is an object of its own, whatever refers to it.
        let tags = try graph.object(withID: try #require(objectID(values["tags"])))
        let tagged = try #require(elements(tags["NS.objects"]))
        #expect(tags.className == "NSSet" && Set(tagged) == [.string("a"), .string("b")])
    }

    @Test func xmlArchivesReadLikeBinaryOnes() throws {
        let graph = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-URLTest"))
        #expect(graph.format == .keyedArchive)
        let url = try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "root"))))
        #expect(url["NS.relative"] == .string("foo.xml"))
    }

    // MARK: - Sharing

    @Test func aSharedCollectionStaysOneObject() throws {
        let data = keyedArchive(
            top: ["root": .uid(1)],
            objects: [
                .dictionary(["NS.objects": .array([.uid(2), .uid(2), .uid(4)]), "$class": .uid(3)]),
                .dictionary(["NS.objects": .array([.uid(5)]), "$class": .uid(3)]),
                .dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray")])]),
                .dictionary(["NS.objects": .array([]), "$class": .uid(3)]),
                .string("x"),
            ]
        )
        let graph = try ArchiveGraph(data: data)
        let root = try #require(elements(graph.topLevelValue(forKey: "root")))
        #expect(root.count == 3)
        #expect(objectID(root[0]) == 2 && objectID(root[1]) == 2)
        #expect(root[2] == .array([]))  // referred to once: a value
        #expect(graph.objectIDs == [2])
        #expect(try graph.object(withID: 2)["NS.objects"] == .array([.string("x")]))
    }

    @Test func hostileSharingIsShownNotExpanded() throws {
        // Thirty levels of arrays that each hold the one below twice: every array but the root
        // is shared, so each is an object once, and nothing is copied.
        let graph = try ArchiveGraph(data: keyedFixture("python-hostile-billion-laughs"))
        #expect(graph.objectCount == 29)
        let root = try #require(elements(graph.topLevelValue(forKey: "root")))
        #expect(root.count == 2 && root[0] == root[1] && objectID(root[0]) != nil)
        let contained = try ArchiveGraph(data: keyedFixture("python-hostile-self-containing-array"))
        #expect(contained.objectIDs == [1])
        #expect(try contained.object(withID: 1)["NS.objects"] == .array([.object(1)]))
    }

    @Test func sharedValuesAreWalkedWithinABudget() throws {
        // One string entry of 64 KiB referred to by 20,000 slots of one array: copying it to
        // every slot would be 1.3 GB from a 200 KB archive.
        let text = String(repeating: "x", count: 1 << 16)
        let data = keyedArchive(
            top: ["root": .uid(1)],
            objects: [
                .dictionary(["NS.objects": .array(Array(repeating: .uid(3), count: 20_000)), "$class": .uid(2)]),
                .dictionary(["$classname": .string("NSArray")]),
                .string(text),
            ]
        )
        let graph = try ArchiveGraph(data: data)
        expectRefused(.limitExceeded, mentioning: "64 times") { _ = try graph.topLevelValue(forKey: "root") }
    }

    // MARK: - Numbers

    @Test func sixteenByteIntegersKeepEveryBit() throws {
        // CF stores integers above Int64.max in 16 bytes; any 128-bit value reads as such.
        let cases: [(UInt64, UInt64, ArchiveValue)] = [
            (0, UInt64.max, .unsignedInteger(.max)),
            (0, 5, .integer(5)),
            (UInt64.max, UInt64(bitPattern: -5), .integer(-5)),
            (1, 0, .integer128(high: 1, low: 0)),
            (UInt64.max, 0, .integer128(high: -1, low: 0)),
        ]
        for (high, low, expected) in cases {
            let graph = try ArchiveGraph(data: bplistWithInteger128(high: high, low: low))
            #expect(try graph.topLevelValue(forKey: "root") == expected)
        }
    }

    // MARK: - Damage and limits

    @Test func unknownClassesAreObjectsNeverErrors() throws {
        let graph = try ArchiveGraph(data: keyedFixture("python-hostile-unknown-class"))
        #expect(graph.objectCount >= 1)
        try graph.forEachObject { _ in }
    }

    @Test func damagedKeyedArchivesAreRefusedClearly() {
        expectRefused(.badObjectReference) {
            _ = try ArchiveGraph(data: keyedFixture("python-hostile-uid-out-of-range"))
        }
        expectRefused(.badMagic, mentioning: "archiver") {
            _ = try ArchiveGraph(data: keyedFixture("python-hostile-wrong-archiver"))
        }
        expectRefused(.unsupportedVersion) {
            _ = try ArchiveGraph(data: keyedFixture("python-hostile-wrong-version"))
        }
        expectRefused(.badMagic) { _ = try ArchiveGraph(data: Data("hello world".utf8)) }
        expectRefused(.corrupt, mentioning: "bare array") {
            let graph = try ArchiveGraph(data: keyedArchive(top: ["root": .uid(1)], objects: [.array([])]))
            _ = try graph.topLevelValue(forKey: "root")
        }
        expectRefused(.badObjectReference, mentioning: "no object #999") {
            _ = try ArchiveGraph(data: keyedFixture("python-gridstates")).object(withID: 999)
        }
        expectRefused(.badObjectReference, mentioning: "no object #0") {
            _ = try ArchiveGraph(data: keyedFixture("python-gridstates")).object(withID: 0)  // $null
        }
    }

    @Test func nestedPlainContainersObeyTheDepthLimit() throws {
        var value = PlistValue.array([])
        for _ in 0..<20 { value = .array([value]) }
        let data = keyedArchive(
            top: ["root": .uid(1)],
            objects: [.dictionary(["deep": value, "$class": .uid(2)]), .dictionary(["$classname": .string("Deep")])]
        )
        var options = GraphUnarchiver.Options()
        options.maximumDepth = 10
        expectRefused(.limitExceeded, mentioning: "maximumDepth") { _ = try ArchiveGraph(data: data, options: options) }
        let graph = try ArchiveGraph(data: data)
        #expect(try graph.object(withID: 1)["deep"] != nil)
    }

    @Test func everyTruncationAndFlipOfAFixtureIsRefusedOrRead() throws {
        for fixture in ["python-values", "foundation-ring"] {
            let original = [UInt8](try keyedFixture(fixture))
            for position in original.indices {
                var flipped = original
                flipped[position] ^= 0xFF
                for bytes in [flipped, Array(original.prefix(position))] {
                    do {
                        let graph = try ArchiveGraph(data: Data(bytes))
                        _ = try graph.topLevelFields()
                        try graph.forEachObject { _ in }
                    } catch {
                        #expect(error is GraphArchiveError, "\(error)")
                    }
                }
            }
        }
    }
}

/// A keyed archive whose `$top` "root" is a 16-byte integer of halves `high` and `low`, built
/// byte by byte (the test writer has no 16-byte form with a nonzero high half).
func bplistWithInteger128(high: UInt64, low: UInt64) -> Data {
    var writer = BPlistWriter()
    let archiver = writer.string("NSKeyedArchiver")
    let version = writer.integer(100_000)
    let null = writer.string("$null")
    let placeholder = writer.string("placeholder-for-the-integer")
    let rootKey = writer.string("root")
    var start = writer.stackPosition
    writer.push(rootKey)
    writer.push(placeholder)
    let top = writer.closeDictionary(from: start)
    start = writer.stackPosition
    writer.push(null)
    let objects = writer.closeArray(from: start)
    start = writer.stackPosition
    for (key, value) in [("$archiver", archiver), ("$version", version), ("$top", top), ("$objects", objects)] {
        writer.push(writer.string(key))
        writer.push(value)
    }
    let root = writer.closeDictionary(from: start)
    // A handful of objects: `finish` throws only past 2^32 - 1.
    var bytes = [UInt8](try! writer.finish(top: root).withUnsafeBytes { Data($0) })
    // The placeholder string (1 + 1 + 1 + 27 bytes: 0x5F, 0x10, 27, text) becomes the integer
    // marker 0x14 and 16 bytes, padded with two bytes no object uses.
    let text = Array("placeholder-for-the-integer".utf8)
    let at = bytes.indices.first { bytes[$0...].starts(with: text) }! - 3
    var integer: [UInt8] = [0x14]
    for shift in stride(from: 56, through: 0, by: -8) {
        integer.append(UInt8(truncatingIfNeeded: high >> UInt64(shift)))
    }
    for shift in stride(from: 56, through: 0, by: -8) {
        integer.append(UInt8(truncatingIfNeeded: low >> UInt64(shift)))
    }
    integer += Array(repeating: 0, count: 30 - integer.count)
    bytes.replaceSubrange(at..<(at + 30), with: integer)
    return Data(bytes)
}
