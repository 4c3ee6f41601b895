// Tests/GraphArchiveTests/Codable/CodableCycleOrderTests.swift - the Codable bridge's cycles in any order, and across the two APIs

import Foundation
import Testing

@testable import GraphArchive

/// ``OutlineNote`` through `Codable`: children plain, the weak parent through `encodeLater`.
final class CodableOutlineNote: Codable {
    var title: String
    var tags: [String]
    var created: Date
    var children: [CodableOutlineNote] = []
    weak var parent: CodableOutlineNote?

    init(_ note: OutlineNote) {
        title = note.title
        tags = note.tags
        created = note.created
    }

    enum CodingKeys: String, CodingKey { case title, tags, created, children, parent }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(title, forKey: .title)
        try container.encode(tags, forKey: .tags)
        try container.encode(created, forKey: .created)
        try container.encode(children, forKey: .children)
        try container.encodeLater(parent, forKey: .parent)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        title = try container.decode(String.self, forKey: .title)
        tags = try container.decode([String].self, forKey: .tags)
        created = try container.decode(Date.self, forKey: .created)
        children = try container.decode([CodableOutlineNote].self, forKey: .children)
        try container.decodeLater(CodableOutlineNote?.self, forKey: .parent) { [unowned self] in self.parent = $0 }
    }

    /// The same tree as `notes`, note for note.
    static func copies(of notes: [OutlineNote]) -> [CodableOutlineNote] {
        let copies = notes.map(CodableOutlineNote.init)
        let index = Dictionary(uniqueKeysWithValues: notes.enumerated().map { (ObjectIdentifier($1), $0) })
        for (note, copy) in zip(notes, copies) {
            copy.children = note.children.map { copies[index[ObjectIdentifier($0)]!] }
            for child in copy.children { child.parent = copy }
        }
        return copies
    }

    /// The tree as ``OutlineNote``s, to compare with `expectSameTree`.
    static func outline(_ notes: [CodableOutlineNote]) -> [OutlineNote] {
        let outlines = notes.map { OutlineNote($0.title, tags: $0.tags) }
        let index = Dictionary(uniqueKeysWithValues: notes.enumerated().map { (ObjectIdentifier($1), $0) })
        for (note, outline) in zip(notes, outlines) {
            outline.created = note.created
            outline.children = note.children.map { outlines[index[ObjectIdentifier($0)]!] }
            outline.parent = note.parent.map { outlines[index[ObjectIdentifier($0)]!] }
        }
        return outlines
    }
}

/// ``RandomNode`` through `Codable`: `owned` plain, `links` through `encodeLater`.
final class CodableRandomNode: Codable {
    let id: Int
    var owned: [CodableRandomNode] = []
    var links: [CodableRandomNode] = []

    init(id: Int) { self.id = id }

    enum CodingKeys: String, CodingKey { case id, owned, links }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(owned, forKey: .owned)
        try container.encodeLater(links, forKey: .links)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        owned = try container.decode([CodableRandomNode].self, forKey: .owned)
        try container.decodeLater([CodableRandomNode].self, forKey: .links) { [unowned self] in self.links = $0 }
    }
}

@Suite("Codable cycles in any order")
struct CodableCycleOrderTests {
    @Test func everyOrderOfAFourNoteTreeRoundTripsThroughTheBridge() throws {
        for order in permutations(fourNoteTree(parentLink: .later)) {
            let notes = CodableOutlineNote.copies(of: order)
            let data = try GraphArchiveEncoder().encode(notes)
            let back = try GraphArchiveDecoder().decode([CodableOutlineNote].self, from: data)
            expectSameTree(CodableOutlineNote.outline(back), order)
        }
    }

    /// One model through `GraphCoding`, the other through `Codable`, the same archive: each
    /// reads what the other wrote, in every order.
    @Test func everyOrderOfTheTreeReadsAcrossTheTwoAPIs() throws {
        var decoder = GraphArchiveDecoder()
        decoder.register(CodableOutlineNote.self, forName: "OutlineNote")
        var registry = GraphTypeRegistry()
        registry.register(OutlineNote.self, forName: "CodableOutlineNote")
        for order in permutations(fourNoteTree(parentLink: .conditional)) {
            let engineArchive = try GraphArchiver.archivedData(withRootObject: order)
            let bridged = try decoder.decode([CodableOutlineNote].self, from: engineArchive)
            expectSameTree(CodableOutlineNote.outline(bridged), order)

            let bridgeArchive = try GraphArchiveEncoder().encode(CodableOutlineNote.copies(of: order))
            let back = try GraphUnarchiver.unarchivedObject(
                ofType: [OutlineNote].self,
                from: bridgeArchive,
                registry: registry
            )
            expectSameTree(back, order)
        }
    }

    /// The random graphs of ``CycleOrderTests`` (plain references acyclic, back links
    /// anywhere) through the bridge, in random root orders.
    @Test(arguments: 0..<200)
    func randomGraphsRoundTripThroughTheBridge(seed: UInt64) throws {
        let (nodes, roots) = randomGraphAndRoots(seed: seed)
        defer { breakCycles(nodes) }
        // The bridge's model has no pair and no conditional link: drop them from the source.
        for node in nodes {
            node.pair = NodePair()
            node.watched = nil
        }
        let copies = nodes.map { CodableRandomNode(id: $0.id) }
        for (node, copy) in zip(nodes, copies) {
            copy.owned = node.owned.map { copies[$0.id] }
            copy.links = node.links.map { copies[$0.id] }
        }
        defer { for node in copies { node.links = [] } }
        let data = try GraphArchiveEncoder().encode(roots.map { copies[$0.id] })
        let back = try GraphArchiveDecoder().decode([CodableRandomNode].self, from: data)
        defer { breakCodableCycles(back) }
        // Compared through the engine's model: the same archive read by GraphUnarchiver.
        var registry = GraphTypeRegistry()
        registry.register(RandomNode.self, forName: "CodableRandomNode")
        let asEngineNodes = try GraphUnarchiver.unarchivedObject(
            ofType: [RandomNode].self,
            from: data,
            registry: registry
        )
        defer { breakCycles(asEngineNodes) }
        try expectSameGraph(asEngineNodes, roots)
        #expect(back.map(\.id) == roots.map(\.id))
        for (node, copy) in zip(roots, back) {
            #expect(copy.owned.map(\.id) == node.owned.map(\.id))
            #expect(copy.links.map(\.id) == node.links.map(\.id))
        }
    }
}

/// Empties every Codable node's references, so the graph's cycles do not leak.
func breakCodableCycles(_ nodes: [CodableRandomNode]) {
    var pending = nodes
    var seen = Set<ObjectIdentifier>()
    while let node = pending.popLast() {
        guard seen.insert(ObjectIdentifier(node)).inserted else { continue }
        pending += node.owned + node.links
        node.owned = []
        node.links = []
    }
}
