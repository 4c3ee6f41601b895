// Tests/GraphArchiveTests/Archiving/CycleOrderTests.swift - cycles decode whatever order the graph is reached in (FORMAT.md §5.4, §7)

import Foundation
import Testing

@testable import GraphArchive

/// How a note writes its link to its parent.
enum ParentLink {
    /// `encodeConditionalObject`, NSCoding's way for a `weak` reference.
    case conditional
    /// `encodeLater`.
    case later
    /// `encode`: a plain reference, which makes every parent/child pair a cycle of plain references.
    case plain
}

/// A note as a new user writes one: a title, tags, a date, the children it owns and a weak
/// link to its parent, the back link.
final class OutlineNote: GraphCoding {
    var title: String
    var tags: [String]
    var created: Date
    var children: [OutlineNote] = []
    weak var parent: OutlineNote?
    /// How `encode(with:)` writes `parent`; not archived.
    var parentLink = ParentLink.conditional

    init(_ title: String, tags: [String] = [], parentLink: ParentLink = .conditional) {
        self.title = title
        self.tags = tags
        self.created = Date(timeIntervalSinceReferenceDate: Double(title.utf8.count) * 1000)
        self.parentLink = parentLink
    }

    func adopt(_ children: [OutlineNote]) {
        self.children = children
        for child in children { child.parent = self }
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(title, forKey: "title")
        try archiver.encode(tags, forKey: "tags")
        try archiver.encode(created, forKey: "created")
        try archiver.encode(children, forKey: "children")
        switch parentLink {
        case .conditional: try archiver.encodeConditionalObject(parent, forKey: "parent")
        case .later: try archiver.encodeLater(parent, forKey: "parent")
        case .plain: try archiver.encode(parent, forKey: "parent")
        }
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        title = try unarchiver.decode(String.self, forKey: "title")
        tags = try unarchiver.decode([String].self, forKey: "tags")
        created = try unarchiver.decode(Date.self, forKey: "created")
        children = try unarchiver.decode([OutlineNote].self, forKey: "children")
        try unarchiver.decodeLater(OutlineNote?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
    }
}

/// A node of a random graph: `owned` are plain references (the generator keeps them acyclic),
/// `links` and `pair` back links written with `encodeLater`, `watched` a conditional one.
final class RandomNode: GraphCoding {
    let id: Int
    var owned: [RandomNode] = []
    var links: [RandomNode] = []
    var pair = NodePair()
    weak var watched: RandomNode?

    init(id: Int) { self.id = id }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(id, forKey: "id")
        try archiver.encode(owned, forKey: "owned")
        try archiver.encodeLater(links, forKey: "links")
        try archiver.encodeLater(pair, forKey: "pair")
        try archiver.encodeConditionalObject(watched, forKey: "watched")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        id = try unarchiver.decode(Int.self, forKey: "id")
        // Plain references always point back: decoded at once.
        owned = try unarchiver.decode([RandomNode].self, forKey: "owned")
        try unarchiver.decodeLater([RandomNode].self, forKey: "links") { [unowned self] in self.links = $0 }
        // Optional: the Codable bridge's model of the same graph has neither.
        if unarchiver.containsValue(forKey: "pair") {
            try unarchiver.decodeLater(NodePair.self, forKey: "pair") { [unowned self] in self.pair = $0 }
        }
        if unarchiver.containsValue(forKey: "watched") {
            try unarchiver.decodeLater(RandomNode?.self, forKey: "watched") { [unowned self] in self.watched = $0 }
        }
    }

    /// Every reference this node holds, for walking a graph.
    var references: [RandomNode] {
        owned + links + [pair.first, pair.second, watched].compactMap { $0 }
    }
}

/// A struct holding references: written with `encodeLater`, both are back links.
struct NodePair: GraphCoding {
    var first: RandomNode?
    var second: RandomNode?

    init() {}

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(first, forKey: "first")
        try archiver.encode(second, forKey: "second")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        first = try unarchiver.decode(RandomNode?.self, forKey: "first")
        second = try unarchiver.decode(RandomNode?.self, forKey: "second")
    }
}

/// A doubly linked list node: `next` plain, `previous` the back link.
final class ListNode: GraphCoding {
    let value: Int
    var next: ListNode?
    weak var previous: ListNode?

