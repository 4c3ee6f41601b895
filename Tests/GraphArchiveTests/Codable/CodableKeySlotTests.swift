// Tests/GraphArchiveTests/Codable/CodableKeySlotTests.swift - keys found by their bits (CodableKeySlots)

import Foundation
import Testing

@testable import GraphArchive

/// The keyed containers find a key of a plain type (an enum, an integer struct) by its bits at
/// the slot where its string was found before. These values change the key types, the keys a
/// record holds and their order from one record to the next, to show that a key is never taken
/// for another one.
@Suite("Codable keys found by their bits")
struct CodableKeySlotTests {
    @Test func keysOfTwoEnumsWithTheSameBitsKeepTheirOwnNames() throws {
        // `alpha` and `delta` are both case 0 (the same bits), in containers of one value.
        let pairs = (0..<12).map { index in
            KeyPairs(
                first: KeyedEntries<FirstKeys>(rotating: ["alpha", "beta", "gamma"], by: index, base: index),
                second: KeyedEntries<SecondKeys>(rotating: ["delta", "epsilon", "zeta"], by: index + 1, base: 100)
            )
        }
        let data = try GraphArchiveEncoder().encode(pairs)
        #expect(try GraphArchiveDecoder().decode([KeyPairs].self, from: data) == pairs)
        #expect(try Set(tables(of: data).keys).isSuperset(of: ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]))
    }

    @Test func integerKeysKeepTheirValuesAcrossShapesAndOrders() throws {
        // Keys 0, 8 and 16 share an entry of the slots (as 2 and 10 do), and records hold
        // different keys in different orders.
        let keySets: [[Int]] = [[0, 1, 2], [1, 0, 2], [0, 2], [8, 0, 16], [2, 10], [16, 8], [0, 1, 2]]
        let rows = keySets.enumerated().map { index, keys in
            KeyedEntries<IntegerKey>(names: keys.map(String.init), values: keys.map { $0 * 10 + index })
        }
        try expectRoundTrip(rows)
    }

    @Test func keysCarryingStringsAreReadByTheirStrings() throws {
        // A struct key carrying its string has no plain bits: each is found by its string.
        let long = "a key longer than fifteen bytes, in storage of its own"
        let keySets = [["a", "b"], ["b", "a"], [long, "a"], ["c", long, "b"], ["a", "b"]]
        let rows = keySets.enumerated().map { index, names in
            KeyedEntries<NamedKey>(names: names, values: names.indices.map { $0 + index * 10 })
        }
        try expectRoundTrip(rows)
    }

    @Test func absentKeysAreNotFoundAtAnotherKeysSlot() throws {
        // `gamma` is absent from every other record; a record without it must not read the key
        // after it in the record before.
        let rows = (0..<8).map { index in
            index.isMultiple(of: 2)
                ? KeyedEntries<FirstKeys>(names: ["alpha", "gamma"], values: [index, index + 50])
                : KeyedEntries<FirstKeys>(names: ["alpha", "beta"], values: [index, index + 70])
        }
        let data = try GraphArchiveEncoder().encode(rows)
        let back = try GraphArchiveDecoder().decode([KeyedEntries<FirstKeys>].self, from: data)
        #expect(back == rows)
        #expect(back.map(\.probedGamma) == rows.map { $0.names.contains("gamma") ? $0.values.last : nil })
    }

    @Test func enumKeysWriteTheBytesStringKeysWrite() throws {
        // The same records keyed by an enum (found by bits) and by a struct carrying the string
        // (found by its string): one archive. Both row types are named `Row`.
        let keySets = [["alpha", "beta", "gamma"], ["beta", "alpha"], ["gamma"], ["alpha", "beta", "gamma"]]
        let values = keySets.indices.map { index in keySets[index].indices.map { $0 + index } }
        let byEnum = zip(keySets, values).map { EnumKeyed.Row(entries: KeyedEntries(names: $0, values: $1)) }
        let byString = zip(keySets, values).map { StringKeyed.Row(entries: KeyedEntries(names: $0, values: $1)) }
        let enumArchive = try GraphArchiveEncoder().encode(byEnum)
        #expect(enumArchive == (try GraphArchiveEncoder().encode(byString)))
        #expect(try GraphArchiveDecoder().decode([StringKeyed.Row].self, from: enumArchive) == byString)
    }
}

