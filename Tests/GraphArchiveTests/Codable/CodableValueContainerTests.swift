// Tests/GraphArchiveTests/Codable/CodableValueContainerTests.swift - primitives through unkeyed and single-value containers

import Foundation
import Testing

@testable import GraphArchive

@Suite("Codable unkeyed and single-value containers")
struct CodableValueContainerTests {
    @Test func everyPrimitiveRoundTripsThroughAnUnkeyedContainer() throws {
        for values in [CodablePrimitives(), .extremesTheOtherWay] {
            let back = try codableRoundTrip(UnkeyedPrimitives(values: values))
            #expect(back.count == UnkeyedPrimitives.elementCount)
            #expect(back.indexAfterNil == UnkeyedPrimitives.elementCount)
        }
    }

    @Test func everyPrimitiveRoundTripsThroughSingleValueContainers() throws {
        for values in [CodablePrimitives(), .extremesTheOtherWay] {
            try codableRoundTrip(SingleValuePrimitives(values: values))
        }
        try codableRoundTrip(SingleValue(Optional<Int>.none))
        try codableRoundTrip(SingleValue(Optional(7)))
    }

    @Test func arraysOfEveryPrimitiveRoundTrip() throws {
        try codableRoundTrip(PrimitiveArrays())
        try codableRoundTrip(PrimitiveArrays(empty: true))
        let data = try GraphArchiveEncoder().encode([Float.nan, -0.0, 1.5])
        let floats = try GraphArchiveDecoder().decode([Float].self, from: data)
        #expect(floats.count == 3 && floats[0].isNaN && floats[1].sign == .minus && floats[2] == 1.5)
    }

    @Test func nestedArraysAndNilElementsRoundTrip() throws {
        try codableRoundTrip([[1, 2], [], [Int.min, Int.max]])
        try codableRoundTrip([["a"], [], ["b", "c"]])
        try codableRoundTrip([[[true]], [[false, true], []]])
        try codableRoundTrip([1, nil, 3] as [Int?])
        try codableRoundTrip([nil, "x"] as [String?])
    }

    @Test func decodeNilConsumesOnlyANil() throws {
        let data = try GraphArchiveEncoder().encode([nil, 5] as [Int?])
        let probe = try GraphArchiveDecoder().decode(NilProbe.self, from: data)
        #expect(probe.firstIsNil && !probe.secondIsNil && probe.second == 5 && probe.atEnd)
    }

    @Test func aPrimitiveOfTheWrongTypeInAnArrayThrowsAtItsElement() throws {
        let data = try GraphArchiveEncoder().encode([1, 2, 3])
        #expect {
            try GraphArchiveDecoder().decode([String].self, from: data)
        } throws: { error in
            guard case DecodingError.typeMismatch(let type, let context) = error else { return false }
            return type == String.self && context.codingPath.map(\.intValue) == [0]
        }
        let mixed = try GraphArchiveEncoder().encode(Mixture(number: 1, text: "two"))
        #expect {
            try GraphArchiveDecoder().decode([Int].self, from: mixed)
        } throws: { error in
            guard case DecodingError.typeMismatch(let type, let context) = error else { return false }
            return type == Int.self && context.codingPath.map(\.intValue) == [1]
        }
    }

    @Test func aSingleValueOfTheWrongTypeThrows() throws {
        let data = try GraphArchiveEncoder().encode(SingleValue("text"))
        #expect {
            try GraphArchiveDecoder().decode(SingleValue<Int>.self, from: data)
        } throws: { error in
            guard case DecodingError.typeMismatch(let type, _) = error else { return false }
            return type == Int.self
        }
    }

    @Test func aTruncatedPrimitiveArrayThrows() throws {
        let data = try GraphArchiveEncoder().encode([Int8(1), 2])
        #expect {
            try GraphArchiveDecoder().decode([Int8].self, from: data.prefix(data.count - 1))
        } throws: { error in error is DecodingError || error is GraphArchiveError }
    }
}

// MARK: - Models

/// The fields of `CodablePrimitives` in order, then a nil, as elements of one unkeyed container,
/// each through the container's overload for its type.
struct UnkeyedPrimitives: Codable, Equatable {
    static let elementCount = 17
    var values: CodablePrimitives
    var count: Int? = nil
    var indexAfterNil = 0

    init(values: CodablePrimitives) { self.values = values }

    static func == (lhs: UnkeyedPrimitives, rhs: UnkeyedPrimitives) -> Bool { lhs.values == rhs.values }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(values.bool)
        try container.encode(values.int)
        try container.encode(values.int8)
        try container.encode(values.int16)
        try container.encode(values.int32)
        try container.encode(values.int64)
        try container.encode(values.uint)
        try container.encode(values.uint8)
        try container.encode(values.uint16)
        try container.encode(values.uint32)
        try container.encode(values.uint64)
        try container.encode(values.float)
        try container.encode(values.double)
        try container.encode(values.string)
        try container.encode(values.empty)
        try container.encode(values.long)
        #expect(container.count == 16)
        try container.encodeNil()
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        count = container.count
        values = CodablePrimitives()
        values.bool = try container.decode(Bool.self)
        values.int = try container.decode(Int.self)
        values.int8 = try container.decode(Int8.self)
        values.int16 = try container.decode(Int16.self)
        values.int32 = try container.decode(Int32.self)
        values.int64 = try container.decode(Int64.self)
        values.uint = try container.decode(UInt.self)
        values.uint8 = try container.decode(UInt8.self)
        values.uint16 = try container.decode(UInt16.self)
        values.uint32 = try container.decode(UInt32.self)
        values.uint64 = try container.decode(UInt64.self)
        values.float = try container.decode(Float.self)
        values.double = try container.decode(Double.self)
        values.string = try container.decode(String.self)
        values.empty = try container.decode(String.self)
        values.long = try container.decode(String.self)
        guard !container.isAtEnd, container.currentIndex == 16, try container.decodeNil() else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no nil at 16"))
        }
        indexAfterNil = container.currentIndex
        guard container.isAtEnd else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not at the end"))
        }
    }
}

