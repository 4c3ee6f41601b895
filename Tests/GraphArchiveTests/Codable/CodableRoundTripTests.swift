// Tests/GraphArchiveTests/Codable/CodableRoundTripTests.swift - Codable values through GraphArchiveEncoder/Decoder

import Foundation
import Testing

@testable import GraphArchive

/// Encodes `value`, checks the archive against the format, decodes it and compares.
@discardableResult
func codableRoundTrip<T: Codable & Equatable>(
    _ value: T,
    encoder: GraphArchiveEncoder = GraphArchiveEncoder(),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> T {
    let data = try encoder.encode(value)
    _ = try GraphUnarchiver.verify(data)
    let back = try GraphArchiveDecoder().decode(T.self, from: data)
    #expect(back == value, sourceLocation: sourceLocation)
    return back
}

@Suite("Codable round trips")
struct CodableRoundTripTests {
    @Test func everyPrimitiveRoundTrips() throws {
        let value = CodablePrimitives()
        let back = try codableRoundTrip(value)
        #expect(back.float.sign == .minus)
        #expect(try codableRoundTrip(CodablePrimitives.extremesTheOtherWay) == .extremesTheOtherWay)
    }

    @Test func floatingPointKeepsEveryBit() throws {
        let values: [Double] = [.nan, -.infinity, .leastNonzeroMagnitude, -0.0, .greatestFiniteMagnitude]
        let back = try GraphArchiveDecoder().decode([Double].self, from: GraphArchiveEncoder().encode(values))
        #expect(back.map(\.bitPattern) == values.map(\.bitPattern))
        let floats: [Float] = [.nan, -0.0, .leastNormalMagnitude]
        let floatsBack = try GraphArchiveDecoder().decode([Float].self, from: GraphArchiveEncoder().encode(floats))
        #expect(floatsBack.map(\.bitPattern) == floats.map(\.bitPattern))
    }

    @Test(arguments: [
        Int64.min, -1, 0, 1, 63, 64, 255, 256, 65_535, Int64(Int32.max), Int64(Int32.min), Int64.max,
    ])
    func integersOfEveryWidthRoundTrip(_ value: Int64) throws {
        try codableRoundTrip(value)
        if let narrow = Int8(exactly: value) { try codableRoundTrip(narrow) }
        if let narrow = Int16(exactly: value) { try codableRoundTrip(narrow) }
        if let narrow = Int32(exactly: value) { try codableRoundTrip(narrow) }
        if let narrow = UInt8(exactly: value) { try codableRoundTrip(narrow) }
        if let narrow = UInt16(exactly: value) { try codableRoundTrip(narrow) }
        if let narrow = UInt32(exactly: value) { try codableRoundTrip(narrow) }
        if let narrow = UInt64(exactly: value) { try codableRoundTrip(narrow) }
        if let narrow = UInt(exactly: value) { try codableRoundTrip(narrow) }
    }

    @Test func foundationTypesRoundTrip() throws {
        let value = CodableFoundationValues(
            date: Date(timeIntervalSinceReferenceDate: 123_456.789),
            data: Data([0, 1, 2, 254, 255]),
            empty: Data(),
            url: URL(string: "https://example.com/grid?id=7#top")!,
            relative: URL(string: "states/1.gra", relativeTo: URL(string: "file:///var/data/")!)!,
            uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            decimals: [
                Decimal(string: "3.14159")!, Decimal(string: "-0.0001")!,
                Decimal(string: "123456789012345678901234567890")!, 0,
            ],
            bytes: [9, 8, 7]
        )
        let back = try codableRoundTrip(value)
        #expect(back.relative.absoluteString == value.relative.absoluteString)
    }

    @Test func dateAndDataUseTheNativeTags() throws {
        // Same bytes as the keyed protocol writes, so GraphCoding types read them too.
        struct Stamp: Codable {
            var date: Date
            var data: Data
        }
        let data = try GraphArchiveEncoder().encode(
            Stamp(date: Date(timeIntervalSinceReferenceDate: 1), data: Data([1, 2]))
        )
        let unarchiver = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry())
        let stamp = try unarchiver.decode(StampRecord.self, forKey: GraphArchiver.rootKey)
        #expect(stamp.date == Date(timeIntervalSinceReferenceDate: 1))
        #expect(stamp.data == Data([1, 2]))
    }

    @Test func collectionsRoundTrip() throws {
        let value = Collections(
            ints: [1, -2, 300_000],
            empty: [],
            nested: [["a"], [], ["b", "c"]],
            byName: ["one": 1, "two": 2],
            byNumber: [7: "seven", -1: "minus one"],
            byUUID: [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!: 1],
            byPoint: [Point(x: 1, y: 2): "a", Point(x: -3, y: 0): "b"],
            set: [3, 1, 2],
            optionals: [1, nil, 3],
            contiguous: [1.5, 2.5]
        )
        try codableRoundTrip(value)
    }

    @Test func enumsRoundTrip() throws {
        try codableRoundTrip([
            Shape.circle(radius: 2), .rectangle(width: 3, height: 4), .point, .labeled("x", Point(x: 1, y: 1)),
        ])
        try codableRoundTrip([Color.red, .green])
        try codableRoundTrip(Tree.node(.leaf(1), .node(.leaf(2), .leaf(3))))
    }

    @Test func topLevelValuesOfEveryKindRoundTrip() throws {
        try codableRoundTrip(42)
        try codableRoundTrip("just a string")
        try codableRoundTrip(Optional<Int>.none)
        try codableRoundTrip(Optional<String>.some("x"))
        try codableRoundTrip([String: [Int]]())
        try codableRoundTrip(Point(x: 5, y: 6))
        try codableRoundTrip(EmptyValue())
    }

    @Test func optionalsAreNilOrAbsent() throws {
        let value = Optionals(absent: nil, present: 5, nestedNil: Point?.none, nestedSome: Point(x: 1, y: 2))
        try codableRoundTrip(value)
    }

    @Test func userInfoReachesEveryValue() throws {
        let key = CodingUserInfoKey(rawValue: "unit")!
        var encoder = GraphArchiveEncoder()
        encoder.userInfo[key] = "cm"
        let data = try encoder.encode([Measured(value: 2)])
        var decoder = GraphArchiveDecoder()
        decoder.userInfo[key] = "mm"
        let back = try decoder.decode([Measured].self, from: data)
        #expect(back[0].unitWhenEncoded == "cm")
        #expect(back[0].unitWhenDecoded == "mm")
    }

    @Test func keysAreInternedOncePerArchive() throws {
        let states = (0..<500).map { CodableGridState(name: "n\($0)", color: $0, date: "d") }
        let data = try GraphArchiveEncoder().encode(states)
        let tables = try tables(of: data)
        #expect(tables.keys.sorted() == ["kEncodeKeyColor", "kEncodeKeyDate", "kEncodeKeyName", "root"])
        #expect(tables.shapeKeyCount == [3])
        #expect(tables.typeNames == ["CodableGridState"])
    }

    @Test func filesAreSavedAtomicallyAndReadBack() throws {
        let path = temporaryPath("codable-file")
        defer { unlink(path) }
        let states = [CodableGridState(name: "a", color: 1, date: "d")]
        try GraphArchiveEncoder().encode(states, toFile: path)
        let back = try GraphArchiveDecoder().decode([CodableGridState].self, fromFile: path)
        #expect(back.map(\.name) == ["a"])
        // A failing encode leaves the previous archive as it was.
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: EncodingError.self) { try GraphArchiveEncoder().encode(FailingValue(), toFile: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(throws: GraphArchiveError.self) {
            _ = try GraphArchiveDecoder().decode([CodableGridState].self, fromFile: path + ".missing")
        }
    }

    @Test func compressionPassesThroughTheEngine() throws {
        let states = (0..<200).map {
            CodableGridState(name: "state \($0 % 7)", color: $0, date: "2024-01-01T00:00:00Z")
        }
        let encoder = GraphArchiveEncoder(options: GraphArchiver.Options(compression: .zstd))
        if PayloadCompression.isZstdAvailable {
            let data = try encoder.encode(states)
            #expect(try GraphUnarchiver.archiveInfo(from: data).compressionName == "zstd")
            let back = try GraphArchiveDecoder().decode([CodableGridState].self, from: data)
            #expect(back.map(\.color) == states.map(\.color))
            // A compressed file is decompressed as it is read.
            let path = temporaryPath("codable-zstd")
            defer { unlink(path) }
            try encoder.encode(states, toFile: path)
            let fromFile = try GraphArchiveDecoder().decode([CodableGridState].self, fromFile: path)
            #expect(fromFile.map(\.name) == states.map(\.name))
        } else {
            #expect {
                _ = try encoder.encode(states)
            } throws: { error in
                (error as? GraphArchiveError)?.code == .compressionUnavailable
            }
        }
    }
}

