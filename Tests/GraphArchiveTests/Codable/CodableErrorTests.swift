// Tests/GraphArchiveTests/Codable/CodableErrorTests.swift - coding errors with paths, misuse, hostile input

import Foundation
import Testing

@testable import GraphArchive

@Suite("Codable errors")
struct CodableErrorTests {
    // MARK: - Decoding errors carry the coding path

    @Test func missingKey() throws {
        let data = try GraphArchiveEncoder().encode(Outer(items: [Item(id: 1, name: "a")]))
        #expect {
            _ = try GraphArchiveDecoder().decode(OuterNeedingMore.self, from: data)
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, let context) = error else { return false }
            return key.stringValue == "extra" && context.codingPath.map(\.stringValue) == ["items", "Index 0"]
        }
    }

    @Test func wrongType() throws {
        let data = try GraphArchiveEncoder().encode(Outer(items: [Item(id: 1, name: "a"), Item(id: 2, name: "b")]))
        #expect {
            _ = try GraphArchiveDecoder().decode(OuterWithNumberNames.self, from: data)
        } throws: { error in
            guard case DecodingError.typeMismatch(let type, let context) = error else { return false }
            return type == Int.self && context.codingPath.map(\.stringValue) == ["items", "Index 0", "name"]
                && (context.underlyingError as? GraphArchiveError)?.code == .typeMismatch
        }
    }

    @Test func nilWhereAValueIsNeeded() throws {
        let data = try GraphArchiveEncoder().encode([1, nil, 3] as [Int?])
        #expect {
            _ = try GraphArchiveDecoder().decode([Int].self, from: data)
        } throws: { error in
            guard case DecodingError.valueNotFound(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["Index 1"]
        }
    }

    @Test func numberThatDoesNotFit() throws {
        let data = try GraphArchiveEncoder().encode(["small": 300])
        #expect {
            _ = try GraphArchiveDecoder().decode([String: UInt8].self, from: data)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["small"]
                && (context.underlyingError as? GraphArchiveError)?.code == .valueOutOfRange
        }
    }

    @Test func archiveWithoutARootValue() throws {
        let archiver = GraphArchiver()
        try archiver.encode(1, forKey: "Data")
        try archiver.finishEncoding()
        #expect(throws: DecodingError.self) {
            _ = try GraphArchiveDecoder().decode(Int.self, from: archiver.encodedData)
        }
    }

    @Test func readingPastTheEndOfAnUnkeyedContainer() throws {
        let data = try GraphArchiveEncoder().encode([1, 2])
        #expect {
            _ = try GraphArchiveDecoder().decode(ThreeInts.self, from: data)
        } throws: { error in
            guard case DecodingError.valueNotFound(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["Index 2"]
        }
    }

    @Test func userErrorsPassThroughUnchanged() throws {
        #expect(throws: Refusal.self) { _ = try GraphArchiveEncoder().encode(Refusing()) }
        let data = try GraphArchiveEncoder().encode(Refusing.Stored(value: 1))
        #expect(throws: Refusal.self) { _ = try GraphArchiveDecoder().decode(Refusing.self, from: data) }
    }

    @Test func decodingErrorsCanBeCaughtAndDecodingGoesOn() throws {
        // A lenient initializer that tries one type, then another: the decoder stays consistent.
        let data = try GraphArchiveEncoder().encode([Lenient.Stored(value: "text"), Lenient.Stored(value: "7")])
        let back = try GraphArchiveDecoder().decode([Lenient].self, from: data)
        #expect(back.map(\.text) == ["text", "7"])
    }

    // MARK: - Encoding errors

    @Test func sameKeyTwiceInOneContainer() throws {
        #expect {
            _ = try GraphArchiveEncoder().encode(DuplicateKey())
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["a"]
                && (context.underlyingError as? GraphArchiveError)?.code == .duplicateKey
        }
    }

    @Test func aFailedNestedContainerReportsItsOwnError() throws {
        // nestedContainer cannot throw: its first use throws the depth error itself.
        var options = GraphArchiver.Options()
        options.maximumDepth = 1
        #expect {
            _ = try GraphArchiveEncoder(options: options).encode(Address(street: "s", city: "c", lines: [], zip: 1))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return (context.underlyingError as? GraphArchiveError)?.code == .invalidValue
                && context.debugDescription.contains("maximumDepth")
        }
    }

    @Test func twoKindsOfContainerForOneValue() throws {
        #expect(throws: EncodingError.self) { _ = try GraphArchiveEncoder().encode(TwoContainers()) }
        #expect(throws: EncodingError.self) { _ = try GraphArchiveEncoder().encode(TwoSingleValues()) }
    }

    @Test func containersUsedAfterTheirValueThrow() throws {
        let escaping = Escaping()
        _ = try GraphArchiveEncoder().encode(escaping)
        var container = try #require(escaping.escaped)
        #expect(throws: EncodingError.self) { try container.encode(1, forKey: .value) }

        let data = try GraphArchiveEncoder().encode(Escaping())
        let decoded = try GraphArchiveDecoder().decode(Escaping.self, from: data)
        let reader = try #require(decoded.escapedReader)
        #expect(throws: DecodingError.self) { _ = try reader.decode(Int.self, forKey: .value) }
    }

    @Test func anErrorCaughtInsideEncodeStillFailsTheArchive() throws {
        // The encoder may have written part of a value: it refuses to finish rather than write garbage,
        // naming the swallowed error.
        #expect {
            _ = try GraphArchiveEncoder().encode(SwallowsErrors())
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.underlyingError is Refusal && context.debugDescription.contains("earlier error")
        }
    }

    @Test func swallowingEveryErrorStillFailsTheArchive() throws {
        // The nested value's frames were left open when it threw; finishing must not touch them.
        #expect(throws: EncodingError.self) { _ = try GraphArchiveEncoder().encode(SwallowsEverything()) }
        #expect(throws: EncodingError.self) { _ = try GraphArchiveEncoder().encode([SwallowsEverything()]) }
        #expect(throws: EncodingError.self) {
            _ = try GraphArchiveEncoder().encode(Holder2(inner: SwallowsEverything()))
        }
    }

    // MARK: - Hostile input

    @Test func notAnArchive() throws {
        #expect {
            _ = try GraphArchiveDecoder().decode([Int].self, from: Data("{\"json\": true}".utf8))
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return (context.underlyingError as? GraphArchiveError)?.code == .badMagic
        }
    }

    @Test func everyTruncationThrows() throws {
        let data = try GraphArchiveEncoder().encode(sampleGraph())
        for length in 0..<data.count {
            #expect(throws: DecodingError.self) {
                _ = try GraphArchiveDecoder().decode(SampleGraph.self, from: data.prefix(length))
            }
        }
    }

    @Test func mutatedPayloadsNeverCrash() throws {
        // Resealing the checksums lets damage reach the structure checks, as a hostile writer could.
        let original = [UInt8](try GraphArchiveEncoder().encode(sampleGraph()))
        var random = SplitMix(seed: 42)
        var decodedAnyway = 0
        for round in 0..<3_000 {
            var bytes = original
            for _ in 0..<(1 + round % 4) {
                let position = ArchiveHeader.size + Int(random.next() % UInt64(bytes.count - ArchiveHeader.size))
                bytes[position] =
                    round % 3 == 0
                    ? UInt8(truncatingIfNeeded: random.next()) : bytes[position] ^ (1 << (random.next() % 8))
            }
            let sealed = try reseal(bytes)
            do {
                _ = try GraphArchiveDecoder().decode(SampleGraph.self, from: Data(sealed))
                decodedAnyway += 1
            } catch is DecodingError {
                // Expected for most mutations.
            }
        }
        #expect(decodedAnyway < 3_000)
    }

    @Test func forgedCountsAreRefusedBeforeAllocating() throws {
        var bytes = [UInt8](try GraphArchiveEncoder().encode([1, 2, 3]))
        // The root array's count varint follows the tag; make it claim 2^62 elements.
        let tag = try #require(bytes.lastIndex(of: ValueTag.array))
        bytes.replaceSubrange((tag + 1)...(tag + 1), with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x3F])
        let forged = try reseal(bytes)
        #expect(throws: DecodingError.self) { _ = try GraphArchiveDecoder().decode([Int].self, from: Data(forged)) }
    }

    @Test func corruptedStructureIsADecodingErrorEvenWithValidChecksums() throws {
        let original = [UInt8](try GraphArchiveEncoder().encode([CodableGridState(name: "n", color: 1, date: "d")]))
        // An object reference past the object table.
        var bytes = original
        let reference = try #require(bytes.lastIndex(of: ValueTag.referenceArray))
        bytes[reference + 2] = 0x7E
        #expect(throws: DecodingError.self) {
            _ = try GraphArchiveDecoder().decode([CodableGridState].self, from: Data(try reseal(bytes)))
        }
        // Bytes after the last object.
        bytes = original + [0]
        #expect(throws: DecodingError.self) {
            _ = try GraphArchiveDecoder().decode([CodableGridState].self, from: Data(try reseal(bytes)))
        }
    }
}

