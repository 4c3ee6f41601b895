// Benchmarks/Graphs/TreeGraph.swift - a graph with cycles: a tree with parent links and sibling rings

import Foundation
import GraphArchive

/// A node: children owned, parent and next sibling weak. Parent links and sibling rings close
/// cycles, so they are decoded with `decodeLater(_:forKey:into:)`; children are built before
/// their parent.
final class TreeNode: GraphCoding, TreeShaped {
    let label: Int
    let name: String
    var children: [TreeNode] = []
    weak var parent: TreeNode?
    /// The next sibling; the last child points back to the first (a ring).
    weak var next: TreeNode?

    init(label: Int, name: String) {
        self.label = label
        self.name = name
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        try archiver.encode(name, forKey: "name")
        try archiver.encode(children, forKey: "children")
        try archiver.encodeLater(parent, forKey: "parent")
        try archiver.encodeLater(next, forKey: "next")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        name = try unarchiver.decode(String.self, forKey: "name")
        children = try unarchiver.decode([TreeNode].self, forKey: "children")
        // Closures that capture nothing: no closure is made, nor `self` held, per node.
        try unarchiver.decodeLater(TreeNode?.self, forKey: "parent") { (node: TreeNode, parent) in
            node.parent = parent
        }
        try unarchiver.decodeLater(TreeNode?.self, forKey: "next") { (node: TreeNode, next) in node.next = next }
    }
}

/// What the tree check reads, from gridstore's nodes and from NSKeyedArchiver's.
protocol TreeShaped: AnyObject {
    var label: Int { get }
    var name: String { get }
    var children: [Self] { get }
    var parent: Self? { get }
    var next: Self? { get }
}

/// `count` nodes in breadth-first order, `fanOut` children each: node i's parent is node
/// (i - 1) / fanOut. Every parent link and every sibling ring is a cycle.
final class TreeGraph: BenchmarkGraph {
    static let name = "cycles"
    static let summary = "tree with parent links and sibling rings (cycles)"
    static let recordName = "node"
    static let fanOut = 8
    static var peers: [any Peer<TreeGraph>] { [TreeKeyedPeer()] }
    static let inapplicablePeers = [CodableFormat.json, .binaryPropertyList].map {
        InapplicablePeer($0, reason: "Codable has no references: it cannot hold a cycle")
    }

    let nodes: [TreeNode]

    init(count: Int, sharedFraction: Double, seed: UInt64) {
        // Labels are the breadth-first indexes, which the check relies on.
        nodes = Self.buildNodes(Parts(labels: Array(0..<count)))
    }

    var root: TreeNode { nodes[0] }
    var recordCount: Int { nodes.count }
    var objectCount: Int { nodes.count }

    func verify(_ decoded: TreeNode) throws {
        try verifyTree(decoded)
    }

    /// Walks the decoded tree along the source's shape and checks each node's values and child
    /// count, and each child's parent and next sibling by identity: the parent is the node whose
    /// children it is in, the next sibling the following child (the last one's the first), as
    /// ``buildNodes(_:)`` links the source.
    ///
    /// No set of identities is needed to see that the nodes are distinct: the node at the
    /// source's index i must carry label i, and one object carries one label.
    func verifyTree<Node: TreeShaped>(_ decoded: Node) throws {
        try expect(decoded.parent == nil && decoded.next == nil, "the root has a parent or a sibling")
        var visited = 0
        try verifySubtree(decoded, at: 0, visited: &visited)
        try expect(visited == nodes.count, "\(visited) nodes decoded, expected \(nodes.count)")
    }

    /// Checks `node` as the source's node `index`, then its subtree, depth first: the recursion
    /// is as deep as the tree, log₈ N levels.
    private func verifySubtree<Node: TreeShaped>(_ node: Node, at index: Int, visited: inout Int) throws {
        visited += 1
        let source = nodes[index]
        let children = node.children
        try expect(
            node.label == source.label && node.name == source.name && children.count == source.children.count,
            "node \(index) decoded with other values"
        )
        for (position, child) in children.enumerated() {
            let childIndex = source.children[position].label
            try expect(child.parent === node, "node \(childIndex) has the wrong parent")
            try expect(
                child.next === children[(position + 1) % children.count],
                "node \(childIndex) has the wrong next sibling"
            )
            try verifySubtree(child, at: childIndex, visited: &visited)
        }
    }

