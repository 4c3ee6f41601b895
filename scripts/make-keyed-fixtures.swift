// scripts/make-keyed-fixtures.swift - writes the Foundation-made NSKeyedArchiver fixtures of GraphArchiveTests
//
// Uses Foundation's own NSKeyedArchiver (swift-corelibs-foundation on Linux) with NSObject,
// NSCoding classes shaped and named like the seed documents' models, so the tests read archives
// exactly as Foundation lays them out (dictionary key order, string uniquing, class
// dictionaries). Class names come out module-qualified ("main.UAGridState"), as a Swift app
// without @objc names writes them: swift-corelibs-foundation ignores
// NSKeyedArchiver.setClassName(_:for:) (its lookup never finds the mapping).
//
// Besides the seed documents' shapes, it writes archives of many Foundation classes (NSURL,
// NSUUID, ordered and counted sets, NSValue ranges and rects, NSAttributedString, NSIndexSet,
// NSMeasurement, non-string dictionary keys, NSNull in arrays, a class hierarchy, bytes encoded
// in place, numbers encoded as objects), the same archive as XML (`outputFormat = .xml`), a
// keyless archive (`encode(_:)` writes `$0`, `$1`… at the top and inside objects) with custom
// top-level keys and plain values in `$top`, and one wide enough (over 65,536 objects) that
// its references and offsets take four bytes.
//
// Usage: swiftc -O scripts/make-keyed-fixtures.swift -o /tmp/make-keyed-fixtures && /tmp/make-keyed-fixtures [OUTPUT_DIR]
// (default: Tests/GraphArchiveTests/Fixtures/KeyedArchives; compiled, as `swift FILE` runs
// Foundation's archiver slowly)

import Foundation

/// Seed 004's UAGridState: name and date as objects, color with encodeInteger.
final class UAGridState: NSObject, NSCoding {
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

    init?(coder: NSCoder) { nil }
}

/// Seeds 000/001 (four string fields under "Field1"..."Field4") and seed 002 (an NSArray of
/// lines under kLinesKey): two apps' classes of the same name.
final class BIDFourLines: NSObject, NSCoding {
    let asArray: Bool

    init(asArray: Bool) { self.asArray = asArray }

    func encode(with coder: NSCoder) {
        if asArray {
            coder.encode(["one", "two", "three", "four"] as NSArray, forKey: "kLinesKey")
        } else {
            for (index, line) in ["first line", "second line", "third line", "fourth line"].enumerated() {
                coder.encode(line, forKey: "Field\(index + 1)")
            }
        }
    }

    init?(coder: NSCoder) { nil }
}

/// Seed 003: four string fields under "field1"..."field4".
final class FourLines: NSObject, NSCoding {
    let lines = ["first line", "second line", "third line", "fourth line"]

    func encode(with coder: NSCoder) {
        for (index, line) in lines.enumerated() { coder.encode(line, forKey: "field\(index + 1)") }
    }

    override init() {}
    init?(coder: NSCoder) { nil }
}

/// Every Foundation value kind, under one key each.
final class Values: NSObject, NSCoding {
    func encode(with coder: NSCoder) {
        coder.encode(Int64.min, forKey: "int64")
        coder.encode(-7, forKey: "int")
        coder.encode(NSNumber(value: UInt64.max), forKey: "bigUnsigned")
        coder.encode(2.5, forKey: "double")
        coder.encode(Float(1.25), forKey: "float")
        coder.encode(true, forKey: "flag")
        coder.encode("plain ASCII", forKey: "text")
        coder.encode("grüße, 世界 🌍", forKey: "unicode")
        coder.encode(NSMutableString(string: "mutable"), forKey: "mutableText")
        coder.encode(Data([0, 1, 2, 255]), forKey: "bytes")
        coder.encode(Date(timeIntervalSinceReferenceDate: 400_000_000.5), forKey: "date")
        coder.encode([1, 2, 3] as NSArray, forKey: "numbers")
        coder.encode([[1, 2], [3]] as NSArray, forKey: "nested")
        coder.encode(NSSet(array: ["a", "b"]), forKey: "tags")
        coder.encode(["one": 1, "two": 2] as NSDictionary, forKey: "table")
        coder.encode(nil as Any?, forKey: "nothing")
    }