/// The key, type and shape tables of `data`.
func tables(of data: Data) throws -> ArchiveTables {
    let loaded = try LoadedArchive.load(ArchiveBytes(copying: data), options: GraphUnarchiver.Options())
    var reader = loaded.payload.reader(loaded.payloadRange)
    return try ArchiveTables.parse(&reader, header: loaded.header, options: GraphUnarchiver.Options())
}
// MARK: - Models

/// The seed app's grid state (UAGridState) as a Codable class, with the app's keys.
final class CodableGridState: Codable {
    var name: String
    var color: Int
    var date: String

    init(name: String, color: Int, date: String) {
        self.name = name
        self.color = color
        self.date = date
    }

    enum CodingKeys: String, CodingKey {
        case name = "kEncodeKeyName"
        case color = "kEncodeKeyColor"
        case date = "kEncodeKeyDate"
    }
}

struct CodablePrimitives: Codable, Equatable {
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
    var long = String(repeating: "long ", count: 40)

    static let extremesTheOtherWay: CodablePrimitives = {
        var value = CodablePrimitives()
        value.bool = false
        value.int = Int.max
        value.int8 = Int8.max
        value.int16 = Int16.min
        value.int32 = Int32.max
        value.int64 = Int64.min
        value.uint = 0
        value.uint8 = 0
        value.uint16 = UInt16.max
        value.uint32 = 0
        value.uint64 = 0
        value.float = .greatestFiniteMagnitude
        value.double = -.leastNonzeroMagnitude
        return value
    }()
}

