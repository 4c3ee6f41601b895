// FuzzTesting/Sources/FuzzSupport/FuzzModels.swift - types whose decoders the fuzzer drives

import Foundation
import GraphArchive

/// A graph node using every way an object initializer reads: plain keys, optional keys,
/// references decoded at once and references that may close cycles (`decodeLater`).
public final class FuzzNode: GraphCoding {
    public var label: Int
    public var name: String?
    public var next: FuzzNode?
    public var children: [FuzzNode] = []
    public weak var buddy: FuzzNode?
    public var values: FuzzValues?

    public init(label: Int, name: String? = nil) {
        self.label = label
        self.name = name
    }

    public func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        try archiver.encode(name, forKey: "name")
        try archiver.encodeLater(next, forKey: "next")
        try archiver.encode(children, forKey: "children")
        try archiver.encodeConditionalObject(buddy, forKey: "buddy")
        try archiver.encode(values, forKey: "values")
    }

    public init(from unarchiver: GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        Self.decoded.append(self)
        name = try unarchiver.decodeIfPresent(String.self, forKey: "name")
        values = try unarchiver.decodeIfPresent(FuzzValues.self, forKey: "values")
        try unarchiver.decodeLater(FuzzNode?.self, forKey: "next") { [unowned self] in self.next = $0 }
        try unarchiver.decodeLater([FuzzNode].self, forKey: "children") { [unowned self] in self.children = $0 }
        if unarchiver.containsValue(forKey: "buddy") {
            try unarchiver.decodeLater(FuzzNode?.self, forKey: "buddy") { [unowned self] in self.buddy = $0 }
        }
    }

    /// Every node decoded since the last `releaseDecoded()`: a decode that fails after some
    /// cycle-closing assignments ran leaves cycles no caller can reach (as any cyclic model does).
    /// The fuzz targets are single-threaded.
    nonisolated(unsafe) static var decoded: [FuzzNode] = []

    /// Breaks the cycles among all nodes decoded so far, so the fuzzer sees no leak per input.
    public static func releaseDecoded() {
        breakCycles(decoded)
        decoded = []
    }

    /// Breaks the cycles a graph may hold.
    public static func breakCycles(_ roots: [FuzzNode]) {
        var pending = roots
        var seen = Set<ObjectIdentifier>()
        while let node = pending.popLast() {
            guard seen.insert(ObjectIdentifier(node)).inserted else { continue }
            if let next = node.next { pending.append(next) }
            pending.append(contentsOf: node.children)
            node.next = nil
            node.children = []
        }
    }
}

/// A value record holding every value kind, nesting into itself through arrays.
public struct FuzzValues: GraphCoding, Equatable {
    /// "Values" too: the class name of the keyed-archive seeds' value records.
    public static var archivedTypeAliases: [String] { ["Values", "main.Values"] }

    public var flag = false
    public var small: Int8 = 0
    public var wide: UInt64 = 0
    public var signed: Int32 = 0
    public var real: Float = 0
    public var double: Double = 0
    public var date = Date(timeIntervalSinceReferenceDate: 0)
    public var data = Data()
    public var bytes: [UInt8] = []
    public var text = ""
    public var tags: Set<String> = []
    public var table: [String: [Int]] = [:]
    public var numbers: [Int: Double] = [:]
    public var nested: [FuzzValues] = []

    public init() {}

    public func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(flag, forKey: "flag")
        try archiver.encode(small, forKey: "small")
        try archiver.encode(wide, forKey: "wide")
        try archiver.encode(signed, forKey: "signed")
        try archiver.encode(real, forKey: "real")
        try archiver.encode(double, forKey: "double")
        try archiver.encode(date, forKey: "date")
        try archiver.encode(data, forKey: "data")
        try archiver.encode(bytes, forKey: "bytes")
        try archiver.encode(text, forKey: "text")
        try archiver.encode(tags, forKey: "tags")
        try archiver.encode(table, forKey: "table")
        try archiver.encode(numbers, forKey: "numbers")
        try archiver.encode(nested, forKey: "nested")
    }

    public init(from unarchiver: GraphUnarchiver) throws {
        // Read out of order on purpose: the out-of-order key lookup is a decoder path too.
        nested = try unarchiver.decode([FuzzValues].self, forKey: "nested")
        flag = try unarchiver.decode(Bool.self, forKey: "flag")
        small = try unarchiver.decode(Int8.self, forKey: "small")
        wide = try unarchiver.decode(UInt64.self, forKey: "wide")
        signed = try unarchiver.decode(Int32.self, forKey: "signed")
        real = try unarchiver.decode(Float.self, forKey: "real")
        double = try unarchiver.decode(Double.self, forKey: "double")
        date = try unarchiver.decode(Date.self, forKey: "date")
        data = try unarchiver.decode(Data.self, forKey: "data")
        bytes = try unarchiver.decode([UInt8].self, forKey: "bytes")
        text = try unarchiver.decode(String.self, forKey: "text")
        tags = try unarchiver.decode(Set<String>.self, forKey: "tags")
        table = try unarchiver.decode([String: [Int]].self, forKey: "table")
        numbers = try unarchiver.decode([Int: Double].self, forKey: "numbers")
    }
}