    override init() {}
    init?(coder: NSCoder) { nil }
}

/// A node of a ring with a parent: the archive refers back to objects being encoded.
final class Node: NSObject, NSCoding {
    let label: Int
    var next: Node?
    var parent: Node?
    var children: [Node] = []

    init(label: Int) { self.label = label }

    func encode(with coder: NSCoder) {
        coder.encode(label, forKey: "label")
        coder.encode(next, forKey: "next")
        coder.encode(parent, forKey: "parent")
        coder.encode(children as NSArray, forKey: "children")
    }

    init?(coder: NSCoder) { nil }
}

/// A base class with one field: its subclass's `$classes` lists it.
class BaseCatalog: NSObject, NSCoding {
    func encode(with coder: NSCoder) {
        coder.encode("base field", forKey: "baseName")
    }

    override init() {}
    required init?(coder: NSCoder) { nil }
}

/// Foundation's classes and the number forms of CF's binary property lists, under one key each.
final class Catalog: BaseCatalog {
    override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        let uuid = NSUUID(uuidString: "71DC068E-3420-45FF-919E-3A267D55EC22")!
        coder.encode(NSURL(string: "index.xml", relativeTo: URL(string: "https://www.swift.org/")!)!, forKey: "url")
        coder.encode(uuid, forKey: "uuid")
        coder.encode(uuid, forKey: "sameUUID")
        coder.encode(NSOrderedSet(array: ["a", "b", "c"]), forKey: "ordered")
        coder.encode(NSMutableOrderedSet(array: [1, 2, 3]), forKey: "mutableOrdered")
        coder.encode(NSCountedSet(array: ["x", "x", "y"]), forKey: "counted")
        coder.encode(NSValue(range: NSRange(location: 3, length: 7)), forKey: "range")
        coder.encode(NSValue(rect: NSRect(x: 1, y: 2, width: 3, height: 4)), forKey: "rect")
        coder.encode(
            NSAttributedString(string: "hello", attributes: [NSAttributedString.Key("Font"): "Helvetica"]),
            forKey: "attributed"
        )
        coder.encode(NSIndexSet(indexesIn: NSRange(location: 2, length: 5)), forKey: "indexSet")
        coder.encode(NSMeasurement(doubleValue: 45, unit: UnitLength.miles), forKey: "measurement")
        coder.encode(NSDate(timeIntervalSinceReferenceDate: 12.5), forKey: "date")
        coder.encode(NSMutableData(bytes: [4, 5] as [UInt8], length: 2), forKey: "mutableData")
        coder.encode([1: "one", 2.5: ["deep": [7: "seven"] as NSDictionary] as NSDictionary] as NSDictionary, forKey: "numberKeys")
        coder.encode(NSArray(array: [NSNull(), "x"]), forKey: "nullInArray")
        // 1-, 2-, 4- and 8-byte integers, a negative one, a 16-byte one, a 4-byte real.
        coder.encode(200, forKey: "oneByte")
        coder.encode(40_000, forKey: "twoBytes")
        coder.encode(3_000_000_000, forKey: "fourBytes")
        coder.encode(1 << 40, forKey: "eightBytes")
        coder.encode(-5, forKey: "negative")
        coder.encode(NSNumber(value: UInt64.max), forKey: "sixteenBytes")
        coder.encode(Float(0.5), forKey: "float")
        coder.encode("grüße 🌍", forKey: "utf16")
        // An NSNumber encoded as an object (by UID), bytes encoded in place.
        coder.encode(NSNumber(value: 7) as Any?, forKey: "boxed")
        coder.encodeBytes([9, 8, 7], length: 3, forKey: "rawBytes")
        coder.encode(self, forKey: "itself")
    }
}

