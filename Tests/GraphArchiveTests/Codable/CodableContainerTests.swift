// Tests/GraphArchiveTests/Codable/CodableContainerTests.swift - every container kind, nesting order, super coders, paths

import Foundation
import Testing

@testable import GraphArchive

@Suite("Codable containers")
struct CodableContainerTests {
    @Test func nestedContainersUsedInOrder() throws {
        try codableRoundTrip(Address(street: "Main", city: "Springfield", lines: ["a", "b"], zip: 12_345))
    }

    @Test func parentWrittenBetweenWritesToItsNestedContainers() throws {
        // Legal Codable: nested containers handed out first, then written after the parent.
        let value = Interleaved(a: 1, b: "two", c: [3, 4], d: 5.5, e: "five")
        let back = try codableRoundTrip(value)
        #expect(back.recordedOrder == ["outer", "inner", "list"])
    }

    @Test func unkeyedContainersMixEveryKindOfElement() throws {
        let shared = CodableGridState(name: "s", color: 1, date: "d")
        let value = Mixed(items: [
            .object(shared), .object(shared), .number(7), .nothing, .text("t"), .point(Point(x: 1, y: 2)),
            .object(shared),
        ])
        let data = try GraphArchiveEncoder().encode(value)
        _ = try GraphUnarchiver.verify(data)
        let back = try GraphArchiveDecoder().decode(Mixed.self, from: data)
        #expect(back.items.count == 7)
        guard case .object(let first) = back.items[0], case .object(let second) = back.items[1],
            case .object(let last) = back.items[6]
        else {
            Issue.record("objects did not come back as objects")
            return
        }
        #expect(first === second && first === last)
        #expect(back.items[2] == .number(7) && back.items[3] == .nothing && back.items[4] == .text("t"))
    }

    @Test func arraysOfOnlyObjectsArePacked() throws {
        let a = CodableGridState(name: "a", color: 1, date: "d")
        let data = try GraphArchiveEncoder().encode([a, a, a])
        let info = try GraphUnarchiver.archiveInfo(from: data)
        #expect(info.objectCount == 1 && info.referenceCount == 3)
        let bytes = [UInt8](data)
        // Root entry: key id of "root", then the reference-array tag (FORMAT.md §6.5).
        #expect(bytes.contains(ValueTag.referenceArray))
        let withNil = try GraphArchiveEncoder().encode([a, nil, a])
        let back = try GraphArchiveDecoder().decode([CodableGridState?].self, from: withNil)
        #expect(back[0] === back[2] && back[1] == nil)
    }

    @Test func superEncoderAndDecoderForEveryContainerKind() throws {
        let dog = Dog(name: "Rex", legs: 4, tricks: ["sit"])
        let back = try GraphArchiveDecoder().decode(Dog.self, from: GraphArchiveEncoder().encode(dog))
        #expect(back.name == "Rex" && back.legs == 4 && back.tricks == ["sit"])
        try codableRoundTrip(SuperInUnkeyed(base: Point(x: 1, y: 2), extra: 3))
        try codableRoundTrip(SuperForKey(base: Point(x: 3, y: 4), own: "own"))
        try codableRoundTrip(UnusedSuper(value: 9))
    }

    @Test func classHierarchySharingOneContainer() throws {
        let cat = Cat(name: "Tom", lives: 9)
        let back = try GraphArchiveDecoder().decode(Cat.self, from: GraphArchiveEncoder().encode(cat))
        #expect(back.name == "Tom" && back.lives == 9)
    }

    @Test func singleValueWrappers() throws {
        try codableRoundTrip([Meters(value: 1.5), Meters(value: -2)])
        try codableRoundTrip(Tagged(id: Meters(value: 3)))
    }

