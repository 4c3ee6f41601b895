// Tests/GraphArchiveTests/Codable/CodableFormatMappingTests.swift - how Codable calls map onto the format (FORMAT.md §11)

import Foundation
import Testing

@testable import GraphArchive

@Suite("Codable bridge format mapping")
struct CodableFormatMappingTests {
    @Test func typeNamesAndKeysAreTheOnesSection11Names() throws {
        let data = try GraphArchiveEncoder().encode(MappingSample())
        let tables = try tables(of: data)
        // Value records after their static type, objects after their class, dictionaries
        // through the standard library's keyed container, an unused super encoder's record.
        #expect(
            Set(tables.typeNames) == [
                "MappingSample", "Dictionary<String, Int>", "SingleValueObject", "EmptySuperValue",
            ]
        )
        #expect(tables.typeIsObject[tables.typeNames.firstIndex(of: "SingleValueObject")!])
        #expect(!tables.typeIsObject[tables.typeNames.firstIndex(of: "MappingSample")!])
        // "$value" holds the object's single value, "super" the super encoder's value; the nil
        // optional written with encodeIfPresent has no key at all.
        #expect(Set(tables.keys) == ["root", "counts", "a", "object", "$value", "super", "missing"])
        #expect(!tables.keys.contains("absent"))
        let back = try GraphArchiveDecoder().decode(MappingSample.self, from: data)
        #expect(back.counts == ["a": 1] && back.object.value == 7 && back.absent == nil && back.missing == nil)
    }

    @Test func emptyArraysAndArraysOfObjectsUseTheirTags() throws {
        // [] is an array (09) with count 0; an array of objects is a reference array (0A).
        let empty = try GraphArchiveEncoder().encode([SingleValueObject]())
        let objects = try GraphArchiveEncoder().encode([SingleValueObject(value: 1), SingleValueObject(value: 2)])
        #expect(try rootTag(of: empty) == ValueTag.array)
        #expect(try rootTag(of: objects) == ValueTag.referenceArray)
    }

    // MARK: - Keyed containers handed out again

    @Test func nestedValuesOfOneTypeEachReadTheirOwnRecord() throws {
        // A parent's container stays in use while its children (same key type) decode, and is
        // read after them: reusing it for a child would read the child's record.
        let tree = TreeValue.make(depth: 4, label: "r")
        let back = try GraphArchiveDecoder().decode(TreeValue.self, from: GraphArchiveEncoder().encode(tree))
        #expect(back == tree)
        let wide = (0..<40).map { TreeValue.make(depth: 2, label: "w\($0)") }
        #expect(try GraphArchiveDecoder().decode([TreeValue].self, from: GraphArchiveEncoder().encode(wide)) == wide)
    }

    @Test func containersOfSeveralKeyTypesEachReadAndWriteTheirOwnRecord() throws {
        // The first key type met is handed out again apart from the others: here the outer
        // type's container stays in use while the others come and go, and each pair's own
        // container is free again for the next pair.
        let pairs = (0..<40).map {
            LabelledPair(left: .init(number: $0, name: "l\($0)"), right: .init(flag: $0 % 3 == 0))
        }
        let outer = PairList(title: "pairs", pairs: pairs)
        let back = try GraphArchiveDecoder().decode(PairList.self, from: GraphArchiveEncoder().encode(outer))
        #expect(back == outer)
        let bare = try GraphArchiveDecoder().decode([LabelledPair].self, from: GraphArchiveEncoder().encode(pairs))
        #expect(bare == pairs)
    }

    @Test func aContainerKeptByOneValueNeverReadsAnother() throws {
        let kept = KeptContainers()
        var decoder = GraphArchiveDecoder()
        decoder.userInfo[KeptContainers.key] = kept
        let values = (0..<5).map { Keeper(value: $0) }
        let back = try decoder.decode([Keeper].self, from: GraphArchiveEncoder().encode(values))
        #expect(back.map(\.value) == [0, 1, 2, 3, 4])
        // Each value, while decoding, tried the container the previous value kept: refused.
        #expect(back.dropFirst().allSatisfy { $0.readThroughPrevious == "refused" })
        // After decoding, every kept container refuses too.
        for container in kept.containers {
            #expect(throws: DecodingError.self) { _ = try container.decode(Int.self, forKey: .value) }
        }
    }

    @Test func aContainerKeptByOneValueNeverWritesAnother() throws {
        // The second value writes through the container the first one kept: that container's
        // value is finished, so the write is refused (and stops the encoder), rather than going
        // into the second value's record, where its own write would then be a duplicate key.
        let kept = KeptEncodingContainers()
        var encoder = GraphArchiveEncoder()
        encoder.userInfo[KeptEncodingContainers.key] = kept
        let values = [EncodingKeeper(value: 0), EncodingKeeper(value: 1)]
        do {
            _ = try encoder.encode(values)
            Issue.record("writing through a finished value's container was not refused")
        } catch let EncodingError.invalidValue(_, context) {
            // The refused write was caught by `try?`: the next one reports it as the cause.
            let cause = context.underlyingError.map { "\($0)" } ?? ""
            #expect(cause.contains("after the value it belongs to was encoded"))
        }
        #expect(values[1].wroteThroughPrevious == "refused")
        // Values that keep their containers but write only through their own encode as usual.
        let alone = EncodingKeeper(value: 7, triesPrevious: false)
        let again = EncodingKeeper(value: 8, triesPrevious: false)
        let data = try encoder.encode([alone, again])
        #expect(try GraphArchiveDecoder().decode([EncodingKeeper].self, from: data).map(\.value) == [7, 8])
    }
}