    func touchEveryField() -> Int {
        var sum = 0
        for node in nodes {
            sum &+= node.label &+ node.name.utf8.count &+ node.children.count
            sum &+= (node.parent?.label ?? -1) &+ (node.next?.label ?? -1)
        }
        return sum
    }

    /// Labels in breadth-first order; names, children, parents and rings follow from them.
    struct Parts {
        var labels: [Int]
    }

    func parts() -> Parts { Parts(labels: nodes.map(\.label)) }

    static func assemble(_ parts: Parts) -> TreeNode {
        buildNodes(parts)[0]
    }

    /// Builds the nodes, then links each to its parent and its siblings in a ring.
    static func buildNodes(_ parts: Parts) -> [TreeNode] {
        let nodes = parts.labels.map { TreeNode(label: $0, name: "node \($0)") }
        for (index, node) in nodes.enumerated().dropFirst() {
            let parent = nodes[(index - 1) / fanOut]
            node.parent = parent
            parent.children.append(node)
        }
        for node in nodes { linkSiblings(node.children) }
        return nodes
    }

    /// Points each of `children` at the next one, and the last back at the first.
    static func linkSiblings<Node: SiblingLinked>(_ children: [Node]) {
        for (index, child) in children.enumerated() {
            child.next = children[(index + 1) % children.count]
        }
    }
}

protocol SiblingLinked: AnyObject {
    var next: Self? { get set }
}

extension TreeNode: SiblingLinked {}

// MARK: - NSKeyedArchiver

/// The node as an `NSObject, NSCoding`. Swift's Foundation on Linux recurses without end when
/// `init(coder:)` decodes a reference back to an object still being decoded (it crashed with
/// SIGSEGV on a parent link in our test), so parent links and sibling rings are not archived:
/// `init(coder:)` rebuilds them from the children, the usual workaround.
final class TreeObject: NSObject, NSCoding, TreeShaped, SiblingLinked {
    let label: Int
    let name: String
    var children: [TreeObject]
    weak var parent: TreeObject?
    weak var next: TreeObject?

    init(_ node: TreeNode) {
        label = node.label
        name = node.name
        children = node.children.map(TreeObject.init)
        super.init()
        adoptChildren()
    }

    func encode(with coder: NSCoder) {
        coder.encode(label, forKey: "label")
        coder.encode(name, forKey: "name")
        coder.encode(NSArray(array: children), forKey: "children")
    }

    init?(coder: NSCoder) {
        guard let name = coder.decodeObject(forKey: "name") as? String,
            let children = coder.decodeObject(forKey: "children") as? [TreeObject]
        else { return nil }
        label = coder.decodeInteger(forKey: "label")
        self.name = name
        self.children = children
        super.init()
        adoptChildren()
    }

    private func adoptChildren() {
        for child in children { child.parent = self }
        TreeGraph.linkSiblings(children)
    }
}

struct TreeKeyedPeer: Peer {
    var encoderName: String { "NSKeyedArchiver" }
    var decoderName: String { "NSKeyedUnarchiver" }
    var group: String { "nskeyed" }
    var note: String? { "back links rebuilt in init(coder:): cycles crash it on Linux" }

    func model(of graph: TreeGraph) -> TreeObject {
        TreeObject(graph.root)
    }

    func encode(_ model: TreeObject) throws -> Data {
        try KeyedArchiving.archive(model)
    }

    func decode(_ data: Data) throws -> TreeObject {
        try KeyedArchiving.unarchive(data, as: TreeObject.self)
    }

    func verify(_ decoded: TreeObject, against graph: TreeGraph) throws {
        try graph.verifyTree(decoded)
    }
}