    init(_ value: Int) { self.value = value }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(value, forKey: "value")
        try archiver.encode(next, forKey: "next")
        try archiver.encodeConditionalObject(previous, forKey: "previous")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        value = try unarchiver.decode(Int.self, forKey: "value")
        next = try unarchiver.decode(ListNode?.self, forKey: "next")
        try unarchiver.decodeLater(ListNode?.self, forKey: "previous") { [unowned self] in self.previous = $0 }
    }
}

/// A node of a ring whose only reference is its back link to the next node (strong: the
/// ring owns itself, and a test breaks it after).
final class BackLinkRingNode: GraphCoding {
    let value: Int
    var next: BackLinkRingNode?

    init(_ value: Int) { self.value = value }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(value, forKey: "value")
        try archiver.encodeLater(next, forKey: "next")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        value = try unarchiver.decode(Int.self, forKey: "value")
        try unarchiver.decodeLater(BackLinkRingNode?.self, forKey: "next") { (node: BackLinkRingNode, next) in
            node.next = next
        }
    }
}

/// A small seeded generator (SplitMix64), so a failing seed can be run again.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Every ordering of `elements`.
func permutations<Element>(_ elements: [Element]) -> [[Element]] {
    guard elements.count > 1 else { return [elements] }
    var result: [[Element]] = []
    for index in elements.indices {
        var rest = elements
        let first = rest.remove(at: index)
        for tail in permutations(rest) { result.append([first] + tail) }
    }
    return result
}

/// A four-note tree: `root` owns `a` and `b`, `a` owns `c`; each child's parent link is weak.
func fourNoteTree(parentLink: ParentLink) -> [OutlineNote] {
    let root = OutlineNote("root", tags: ["top"], parentLink: parentLink)
    let a = OutlineNote("a", tags: ["x", "y"], parentLink: parentLink)
    let b = OutlineNote("b", parentLink: parentLink)
    let c = OutlineNote("c", tags: ["leaf"], parentLink: parentLink)
    root.adopt([a, b])
    a.adopt([c])
    return [root, a, b, c]
}

/// Checks that `decoded` is `original`, node for node: titles, tags, dates, children and
/// parents, with every note one instance (`===`) wherever it is reached.
func expectSameTree(
    _ decoded: [OutlineNote],
    _ original: [OutlineNote],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(decoded.map(\.title) == original.map(\.title), sourceLocation: sourceLocation)
    let byTitle = Dictionary(uniqueKeysWithValues: decoded.map { ($0.title, $0) })
    #expect(byTitle.count == original.count, sourceLocation: sourceLocation)
    for source in original {
        guard let note = byTitle[source.title] else { continue }
        #expect(note.tags == source.tags && note.created == source.created, sourceLocation: sourceLocation)
        #expect(note.children.map(\.title) == source.children.map(\.title), sourceLocation: sourceLocation)
        #expect(note.children.allSatisfy { $0 === byTitle[$0.title] }, sourceLocation: sourceLocation)
        #expect(note.children.allSatisfy { $0.parent === note }, sourceLocation: sourceLocation)
        #expect(note.parent?.title == source.parent?.title, sourceLocation: sourceLocation)
        #expect(note.parent.map { $0 === byTitle[$0.title] } ?? true, sourceLocation: sourceLocation)
    }
}

@Suite("Cycles in any order")
struct CycleOrderTests {
    /// The NSCoding way (children plain, the weak parent conditional and read with
    /// decodeLater) round-trips in all 24 orders of a four-note tree in the root array, as
    /// does `encodeLater` for the parent.
    @Test(arguments: [ParentLink.conditional, .later])
    func everyOrderOfAFourNoteTreeRoundTrips(parentLink: ParentLink) throws {
        let tree = fourNoteTree(parentLink: parentLink)
        for order in permutations(tree) {
            let data = try GraphArchiver.archivedData(withRootObject: order)
            _ = try GraphUnarchiver.verify(data)  // the header counts the references verify counts
            let back = try GraphUnarchiver.unarchivedObject(ofType: [OutlineNote].self, from: data)
            expectSameTree(back, order)
        }
    }