/// The tag of the root value.
private func rootTag(of data: Data) throws -> UInt8 {
    let loaded = try LoadedArchive.load(ArchiveBytes(copying: data), options: GraphUnarchiver.Options())
    var reader = loaded.payload.reader(loaded.payloadRange)
    let tables = try ArchiveTables.parse(&reader, header: loaded.header, options: GraphUnarchiver.Options())
    #expect(tables.topCount == 1)
    _ = try reader.readCount()
    return try reader.readByte()
}

struct MappingSample: Codable {
    var counts = ["a": 1]
    var object = SingleValueObject(value: 7)
    var absent: Int? = nil
    var missing: Int? = nil

    enum CodingKeys: String, CodingKey { case counts, object, absent, missing }

    init() {}

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(counts, forKey: .counts)
        try container.encode(object, forKey: .object)
        try container.encodeIfPresent(absent, forKey: .absent)
        try container.encodeNil(forKey: .missing)
        _ = container.superEncoder()
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        counts = try container.decode([String: Int].self, forKey: .counts)
        object = try container.decode(SingleValueObject.self, forKey: .object)
        absent = try container.decodeIfPresent(Int.self, forKey: .absent)
        missing = try container.decodeIfPresent(Int.self, forKey: .missing)
    }
}

/// A class whose body is one value (Int's own conformance asks for a single-value container):
/// an object record with the key "$value".
final class SingleValueObject: Codable {
    let value: Int
    init(value: Int) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    init(from decoder: any Decoder) throws { value = try Int(from: decoder) }
}

struct TreeValue: Codable, Equatable {
    var children: [TreeValue]
    var label: String

    static func make(depth: Int, label: String) -> TreeValue {
        let children = depth == 0 ? [] : (0..<2).map { make(depth: depth - 1, label: "\(label).\($0)") }
        return TreeValue(children: children, label: label)
    }
}

/// Three key types: a list whose container is in use while its pairs are coded, and pairs of
/// two records each.
struct PairList: Codable, Equatable {
    var title: String
    var pairs: [LabelledPair]
}

struct LabelledPair: Codable, Equatable {
    struct Left: Codable, Equatable { var number: Int, name: String }
    struct Right: Codable, Equatable { var flag: Bool }
    var left: Left, right: Right
}

/// Where `Keeper`s leave their containers.
final class KeptContainers: @unchecked Sendable {
    // @unchecked: only touched on the decoding thread, within one test.
    static let key = CodingUserInfoKey(rawValue: "kept")!
    var containers: [KeyedDecodingContainer<Keeper.CodingKeys>] = []
}

/// Where `EncodingKeeper`s leave their containers.
final class KeptEncodingContainers: @unchecked Sendable {
    // @unchecked: only touched on the encoding thread, within one test.
    static let key = CodingUserInfoKey(rawValue: "keptForEncoding")!
    var containers: [KeyedEncodingContainer<EncodingKeeper.CodingKeys>] = []
}

/// Keeps its container past `encode(to:)`, and may write through the previous value's first.
final class EncodingKeeper: Codable {
    let value: Int
    let triesPrevious: Bool
    var wroteThroughPrevious = "not tried"

    enum CodingKeys: CodingKey { case value }

    init(value: Int, triesPrevious: Bool = true) {
        self.value = value
        self.triesPrevious = triesPrevious
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let kept = encoder.userInfo[KeptEncodingContainers.key] as! KeptEncodingContainers
        if triesPrevious, var previous = kept.containers.last {
            wroteThroughPrevious = (try? previous.encode(value, forKey: .value)) == nil ? "refused" : "written"
        }
        try container.encode(value, forKey: .value)
        kept.containers.append(container)
    }

    init(from decoder: any Decoder) throws {
        value = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .value)
        triesPrevious = false
    }
}

/// Keeps its container past `init(from:)`, and tries the previous value's while decoding.
final class Keeper: Codable {
    let value: Int
    var readThroughPrevious = "not tried"

    enum CodingKeys: CodingKey { case value }

    init(value: Int) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kept = decoder.userInfo[KeptContainers.key] as! KeptContainers
        if let previous = kept.containers.last {
            readThroughPrevious = (try? previous.decode(Int.self, forKey: .value)).map { "read \($0)" } ?? "refused"
        }
        value = try container.decode(Int.self, forKey: .value)
        kept.containers.append(container)
    }
}
