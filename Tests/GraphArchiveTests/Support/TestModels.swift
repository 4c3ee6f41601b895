// Tests/GraphArchiveTests/Support/TestModels.swift - model types the engine tests archive

import Foundation
import GraphArchive

/// The seed app's record (UAGridState), as a class.
final class Record: GraphCoding {
    var name: String
    var color: Int
    var date: String

    init(name: String, color: Int, date: String) {
        self.name = name
        self.color = color
        self.date = date
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(name, forKey: "kEncodeKeyName")
        try archiver.encode(color, forKey: "kEncodeKeyColor")
        try archiver.encode(date, forKey: "kEncodeKeyDate")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        name = try unarchiver.decode(String.self, forKey: "kEncodeKeyName")
        color = try unarchiver.decode(Int.self, forKey: "kEncodeKeyColor")
        date = try unarchiver.decode(String.self, forKey: "kEncodeKeyDate")
    }
}

/// A node of linked structures; `next` and `parent` may close cycles, so they are back links
/// (`encodeLater`) and decode later.
final class Node: GraphCoding {
    var label: Int
    var next: Node?
    var parent: Node?
    /// Kept only if the buddy is archived for another reason (a conditional reference).
    weak var buddy: Node?
    var children: [Node] = []

    init(_ label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        try archiver.encodeLater(next, forKey: "next")
        try archiver.encodeLater(parent, forKey: "parent")
        try archiver.encodeConditionalObject(buddy, forKey: "buddy")
        try archiver.encode(children, forKey: "children")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        try unarchiver.decodeLater(Node?.self, forKey: "next") { [unowned self] in self.next = $0 }
        try unarchiver.decodeLater(Node?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
        try unarchiver.decodeLater(Node?.self, forKey: "buddy") { [unowned self] in self.buddy = $0 }
        try unarchiver.decodeLater([Node].self, forKey: "children") { [unowned self] in self.children = $0 }
    }
}

/// A singly linked chain node decoded directly (no decodeLater): works for any acyclic depth.
final class Link: GraphCoding {
    let value: Int
    let next: Link?

    init(value: Int, next: Link?) {
        self.value = value
        self.next = next
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(value, forKey: "v")
        try archiver.encode(next, forKey: "n")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        value = try unarchiver.decode(Int.self, forKey: "v")
        next = try unarchiver.decode(Link?.self, forKey: "n")
    }
}

/// A value type with every primitive kind.
struct Everything: GraphCoding, Equatable {
    var bool = true
    var int = Int.min
    var int8 = Int8.min
    var int16 = Int16.max
    var int32 = Int32.min
    var int64 = Int64.max
    var uint = UInt.max
    var uint8 = UInt8.max
    var uint16: UInt16 = 0
    var uint32 = UInt32.max
    var uint64 = UInt64.max
    var float: Float = -0.0
    var double = Double.infinity
    var string = "héllo, 世界 👋"
    var empty = ""
    var bytes: [UInt8] = [0, 1, 255]
    var data = Data([9, 8, 7])
    var date = Date(timeIntervalSinceReferenceDate: 123_456.789)
    var optional: Int? = nil
    var someOptional: String? = "x"
    var array = [1, -2, 300_000]
    var nested = [[1.5], [], [2.5, -0.0]]
    var dictionary = ["a": 1]
    var intKeys = [7: "seven"]
    var longString = String(repeating: "long ", count: 40)