    /// A wide tree of 1,000 notes whose parent links are written with `encodeLater`: bodies
    /// met breadth first, in index order, their back links written while many objects are
    /// still queued, then copied children first by the reordering. Every note comes back in
    /// its place.
    @Test func wideTreeWithParentLinksRoundTrips() throws {
        let notes = (0..<1000).map {
            OutlineNote("note \($0)", tags: $0 % 7 == 0 ? ["seventh"] : [], parentLink: .later)
        }
        for (index, note) in notes.enumerated() {
            note.adopt(Array(notes[min(notes.count, index * 4 + 1)..<min(notes.count, index * 4 + 5)]))
        }
        let data = try GraphArchiver.archivedData(withRootObject: notes[0])
        let root = try GraphUnarchiver.unarchivedObject(ofType: OutlineNote.self, from: data)
        // Breadth first, as `notes` lists them.
        var decoded = [root]
        var next = 0
        while next < decoded.count {
            decoded.append(contentsOf: decoded[next].children)
            next += 1
        }
        expectSameTree(decoded, notes)
    }

    /// A conditional parent link archives nothing by itself: a subtree archived alone comes
    /// back without its parent.
    @Test func subtreeArchivedAloneComesBackWithoutItsParent() throws {
        let tree = fourNoteTree(parentLink: .conditional)
        for root in tree {
            let back = try GraphUnarchiver.unarchivedObject(
                ofType: OutlineNote.self,
                from: GraphArchiver.archivedData(withRootObject: root)
            )
            #expect(back.title == root.title && back.parent == nil)
            #expect(back.children.map(\.title) == root.children.map(\.title))
        }
    }

