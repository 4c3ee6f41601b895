// Benchmarks/Graphs/ChainGraph.swift - a linked chain, one object per link, N deep

import Foundation
import GraphArchive
import GridStore

/// One link of the chain; `next` is decoded directly (the engine builds the tail first).
final class ChainLink: GraphCoding {
    let value: Int
    /// `var` only so that a chain can be cut apart without recursive releases.
    var next: ChainLink?

    init(value: Int, next: ChainLink?) {
        self.value = value
        self.next = next
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(value, forKey: "value")
        try archiver.encode(next, forKey: "next")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        value = try unarchiver.decode(Int.self, forKey: "value")
        next = try unarchiver.decode(ChainLink?.self, forKey: "next")
    }
}

/// What the chain check and teardown need from gridstore's links and NSKeyedArchiver's.
protocol ChainLinked: AnyObject {
    var value: Int { get }
    var next: Self? { get set }
}

extension ChainLink: ChainLinked {}

/// Releases a chain link by link: releasing the head of a long chain would recurse once per
/// link and overflow the stack.
func dismantleChain<Link: ChainLinked>(_ head: inout Link?) {
    var walk = head
    head = nil
    while let link = walk {
        walk = link.next
        link.next = nil
    }
}

/// `count` links with pseudo-random 32-bit values, the head as root: depth, not breadth.
final class ChainGraph: BenchmarkGraph {
    static let name = "chain"
    static let summary = "linked chain (one object per link, N deep)"
    static let recordName = "link"
    static var peers: [any Peer<ChainGraph>] { [ChainKeyedPeer()] }
    static let inapplicablePeers = [CodableFormat.json, .binaryPropertyList].map {
        InapplicablePeer(
            $0,
            reason: "Codable has no references: a chain would nest one container per link, N levels deep"
        )
    }

    let values: [Int]
    private var head: ChainLink?

    init(count: Int, sharedFraction: Double, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        values = (0..<count).map { _ in Int(truncatingIfNeeded: random.next() & 0xFFFF_FFFF) }
        head = Self.assemble(values)
    }

    deinit {
        dismantleChain(&head)
    }

    var root: ChainLink { head! }
    var recordCount: Int { values.count }
    var objectCount: Int { values.count }

    func verify(_ decoded: ChainLink) throws {
        try verifyChain(decoded)
    }

    /// Checks values link by link and that the chain ends after exactly `count` links (a
    /// shared link would make a cycle, which never ends).
    func verifyChain<Link: ChainLinked>(_ decoded: Link) throws {
        var walk: Link? = decoded
        for (index, value) in values.enumerated() {
            guard let link = walk else {
                throw VerificationError("chain ends after \(index) links, expected \(values.count)")
            }
            try expect(link.value == value, "link \(index) decoded as \(link.value), expected \(value)")
            walk = link.next
        }
        try expect(walk == nil, "chain goes on after \(values.count) links")
    }

    func touchEveryField() -> Int {
        var sum = 0
        var walk = head
        while let link = walk {
            sum &+= link.value
            walk = link.next
        }
        return sum
    }

    func parts() -> [Int] { values }

    static func assemble(_ parts: [Int]) -> ChainLink {
        var next: ChainLink?
        for value in parts.reversed() {
            next = ChainLink(value: value, next: next)
        }
        return next!
    }

    static func dismantle(_ root: inout ChainLink?) {
        dismantleChain(&root)
    }
}

// MARK: - NSKeyedArchiver

final class ChainObject: NSObject, NSCoding, ChainLinked {
    let value: Int
    var next: ChainObject?

    init(value: Int, next: ChainObject?) {
        self.value = value
        self.next = next
    }

    func encode(with coder: NSCoder) {
        coder.encode(value, forKey: "value")
        coder.encode(next, forKey: "next")
    }

    init?(coder: NSCoder) {
        value = coder.decodeInteger(forKey: "value")
        next = coder.decodeObject(forKey: "next") as? ChainObject
    }
}

/// Owns a chain of `ChainObject`s and frees it link by link.
final class ChainObjects {
    var head: ChainObject?
    init(_ head: ChainObject?) { self.head = head }
    deinit { dismantleChain(&head) }
}

/// NSKeyedArchiver codes each reference by recursion, one level per link: it runs on the
/// harness's 1 GiB stack, at most 100,000 links deep (tried; deeper is not attempted).
struct ChainKeyedPeer: Peer {
    var encoderName: String { "NSKeyedArchiver" }
    var decoderName: String { "NSKeyedUnarchiver" }
    var group: String { "nskeyed" }
    var note: String? { "recursive: at most 100,000 links deep" }
    var maximumCount: Int? { 100_000 }

    func model(of graph: ChainGraph) -> ChainObjects {
        var next: ChainObject?
        for value in graph.values.reversed() {
            next = ChainObject(value: value, next: next)
        }
        return ChainObjects(next)
    }

    func encode(_ model: ChainObjects) throws -> Data {
        try KeyedArchiving.archive(model.head!)
    }

    func decode(_ data: Data) throws -> ChainObjects {
        ChainObjects(try KeyedArchiving.unarchive(data, as: ChainObject.self))
    }

    func verify(_ decoded: ChainObjects, against graph: ChainGraph) throws {
        try graph.verifyChain(decoded.head!)
    }
}
