// Tests/GraphArchiveTests/Coding/KeyedAccessTests.swift - key order, unread keys, collection roots

import Foundation
import Testing

@testable import GraphArchive

/// Reads Record's keys backwards and skips one: the out-of-order and skip paths.
final class Backwards: GraphCoding {
    static var archivedTypeName: String { "Record" }
    let date: String
    let name: String
    init(from unarchiver: GraphUnarchiver) throws {
        date = try unarchiver.decode(String.self, forKey: "kEncodeKeyDate")
        name = try unarchiver.decode(String.self, forKey: "kEncodeKeyName")
        #expect(unarchiver.containsValue(forKey: "kEncodeKeyColor"))
        #expect(!unarchiver.containsValue(forKey: "nope"))
    }
    func encode(with archiver: GraphArchiver) throws {}
}

/// Reads Record's keys in an order that depends on the record: the decoder's learned read
/// order (kept from the last out-of-order record of a shape) must not be trusted blindly.
final class Shuffled: GraphCoding {
    static var archivedTypeName: String { "Record" }
    let name: String
    let color: Int
    let date: String
    init(from unarchiver: GraphUnarchiver) throws {
        var name = ""
        var color = -1
        var date = ""
        let orders = [["d", "n", "c"], ["c", "d", "n"], ["n", "c", "d"], ["d", "c", "n"]]
        // The record's position picks the order; a present-key check in between exercises lookups.
        let index = try unarchiver.decodeIfPresent(Int.self, forKey: "index") ?? 0
        for step in orders[index % orders.count] {
            switch step {
            case "d": date = try unarchiver.decode(String.self, forKey: "kEncodeKeyDate")
            case "c": color = try unarchiver.decode(Int.self, forKey: "kEncodeKeyColor")
            default: name = try unarchiver.decode(String.self, forKey: "kEncodeKeyName")
            }
            #expect(try unarchiver.decodeIfPresent(String.self, forKey: "absent") == nil)
        }
        (self.name, self.color, self.date) = (name, color, date)
    }
    func encode(with archiver: GraphArchiver) throws {}
}

/// Record with its position, written first: what `Shuffled` reads its order from.
final class Indexed: GraphCoding {
    static var archivedTypeName: String { "Record" }
    let record: Record
    let index: Int
    init(_ record: Record, index: Int) {
        self.record = record
        self.index = index
    }
    init(from unarchiver: GraphUnarchiver) throws {
        index = try unarchiver.decode(Int.self, forKey: "index")
        record = try Record(from: unarchiver)
    }
    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(index, forKey: "index")
        try record.encode(with: archiver)
    }
}

/// A struct holding objects, to check values carry references.
struct Pair: GraphCoding, Equatable {
    var left: Record
    var right: Record?
    init(left: Record, right: Record?) {
        self.left = left
        self.right = right
    }
    static func == (a: Pair, b: Pair) -> Bool { a.left === b.left && a.right === b.right }
    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(left, forKey: "l")
        try archiver.encode(right, forKey: "r")
    }
    init(from unarchiver: GraphUnarchiver) throws {
        left = try unarchiver.decode(Record.self, forKey: "l")
        right = try unarchiver.decode(Record?.self, forKey: "r")
    }
}

/// A struct read last field first, holding others of its kind: records read out of order open
/// inside each other, each keeping its values' offsets while the ones inside it are read.
struct Nest: GraphCoding, Equatable {
    var label: String
    var inner: [Nest]
    var depth: Int

    init(depth: Int, label: String) {
        self.label = label
        self.depth = depth
        inner = depth == 0 ? [] : (0..<(depth % 3 + 1)).map { Nest(depth: depth - 1, label: "\(label).\($0)") }
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        try archiver.encode(inner, forKey: "inner")
        try archiver.encode(depth, forKey: "depth")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        depth = try unarchiver.decode(Int.self, forKey: "depth")
        inner = try unarchiver.decode([Nest].self, forKey: "inner")
        label = try unarchiver.decode(String.self, forKey: "label")
    }
}

@Suite("Keyed access")
struct KeyedAccessTests {
    @Test func nestedRecordsReadOutOfOrder() throws {
        let roots = (0..<6).map { Nest(depth: $0, label: "root \($0)") }
        let data = try GraphArchiver.archivedData(withRootObject: roots)
        #expect(try GraphUnarchiver.unarchivedObject(ofType: [Nest].self, from: data) == roots)
    }