    /// A cycle of plain references has no construction order: encoding says which references
    /// form it and how to mark the back link, instead of writing an archive that decodes in
    /// some orders only.
    @Test func plainParentLinkIsAnEncodingErrorNamingTheCycle() throws {
        let tree = fourNoteTree(parentLink: .plain)
        for order in [tree, tree.reversed()] {
            let error = expectArchiveError(.unresolvedCycle) {
                _ = try GraphArchiver.archivedData(withRootObject: Array(order))
            }
            let message = error?.message ?? ""
            #expect(
                message.contains("OutlineNote.children → OutlineNote.parent → the first OutlineNote")
                    || message.contains("OutlineNote.parent → OutlineNote.children → the first OutlineNote"),
                "\(message)"
            )
            #expect(message.contains("encodeConditionalObject(_:forKey:)") && message.contains("decodeLater"))
        }
    }

    @Test func plainSelfReferenceIsAnEncodingError() throws {
        let note = OutlineNote("alone", parentLink: .plain)
        note.children = [note]
        defer { note.children = [] }
        let error = expectArchiveError(.unresolvedCycle) { _ = try GraphArchiver.archivedData(withRootObject: note) }
        #expect(
            error?.message.contains("OutlineNote.children → the same OutlineNote") == true,
            "\(String(describing: error))"
        )
    }

    /// A long cycle is named by its ends, not by a thousand steps.
    @Test func longPlainCycleIsNamedByItsEnds() throws {
        let nodes = (0..<1000).map { RandomNode(id: $0) }
        for (index, node) in nodes.enumerated() { node.owned = [nodes[(index + 1) % nodes.count]] }
        defer { for node in nodes { node.owned = [] } }
        let error = expectArchiveError(.unresolvedCycle) {
            _ = try GraphArchiver.archivedData(withRootObject: nodes[0])
        }
        let message = error?.message ?? ""
        #expect(message.contains("… 994 more references …"), "\(message)")
        #expect(message.count < 600)
    }

    /// Random graphs whose plain references are acyclic and whose back links make any cycles,
    /// in random root orders: every node comes back once, with its references, and plain
    /// references are decoded at once (they always point back).
    @Test(arguments: 0..<400)
    func randomGraphsWithCyclesRoundTripInAnyRootOrder(seed: UInt64) throws {
        let (nodes, roots) = randomGraphAndRoots(seed: seed)
        defer { breakCycles(nodes) }
        let compression: ArchiveCompression =
            seed % 4 == 0 && ArchiveCompression.isZstdAvailable ? .zstd(level: 1) : .none
        let data = try GraphArchiver.archivedData(withRootObject: roots, options: .init(compression: compression))
        // Conditional and later references are counted in the header as verify counts them.
        _ = try GraphUnarchiver.verify(data)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [RandomNode].self, from: data)
        defer { breakCycles(back) }
        try expectSameGraph(back, roots)
    }

    /// Thousands of flat nodes first, whose bodies go into compressed blocks as they are
    /// written, then a cyclic part, reached in another order: the bodies in blocks keep their
    /// numbers and the rest is ordered after them.
    @Test(arguments: [false, true])
    func cyclesAfterBodiesInCompressedBlocks(compressed: Bool) throws {
        var random = SeededGenerator(seed: 99)
        let flat = (0..<20_000).map { RandomNode(id: 1_000_000 + $0) }
        let cyclic = makeRandomGraph(nodeCount: 300, using: &random)
        defer { breakCycles(cyclic) }
        let roots = flat + cyclic.shuffled(using: &random)
        let options = GraphArchiver.Options(
            compression: compressed && ArchiveCompression.isZstdAvailable ? .zstd(level: 1) : .none
        )
        let data = try GraphArchiver.archivedData(withRootObject: roots, options: options)
        // Conditional and later references are counted in the header as verify counts them.
        _ = try GraphUnarchiver.verify(data)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [RandomNode].self, from: data)
        defer { breakCycles(back) }
        try expectSameGraph(back, roots)
    }

    /// A ring of back links, each body making exactly one reference, the last one back to the
    /// first: bodies in index order that need ordering, with no table of where each body's
    /// references start. Every node comes back once, linked to the same next node.
    @Test(arguments: [1, 2, 3, 1000])
    func ringOfBackLinksOneEachRoundTrips(count: Int) throws {
        let ring = (0..<count).map(BackLinkRingNode.init)
        for (index, node) in ring.enumerated() { node.next = ring[(index + 1) % count] }
        defer { for node in ring { node.next = nil } }
        let data = try GraphArchiver.archivedData(withRootObject: ring[0])
        _ = try GraphUnarchiver.verify(data)
        let first = try GraphUnarchiver.unarchivedObject(ofType: BackLinkRingNode.self, from: data)
        var back = [first]
        while let next = back[back.count - 1].next, next !== first, back.count <= count { back.append(next) }
        defer { for node in back { node.next = nil } }
        #expect(back.map(\.value) == Array(0..<count))
        #expect(back[back.count - 1].next === first)
        #expect(Set(back.map(ObjectIdentifier.init)).count == count)
    }

    /// A doubly linked list of a million nodes, `next` plain and `previous` conditional,
    /// reached from its tail first: one cycle of a million back links, ordered and decoded
    /// without recursion.
    @Test func millionNodeDoublyLinkedListFromEitherEnd() throws {
        let count = 1_000_000
        let nodes = (0..<count).map(ListNode.init)
        for index in 1..<count {
            nodes[index - 1].next = nodes[index]
            nodes[index].previous = nodes[index - 1]
        }
        defer { dismantleList(nodes[0]) }
        let data = try GraphArchiver.archivedData(withRootObject: [nodes[count - 1], nodes[0]])
        let back = try GraphUnarchiver.unarchivedObject(ofType: [ListNode].self, from: data)
        defer { dismantleList(back[1]) }
        #expect(back[0].value == count - 1 && back[1].value == 0)
        var walk: ListNode? = back[1]
        var previous: ListNode?
        var seen = 0
        while let node = walk {
            if node.value != seen || node.previous !== previous {
                Issue.record("node \(seen) decoded as \(node.value), or with the wrong previous node")
                break
            }
            previous = node
            walk = node.next
            seen += 1
        }
        #expect(seen == count && previous === back[0])
    }
}

/// A random graph of up to 24 nodes and a random root array: some of its nodes, some repeated,
/// in random order.
func randomGraphAndRoots(seed: UInt64) -> (nodes: [RandomNode], roots: [RandomNode]) {
    var random = SeededGenerator(seed: seed)
    let nodes = makeRandomGraph(nodeCount: Int.random(in: 1...24, using: &random), using: &random)
    let roots = (0..<Int.random(in: 1...nodes.count, using: &random)).map { _ in nodes.randomElement(using: &random)! }
    return (nodes, roots)
}