/// Checks that `rows` come back from their archive, read in stored order and in reverse (where
/// every key but a record's last is out of order).
private func expectRoundTrip<Key: CodingKey>(_ rows: [KeyedEntries<Key>]) throws {
    let data = try GraphArchiveEncoder().encode(rows)
    #expect(try GraphArchiveDecoder().decode([KeyedEntries<Key>].self, from: data) == rows)
    var decoder = GraphArchiveDecoder()
    decoder.userInfo[KeyedEntries<Key>.readsInReverse] = true
    #expect(try decoder.decode([KeyedEntries<Key>].self, from: data) == rows)
}

// MARK: - Key types

enum FirstKeys: String, CodingKey { case alpha, beta, gamma }
enum SecondKeys: String, CodingKey { case delta, epsilon, zeta }

/// A plain key of 8 bytes: an integer, whose string is its digits.
struct IntegerKey: CodingKey {
    let value: Int
    var stringValue: String { String(value) }
    var intValue: Int? { value }
    init?(stringValue: String) {
        guard let value = Int(stringValue) else { return nil }
        self.value = value
    }
    init?(intValue: Int) { value = intValue }
}

/// A key that carries its string: not plain, so never found by its bits.
struct NamedKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

// MARK: - Values

/// Int values under keys of `Key`, written in the order given and read in stored order (or
/// reversed, with `readsInReverse` in the decoder's user info).
struct KeyedEntries<Key: CodingKey>: Codable, Equatable {
    var names: [String]
    var values: [Int]
    /// What `decodeIfPresent` read for "gamma", whether or not the record holds it.
    var probedGamma: Int?

    static var readsInReverse: CodingUserInfoKey { CodingUserInfoKey(rawValue: "readsInReverse")! }

    init(names: [String], values: [Int]) {
        self.names = names
        self.values = values
    }

    /// `names` rotated left by `by`, valued from `base`.
    init(rotating names: [String], by offset: Int, base: Int) {
        let shift = offset % names.count
        self.init(names: Array(names[shift...] + names[..<shift]), values: names.indices.map { base + $0 })
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in zip(names, values) { try container.encode(value, forKey: Key(stringValue: name)!) }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let keys = container.allKeys
        var read: [String: Int] = [:]
        let inReverse = decoder.userInfo[Self.readsInReverse] as? Bool ?? false
        for key in inReverse ? keys.reversed() : keys {
            read[key.stringValue] = try container.decode(Int.self, forKey: key)
        }
        names = keys.map(\.stringValue)
        values = names.map { read[$0]! }
        if let gamma = Key(stringValue: "gamma") {
            probedGamma = try container.decodeIfPresent(Int.self, forKey: gamma)
        }
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.names == rhs.names && lhs.values == rhs.values }
}

struct KeyPairs: Codable, Equatable {
    var first: KeyedEntries<FirstKeys>
    var second: KeyedEntries<SecondKeys>
}

/// A value that is its entries, under a name of its own (`Row` for both kinds below).
protocol EntriesRow: Codable, Equatable {
    associatedtype Key: CodingKey
    var entries: KeyedEntries<Key> { get }
    init(entries: KeyedEntries<Key>)
}

extension EntriesRow {
    func encode(to encoder: any Encoder) throws { try entries.encode(to: encoder) }
    init(from decoder: any Decoder) throws { self.init(entries: try KeyedEntries(from: decoder)) }
}

enum EnumKeyed {
    struct Row: EntriesRow { var entries: KeyedEntries<FirstKeys> }
}

enum StringKeyed {
    struct Row: EntriesRow { var entries: KeyedEntries<NamedKey> }
}
