// FuzzTesting/Sources/FuzzSupport/SeedCorpus.swift - the starting inputs of the fuzz targets

import Foundation
import GraphArchive
import GridStore

/// Small archives covering every value kind, sharing, cycles and nesting: where mutation starts.
public enum SeedCorpus {
    public static func archives(compression: ArchiveCompression) throws -> [String: Data] {
        var options = GraphArchiver.Options()
        options.compression = compression
        func archive(_ body: (GraphArchiver) throws -> Void) throws -> Data {
            let archiver = GraphArchiver(options: options)
            try body(archiver)
            try archiver.finishEncoding()
            return try archiver.encodedData
        }
        var seeds: [String: Data] = [:]
        let shared = GridState(name: "Gamma", color: 0x33AA55, date: "2024-05-01T10:00:00Z")
        let other = GridState(name: "Ünïcödé ✓", color: 7, date: "2023-12-31T23:59:59Z")
        seeds["grid-states-shared"] = try archive {
            try $0.encode([shared, other, shared, shared, other], forKey: GraphArchiver.rootKey)
        }
        seeds["grid-states-alias"] = try archive {
            try $0.encode([GridState(name: "a", color: -1, date: "")], forKey: GraphArchiver.rootKey)
        }

        let ring = (0..<4).map { FuzzNode(label: $0, name: $0 == 0 ? nil : "n\($0)") }
        for (index, node) in ring.enumerated() { node.next = ring[(index + 1) % ring.count] }
        ring[0].children = [ring[2], ring[3]]
        ring[1].buddy = ring[3]
        seeds["node-ring"] = try archive { try $0.encode(ring, forKey: GraphArchiver.rootKey) }
        FuzzNode.breakCycles(ring)

        // As many references as objects: the one-call decode hands each node to its reader.
        let chain = (0..<5).map { FuzzNode(label: $0) }
        for (node, next) in zip(chain, chain.dropFirst()) { node.next = next }
        seeds["node-chain"] = try archive { try $0.encode(chain[0], forKey: GraphArchiver.rootKey) }
        FuzzNode.breakCycles(chain)

        let parent = FuzzNode(label: 100)
        parent.values = sampleValues(depth: 2)
        parent.children = (0..<3).map { FuzzNode(label: $0) }
        seeds["node-tree-values"] = try archive { try $0.encode(parent, forKey: GraphArchiver.rootKey) }

        seeds["values-nested"] = try archive {
            try $0.encode(sampleValues(depth: 3), forKey: GraphArchiver.rootKey)
            try $0.encode("several top-level keys", forKey: "title")
            try $0.encode([[1, 2], [], [Int.min, Int.max]], forKey: "extra")
        }
        seeds["dictionary-of-values"] = try archive {
            try $0.encode(
                ["a": sampleValues(depth: 0), "b": nil] as [String: FuzzValues?],
                forKey: GraphArchiver.rootKey
            )
        }
        return seeds
    }

    static func sampleValues(depth: Int) -> FuzzValues {
        var values = FuzzValues()
        values.flag = depth % 2 == 0
        values.small = -5
        values.wide = UInt64.max - UInt64(depth)
        values.signed = Int32.min + Int32(depth)
        values.real = 1.5
        values.double = -.infinity
        values.date = Date(timeIntervalSinceReferenceDate: 700_000_000)
        values.data = Data([0, 255, 128])
        values.bytes = Array(0..<UInt8(10 + depth))
        values.text = String(repeating: "long text ", count: 8) + "é"
        values.tags = ["x", "y"]
        values.table = ["one": [1], "many": [1, 200, -70_000]]
        values.numbers = [1: 0.5, -3: .nan]
        values.nested = depth > 0 ? [sampleValues(depth: depth - 1), FuzzValues()] : []
        return values
    }
}