/// `nodeCount` nodes: plain `owned` references only to nodes of a lower rank (a hidden random
/// order, so the plain graph is acyclic), back links and conditional links anywhere (self
/// included), so cycles go through back links only.
func makeRandomGraph(nodeCount: Int, using random: inout SeededGenerator) -> [RandomNode] {
    let nodes = (0..<nodeCount).map { RandomNode(id: $0) }
    let rank = Array(0..<nodeCount).shuffled(using: &random)
    for node in nodes {
        let lower = nodes.filter { rank[$0.id] < rank[node.id] }
        if !lower.isEmpty {
            node.owned = (0..<Int.random(in: 0...3, using: &random)).map { _ in lower.randomElement(using: &random)! }
        }
        node.links = (0..<Int.random(in: 0...2, using: &random)).map { _ in nodes.randomElement(using: &random)! }
        if Bool.random(using: &random) { node.pair.first = nodes.randomElement(using: &random) }
        if Int.random(in: 0..<4, using: &random) == 0 { node.pair.second = nodes.randomElement(using: &random) }
        if Bool.random(using: &random) { node.watched = nodes.randomElement(using: &random) }
    }
    return nodes
}

/// Checks that `decoded` is `original`: walked side by side from the roots, every original node
/// meets one decoded node (the same one every time, and a different one for each original)
/// with the same id and the same references. A conditional link to a node that nothing
/// archives unconditionally decodes as nil.
func expectSameGraph(
    _ decoded: [RandomNode],
    _ original: [RandomNode],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    // What the archive holds: everything reached from the roots by unconditional references.
    var archived = Set<ObjectIdentifier>()
    var pending = original
    while let node = pending.popLast() {
        guard archived.insert(ObjectIdentifier(node)).inserted else { continue }
        pending += node.owned + node.links + [node.pair.first, node.pair.second].compactMap { $0 }
    }
    try #require(decoded.count == original.count, sourceLocation: sourceLocation)
    var match: [ObjectIdentifier: RandomNode] = [:]
    var pairs = Array(zip(original, decoded))
    func expectReference(_ source: RandomNode?, _ copy: RandomNode?, _ what: String) {
        guard let source else {
            #expect(copy == nil, "\(what): expected nil", sourceLocation: sourceLocation)
            return
        }
        guard let copy else {
            Issue.record("\(what): node \(source.id) decoded as nil", sourceLocation: sourceLocation)
            return
        }
        pairs.append((source, copy))
    }
    while let pair = pairs.popLast() {
        let (source, copy) = pair
        if let known = match[ObjectIdentifier(source)] {
            #expect(known === copy, "node \(source.id) decoded as two instances", sourceLocation: sourceLocation)
            continue
        }
        match[ObjectIdentifier(source)] = copy
        #expect(copy.id == source.id, sourceLocation: sourceLocation)
        guard copy.owned.count == source.owned.count, copy.links.count == source.links.count else {
            Issue.record("node \(source.id) decoded with other reference counts", sourceLocation: sourceLocation)
            continue
        }
        for (a, b) in zip(source.owned, copy.owned) { expectReference(a, b, "node \(source.id).owned") }
        for (a, b) in zip(source.links, copy.links) { expectReference(a, b, "node \(source.id).links") }
        expectReference(source.pair.first, copy.pair.first, "node \(source.id).pair.first")
        expectReference(source.pair.second, copy.pair.second, "node \(source.id).pair.second")
        let watched = source.watched.flatMap { archived.contains(ObjectIdentifier($0)) ? $0 : nil }
        expectReference(watched, copy.watched, "node \(source.id).watched")
    }
    #expect(Set(match.values.map(ObjectIdentifier.init)).count == match.count, sourceLocation: sourceLocation)
}

/// Empties every node's references, so the graph's cycles do not leak.
func breakCycles(_ nodes: [RandomNode]) {
    var pending = nodes
    var seen = Set<ObjectIdentifier>()
    while let node = pending.popLast() {
        guard seen.insert(ObjectIdentifier(node)).inserted else { continue }
        pending += node.references
        node.owned = []
        node.links = []
        node.pair = NodePair()
    }
}

/// Cuts a list link by link: releasing its head would recurse once per node.
func dismantleList(_ head: ListNode) {
    var walk: ListNode? = head
    while let node = walk {
        walk = node.next
        node.next = nil
    }
}
