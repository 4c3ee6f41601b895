// Tests/GraphArchiveTests/KeyedArchive/KeyedArchiveFormsTests.swift - every form keyed archives take, on committed real files
//
// Each test names a form of keyed archives as Apple's Foundation writes them and reads it from
// committed files written by Foundation: on macOS (swift-corelibs-foundation's fixtures, see the
// README beside them) or on Linux (scripts/make-keyed-fixtures.swift), and checks that the file
// really uses the form, so a regenerated fixture cannot quietly stop covering it.

import Foundation
import Testing

@testable import GraphArchive

/// The marker byte of every object of binary property list `data`.
func plistMarkers(_ data: Data) throws -> [UInt8] {
    var markers: [UInt8] = []
    try withPlist(data) { plist in
        for index in 0..<plist.objectCount { markers.append(try plist.object(index).marker) }
    }
    return markers
}

/// The offset and reference widths of binary property list `data`'s trailer.
func plistWidths(_ data: Data) -> (offset: Int, reference: Int) {
    (Int(data[data.count - 26]), Int(data[data.count - 25]))
}

/// The object `key` of the root object of `graph` refers to.
func rootField(_ graph: ArchiveGraph, _ key: String) throws -> ArchiveValue? {
    try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "root"))))[key]
}

/// The Linux Foundation model of foundation-classes, read through GraphCoding by its
/// unqualified name (Foundation wrote "main.Catalog").
final class Catalog: GraphCoding {
    var baseName = ""
    var oneByte = 0
    var fourBytes = 0
    var sixteenBytes: UInt64 = 0
    var negative = 0
    var float: Float = 0
    var utf16 = ""
    var ordered: [String] = []
    var counted: Set<String> = []
    var date = Date()
    var boxed = 0
    var rawBytes = Data()
    var itself: Catalog?

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: GraphUnarchiver) throws {
        baseName = try unarchiver.decode(String.self, forKey: "baseName")
        oneByte = try unarchiver.decode(Int.self, forKey: "oneByte")
        fourBytes = try unarchiver.decode(Int.self, forKey: "fourBytes")
        sixteenBytes = try unarchiver.decode(UInt64.self, forKey: "sixteenBytes")
        negative = try unarchiver.decode(Int.self, forKey: "negative")
        float = try unarchiver.decode(Float.self, forKey: "float")
        utf16 = try unarchiver.decode(String.self, forKey: "utf16")
        ordered = try unarchiver.decode([String].self, forKey: "ordered")
        counted = try unarchiver.decode(Set<String>.self, forKey: "counted")
        date = try unarchiver.decode(Date.self, forKey: "date")
        boxed = try unarchiver.decode(Int.self, forKey: "boxed")
        rawBytes = try unarchiver.decode(Data.self, forKey: "rawBytes")
        try unarchiver.decodeLater(Catalog?.self, forKey: "itself") { [unowned self] in self.itself = $0 }
    }
}

/// A class read without its fields: stands for the Foundation classes a test does not decode.
final class Skipped: GraphCoding {
    func encode(with archiver: GraphArchiver) throws {}
    init(from unarchiver: GraphUnarchiver) throws {}
}

/// Reads foundation-classes' root as a ``Catalog``, the Foundation classes it holds skipped.
func decodeCatalog(_ data: Data) throws -> Catalog {
    var registry = GraphTypeRegistry([Catalog.self])
    for name in [
        "NSAttributedString", "NSValue", "NSIndexSet", "NSURL", "NSMeasurement", "NSUnitLength",
        "NSUnitConverterLinear",
        "NSUUID",
    ] {
        registry.register(Skipped.self, forName: name)
    }
    let catalog = try GraphUnarchiver.unarchivedObject(ofType: Catalog.self, fromKeyedArchive: data, registry: registry)
    // Its `itself` closes a cycle; the caller's reads are done once this returns.
    defer { catalog.itself = nil }
    return catalog
}

@Suite("Keyed archives: every form, on real files")
struct KeyedArchiveFormsTests {
    // MARK: - Property lists

