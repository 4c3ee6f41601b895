// Benchmarks/Graphs/BenchmarkGraph.swift - a graph shape, and how the other archivers hold it

import Foundation
import GraphArchive

/// A graph the suite archives: built the same way at any size, checkable after a round trip,
/// and buildable from flat arrays for the decode floor.
protocol BenchmarkGraph: AnyObject, SendableMetatype {
    /// What gridstore archives (the root object).
    associatedtype Root: GraphValue
    /// The graph's fields laid out flat, as a decoder would find them, for the decode floor.
    associatedtype Parts

    static var name: String { get }
    static var summary: String { get }
    static var recordName: String { get }
    /// The other archivers, each with its own model of this graph.
    static var peers: [any Peer<Self>] { get }
    /// Archivers that cannot hold this graph, and why (reported as "n/a" rows).
    static var inapplicablePeers: [InapplicablePeer] { get }

    init(count: Int, sharedFraction: Double, seed: UInt64)
    var root: Root { get }
    var recordCount: Int { get }
    /// Distinct objects, each archived once.
    var objectCount: Int { get }

    /// Checks a decoded graph against this one: counts, every value, and identity.
    func verify(_ decoded: Root) throws
    /// Reads every field of every record, returning something that depends on all of them:
    /// the traversal half of the encode floor.
    func touchEveryField() -> Int
    func parts() -> Parts
    /// Builds the graph from `parts` with no parsing: the decode floor.
    static func assemble(_ parts: Parts) -> Root
    /// Frees a decoded graph without deep recursion (a long chain would overflow the stack).
    static func dismantle(_ root: inout Root?)
}

extension BenchmarkGraph {
    static func dismantle(_ root: inout Root?) { root = nil }
}

/// An archiver that cannot represent a graph at all.
struct InapplicablePeer {
    var encoderName: String
    var decoderName: String
    var group: String
    var reason: String

    init(_ format: CodableFormat, reason: String) {
        encoderName = format.encoderName
        decoderName = format.decoderName
        group = format.group
        self.reason = reason
    }
}

/// One of the archivers users would pick instead, with its own model of `Graph`.
protocol Peer<Graph> {
    associatedtype Graph: BenchmarkGraph
    associatedtype Model

    var encoderName: String { get }
    var decoderName: String { get }
    /// Its `--only` group: "nskeyed", "json", "plist".
    var group: String { get }
    /// How it holds the graph, and what it cannot keep.
    var note: String? { get }
    /// Largest graph it can handle (recursion depth), if limited.
    var maximumCount: Int? { get }

    /// The peer's model of `graph` (not timed).
    func model(of graph: Graph) -> Model
    func encode(_ model: Model) throws -> Data
    func decode(_ data: Data) throws -> Model
    /// Checks a decoded model against the source graph: counts, values, identity where kept.
    func verify(_ decoded: Model, against graph: Graph) throws
    /// Whether `archive` holds what the checked `reference` holds, without decoding it; false
    /// sends the check to decoding `archive`.
    func isSameArchive(_ archive: Data, as reference: Data) -> Bool
}

extension Peer {
    var note: String? { nil }
    var maximumCount: Int? { nil }
    func isSameArchive(_ archive: Data, as reference: Data) -> Bool { archive == reference }
}
