// Tests/GraphArchiveTests/Archiving/OptionalObjectTests.swift - the optional-object forms of encode and encodeLater

import Foundation
import Testing

@testable import GraphArchive

/// A node that writes its optional links with the optional-object forms of `encode` and
/// `encodeLater`, or, when `generic`, through the general `GraphValue` form they stand for.
final class OptionalLinkNode: GraphCoding {
    let label: Int
    var next: OptionalLinkNode?
    weak var parent: OptionalLinkNode?
    /// Which form `encode(with:)` uses; not archived.
    var generic = false

    init(label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        if generic {
            try Self.encodeGenerically(next, later: false, forKey: "next", with: archiver)
            try Self.encodeGenerically(parent, later: true, forKey: "parent", with: archiver)
        } else {
            try archiver.encode(next, forKey: "next")
            try archiver.encodeLater(parent, forKey: "parent")
        }
    }

    /// Writes `value` with the `GraphValue` forms (`T` is not known to be an optional object here).
    static func encodeGenerically<T: GraphValue>(
        _ value: T,
        later: Bool,
        forKey key: String,
        with archiver: GraphArchiver
    ) throws {
        if later {
            try archiver.encodeLater(value, forKey: key)
        } else {
            try archiver.encode(value, forKey: key)
        }
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        next = try unarchiver.decode(OptionalLinkNode?.self, forKey: "next")
        try unarchiver.decodeLater(OptionalLinkNode?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
    }

    /// A chain of `count` nodes, each the parent of the next (a cycle per link: `next` forward,
    /// `parent` back), the first one's parent the last.
    static func chain(count: Int, generic: Bool) -> [OptionalLinkNode] {
        let nodes = (0..<count).map(OptionalLinkNode.init(label:))
        for (node, following) in zip(nodes, nodes.dropFirst()) {
            node.next = following
            following.parent = node
        }
        nodes[0].parent = nodes[count - 1]
        for node in nodes { node.generic = generic }
        return nodes
    }
}

@Suite("Optional objects")
struct OptionalObjectTests {
    @Test("encode and encodeLater of an optional object write what the general forms write", arguments: [1, 2, 300])
    func sameBytesAsGeneralForms(count: Int) throws {
        let direct = OptionalLinkNode.chain(count: count, generic: false)
        let generic = OptionalLinkNode.chain(count: count, generic: true)
        let directBytes = try GraphArchiver.archivedData(withRootObject: direct[0])
        let genericBytes = try GraphArchiver.archivedData(withRootObject: generic[0])
        #expect(directBytes == genericBytes)

        let decoded = try GraphUnarchiver.unarchivedObject(ofType: OptionalLinkNode.self, from: directBytes)
        var walk: OptionalLinkNode? = decoded
        var labels: [Int] = []
        while let node = walk, labels.count <= count {
            labels.append(node.label)
            #expect(node.parent?.label == (node.label == 0 ? count - 1 : node.label - 1))
            walk = node.next
        }
        #expect(labels == Array(0..<count))
    }

    @Test("an optional object at the top level writes its bodies, and nil writes nil")
    func topLevel() throws {
        let nodes = OptionalLinkNode.chain(count: 3, generic: false)
        let archiver = GraphArchiver()
        try archiver.encode(nodes[0] as OptionalLinkNode?, forKey: "first")
        try archiver.encode(nil as OptionalLinkNode?, forKey: "none")
        try archiver.encodeLater(nodes[2] as OptionalLinkNode?, forKey: "last")
        try archiver.finishEncoding()

        let unarchiver = try GraphUnarchiver(
            forReadingFrom: archiver.encodedData,
            registry: GraphTypeRegistry([OptionalLinkNode.self])
        )
        let first = try unarchiver.decode(OptionalLinkNode?.self, forKey: "first")
        #expect(first?.next?.next?.label == 2)
        #expect(try unarchiver.decode(OptionalLinkNode?.self, forKey: "none") == nil)
        #expect(try unarchiver.decode(OptionalLinkNode?.self, forKey: "last") === first?.next?.next)
    }
}
