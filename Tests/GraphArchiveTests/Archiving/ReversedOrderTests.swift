// Tests/GraphArchiveTests/Archiving/ReversedOrderTests.swift - graphs whose references all point forward (FORMAT.md §5.4)

import Foundation
import Testing

@testable import GraphArchive

/// A node that owns its children and names one of them its heir: every reference its body
/// makes goes to an object met after it, the heir a second time.
final class OwningNode: GraphCoding {
    let label: Int
    var children: [OwningNode] = []
    var heir: OwningNode?

    init(label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        try archiver.encode(children, forKey: "children")
        try archiver.encode(heir, forKey: "heir")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        children = try unarchiver.decode([OwningNode].self, forKey: "children")
        heir = try unarchiver.decode(OwningNode?.self, forKey: "heir")
    }

    /// `count` nodes, breadth first, `fanOut` children each; each node's heir is its last child.
    static func tree(count: Int, fanOut: Int) -> [OwningNode] {
        let nodes = (0..<count).map(OwningNode.init(label:))
        for (index, node) in nodes.enumerated().dropFirst() {
            nodes[(index - 1) / fanOut].children.append(node)
        }
        for node in nodes { node.heir = node.children.last }
        return nodes
    }
}

@Suite("Reversed construction order")
struct ReversedOrderTests {
    /// The head of a chain of `count` links, valued 0, 1, 2, ...
    static func chain(_ count: Int) -> Link {
        var next: Link?
        for value in (0..<count).reversed() { next = Link(value: value, next: next) }
        return next!
    }

    /// Archives `root` under the root key, through the general ordering when `general`.
    static func archive<T: GraphValue>(_ root: T, general: Bool, notingPlaces: Bool = true) throws -> Data {
        let archiver = GraphArchiver()
        try archiver.encode(root, forKey: GraphArchiver.rootKey)
        let pointsForward = archiver.state.bodyReferencesPointForward
        #expect(pointsForward)
        if general { archiver.state.bodyReferencesPointForward = false }
        if !notingPlaces { archiver.state.notesPlaces = false }
        try archiver.finishEncoding()
        return try archiver.encodedData
    }

    /// A tree whose bodies refer only forward comes back whole, shared heirs `===` the children
    /// they were, with the root stored last.
    @Test func treeReferringOnlyForwardRoundTrips() throws {
        let nodes = OwningNode.tree(count: 1000, fanOut: 3)
        for notingPlaces in [true, false] {
            let data = try Self.archive(nodes[0], general: false, notingPlaces: notingPlaces)
            let info = try GraphUnarchiver.verify(data)
            #expect(info.objectCount == nodes.count)
            let graph = try ArchiveGraph(data: data)
            #expect(
                try graph.topLevelValue(forKey: GraphArchiver.rootKey) == .object(nodes.count - 1),
                "the root, met first, is stored last"
            )
            let back = try GraphUnarchiver.unarchivedObject(ofType: OwningNode.self, from: data)
            var pending = [(back, nodes[0])]
            var visited = 0
            while let (copy, source) = pending.popLast() {
                visited += 1
                #expect(copy.label == source.label && copy.children.count == source.children.count)
                #expect(copy.heir === copy.children.last, "node \(source.label)'s heir")
                pending += zip(copy.children, source.children)
            }
            #expect(visited == nodes.count)
        }
    }

    /// For a chain, the reverse of the order links were met in is the order the general
    /// ordering works out: the same bytes, with or without the references' noted places.
    @Test func chainIsStoredAsTheGeneralOrderingStoresIt() throws {
        let head = Self.chain(500)
        let general = try Self.archive(head, general: true)
        #expect(try Self.archive(head, general: false) == general)
        #expect(try Self.archive(head, general: false, notingPlaces: false) == general)
    }

    /// A vine (one reference a body, which the encoder does not list body by body) branching
    /// lower down, into bodies that make many references and none: read back whole, through
    /// either ordering.
    @Test(arguments: [false, true])
    func vineBranchingLowerDown(general: Bool) throws {
        let nodes = (0..<60).map(OwningNode.init(label:))
        for index in 1..<40 { nodes[index - 1].children = [nodes[index]] }
        nodes[39].children = Array(nodes[40...])
        nodes[39].heir = nodes[59]
        let data = try Self.archive(nodes[0], general: general)
        #expect(try GraphUnarchiver.verify(data).objectCount == nodes.count)
        var walk = try GraphUnarchiver.unarchivedObject(ofType: OwningNode.self, from: data)
        for label in 0..<39 {
            #expect(walk.label == label && walk.children.count == 1 && walk.heir == nil)
            walk = walk.children[0]
        }
        #expect(walk.label == 39 && walk.children.map(\.label) == Array(40..<60))
        #expect(walk.heir === walk.children.last)
    }

    /// Thousands of bodies without references go into compressed blocks as they are written;
    /// a chain met after them is stored in reverse after them, the blocks' numbers kept.
    @Test(arguments: [false, true])
    func chainAfterBodiesInCompressedBlocks(compressed: Bool) throws {
        let leaves = (0..<40_000).map { Record(name: "leaf \($0) with a longer name", color: $0 % 7, date: "today") }
        let count = 3000
        let options = GraphArchiver.Options(
            compression: compressed && ArchiveCompression.isZstdAvailable ? .zstd(level: 1) : .none
        )
        let archiver = GraphArchiver(options: options)
        try archiver.encode(leaves, forKey: "leaves")
        try archiver.encode(Self.chain(count), forKey: "chain")
        let (pointsForward, bodiesInBlocks) = (archiver.state.bodyReferencesPointForward, archiver.state.bodiesInBlocks)
        #expect(pointsForward)
        if case .zstd = options.compression { #expect(bodiesInBlocks > 0) }
        try archiver.finishEncoding()
        let data = try archiver.encodedData
        _ = try GraphUnarchiver.verify(data)
        let unarchiver = try GraphUnarchiver(
            forReadingFrom: data,
            registry: GraphTypeRegistry([Record.self, Link.self])
        )
        let leavesBack = try unarchiver.decode([Record].self, forKey: "leaves")
        #expect(leavesBack.map(\.name) == leaves.map(\.name))
        var walk = try unarchiver.decode(Link?.self, forKey: "chain")
        var values: [Int] = []
        while let link = walk {
            values.append(link.value)
            walk = link.next
        }
        #expect(values == Array(0..<count))
    }
}