    init() {}

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(bool, forKey: "bool")
        try archiver.encode(int, forKey: "int")
        try archiver.encode(int8, forKey: "int8")
        try archiver.encode(int16, forKey: "int16")
        try archiver.encode(int32, forKey: "int32")
        try archiver.encode(int64, forKey: "int64")
        try archiver.encode(uint, forKey: "uint")
        try archiver.encode(uint8, forKey: "uint8")
        try archiver.encode(uint16, forKey: "uint16")
        try archiver.encode(uint32, forKey: "uint32")
        try archiver.encode(uint64, forKey: "uint64")
        try archiver.encode(float, forKey: "float")
        try archiver.encode(double, forKey: "double")
        try archiver.encode(string, forKey: "string")
        try archiver.encode(empty, forKey: "empty")
        try archiver.encode(bytes, forKey: "bytes")
        try archiver.encode(data, forKey: "data")
        try archiver.encode(date, forKey: "date")
        try archiver.encode(optional, forKey: "optional")
        try archiver.encode(someOptional, forKey: "someOptional")
        try archiver.encode(array, forKey: "array")
        try archiver.encode(nested, forKey: "nested")
        try archiver.encode(dictionary, forKey: "dictionary")
        try archiver.encode(intKeys, forKey: "intKeys")
        try archiver.encode(longString, forKey: "longString")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        bool = try unarchiver.decode(Bool.self, forKey: "bool")
        int = try unarchiver.decode(Int.self, forKey: "int")
        int8 = try unarchiver.decode(Int8.self, forKey: "int8")
        int16 = try unarchiver.decode(Int16.self, forKey: "int16")
        int32 = try unarchiver.decode(Int32.self, forKey: "int32")
        int64 = try unarchiver.decode(Int64.self, forKey: "int64")
        uint = try unarchiver.decode(UInt.self, forKey: "uint")
        uint8 = try unarchiver.decode(UInt8.self, forKey: "uint8")
        uint16 = try unarchiver.decode(UInt16.self, forKey: "uint16")
        uint32 = try unarchiver.decode(UInt32.self, forKey: "uint32")
        uint64 = try unarchiver.decode(UInt64.self, forKey: "uint64")
        float = try unarchiver.decode(Float.self, forKey: "float")
        double = try unarchiver.decode(Double.self, forKey: "double")
        string = try unarchiver.decode(String.self, forKey: "string")
        empty = try unarchiver.decode(String.self, forKey: "empty")
        bytes = try unarchiver.decode([UInt8].self, forKey: "bytes")
        data = try unarchiver.decode(Data.self, forKey: "data")
        date = try unarchiver.decode(Date.self, forKey: "date")
        optional = try unarchiver.decodeIfPresent(Int.self, forKey: "optional")
        someOptional = try unarchiver.decode(String?.self, forKey: "someOptional")
        array = try unarchiver.decode([Int].self, forKey: "array")
        nested = try unarchiver.decode([[Double]].self, forKey: "nested")
        dictionary = try unarchiver.decode([String: Int].self, forKey: "dictionary")
        intKeys = try unarchiver.decode([Int: String].self, forKey: "intKeys")
        longString = try unarchiver.decode(String.self, forKey: "longString")
    }
}

/// Encodes records it makes on the spot, dropped as soon as each call returns: per batch, one
/// array of `perBatch` (held by the archiver as an array) and three single ones (held one by one).
final class FreshRecords: GraphCoding {
    let batches: Int
    let perBatch: Int
    /// What decoding found: per batch, the array's records then the three single ones.
    private(set) var decoded: [[Record]] = []

    init(batches: Int, perBatch: Int) {
        self.batches = batches
        self.perBatch = perBatch
    }

    private func record(_ batch: Int, _ number: Int) -> Record {
        Record(name: "fresh \(batch).\(number)", color: batch * 1_000 + number, date: "2024-01-01")
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(batches, forKey: "batches")
        try archiver.encode(perBatch, forKey: "perBatch")
        for batch in 0..<batches {
            try archiver.encode((0..<perBatch).map { record(batch, $0) }, forKey: "array\(batch)")
            for single in 0..<3 {
                try archiver.encode(record(batch, perBatch + single), forKey: "single\(batch).\(single)")
            }
        }
    }

    init(from unarchiver: GraphUnarchiver) throws {
        batches = try unarchiver.decode(Int.self, forKey: "batches")
        perBatch = try unarchiver.decode(Int.self, forKey: "perBatch")
        for batch in 0..<batches {
            var records = try unarchiver.decode([Record].self, forKey: "array\(batch)")
            for single in 0..<3 {
                records.append(try unarchiver.decode(Record.self, forKey: "single\(batch).\(single)"))
            }
            decoded.append(records)
        }
    }
}