    @Test func keysReadInAnyOrderAndUnknownKeysSkipped() throws {
        let data = try GraphArchiveEncoder().encode(Wide(a: 1, b: "b", c: [1, 2], d: Point(x: 1, y: 1), e: true))
        let reversed = try GraphArchiveDecoder().decode(WideReversed.self, from: data)
        #expect(
            reversed.e && reversed.d == Point(x: 1, y: 1) && reversed.c == [1, 2] && reversed.b == "b"
                && reversed.a == 1
        )
        let narrow = try GraphArchiveDecoder().decode(NarrowWide.self, from: data)
        #expect(narrow.c == [1, 2] && narrow.missing == nil)
    }

    @Test func keyedContainerQueries() throws {
        // Synthesized optionals leave nil keys out; ExplicitNil writes one with encodeNil.
        let data = try GraphArchiveEncoder().encode(ExplicitNil(present: 5))
        let probe = try GraphArchiveDecoder().decode(KeyProbe.self, from: data)
        #expect(probe.keys == ["explicitNil", "present"])
        #expect(probe.containsAbsent == false)
        #expect(probe.presentIsNil == false && probe.explicitNilIsNil == true)
        #expect(probe.present == 5 && probe.explicitNil == nil)
    }

    @Test func codingPathsSeenInsideValues() throws {
        let value = PathRecorder.Outer(inner: [PathRecorder(), PathRecorder()])
        let data = try GraphArchiveEncoder().encode(value)
        let back = try GraphArchiveDecoder().decode(PathRecorder.Outer.self, from: data)
        #expect(back.inner[1].seenWhenDecoding == ["inner", "Index 1"])
        #expect(back.inner[1].seenWhenEncoding == ["inner", "Index 1"])
    }

    @Test func codingPathsSeenInsideObjects() throws {
        // Objects of a short array, of one long enough to be encoded by address, and under a key.
        let value = ObjectPathRecorder.Outer(
            few: [ObjectPathRecorder(), ObjectPathRecorder()],
            many: (0..<5).map { _ in ObjectPathRecorder() },
            one: ObjectPathRecorder()
        )
        let back = try GraphArchiveDecoder().decode(
            ObjectPathRecorder.Outer.self,
            from: GraphArchiveEncoder().encode(value)
        )
        #expect(back.few[1].seenWhenEncoding == ["few", "Index 1"])
        #expect(back.many.map(\.seenWhenEncoding) == (0..<5).map { ["many", "Index \($0)"] })
        #expect(back.one.seenWhenEncoding == ["one"])
    }

    @Test func unkeyedContainerReportsCountAndEnd() throws {
        let data = try GraphArchiveEncoder().encode([1, 2, 3])
        let counter = try GraphArchiveDecoder().decode(Counter.self, from: data)
        #expect(counter.count == 3 && counter.values == [1, 2, 3] && counter.endError)
    }
}

// MARK: - Models

struct Address: Codable, Equatable {
    var street: String
    var city: String
    var lines: [String]
    var zip: Int

    enum CodingKeys: CodingKey { case location, lines, zip }
    enum LocationKeys: CodingKey { case street, city }

    init(street: String, city: String, lines: [String], zip: Int) {
        (self.street, self.city, self.lines, self.zip) = (street, city, lines, zip)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var location = container.nestedContainer(keyedBy: LocationKeys.self, forKey: .location)
        try location.encode(street, forKey: .street)
        try location.encode(city, forKey: .city)
        var list = container.nestedUnkeyedContainer(forKey: .lines)
        for line in lines { try list.encode(line) }
        try container.encode(zip, forKey: .zip)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let location = try container.nestedContainer(keyedBy: LocationKeys.self, forKey: .location)
        street = try location.decode(String.self, forKey: .street)
        city = try location.decode(String.self, forKey: .city)
        var list = try container.nestedUnkeyedContainer(forKey: .lines)
        var lines: [String] = []
        while !list.isAtEnd { lines.append(try list.decode(String.self)) }
        self.lines = lines
        zip = try container.decode(Int.self, forKey: .zip)
    }
}

/// Hands out nested containers, writes the parent, then fills the nested ones (and reads back
/// in yet another order).
struct Interleaved: Codable, Equatable {
    var a: Int
    var b: String
    var c: [Int]
    var d: Double
    var e: String
    var recordedOrder: [String] = []

    init(a: Int, b: String, c: [Int], d: Double, e: String) {
        (self.a, self.b, self.c, self.d, self.e) = (a, b, c, d, e)
    }

    static func == (lhs: Interleaved, rhs: Interleaved) -> Bool {
        (lhs.a, lhs.b, lhs.c, lhs.d, lhs.e) == (rhs.a, rhs.b, rhs.c, rhs.d, rhs.e)
    }