    @Test func xmlPlistsWithUIDDictionaries() throws {
        let xml = try keyedFixture("foundation-classes-xml")
        #expect(xml.starts(with: Data("<?xml".utf8)) && String(decoding: xml, as: UTF8.self).contains("CF$UID"))
        let binary = try keyedFixture("foundation-classes")
        // The same archive, written by Foundation in both forms, is the same graph.
        // (XML has one kind of real: the 4-byte float comes back as a double.)
        let fromXML = try canonicalForm(ArchiveGraph(data: xml), sortingKeys: true)
        let fromBinary = try canonicalForm(ArchiveGraph(data: binary), sortingKeys: true).map {
            $0.replacingOccurrences(of: "float(0.5)", with: "double(0.5)")
        }
        #expect(fromXML == fromBinary, "\(fromXML.difference(from: fromBinary))")
        // The typed reader reads the XML one too.
        for data in [xml, binary] {
            let catalog = try decodeCatalog(data)
            #expect(catalog.baseName == "base field" && catalog.ordered == ["a", "b", "c"])
        }
    }

    @Test func topLevelKeysOfEveryKind() throws {
        // `root`, `$0`…`$N` from keyless encode(_:), custom keys, plain values in $top.
        let graph = try ArchiveGraph(data: keyedFixture("foundation-keyless"))
        #expect(Set(graph.topLevelKeys) == ["$0", "$1", "count", "flag", "State", "IB.objectdata"])
        #expect(try graph.topLevelValue(forKey: "$0") == .string("top first"))
        #expect(try graph.topLevelValue(forKey: "count") == .integer(7))
        #expect(try graph.topLevelValue(forKey: "flag") == .bool(true))
        #expect(try graph.topLevelValue(forKey: "IB.objectdata") == .array([.string("objects")]))
        let keyless = try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "$1"))))
        #expect(keyless.className == "main.Keyless")
        #expect(keyless["$0"] == .string("first") && keyless["$1"] == .integer(2))
        let state = try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "State"))))
        #expect(state.className == "main.Keyless")
        // The typed reader reads the same keys.
        var registry = GraphTypeRegistry()
        registry.register(Skipped.self, forName: "Keyless")
        let unarchiver = try GraphUnarchiver(
            forReadingKeyedArchive: keyedFixture("foundation-keyless"),
            registry: registry
        )
        #expect(try unarchiver.decode(String.self, forKey: "$0") == "top first")
        #expect(try unarchiver.decode(Int.self, forKey: "count") == 7)
        #expect(try unarchiver.decode([String].self, forKey: "IB.objectdata") == ["objects"])
        let fourLines = try ArchiveGraph(data: keyedFixture("foundation-fourlines"))
        #expect(fourLines.topLevelKeys == ["Data"])
    }

    @Test func classEntriesWithoutClasses() throws {
        let data = try keyedFixture("python-no-classes")
        let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        let entries = try #require(plist["$objects"] as? [Any])
        #expect(
            entries.contains {
                ($0 as? [String: Any])?["$classname"] as? String == "UAGridState"
                    && ($0 as? [String: Any])?["$classes"] == nil
            }
        )
        let graph = try ArchiveGraph(data: data)
        let slots = try #require(elements(graph.topLevelValue(forKey: "root")))
        let record = try graph.object(withID: try #require(objectID(slots[0])))
        #expect(record.className == "UAGridState" && record.classChain == ["UAGridState"])
        let records = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: data,
            registry: gridStateRegistry
        )
        #expect(records.count == 2 && records[0] === records[1])
    }

    @Test func moduleQualifiedSwiftClassNamesAndHierarchies() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-classes"))
        let root = try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "root"))))
        #expect(root.className == "main.Catalog")
        #expect(root.classChain == ["main.Catalog", "main.BaseCatalog", "NSObject"])
        // The typed reader finds "Catalog" for "main.Catalog".
        #expect(try decodeCatalog(keyedFixture("foundation-classes")).baseName == "base field")
    }

    // MARK: - Numbers and strings

    @Test func integersOfEveryWidthAndRealsOfBoth() throws {
        let data = try keyedFixture("foundation-classes")
        let markers = Set(try plistMarkers(data))
        // 1, 2, 4, 8 and 16-byte integers, 4 and 8-byte reals, UTF-16 strings are all in the file.
        for marker: UInt8 in [0x10, 0x11, 0x12, 0x13, 0x14, 0x22, 0x23] {
            #expect(markers.contains(marker), "no object with marker 0x\(String(marker, radix: 16))")
        }
        #expect(markers.contains { $0 & 0xF0 == 0x60 }, "no UTF-16 string")
        let graph = try ArchiveGraph(data: data)
        #expect(try rootField(graph, "oneByte") == .integer(200))
        #expect(try rootField(graph, "twoBytes") == .integer(40_000))
        #expect(try rootField(graph, "fourBytes") == .integer(3_000_000_000))
        #expect(try rootField(graph, "eightBytes") == .integer(1 << 40))
        #expect(try rootField(graph, "negative") == .integer(-5))
        #expect(try rootField(graph, "sixteenBytes") == .unsignedInteger(.max))
        #expect(try rootField(graph, "float") == .float(0.5))
        #expect(try rootField(graph, "utf16") == .string("grüße 🌍"))
        let catalog = try decodeCatalog(data)
        #expect(catalog.oneByte == 200 && catalog.fourBytes == 3_000_000_000 && catalog.negative == -5)
        #expect(catalog.sixteenBytes == .max && catalog.float == 0.5 && catalog.utf16 == "grüße 🌍")
    }

    @Test func numbersByReferenceAndBytesInPlace() throws {
        let data = try keyedFixture("foundation-classes")
        let graph = try ArchiveGraph(data: data)
        #expect(try rootField(graph, "boxed") == .integer(7))
        #expect(try rootField(graph, "rawBytes") == .data(Data([9, 8, 7])))
        let catalog = try decodeCatalog(data)
        #expect(catalog.boxed == 7 && catalog.rawBytes == Data([9, 8, 7]))
    }

    /// Apple's macOS archive has 1-byte references and offsets, Linux Foundation's 2-byte ones and,
    /// past 65,535 objects and bytes, 4-byte ones; a Python-written file mixes 1-byte references
    /// with 2-byte offsets.
    @Test(arguments: [
        ("apple:macOS-10.14/NSSet-Numbers", 1, 1), ("python-gridstates", 1, 2), ("foundation-classes", 2, 2),
        ("foundation-wide-references", 4, 4),
    ])
    func referencesAndOffsetsOfEveryWidth(fixture: String, reference: Int, offset: Int) throws {
        let data =
            fixture.hasPrefix("apple:") ? try appleFixture(String(fixture.dropFirst(6))) : try keyedFixture(fixture)
        #expect(plistWidths(data) == (offset, reference))
        let graph = try ArchiveGraph(data: data)
        _ = try graph.topLevelFields()
        try graph.forEachObject { _ in }
        switch fixture {
        case "apple:macOS-10.14/NSSet-Numbers":
            let set = try GraphUnarchiver.unarchivedObject(ofType: Set<Int>.self, fromKeyedArchive: data)
            #expect(set == [1, 2, 3, 4, 5])
        case "foundation-wide-references":
            let numbers = try GraphUnarchiver.unarchivedObject(ofType: [Int].self, fromKeyedArchive: data)
            #expect(numbers == Array(0..<65_600))
        default:
            break
        }
    }

    // MARK: - Foundation's classes

    @Test func orderedSetsWithNumberedKeys() throws {
        for (data, expected) in [
            (try keyedFixture("foundation-classes"), ["a", "b", "c"]),
            (try appleFixture("NSKeyedUnarchiver-OrderedSetTest"), ["valgeir", "nico", "puzzle"]),
        ] {
            let graph = try ArchiveGraph(data: data)
            let set: ArchiveObject
            if let field = try? rootField(graph, "ordered") {
                set = try graph.object(withID: try #require(objectID(field)))
            } else {
                set = try graph.object(withID: try #require(objectID(graph.topLevelValue(forKey: "root"))))
            }
            #expect(set.className == "NSOrderedSet")
            #expect((0..<3).map { set["NS.object.\($0)"] } == expected.map(ArchiveValue.string))
        }
        #expect(try decodeCatalog(keyedFixture("foundation-classes")).ordered == ["a", "b", "c"])
    }

    @Test func countedSets() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-classes"))
        let counted = try graph.object(withID: try #require(objectID(rootField(graph, "counted"))))
        #expect(counted.className == "NSCountedSet" && counted["NS.count"] == .integer(2))
        #expect(try decodeCatalog(keyedFixture("foundation-classes")).counted == ["x", "y"])
    }

    @Test func valueForms() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-classes"))
        let range = try graph.object(withID: try #require(objectID(rootField(graph, "range"))))
        #expect(range.className == "NSValue" && range["NS.rangeval.location"] == .integer(3))
        let rect = try graph.object(withID: try #require(objectID(rootField(graph, "rect"))))
        #expect(rect["NS.rectval"] == .string("{{1.0, 2.0}, {3.0, 4.0}}"))
        let apple = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-RectTest"))
        #expect(try apple.object(withID: 1)["NS.rectval"] == .string("{{400, 300}, {200, 300}}"))
        let old = try ArchiveGraph(data: appleFixture("NSKeyedUnarchiver-ConcreteValueTest"))
        let array = try old.object(withID: try #require(objectID(old.object(withID: 1)["$1"])))
        #expect(array.className == "_NSKeyedCoderOldStyleArray")
        #expect((0..<3).map { array["$\($0)"] } == [.integer(1), .integer(2), .integer(3)])
    }

    @Test func uuidsAndURLs() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-classes"))
        let uuid = try graph.object(withID: try #require(objectID(rootField(graph, "uuid"))))
        guard case .data(let bytes) = uuid["NS.uuidbytes"] else {
            Issue.record("no NS.uuidbytes")
            return
        }
        #expect(
            UUID(uuid: bytes.withUnsafeBytes { $0.load(as: uuid_t.self) }).uuidString
                == "71DC068E-3420-45FF-919E-3A267D55EC22"
        )
        // The same instance under two keys is one object.
        #expect(try objectID(rootField(graph, "sameUUID")) == uuid.id)
        let url = try graph.object(withID: try #require(objectID(rootField(graph, "url"))))
        #expect(url.className == "NSURL" && url["NS.relative"] == .string("index.xml"))
        let base = try graph.object(withID: try #require(objectID(url["NS.base"])))
        #expect(base["NS.relative"] == .string("https://www.swift.org/") && base["NS.base"] == .null)
    }

    @Test func attributedStrings() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-classes"))
        let string = try graph.object(withID: try #require(objectID(rootField(graph, "attributed"))))
        #expect(string.className == "NSAttributedString" && string["NSString"] == .string("hello"))
        let apple = try ArchiveGraph(data: appleFixture("macOS-10.14/NSMutableAttributedString"))
        let mutable = try apple.object(withID: try #require(objectID(apple.topLevelValue(forKey: "root"))))
        #expect(mutable.className == "NSMutableAttributedString")
    }

    @Test func unknownClassesAreGenericObjects() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-classes"))
        let measurement = try graph.object(withID: try #require(objectID(rootField(graph, "measurement"))))
        #expect(measurement.className == "NSMeasurement" && measurement["NS.value"] == .double(45))
        let unit = try graph.object(withID: try #require(objectID(measurement["NS.unit"])))
        #expect(unit.classChain == ["NSUnitLength", "NSDimension", "NSUnit", "NSObject"])
    }

    @Test func dictionariesWithKeysOfAnyKindAndNullInArrays() throws {
        let graph = try ArchiveGraph(data: keyedFixture("foundation-classes"))
        guard case .dictionary(let entries) = try rootField(graph, "numberKeys") else {
            Issue.record("numberKeys is no dictionary")
            return
        }
        #expect(Set(entries.map(\.key)) == [.integer(1), .double(2.5)])
        #expect(try rootField(graph, "nullInArray") == .array([.null, .string("x")]))
        let json = String(decoding: try graph.jsonData(), as: UTF8.self)
        #expect(json.contains("\"numberKeys\":{\"$dictionary\":["))
    }

    @Test func everyFixtureConvertsLosslessly() throws {
        for fixture in ["foundation-classes", "foundation-classes-xml", "foundation-keyless", "python-no-classes"] {
            let original = try ArchiveGraph(data: keyedFixture(fixture))
            let back = try ArchiveGraph(data: ArchiveGraph(data: original.gridstoreArchiveData()).keyedArchiveData())
            #expect(try canonicalForm(back) == canonicalForm(original), "\(fixture)")
        }
    }
}