/// Recomputes payload length, payload checksum and header checksum of an uncompressed archive.
func reseal(_ bytes: [UInt8]) throws -> [UInt8] {
    let owner = ArchiveBytes(copying: bytes)
    var reader = owner.reader()
    var header = try ArchiveHeader.decode(from: &reader)
    let payload = Array(bytes[ArchiveHeader.size...])
    header.payloadLength = UInt64(payload.count)
    header.storedLength = UInt64(payload.count)
    header.payloadChecksum = XXH64.hash(payload)
    return withExtendedLifetime(owner) { header.encoded() + payload }
}

/// A deterministic generator for mutation tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

// MARK: - Models

struct Item: Codable {
    var id: Int
    var name: String
}

struct Outer: Codable {
    var items: [Item]
}

struct ItemNeedingMore: Codable {
    var id: Int
    var extra: Int
}

struct OuterNeedingMore: Codable {
    var items: [ItemNeedingMore]
}

struct ItemWithNumberName: Codable {
    var id: Int
    var name: Int
}

struct OuterWithNumberNames: Codable {
    var items: [ItemWithNumberName]
}

struct ThreeInts: Decodable {
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        for _ in 0..<3 { _ = try container.decode(Int.self) }
    }
}

struct Refusal: Error {}

struct Refusing: Codable {
    struct Stored: Codable { var value: Int }