    @Test func keysReadOutOfOrderAndSkipped() throws {
        let records = (0..<50).map { Record(name: "n\($0)", color: $0, date: "d\($0)") }
        let data = try GraphArchiver.archivedData(withRootObject: records)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Backwards].self, from: data)
        #expect(back.map(\.name) == records.map(\.name))
        #expect(back.map(\.date) == records.map(\.date))
    }

    @Test func keysReadInAnOrderThatChangesFromRecordToRecord() throws {
        let records = (0..<40).map { Indexed(Record(name: "n\($0)", color: $0, date: "d\($0)"), index: $0 / 3) }
        let data = try GraphArchiver.archivedData(withRootObject: records)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Shuffled].self, from: data)
        #expect(back.map(\.name) == records.map(\.record.name))
        #expect(back.map(\.color) == records.map(\.record.color))
        #expect(back.map(\.date) == records.map(\.record.date))
    }

    @Test func dictionaryRootKeepsSharing() throws {
        let shared = Record(name: "s", color: 1, date: "d")
        let root = ["a": shared, "b": shared, "c": Record(name: "t", color: 2, date: "e")]
        let data = try GraphArchiver.archivedData(withRootObject: root)
        #expect(try GraphUnarchiver.archiveInfo(from: data).rootElementCount == 3)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [String: Record].self, from: data)
        #expect(back["a"] === back["b"])
        #expect(back["c"]?.name == "t")
    }

    @Test func structsCarryObjectReferences() throws {
        let shared = Record(name: "s", color: 1, date: "d")
        let pairs = [Pair(left: shared, right: nil), Pair(left: shared, right: shared)]
        let data = try GraphArchiver.archivedData(withRootObject: pairs)
        // A struct's classes are not discovered from its type: register them.
        #expect(
            archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [Pair].self, from: data) }?.code
                == .unknownType
        )
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Pair].self,
            from: data,
            registry: GraphTypeRegistry([Record.self])
        )
        #expect(back[0].left === back[1].left && back[1].right === back[0].left)
        #expect(back[0].right == nil)
        let copy = try GraphArchiver.deepCopy(of: pairs)
        #expect(copy[0].left !== shared && copy[0].left === copy[1].right)
    }

    @Test func valueTypeNameIsChecked() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Everything())
        #expect(throws: GraphArchiveError.self) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: Pair.self, from: data)
        }
    }

    @Test func floatAndDoubleConversions() throws {
        let double = try GraphArchiver.archivedData(withRootObject: 0.1)
        #expect(try GraphUnarchiver.unarchivedObject(ofType: Double.self, from: double) == 0.1)
        let error = archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: Float.self, from: double) }
        #expect(error?.code == .valueOutOfRange)
        let exact = try GraphArchiver.archivedData(withRootObject: 0.5)
        #expect(try GraphUnarchiver.unarchivedObject(ofType: Float.self, from: exact) == 0.5)
        let float = try GraphArchiver.archivedData(withRootObject: Float(0.1))
        #expect(try GraphUnarchiver.unarchivedObject(ofType: Double.self, from: float) == Double(Float(0.1)))
    }

    @Test func manyShapesOfOneType() throws {
        // Records whose keys vary produce many shapes; shape ids past 127 need two varint bytes.
        struct Sparse: GraphCoding, Equatable {
            var fields: [String: Int]
            init(fields: [String: Int]) { self.fields = fields }
            func encode(with archiver: GraphArchiver) throws {
                for key in fields.keys.sorted() { try archiver.encode(fields[key]!, forKey: key) }
            }
            init(from unarchiver: GraphUnarchiver) throws {
                var fields: [String: Int] = [:]
                for index in 0..<300 where unarchiver.containsValue(forKey: "k\(index)") {
                    fields["k\(index)"] = try unarchiver.decode(Int.self, forKey: "k\(index)")
                }
                self.fields = fields
            }
        }
        let values = (0..<300).map { Sparse(fields: ["k\($0)": $0, "k\(($0 + 1) % 300)": -$0]) }
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Sparse].self,
            from: GraphArchiver.archivedData(withRootObject: values)
        )
        #expect(back == values)
    }

    /// Each record is matched key by key against the shape its type wrote last: records that
    /// repeat it, stop short of it, go past it, reorder it or have no key at all, one after
    /// another, each keep their own keys and values.
    @Test func recordsThatLeaveTheirTypesLastShape() throws {
        struct Varying: GraphCoding, Equatable {
            static let names = ["a", "b", "c", "d"]
            var keys: [String]
            init(keys: [String]) { self.keys = keys }
            func encode(with archiver: GraphArchiver) throws {
                for key in keys { try archiver.encode(Self.names.firstIndex(of: key)! * 10, forKey: key) }
            }
            init(from unarchiver: GraphUnarchiver) throws {
                keys = []
                for (index, name) in Self.names.enumerated() where unarchiver.containsValue(forKey: name) {
                    #expect(try unarchiver.decode(Int.self, forKey: name) == index * 10)
                    keys.append(name)
                }
            }
        }
        let keyLists = [
            ["a", "b", "c"], ["a", "b", "c"], ["a", "b"], ["a", "b", "c", "d"], ["b", "a"], [], ["a", "b", "c"], [],
            ["a"], ["a", "b", "c", "d"],
        ]
        let values = keyLists.map(Varying.init(keys:))
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Varying].self,
            from: GraphArchiver.archivedData(withRootObject: values)
        )
        #expect(back.map { Set($0.keys) } == keyLists.map { Set($0) })
    }
}