    enum CodingKeys: CodingKey { case outer, inner, list, tail }
    enum InnerKeys: CodingKey { case a, deeper }
    enum DeeperKeys: CodingKey { case b }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        var deeper = inner.nestedContainer(keyedBy: DeeperKeys.self, forKey: .deeper)
        try container.encode(e, forKey: .tail)
        try list.encode(c[0])
        try inner.encode(a, forKey: .a)
        try container.encode(d, forKey: .outer)
        try deeper.encode(b, forKey: .b)
        try list.encode(c[1])
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        d = try container.decode(Double.self, forKey: .outer)
        recordedOrder.append("outer")
        let inner = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
        var list = try container.nestedUnkeyedContainer(forKey: .list)
        let deeper = try inner.nestedContainer(keyedBy: DeeperKeys.self, forKey: .deeper)
        e = try container.decode(String.self, forKey: .tail)
        a = try inner.decode(Int.self, forKey: .a)
        recordedOrder.append("inner")
        b = try deeper.decode(String.self, forKey: .b)
        c = [try list.decode(Int.self), try list.decode(Int.self)]
        recordedOrder.append("list")
    }
}

/// An unkeyed container holding objects, numbers, nil, strings and structs.
struct Mixed: Codable {
    enum Item: Equatable {
        case object(CodableGridState)
        case number(Int)
        case nothing
        case text(String)
        case point(Point)

        static func == (lhs: Item, rhs: Item) -> Bool {
            switch (lhs, rhs) {
            case (.object(let l), .object(let r)): l === r
            case (.number(let l), .number(let r)): l == r
            case (.nothing, .nothing): true
            case (.text(let l), .text(let r)): l == r
            case (.point(let l), .point(let r)): l == r
            default: false
            }
        }
    }

    var items: [Item]

    init(items: [Item]) { self.items = items }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for item in items {
            switch item {
            case .object(let state):
                try container.encode("o")
                try container.encode(state)
            case .number(let number):
                try container.encode("n")
                try container.encode(number)
            case .nothing:
                try container.encode("0")
                try container.encodeNil()
            case .text(let text):
                try container.encode("t")
                try container.encode(text)
            case .point(let point):
                try container.encode("p")
                var nested = container.nestedContainer(keyedBy: Point.CodingKeys.self)
                try nested.encode(point.x, forKey: .x)
                try nested.encode(point.y, forKey: .y)
            }
        }
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        items = []
        while !container.isAtEnd {
            switch try container.decode(String.self) {
            case "o": items.append(.object(try container.decode(CodableGridState.self)))
            case "n": items.append(.number(try container.decode(Int.self)))
            case "0":
                guard try container.decodeNil() else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "nil")
                }
                items.append(.nothing)
            case "t": items.append(.text(try container.decode(String.self)))
            default:
                let nested = try container.nestedContainer(keyedBy: Point.CodingKeys.self)
                items.append(
                    .point(
                        Point(x: try nested.decode(Int.self, forKey: .x), y: try nested.decode(Int.self, forKey: .y))
                    )
                )
            }
        }
    }
}

extension Point {
    enum CodingKeys: CodingKey { case x, y }
}

/// A class whose superclass is coded through `superEncoder()` / `superDecoder()`.
class Animal: Codable {
    var name: String
    init(name: String) { self.name = name }
}

final class Dog: Animal {
    var legs: Int
    var tricks: [String]

    init(name: String, legs: Int, tricks: [String]) {
        self.legs = legs
        self.tricks = tricks
        super.init(name: name)
    }

    enum CodingKeys: CodingKey { case legs, tricks }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(legs, forKey: .legs)
        try super.encode(to: container.superEncoder())
        try container.encode(tricks, forKey: .tricks)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        legs = try container.decode(Int.self, forKey: .legs)
        tricks = try container.decode([String].self, forKey: .tricks)
        try super.init(from: container.superDecoder())
    }
}

/// A class whose superclass shares the same container (the common hand-written pattern).
final class Cat: Animal {
    var lives: Int

    init(name: String, lives: Int) {
        self.lives = lives
        super.init(name: name)
    }

    enum CodingKeys: CodingKey { case lives }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(lives, forKey: .lives)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lives = try container.decode(Int.self, forKey: .lives)
        try super.init(from: decoder)
    }
}

/// `superEncoder()` of an unkeyed container.
struct SuperInUnkeyed: Codable, Equatable {
    var base: Point
    var extra: Int

    init(base: Point, extra: Int) { (self.base, self.extra) = (base, extra) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try base.encode(to: container.superEncoder())
        try container.encode(extra)
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        base = try Point(from: container.superDecoder())
        extra = try container.decode(Int.self)
    }
}