/// Encodes its values without keys: Foundation names them `$0`, `$1`…
final class Keyless: NSObject, NSCoding {
    func encode(with coder: NSCoder) {
        coder.encode("first" as NSString)
        coder.encode(NSNumber(value: 2))
        coder.encode(["third"] as NSArray)
    }

    override init() {}
    init?(coder: NSCoder) { nil }
}

func archive(xml: Bool = false, _ write: (NSKeyedArchiver) -> Void) -> Data {
    let archiver = NSKeyedArchiver(requiringSecureCoding: false)
    if xml { archiver.outputFormat = .xml }
    write(archiver)
    archiver.finishEncoding()
    return archiver.encodedData
}

/// Keyless encodes at the top (`$0`, `$1`), custom top-level keys, plain values in `$top`.
func keyless() -> Data {
    archive { archiver in
        archiver.encode("top first" as NSString)
        archiver.encode(Keyless())
        archiver.encode(7, forKey: "count")
        archiver.encode(true, forKey: "flag")
        archiver.encode(Keyless(), forKey: "State")
        archiver.encode(["objects"] as NSArray, forKey: "IB.objectdata")
    }
}

/// 65,600 distinct numbers: more objects than two-byte references reach.
func wideReferences() -> Data {
    archive { $0.encode(NSArray(array: (0..<65_600).map { NSNumber(value: $0) }), forKey: "root") }
}

/// 300 distinct records in 400 slots (more than 255 objects, so references take two bytes).
func gridStates() -> Data {
    var random: UInt64 = 7
    func next() -> UInt64 {
        random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return random >> 33
    }
    var states: [UAGridState] = []
    for index in 0..<300 {
        states.append(
            UAGridState(name: "grid \(index)", color: Int(next() & 0xFF_FFFF), date: "2013-05-\(10 + index % 20) 10:00")
        )
    }
    for _ in 0..<100 { states.append(states[Int(next() % 300)]) }
    return archive { $0.encode(NSMutableArray(array: states), forKey: NSKeyedArchiveRootObjectKey) }
}

func ring() -> Data {
    let nodes = (0..<3).map(Node.init)
    let parent = Node(label: 99)
    for (index, node) in nodes.enumerated() {
        node.next = nodes[(index + 1) % 3]
        node.parent = parent
    }
    parent.children = nodes
    return archive { archiver in
        archiver.encode(nodes[0], forKey: NSKeyedArchiveRootObjectKey)
        archiver.encode(parent, forKey: "parent")
    }
}

let fixtures: [(String, Data)] = [
    ("foundation-gridstates", gridStates()),
    ("foundation-fourlines-bid", archive { $0.encode(BIDFourLines(asArray: false), forKey: "Data") }),
    ("foundation-fourlines", archive { $0.encode(FourLines(), forKey: "Data") }),
    ("foundation-lines", archive { $0.encode(BIDFourLines(asArray: true), forKey: "kRootKey") }),
    ("foundation-values", archive { $0.encode(Values(), forKey: NSKeyedArchiveRootObjectKey) }),
    ("foundation-ring", ring()),
    ("foundation-classes", archive { $0.encode(Catalog(), forKey: NSKeyedArchiveRootObjectKey) }),
    ("foundation-classes-xml", archive(xml: true) { $0.encode(Catalog(), forKey: NSKeyedArchiveRootObjectKey) }),
    ("foundation-keyless", keyless()),
    ("foundation-wide-references", wideReferences()),
]

let scriptFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
let output =
    CommandLine.arguments.count > 1
    ? URL(fileURLWithPath: CommandLine.arguments[1])
    : scriptFolder.appendingPathComponent("../Tests/GraphArchiveTests/Fixtures/KeyedArchives")
try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
for (name, data) in fixtures {
    try data.write(to: output.appendingPathComponent(name + ".plist"))
    print("\(name).plist: \(data.count) bytes")
}
