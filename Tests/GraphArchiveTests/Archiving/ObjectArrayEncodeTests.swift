// Tests/GraphArchiveTests/Archiving/ObjectArrayEncodeTests.swift - encode of an array of objects writes what the general form writes

import Foundation
import Testing

@testable import GraphArchive

/// A tree node that writes its children with the array-of-objects form of `encode`, or, when
/// `generic`, through the general `GraphValue` form it stands for.
final class ArrayTreeNode: GraphCoding {
    let label: Int
    var children: [ArrayTreeNode] = []
    weak var parent: ArrayTreeNode?
    /// Which form `encode(with:)` uses; not archived.
    var generic = false

    init(label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        if generic {
            try Self.encodeGenerically(children, forKey: "children", with: archiver)
        } else {
            try archiver.encode(children, forKey: "children")
        }
        try archiver.encodeConditionalObject(parent, forKey: "parent")
    }

    /// Writes `value` with the `GraphValue` form (`T` is not known to be an array of objects here).
    static func encodeGenerically<T: GraphValue>(_ value: T, forKey key: String, with archiver: GraphArchiver)
        throws
    {
        try archiver.encode(value, forKey: key)
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        children = try unarchiver.decode([ArrayTreeNode].self, forKey: "children")
        try unarchiver.decodeLater(ArrayTreeNode?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
    }

    /// `count` nodes, node i's parent node (i - 1) / fanOut.
    static func tree(count: Int, fanOut: Int, generic: Bool) -> [ArrayTreeNode] {
        let nodes = (0..<count).map(ArrayTreeNode.init(label:))
        for index in nodes.indices.dropFirst() {
            let parent = nodes[(index - 1) / fanOut]
            parent.children.append(nodes[index])
            nodes[index].parent = parent
        }
        for node in nodes { node.generic = generic }
        return nodes
    }

    /// The labels of the tree under `self`, depth first, with each node's parent label.
    func outline() -> [[Int]] {
        var lines: [[Int]] = []
        var pending = [self]
        while let node = pending.popLast() {
            lines.append([node.label, node.parent?.label ?? -1])
            pending.append(contentsOf: node.children.reversed())
        }
        return lines
    }
}

@Suite("Arrays of objects")
struct ObjectArrayEncodeTests {
    @Test(
        "encode of an array of objects writes what the general form writes",
        arguments: [(1, 1), (2, 1), (9, 8), (300, 3), (3000, 2500)]
    )
    func sameBytesAsGeneralForm(count: Int, fanOut: Int) throws {
        let direct = ArrayTreeNode.tree(count: count, fanOut: fanOut, generic: false)
        let generic = ArrayTreeNode.tree(count: count, fanOut: fanOut, generic: true)
        let directBytes = try GraphArchiver.archivedData(withRootObject: direct[0])
        let genericBytes = try GraphArchiver.archivedData(withRootObject: generic[0])
        #expect(directBytes == genericBytes)

        let decoded = try GraphUnarchiver.unarchivedObject(ofType: ArrayTreeNode.self, from: directBytes)
        #expect(decoded.outline() == direct[0].outline())
    }

    @Test("an array of objects at the top level writes their bodies, every few thousand references")
    func topLevel() throws {
        let nodes = ArrayTreeNode.tree(count: 5000, fanOut: 5000, generic: false)
        var archives: [Data] = []
        for generic in [false, true] {
            let archiver = GraphArchiver()
            try archiver.encode([ArrayTreeNode](), forKey: "empty")
            if generic {
                try ArrayTreeNode.encodeGenerically(nodes, forKey: "all", with: archiver)
            } else {
                try archiver.encode(nodes, forKey: "all")
            }
            try archiver.encode(Array(nodes.prefix(3)), forKey: "again")
            try archiver.finishEncoding()
            archives.append(try archiver.encodedData)
        }
        #expect(archives[0] == archives[1])

        let unarchiver = try GraphUnarchiver(
            forReadingFrom: archives[0],
            registry: GraphTypeRegistry([ArrayTreeNode.self])
        )
        #expect(try unarchiver.decode([ArrayTreeNode].self, forKey: "empty").isEmpty)
        let all = try unarchiver.decode([ArrayTreeNode].self, forKey: "all")
        #expect(all.map(\.label) == Array(0..<5000))
        #expect(all.dropFirst().allSatisfy { $0.parent === all[0] })
        let again = try unarchiver.decode([ArrayTreeNode].self, forKey: "again")
        #expect(again.count == 3 && zip(again, all).allSatisfy { $0 === $1 })
    }
}