/// `superEncoder(forKey:)`.
struct SuperForKey: Codable, Equatable {
    var base: Point
    var own: String

    init(base: Point, own: String) { (self.base, self.own) = (base, own) }

    enum CodingKeys: CodingKey { case parent, own }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(own, forKey: .own)
        try base.encode(to: container.superEncoder(forKey: .parent))
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        own = try container.decode(String.self, forKey: .own)
        base = try Point(from: container.superDecoder(forKey: .parent))
    }
}

/// Asks for a super encoder and never uses it: an empty record stands in its place.
struct UnusedSuper: Codable, Equatable {
    var value: Int

    init(value: Int) { self.value = value }

    enum CodingKeys: CodingKey { case value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        _ = container.superEncoder()
        try container.encode(value, forKey: .value)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        _ = try container.superDecoder().container(keyedBy: CodingKeys.self)
    }
}

struct Meters: Codable, Equatable {
    var value: Double

    init(value: Double) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(Double.self)
    }
}

struct Tagged: Codable, Equatable {
    var id: Meters
}

struct Wide: Codable {
    var a: Int
    var b: String
    var c: [Int]
    var d: Point
    var e: Bool
}

struct WideReversed: Decodable {
    var a: Int
    var b: String
    var c: [Int]
    var d: Point
    var e: Bool

    enum CodingKeys: CodingKey { case a, b, c, d, e }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        e = try container.decode(Bool.self, forKey: .e)
        d = try container.decode(Point.self, forKey: .d)
        c = try container.decode([Int].self, forKey: .c)
        b = try container.decode(String.self, forKey: .b)
        a = try container.decode(Int.self, forKey: .a)
    }
}

struct NarrowWide: Decodable {
    var c: [Int]
    var missing: Int?
}

struct ExplicitNil: Encodable {
    var present: Int

    enum CodingKeys: String, CodingKey { case present, explicitNil }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(present, forKey: .present)
        try container.encodeNil(forKey: .explicitNil)
    }
}

struct KeyProbe: Decodable {
    var keys: [String]
    var containsAbsent: Bool
    var presentIsNil: Bool
    var explicitNilIsNil: Bool
    var present: Int?
    var explicitNil: Int?

    enum CodingKeys: String, CodingKey { case absent, present, explicitNil }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        keys = container.allKeys.map(\.stringValue).sorted()
        containsAbsent = container.contains(.absent)
        presentIsNil = try container.decodeNil(forKey: .present)
        explicitNilIsNil = try container.decodeNil(forKey: .explicitNil)
        present = try container.decodeIfPresent(Int.self, forKey: .present)
        explicitNil = try container.decodeIfPresent(Int.self, forKey: .explicitNil)
    }
}

/// Records the coding path it sees while being encoded and decoded.
struct PathRecorder: Codable {
    var seenWhenEncoding: [String] = []
    var seenWhenDecoding: [String] = []

    struct Outer: Codable { var inner: [PathRecorder] }

    init() {}

    enum CodingKeys: CodingKey { case seen }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(encoder.codingPath.map(\.stringValue), forKey: .seen)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seenWhenEncoding = try container.decode([String].self, forKey: .seen)
        seenWhenDecoding = decoder.codingPath.map(\.stringValue)
    }
}

/// ``PathRecorder`` as a class: encoded as an object, whose body is written where it is met.
final class ObjectPathRecorder: Codable {
    var seenWhenEncoding: [String] = []

    struct Outer: Codable {
        var few: [ObjectPathRecorder]
        var many: [ObjectPathRecorder]
        var one: ObjectPathRecorder
    }

    init() {}

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: PathRecorder.CodingKeys.self)
        try container.encode(encoder.codingPath.map(\.stringValue), forKey: .seen)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: PathRecorder.CodingKeys.self)
        seenWhenEncoding = try container.decode([String].self, forKey: .seen)
    }
}

/// Reads an unkeyed container's count, its elements, and then one element too many.
struct Counter: Decodable {
    var count: Int?
    var values: [Int] = []
    var endError = false

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        count = container.count
        while !container.isAtEnd { values.append(try container.decode(Int.self)) }
        do {
            _ = try container.decode(Int.self)
        } catch DecodingError.valueNotFound(_, let context) {
            endError = context.codingPath.last?.intValue == 3
        }
    }
}