    init() {}
    func encode(to encoder: any Encoder) throws { throw Refusal() }
    init(from decoder: any Decoder) throws { throw Refusal() }
}

/// Decodes its value as an Int if it can, else as a String.
struct Lenient: Decodable {
    struct Stored: Codable { var value: String }
    var text: String

    enum CodingKeys: CodingKey { case value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let number = try? container.decode(Int.self, forKey: .value) {
            text = String(number)
        } else if let nested = try? container.decode(Point.self, forKey: .value) {
            text = "\(nested)"
        } else {
            text = try container.decode(String.self, forKey: .value)
        }
    }
}

struct DuplicateKey: Encodable {
    enum CodingKeys: CodingKey { case a }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(1, forKey: .a)
        try container.encode(2, forKey: .a)
    }
}

struct TwoContainers: Encodable {
    enum CodingKeys: CodingKey { case a }
    func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: CodingKeys.self)
        try keyed.encode(1, forKey: .a)
        var unkeyed = encoder.unkeyedContainer()
        try unkeyed.encode(2)
    }
}

struct TwoSingleValues: Encodable {
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(1)
        try container.encode(2)
    }
}

/// Keeps its containers after its value is done, then they are used.
final class Escaping: Codable {
    struct Stored: Codable { var value: Int }
    enum CodingKeys: CodingKey { case value }

    var escaped: KeyedEncodingContainer<CodingKeys>?
    var escapedReader: KeyedDecodingContainer<CodingKeys>?

    init() {}

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(1, forKey: .value)
        escaped = container
    }

    init(from decoder: any Decoder) throws {
        escapedReader = try decoder.container(keyedBy: CodingKeys.self)
    }
}

/// Catches an error from a nested value and carries on.
struct SwallowsErrors: Encodable {
    enum CodingKeys: CodingKey { case bad, good }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try? container.encode(Refusing(), forKey: .bad)
        try container.encode(1, forKey: .good)
    }
}

/// Catches every error from a nested value and returns normally.
struct SwallowsEverything: Encodable {
    enum CodingKeys: CodingKey { case bad }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try? container.encode(PartlyWritten(), forKey: .bad)
    }
}

/// Opens nested containers, writes part of itself, then throws.
struct PartlyWritten: Encodable {
    enum CodingKeys: CodingKey { case a, b }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var nested = container.nestedUnkeyedContainer(forKey: .a)
        try nested.encode(1)
        try container.encode([Point(x: 1, y: 2)], forKey: .b)
        throw Refusal()
    }
}

final class Holder2: Encodable {
    let inner: SwallowsEverything
    init(inner: SwallowsEverything) { self.inner = inner }
}

/// A small graph with every kind of value, for truncation and mutation tests.
struct SampleGraph: Codable {
    var states: [CodableGridState]
    var points: [Point]
    var byName: [String: [Int]]
    var optional: Point?
    var dates: [Date]
}

func sampleGraph() -> SampleGraph {
    let shared = CodableGridState(name: "shared state", color: 0x12_3456, date: "2024-01-01T00:00:00Z")
    return SampleGraph(
        states: [shared, CodableGridState(name: "other", color: 2, date: "2025"), shared],
        points: [Point(x: 1, y: -1), Point(x: 1 << 40, y: 0)],
        byName: ["a": [1, 2], "b": []],
        optional: Point(x: 3, y: 4),
        dates: [Date(timeIntervalSinceReferenceDate: 0)]
    )
}
