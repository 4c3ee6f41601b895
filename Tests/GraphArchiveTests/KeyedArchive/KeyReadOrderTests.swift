// Tests/GraphArchiveTests/KeyedArchive/KeyReadOrderTests.swift - keyed archives stored in the order their classes read

import Foundation
import Testing

@testable import GraphArchive

/// Encodes "alpha", "beta", "gamma" (and "delta" when set) and reads them back the other way
/// round, "delta" first: a keyed archive written by it stores another order than it reads.
final class BackwardsReader: GraphCoding, Sendable {
    let alpha: Int
    let beta: String
    let gamma: Int
    let delta: String?

    init(alpha: Int, beta: String, gamma: Int, delta: String?) {
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.delta = delta
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(alpha, forKey: "alpha")
        try archiver.encode(beta, forKey: "beta")
        try archiver.encode(gamma, forKey: "gamma")
        if let delta { try archiver.encode(delta, forKey: "delta") }
    }

    init(from unarchiver: GraphUnarchiver) throws {
        delta = try unarchiver.decodeIfPresent(String.self, forKey: "delta")
        gamma = try unarchiver.decode(Int.self, forKey: "gamma")
        beta = try unarchiver.decode(String.self, forKey: "beta")
        alpha = try unarchiver.decode(Int.self, forKey: "alpha")
    }

    var fields: [String] { ["\(alpha)", beta, "\(gamma)", delta ?? "-"] }
}

/// The keys of each object shape of the native archive transcoded from keyed archive `data`,
/// as the keyed reader stores them for a decode in this process (`isLoadedHere`) or for a file.
private func transcodedShapeKeys(_ data: Data, registry: GraphTypeRegistry, isLoadedHere: Bool) throws -> [[String]] {
    var memory = MemoryBudget(GraphUnarchiver.Options())
    let native = try KeyedArchiveReader.transcode(
        ArchiveBytes(copying: data),
        registry: registry,
        options: GraphUnarchiver.Options(),
        isLoadedHere: isLoadedHere,
        memory: &memory
    )
    let loaded = try LoadedArchive.load(
        ArchiveBytes(joiningInPlace: native.stored()),
        options: GraphUnarchiver.Options(),
        isOwnOutput: true
    )
    var reader = loaded.payload.reader(loaded.payloadRange)
    let tables = try ArchiveTables.parse(&reader, header: loaded.header, options: GraphUnarchiver.Options())
    return tables.shapeType.indices.filter { tables.typeIsObject[tables.shapeType[$0]] }.map { shape in
        let start = tables.shapeKeyStart[shape]
        return Array(tables.shapeKeys[start..<(start + tables.shapeKeyCount[shape])])
    }
}

@Suite("Keyed archives stored in the order their classes read")
struct KeyReadOrderTests {
    /// Forty records, every third without "delta": two shapes, each met often enough for the
    /// keyed reader's shortcut for repeated key sets.
    static let records = (0..<40).map {
        BackwardsReader(alpha: $0, beta: "b\($0)", gamma: -$0, delta: $0 % 3 == 0 ? nil : "d\($0)")
    }
    static let registry = GraphTypeRegistry([BackwardsReader.self])

    @Test("a decode notes the order a class reads in, and later keyed reads store its fields so")
    func laterReadsStoreReadOrder() throws {
        let data = try KeyedArchive.archivedData(withRootObject: Self.records)
        let stored = try transcodedShapeKeys(data, registry: Self.registry, isLoadedHere: false)
        #expect(Set(stored) == [["alpha", "beta", "gamma"], ["alpha", "beta", "gamma", "delta"]])

        for _ in 0..<2 {
            let decoded = try GraphUnarchiver.unarchivedObject(
                ofType: [BackwardsReader].self,
                fromKeyedArchive: data,
                registry: Self.registry
            )
            #expect(decoded.map(\.fields) == Self.records.map(\.fields))
        }
        // The shape with the most keys read out of order gives the class's order.
        #expect(KeyReadOrders.keys(for: BackwardsReader.self) == ["delta", "gamma", "beta", "alpha"])

        let loadedHere = try transcodedShapeKeys(data, registry: Self.registry, isLoadedHere: true)
        #expect(Set(loadedHere) == [["gamma", "beta", "alpha"], ["delta", "gamma", "beta", "alpha"]])
        // A shorter order that agrees does not replace it.
        KeyReadOrders.note(["gamma", "alpha"], for: BackwardsReader.self)
        #expect(KeyReadOrders.keys(for: BackwardsReader.self) == ["delta", "gamma", "beta", "alpha"])
        // A file's output does not depend on what this process has decoded.
        #expect(try transcodedShapeKeys(data, registry: Self.registry, isLoadedHere: false) == stored)
    }

    @Test("a class with no noted order keeps its fields in key order")
    func noNotedOrder() throws {
        final class NeverDecoded: GraphCoding {
            let value: Int
            init(value: Int) { self.value = value }
            func encode(with archiver: GraphArchiver) throws {
                try archiver.encode(value, forKey: "z")
                try archiver.encode(value + 1, forKey: "a")
            }
            init(from unarchiver: GraphUnarchiver) throws { value = try unarchiver.decode(Int.self, forKey: "a") - 1 }
        }
        let data = try KeyedArchive.archivedData(withRootObject: [NeverDecoded(value: 1)])
        let registry = GraphTypeRegistry([NeverDecoded.self])
        #expect(try transcodedShapeKeys(data, registry: registry, isLoadedHere: true) == [["z", "a"]])
    }

    @Test("the noted order is capped in keys and bytes")
    func cappedKeys() throws {
        final class ManyKeys: GraphCoding {
            init() {}
            func encode(with archiver: GraphArchiver) throws {}
            init(from unarchiver: GraphUnarchiver) throws {}
        }
        KeyReadOrders.note((0..<100).map { "k\($0)" }, for: ManyKeys.self)
        #expect(KeyReadOrders.keys(for: ManyKeys.self)?.count == KeyReadOrders.maximumKeys)
        let long = String(repeating: "x", count: KeyReadOrders.maximumKeyBytes / 2)
        KeyReadOrders.note(["a", long, long, "b"], for: ManyKeys.self)
        #expect(KeyReadOrders.keys(for: ManyKeys.self) == ["a", long])
    }
}