/// A value held in a single-value container: its overload for a primitive `Value`, its generic
/// one otherwise.
struct SingleValue<Value: Codable & Equatable>: Codable, Equatable {
    var value: Value
    init(_ value: Value) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(Value.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// Every field of `CodablePrimitives` as a wrapper that writes it through the single-value
/// container's overload for its type (the synthesized code of `RawRepresentable` enums does).
struct SingleValuePrimitives: Codable, Equatable {
    var values: CodablePrimitives
    init(values: CodablePrimitives) { self.values = values }

    struct Wrapped: Codable, Equatable {
        var values = CodablePrimitives()
        let field: Int
        init(_ values: CodablePrimitives, field: Int) {
            self.values = values
            self.field = field
        }
        static func == (lhs: Wrapped, rhs: Wrapped) -> Bool { lhs.values == rhs.values }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch field {
            case 0: try container.encode(values.bool)
            case 1: try container.encode(values.int)
            case 2: try container.encode(values.int8)
            case 3: try container.encode(values.int16)
            case 4: try container.encode(values.int32)
            case 5: try container.encode(values.int64)
            case 6: try container.encode(values.uint)
            case 7: try container.encode(values.uint8)
            case 8: try container.encode(values.uint16)
            case 9: try container.encode(values.uint32)
            case 10: try container.encode(values.uint64)
            case 11: try container.encode(values.float)
            case 12: try container.encode(values.double)
            default: try container.encode(values.string)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            field = decoder.codingPath.last?.intValue ?? -1
            switch field {
            case 0: values.bool = try container.decode(Bool.self)
            case 1: values.int = try container.decode(Int.self)
            case 2: values.int8 = try container.decode(Int8.self)
            case 3: values.int16 = try container.decode(Int16.self)
            case 4: values.int32 = try container.decode(Int32.self)
            case 5: values.int64 = try container.decode(Int64.self)
            case 6: values.uint = try container.decode(UInt.self)
            case 7: values.uint8 = try container.decode(UInt8.self)
            case 8: values.uint16 = try container.decode(UInt16.self)
            case 9: values.uint32 = try container.decode(UInt32.self)
            case 10: values.uint64 = try container.decode(UInt64.self)
            case 11: values.float = try container.decode(Float.self)
            case 12: values.double = try container.decode(Double.self)
            default: values.string = try container.decode(String.self)
            }
            #expect(!container.decodeNil())
        }
    }

    static func == (lhs: SingleValuePrimitives, rhs: SingleValuePrimitives) -> Bool { lhs.values == rhs.values }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for field in 0..<14 { try container.encode(Wrapped(values, field: field)) }
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var wrapped: [Wrapped] = []
        while !container.isAtEnd { wrapped.append(try container.decode(Wrapped.self)) }
        guard wrapped.count == 14 else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(wrapped.count) fields"))
        }
        var values = CodablePrimitives()
        values.bool = wrapped[0].values.bool
        values.int = wrapped[1].values.int
        values.int8 = wrapped[2].values.int8
        values.int16 = wrapped[3].values.int16
        values.int32 = wrapped[4].values.int32
        values.int64 = wrapped[5].values.int64
        values.uint = wrapped[6].values.uint
        values.uint8 = wrapped[7].values.uint8
        values.uint16 = wrapped[8].values.uint16
        values.uint32 = wrapped[9].values.uint32
        values.uint64 = wrapped[10].values.uint64
        values.float = wrapped[11].values.float
        values.double = wrapped[12].values.double
        values.string = wrapped[13].values.string
        self.values = values
    }
}

/// An array of each primitive type: written and read by the bridge a whole array at a time.
struct PrimitiveArrays: Codable, Equatable {
    var bools = [true, false, true]
    var ints = [Int.min, -1, 0, 1, Int.max]
    var int8s: [Int8] = [.min, 0, .max]
    var int16s: [Int16] = [.min, 0, .max]
    var int32s: [Int32] = [.min, 0, .max]
    var int64s: [Int64] = [.min, 0, .max]
    var uints: [UInt] = [0, 1, .max]
    var uint16s: [UInt16] = [0, 300, .max]
    var uint32s: [UInt32] = [0, 70_000, .max]
    var uint64s: [UInt64] = [0, 1 << 40, .max]
    var floats: [Float] = [-0.0, 1.5, .greatestFiniteMagnitude]
    var doubles = [-Double.infinity, 0.25, .leastNonzeroMagnitude]
    var strings = ["", "héllo", String(repeating: "x", count: 300)]

    init() {}

    init(empty: Bool) {
        self = PrimitiveArrays()
        guard empty else { return }
        (bools, ints, int8s, int16s, int32s, int64s) = ([], [], [], [], [], [])
        (uints, uint16s, uint32s, uint64s, floats, doubles, strings) = ([], [], [], [], [], [], [])
    }
}

/// An unkeyed container holding an Int, then a String.
struct Mixture: Encodable {
    var number: Int
    var text: String
    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(number)
        try container.encode(text)
    }
}

/// Asks `decodeNil()` of a nil element and of an Int one.
struct NilProbe: Decodable {
    var firstIsNil = false
    var secondIsNil = true
    var second = 0
    var atEnd = false

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        firstIsNil = try container.decodeNil()
        secondIsNil = try container.decodeNil()
        second = try container.decode(Int.self)
        atEnd = container.isAtEnd
    }
}