struct CodableFoundationValues: Codable, Equatable {
    var date: Date
    var data: Data
    var empty: Data
    var url: URL
    var relative: URL
    var uuid: UUID
    var decimals: [Decimal]
    var bytes: [UInt8]
}

/// The keyed-protocol view of `Stamp` above.
struct StampRecord: GraphCoding {
    var date: Date
    var data: Data
    static var archivedTypeName: String { "Stamp" }
    init(from unarchiver: GraphUnarchiver) throws {
        date = try unarchiver.decode(Date.self, forKey: "date")
        data = try unarchiver.decode(Data.self, forKey: "data")
    }
    func encode(with archiver: GraphArchiver) throws {}
}

struct Point: Codable, Hashable {
    var x: Int
    var y: Int
}

struct Collections: Codable, Equatable {
    var ints: [Int]
    var empty: [String]
    var nested: [[String]]
    var byName: [String: Int]
    var byNumber: [Int: String]
    var byUUID: [UUID: Int]
    var byPoint: [Point: String]
    var set: Set<Int>
    var optionals: [Int?]
    var contiguous: ContiguousArray<Double>
}

enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case rectangle(width: Double, height: Double)
    case point
    case labeled(String, Point)
}

enum Color: String, Codable {
    case red, green
}

indirect enum Tree: Codable, Equatable {
    case leaf(Int)
    case node(Tree, Tree)
}

struct EmptyValue: Codable, Equatable {}

struct Optionals: Codable, Equatable {
    var absent: Int?
    var present: Int?
    var nestedNil: Point?
    var nestedSome: Point?
}

/// Records the `unit` user info seen when encoding and when decoding.
struct Measured: Codable {
    var value: Int
    var unitWhenEncoded: String?
    var unitWhenDecoded: String?

    init(value: Int) { self.value = value }

    enum CodingKeys: CodingKey { case value, unit }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        try container.encode(encoder.userInfo[CodingUserInfoKey(rawValue: "unit")!] as? String, forKey: .unit)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        unitWhenEncoded = try container.decode(String?.self, forKey: .unit)
        unitWhenDecoded = decoder.userInfo[CodingUserInfoKey(rawValue: "unit")!] as? String
    }
}

/// Throws from its own `encode(to:)` after writing part of itself.
struct FailingValue: Codable {
    struct Failure: Error {}

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(1)
        throw EncodingError.invalidValue(
            1,
            EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "refused")
        )
    }

    init(from decoder: any Decoder) throws {}
    init() {}
}