/// Written as three shapes, one after another in the shape table (`SlotLone`'s one key, then
/// `SlotFollower`'s and `SlotHolder`'s), so that a record's last key sits right before another
/// shape's first.
final class SlotLone: GraphCoding {
    let a: Int
    init(a: Int) { self.a = a }
    init(from unarchiver: GraphUnarchiver) throws {
        a = try unarchiver.decode(Int.self, forKey: "a")
        // Past the last key, the next shape's keys are not this record's.
        for key in ["b", "c", "lone", "follower"] {
            #expect(try unarchiver.decodeIfPresent(Int.self, forKey: key) == nil)
        }
        // Read again after the last: out of order.
        #expect(try unarchiver.decode(Int.self, forKey: "a") == a)
    }
    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(a, forKey: "a")
    }
}

final class SlotFollower: GraphCoding {
    let b: Int, c: SlotLone?
    init(b: Int, c: SlotLone?) { (self.b, self.c) = (b, c) }
    init(from unarchiver: GraphUnarchiver) throws {
        b = try unarchiver.decode(Int.self, forKey: "b")
        c = try unarchiver.decode(SlotLone?.self, forKey: "c")
        for key in ["a", "lone", "follower"] {
            #expect(!unarchiver.containsValue(forKey: key))
            #expect(try unarchiver.decodeIfPresent(Int.self, forKey: key) == nil)
        }
        // Back to the first key, then on to the second in stored order.
        #expect(try unarchiver.decode(Int.self, forKey: "b") == b)
        #expect(try unarchiver.decode(SlotLone?.self, forKey: "c") === c)
    }
    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(b, forKey: "b")
        try archiver.encode(c, forKey: "c")
    }
}

final class SlotHolder: GraphCoding {
    let lone: SlotLone, follower: SlotFollower
    init(_ lone: SlotLone, _ follower: SlotFollower) { (self.lone, self.follower) = (lone, follower) }
    init(from unarchiver: GraphUnarchiver) throws {
        lone = try unarchiver.decode(SlotLone.self, forKey: "lone")
        follower = try unarchiver.decode(SlotFollower.self, forKey: "follower")
        #expect(try unarchiver.decodeIfPresent(Int.self, forKey: "a") == nil)
    }
    func encode(with archiver: GraphArchiver) throws {
        for (key, object) in [("lone", lone), ("follower", follower)] as [(String, AnyObject)] {
            if let object = object as? SlotLone { try archiver.encode(object, forKey: key) }
            if let object = object as? SlotFollower { try archiver.encode(object, forKey: key) }
        }
    }
}

@Suite("Keys read in stored order")
struct StoredOrderTests {
    /// A read in stored order tests only the key at the record's expected slot: past a
    /// record's last key that slot matches nothing, not the next shape's first key, and a key
    /// read again or out of order finds its value the slow way.
    @Test func readsPastTheLastKeyMatchNoOtherShapesKeys() throws {
        let holders = (0..<20).map { SlotHolder(SlotLone(a: $0), SlotFollower(b: 100 + $0, c: SlotLone(a: -$0))) }
        let data = try GraphArchiver.archivedData(withRootObject: holders)
        let types: [any GraphCoding.Type] = [SlotLone.self, SlotFollower.self]
        let back: [SlotHolder] = try GraphUnarchiver.unarchivedObject(
            ofType: [SlotHolder].self,
            from: data,
            registry: GraphTypeRegistry(types)
        )
        #expect(back.map { $0.lone.a } == holders.map { $0.lone.a })
        #expect(back.map { $0.follower.b } == holders.map { $0.follower.b })
        #expect(back.map { $0.follower.c?.a } == holders.map { $0.follower.c?.a })
    }

    /// No string's words are `StringBits.none`, the words of the slots that match no key.
    @Test func noKeyHasTheWordsOfNone() {
        let long = String(repeating: "k", count: 40)
        for key in ["", "a", "value", "next", "fifteen bytes!!", long, String(long.dropFirst(3)), "é"] {
            #expect(StringBits(key) != StringBits.none)
        }
    }
}
