// Tests/GraphArchiveTests/Codable/CodableCycleTests.swift - the Codable bridge's cycle opt-in: encodeLater / decodeLater (FORMAT.md §11.5)

import Foundation
import Testing

@testable import GraphArchive

@Suite("Codable cycles")
struct CodableCycleTests {
    // MARK: - Round trips

    @Test func treeParentsComeBackAsTheSameInstances() throws {
        let root = LaterTreeNode.make(depth: 3, fanOut: 3, name: "r")
        let data = try GraphArchiveEncoder().encode(root)
        let back = try GraphArchiveDecoder().decode(LaterTreeNode.self, from: data)
        #expect(back.parent == nil)
        #expect(back.allNodes.map(\.name) == root.allNodes.map(\.name))
        for node in back.allNodes {
            for child in node.children { #expect(child.parent === node) }
        }
        // 1 + 3 + 9 + 27 nodes, each written once; 39 child references and 39 parent ones.
        let info = try GraphUnarchiver.verify(data)
        #expect(info.objectCount == 40)
        #expect(info.referenceCount == 1 + 39 + 39)
        // The same graph writes the same bytes: the forward references are numbered exactly.
        #expect(try GraphArchiveEncoder().encode(back) == data)
    }

    @Test func twoObjectsReferringToEachOther() throws {
        let (a, _) = LaterPeer.pair()
        defer { a.partner = nil }
        let back = try GraphArchiveDecoder().decode(LaterPeer.self, from: GraphArchiveEncoder().encode(a))
        defer { back.partner = nil }
        let partner = try #require(back.partner)
        #expect(back.name == "a" && partner.name == "b")
        #expect(partner.partner === back)
        #expect(partner !== back)
    }

    @Test func anObjectQueuedByEncodeLaterAndThenReferencedPlainly() throws {
        // a's body meets b through encodeLater (queued), then the array refers to b plainly,
        // which needs b's body at once; b's own back reference finds a already written.
        let (a, b) = LaterPeer.pair()
        defer { a.partner = nil }
        let data = try GraphArchiveEncoder().encode([a, b, a])
        let back = try GraphArchiveDecoder().decode([LaterPeer].self, from: data)
        defer { back[0].partner = nil }
        #expect(back.map(\.name) == ["a", "b", "a"])
        #expect(back[0] === back[2] && back[0].partner === back[1] && back[1].partner === back[0])
        #expect(try GraphUnarchiver.verify(data).objectCount == 2)
    }

    @Test func anObjectReferringToItself() throws {
        let loop = LaterPeer(name: "loop")
        loop.partner = loop
        defer { loop.partner = nil }
        let data = try GraphArchiveEncoder().encode(loop)
        #expect(try GraphUnarchiver.verify(data).objectCount == 1)
        let back = try GraphArchiveDecoder().decode(LaterPeer.self, from: data)
        defer { back.partner = nil }
        #expect(back.partner === back)
    }

    @Test func nilAndAbsentBackReferences() throws {
        let alone = LaterPeer(name: "alone")
        let back = try GraphArchiveDecoder().decode(LaterPeer.self, from: GraphArchiveEncoder().encode(alone))
        #expect(back.name == "alone" && back.partner == nil)
        // decodeLater of a key that is not there is keyNotFound, at once, like decode.
        var decoder = GraphArchiveDecoder()
        decoder.register(LaterPeer.self, forName: "NoPartnerKey")
        #expect {
            _ = try decoder.decode(LaterPeer.self, from: GraphArchiveEncoder().encode(NoPartnerKey()))
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, _) = error else { return false }
            return key.stringValue == "partner"
        }
        // nil where the deferred type is not optional: valueNotFound when the assignment runs.
        decoder.register(StrictPeer.self, forName: "LaterPeer")
        #expect {
            _ = try decoder.decode(StrictPeer.self, from: GraphArchiveEncoder().encode(alone))
        } throws: { error in
            guard case DecodingError.valueNotFound(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["partner"]
        }
    }

    @Test func aLongDoublyLinkedListIsALoopBothWays() throws {
        // 100,000 nodes linked both ways through encodeLater/decodeLater: no recursion per node
        // in the encoder or the decoder (the default depth limit is 512).
        let count = 100_000
        let nodes = (0..<count).map { LaterListNode(value: $0) }
        for index in 1..<count {
            nodes[index - 1].next = nodes[index]
            nodes[index].previous = nodes[index - 1]
        }
        defer { LaterListNode.unlink(nodes[0]) }
        let data = try GraphArchiveEncoder().encode(nodes[0])
        let info = try GraphUnarchiver.verify(data)
        #expect(info.objectCount == count)
        #expect(info.referenceCount == 1 + 2 * (count - 1))
        let head = try GraphArchiveDecoder().decode(LaterListNode.self, from: data)
        defer { LaterListNode.unlink(head) }
        var walk: LaterListNode? = head
        var previous: LaterListNode?
        var seen = 0
        while let node = walk {
            guard node.value == seen, node.previous === previous else {
                Issue.record("node \(seen) is out of place: value \(node.value)")
                break
            }
            previous = node
            walk = node.next
            seen += 1
        }
        #expect(seen == count)
    }

    @Test func arraysOfBackReferences() throws {
        // Every node lists every node, itself included: packed reference arrays (FORMAT.md
        // §6.5) of forward and backward references, and an unkeyed container that turns into
        // a plain array at its nil after forward references.
        let nodes = (0..<4).map { MeshNode(id: $0) }
        for node in nodes {
            node.neighbors = nodes
            node.sparse = SparseReferences(nodes: [nodes[3], node, nil, nodes[0]])
        }
        defer { for node in nodes { node.neighbors = [] } }
        let data = try GraphArchiveEncoder().encode(nodes)
        #expect(try GraphUnarchiver.verify(data).objectCount == 4)
        let back = try GraphArchiveDecoder().decode([MeshNode].self, from: data)
        defer { for node in back { node.neighbors = [] } }
        #expect(back.map(\.id) == [0, 1, 2, 3])
        for node in back {
            #expect(node.neighbors.count == 4 && zip(node.neighbors, back).allSatisfy { $0 === $1 })
            let sparse = node.sparse.nodes
            #expect(sparse.count == 4 && sparse[0] === back[3] && sparse[1] === node)
            #expect(sparse[2] == nil && sparse[3] === back[0])
        }
        #expect(try GraphArchiveEncoder().encode(back) == data)
    }

    @Test func aRootValueWhoseObjectIsQueued() throws {
        // The root is a struct: its encodeLater queues a, so the top section itself holds a
        // forward reference, numbered like those in the object table.
        let (a, _) = LaterPeer.pair()
        defer { a.partner = nil }
        let box = PeerBox()
        box.peer = a
        let data = try GraphArchiveEncoder().encode(BoxedPeer(box: box))
        let back = try GraphArchiveDecoder().decode(BoxedPeer.self, from: data)
        let peer = try #require(back.box.peer)
        defer { peer.partner = nil }
        #expect(peer.name == "a" && peer.partner?.name == "b" && peer.partner?.partner === peer)
        #expect(try GraphArchiveEncoder().encode(back) == data)
    }

    @Test func zstdArchivesKeepTheForwardReferences() throws {
        guard ArchiveCompression.isZstdAvailable else { return }
        let root = LaterTreeNode.make(depth: 2, fanOut: 4, name: "z")
        let encoder = GraphArchiveEncoder(options: GraphArchiver.Options(compression: .zstd))
        let data = try encoder.encode(root)
        let back = try GraphArchiveDecoder().decode(LaterTreeNode.self, from: data)
        #expect(back.allNodes.count == 21)
        for node in back.allNodes {
            for child in node.children { #expect(child.parent === node) }
        }
    }

    @Test func deferredAssignmentsRunInRequestOrder() throws {
        // root's initializer decodes its children (each asks for its parent), then asks for
        // its own partner: the assignments run in that order, after the root value.
        let log = AssignmentLog()
        var decoder = GraphArchiveDecoder()
        decoder.userInfo[AssignmentLog.key] = log
        let root = LoggedNode(name: "root", children: [LoggedNode(name: "a"), LoggedNode(name: "b")])
        root.partner = root.children[1]
        let back = try decoder.decode(LoggedNode.self, from: GraphArchiveEncoder().encode(root))
        #expect(log.entries == ["a.parent", "b.parent", "root.partner"])
        #expect(back.partner === back.children[1])
    }

    // MARK: - Without the opt-in: unchanged

    @Test func aPlainBackReferenceIsStillAnEncodingErrorNamingBothPaths() throws {
        let root = PlainTreeNode(name: "r")
        let child = PlainTreeNode(name: "c")
        root.children = [child]
        child.parent = root
        #expect {
            _ = try GraphArchiveEncoder().encode(["top": root])
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["top", "children", "Index 0", "parent"]
                && context.debugDescription.contains("already being encoded at top")
                && context.debugDescription.contains("encodeLater")
        }
    }

    @Test func aCycleDecodedWithoutDecodeLaterIsUnresolvedCycle() throws {
        let (a, _) = LaterPeer.pair()
        defer { a.partner = nil }
        let data = try GraphArchiveEncoder().encode(a)
        // The same archive, read by a type that decodes the partner plainly.
        #expect {
            _ = try decode(PlainPeer.self, from: data, readingClass: "LaterPeer")
        } throws: { isDataCorrupted($0, because: .unresolvedCycle) }
    }

    @Test func plainlyLinkedListsStopAtTheDepthLimitWithAnError() throws {
        // `next` encoded plainly nests one object body per node: bounded, not a stack overflow.
        let nodes = (0..<600).map { PlainListNode(value: $0) }
        for index in 1..<nodes.count { nodes[index - 1].next = nodes[index] }
        defer { PlainListNode.unlink(nodes[0]) }
        #expect {
            _ = try GraphArchiveEncoder().encode(nodes[0])
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return (context.underlyingError as? GraphArchiveError)?.message.contains("maximumDepth") == true
        }
    }

    // MARK: - Errors

    @Test func aDeferredReferenceOfAnotherClassIsATypeMismatchWithItsPath() throws {
        let root = LaterTreeNode.make(depth: 1, fanOut: 2, name: "r")
        let data = try GraphArchiveEncoder().encode(root)
        #expect {
            _ = try decode(MismatchedTreeNode.self, from: data, readingClass: "LaterTreeNode")
        } throws: { isTypeMismatch($0, at: ["children", "Index 0", "parent"]) }
    }

    @Test func errorsInLaterBodiesNameTheWholePath() throws {
        // Node 3 is written from the queue, after node 2's body; its path still starts at the root.
        let nodes = (0..<5).map { LaterListNode(value: $0) }
        for index in 1..<nodes.count { nodes[index - 1].next = nodes[index] }
        nodes[3].failsToEncode = true
        defer { LaterListNode.unlink(nodes[0]) }
        #expect {
            _ = try GraphArchiveEncoder().encode(nodes[0])
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["next", "next", "next", "failure"]
        }
        // Decoding: node 2 is built by the assignment node 1 asked for, which node 0's built.
        nodes[3].failsToEncode = false
        let data = try GraphArchiveEncoder().encode(nodes[0])
        #expect {
            _ = try decode(PickyListNode.self, from: data, readingClass: "LaterListNode")
        } throws: { isTypeMismatch($0, at: ["next", "next", "value"]) }
    }

    @Test func anObjectThatFailsToDecodeLosesItsDeferredAssignments() throws {
        // `lost` asks for its partner later, then throws; the container's `try?` goes on. Its
        // assignment must not run: it would reach the freed instance through [unowned self].
        let kept = LaterPeer(name: "kept")
        let lost = LaterPeer(name: LaterPeer.refusedName)
        kept.partner = kept
        lost.partner = kept
        defer { kept.partner = nil }
        let back = try GraphArchiveDecoder().decode(
            LossyPair.self,
            from: GraphArchiveEncoder().encode(LossyPair(kept: kept, lost: lost))
        )
        defer { back.kept.partner = nil }
        #expect(back.lost == nil)
        #expect(back.kept.partner === back.kept)
    }

    @Test func otherEncodersAndDecodersRefuseClearly() throws {
        let peer = LaterPeer(name: "json")
        #expect {
            _ = try JSONEncoder().encode(peer)
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["partner"]
                && context.debugDescription.contains("needs GraphArchiveEncoder")
        }
        let json = Data(#"{"name": "json", "partner": null}"#.utf8)
        #expect {
            _ = try JSONDecoder().decode(LaterPeer.self, from: json)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["partner"]
                && context.debugDescription.contains("needs GraphArchiveDecoder")
        }
        // Even with the key missing, the decoder is what is reported.
        #expect {
            _ = try JSONDecoder().decode(LaterPeer.self, from: Data(#"{"name": "json"}"#.utf8))
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains("needs GraphArchiveDecoder")
        }
    }

    @Test func handBuiltForwardCyclesNeedDecodeLaterAndValidIndexes() throws {
        // Object 0 refers forward to object 1, which refers back to object 0 (FORMAT.md §5.4).
        let ring = Self.peerArchive(partnerOf0: 1, partnerOf1: 0)
        #expect {
            _ = try decode(PlainPeer.self, from: ring.data, readingClass: "LaterPeer")
        } throws: { isDataCorrupted($0, because: .unresolvedCycle) }
        let back = try GraphArchiveDecoder().decode(LaterPeer.self, from: ring.data)
        defer { back.partner = nil }
        #expect(back.name == "p0" && back.partner?.name == "p1" && back.partner?.partner === back)
        // A deferred reference past the last object: a clear error when it is asked for.
        let past = Self.peerArchive(partnerOf0: 1, partnerOf1: 7)
        #expect {
            _ = try GraphArchiveDecoder().decode(LaterPeer.self, from: past.data)
        } throws: { isDataCorrupted($0, because: .badObjectReference) }
    }

    /// Two `LaterPeer` objects ("p0", "p1") with the given partner indexes; the root is object 0.
    static func peerArchive(partnerOf0: UInt8, partnerOf1: UInt8) -> HandBuiltArchive {
        let payload =
            varint(3) + name("root") + name("name") + name("partner")  // key table
            + varint(1) + [TypeKind.object] + name("LaterPeer")  // type table: one object type
            + varint(1) + varint(0) + varint(2) + varint(1) + varint(2)  // shape 0: type 0, keys name, partner
            + varint(1) + varint(0) + [ValueTag.objectReference, 0]  // top: "root" → object 0
            + varint(0) + shortString("p0") + [ValueTag.objectReference, partnerOf0]  // object 0
            + varint(0) + shortString("p1") + [ValueTag.objectReference, partnerOf1]  // object 1
        return HandBuiltArchive(payload, typeCount: 1, objectCount: 2, referenceCount: 3)
    }

    // MARK: - Interoperating with GraphCoding (FORMAT.md §11.4)

    @Test func bridgeCyclesReadThroughGraphUnarchiverDecodeLater() throws {
        let root = LaterTreeNode.make(depth: 2, fanOut: 3, name: "r")
        let data = try GraphArchiveEncoder().encode(root)
        var registry = GraphTypeRegistry()
        registry.register(EngineTreeNode.self, forName: "LaterTreeNode")
        let back = try GraphUnarchiver.unarchivedObject(ofType: EngineTreeNode.self, from: data, registry: registry)
        var count = 0
        var pending = [back]
        while let node = pending.popLast() {
            count += 1
            for child in node.children {
                #expect(child.parent === node)
                pending.append(child)
            }
        }
        #expect(count == 13)
        #expect(back.parent == nil && back.name == "r")
    }

    @Test func engineCyclesReadThroughTheBridgeDecodeLater() throws {
        let ring = Node(1)
        let other = Node(2)
        ring.next = other
        other.next = ring
        defer { ring.next = nil }
        let data = try GraphArchiver.archivedData(withRootObject: ring)
        let back = try decode(LaterEngineNode.self, from: data, readingClass: "Node")
        defer { back.next = nil }
        #expect(back.label == 1 && back.next?.label == 2 && back.next?.next === back)
    }
}

// MARK: - Helpers

/// Decodes archive `data` as `type`, whose objects are built from records of class `name`.
func decode<T: AnyObject & Decodable>(_ type: T.Type, from data: Data, readingClass name: String) throws -> T {
    var decoder = GraphArchiveDecoder()
    decoder.register(T.self, forName: name)
    return try decoder.decode(T.self, from: data)
}

/// Whether `error` is a `DecodingError.typeMismatch` at `path`.
func isTypeMismatch(_ error: any Error, at path: [String]) -> Bool {
    guard case DecodingError.typeMismatch(_, let context) = error else { return false }
    return context.codingPath.map(\.stringValue) == path
}

/// Whether `error` is a `DecodingError.dataCorrupted` with an engine error of `code` underneath.
func isDataCorrupted(_ error: any Error, because code: GraphArchiveError.Code) -> Bool {
    guard case DecodingError.dataCorrupted(let context) = error else { return false }
    return (context.underlyingError as? GraphArchiveError)?.code == code
}

// MARK: - Models

/// A tree whose children hold a weak back reference to their parent.
final class LaterTreeNode: Codable {
    let name: String
    var children: [LaterTreeNode] = []
    weak var parent: LaterTreeNode?

    init(name: String) { self.name = name }

    static func make(depth: Int, fanOut: Int, name: String) -> LaterTreeNode {
        let node = LaterTreeNode(name: name)
        if depth > 0 {
            node.children = (0..<fanOut).map { make(depth: depth - 1, fanOut: fanOut, name: "\(name).\($0)") }
            for child in node.children { child.parent = node }
        }
        return node
    }

    /// Every node, depth first, parents before children.
    var allNodes: [LaterTreeNode] {
        [self] + children.flatMap(\.allNodes)
    }

    enum CodingKeys: String, CodingKey { case name, children, parent }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(children, forKey: .children)
        try container.encodeLater(parent, forKey: .parent)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        children = try container.decode([LaterTreeNode].self, forKey: .children)
        try container.decodeLater(LaterTreeNode?.self, forKey: .parent) { [unowned self] in self.parent = $0 }
    }
}

/// A node of a graph whose edges are arrays of references, any of them closing cycles.
final class MeshNode: Codable {
    let id: Int
    var neighbors: [MeshNode] = []
    var sparse = SparseReferences(nodes: [])

    init(id: Int) { self.id = id }

    enum CodingKeys: String, CodingKey { case id, neighbors, sparse }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encodeLater(neighbors, forKey: .neighbors)
        try container.encodeLater(sparse, forKey: .sparse)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        try container.decodeLater([MeshNode].self, forKey: .neighbors) { [unowned self] in self.neighbors = $0 }
        try container.decodeLater(SparseReferences.self, forKey: .sparse) { [unowned self] in self.sparse = $0 }
    }
}

/// References and nils in one unkeyed container, written element by element.
struct SparseReferences: Codable {
    var nodes: [MeshNode?]

    init(nodes: [MeshNode?]) { self.nodes = nodes }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for node in nodes {
            if let node { try container.encode(node) } else { try container.encodeNil() }
        }
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        nodes = []
        while !container.isAtEnd {
            nodes.append(try container.decodeNil() ? nil : container.decode(MeshNode.self))
        }
    }
}

/// Reads a `LaterTreeNode` archive, but asks for the parent as another class.
final class MismatchedTreeNode: Decodable {
    var children: [MismatchedTreeNode] = []
    var parent: LaterPeer?

    enum CodingKeys: String, CodingKey { case children, parent }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        children = try container.decode([MismatchedTreeNode].self, forKey: .children)
        try container.decodeLater(LaterPeer?.self, forKey: .parent) { [unowned self] in self.parent = $0 }
    }
}

/// The same tree without the opt-in: its back reference is a plain `encode`.
final class PlainTreeNode: Encodable {
    let name: String
    var children: [PlainTreeNode] = []
    weak var parent: PlainTreeNode?

    init(name: String) { self.name = name }

    enum CodingKeys: String, CodingKey { case name, children, parent }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(children, forKey: .children)
        try container.encode(parent, forKey: .parent)
    }
}

/// One object pointing at another (or itself) through encodeLater / decodeLater.
final class LaterPeer: Codable {
    let name: String
    var partner: LaterPeer?

    init(name: String) { self.name = name }

    /// "a" and "b", each the other's partner (a strong cycle: set `a.partner` to nil after use).
    static func pair() -> (LaterPeer, LaterPeer) {
        let a = LaterPeer(name: "a")
        let b = LaterPeer(name: "b")
        a.partner = b
        b.partner = a
        return (a, b)
    }

    enum CodingKeys: String, CodingKey { case name, partner }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encodeLater(partner, forKey: .partner)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        try container.decodeLater(LaterPeer?.self, forKey: .partner) { [unowned self] in self.partner = $0 }
        if name == Self.refusedName {
            throw DecodingError.dataCorruptedError(forKey: .name, in: container, debugDescription: "refused")
        }
    }

    /// A peer of this name throws after asking for its partner.
    static let refusedName = "refused"
}

/// Holds what a struct's deferred assignment assigns (a struct cannot capture itself).
final class PeerBox {
    var peer: LaterPeer?
}

/// A value that refers to an object through encodeLater / decodeLater.
struct BoxedPeer: Codable {
    let box: PeerBox

    init(box: PeerBox) { self.box = box }

    enum CodingKeys: String, CodingKey { case peer }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeLater(box.peer, forKey: .peer)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let box = PeerBox()
        self.box = box
        try container.decodeLater(LaterPeer?.self, forKey: .peer) { box.peer = $0 }
    }
}

/// Reads `LaterPeer` archives with a plain decode of the partner.
final class PlainPeer: Decodable {
    let name: String
    let partner: PlainPeer?
}

/// Reads `LaterPeer` archives, requiring a partner.
final class StrictPeer: Decodable {
    var partner: StrictPeer?

    enum CodingKeys: String, CodingKey { case partner }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try container.decodeLater(StrictPeer.self, forKey: .partner) { [unowned self] in self.partner = $0 }
    }
}

/// A `LaterPeer`-shaped object without the partner key.
final class NoPartnerKey: Encodable {
    let name = "none"
}

/// Keeps what decodes and drops what does not, as lossy Codable models do.
struct LossyPair: Codable {
    var kept: LaterPeer
    var lost: LaterPeer?

    init(kept: LaterPeer, lost: LaterPeer?) {
        self.kept = kept
        self.lost = lost
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kept = try container.decode(LaterPeer.self, forKey: .kept)
        lost = try? container.decode(LaterPeer.self, forKey: .lost)
    }
}

/// A doubly linked list node whose links both go through encodeLater / decodeLater.
final class LaterListNode: Codable {
    let value: Int
    var next: LaterListNode?
    weak var previous: LaterListNode?
    /// Makes `encode(to:)` throw an error at its own coding path.
    var failsToEncode = false

    init(value: Int) { self.value = value }

    enum CodingKeys: String, CodingKey { case value, next, previous, failure }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        if failsToEncode { try container.encode(Unencodable(), forKey: .failure) }
        try container.encodeLater(next, forKey: .next)
        try container.encodeLater(previous, forKey: .previous)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        try container.decodeLater(LaterListNode?.self, forKey: .next) { [unowned self] in self.next = $0 }
        try container.decodeLater(LaterListNode?.self, forKey: .previous) { [unowned self] in self.previous = $0 }
    }

    /// Releases a list one node at a time: releasing its head would free it recursively.
    static func unlink(_ head: LaterListNode) {
        var nodes: [LaterListNode] = []
        var walk: LaterListNode? = head
        while let node = walk {
            nodes.append(node)
            walk = node.next
        }
        for node in nodes { node.next = nil }
    }
}

/// Reads `LaterListNode` archives, but asks for value 2 as a String: a type mismatch there.
final class PickyListNode: Decodable {
    let value: String
    var next: PickyListNode?

    enum CodingKeys: String, CodingKey { case value, next }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let stored = try container.decode(Int.self, forKey: .value)
        value = stored == 2 ? try container.decode(String.self, forKey: .value) : String(stored)
        try container.decodeLater(PickyListNode?.self, forKey: .next) { [unowned self] in self.next = $0 }
    }
}

/// A value whose `encode(to:)` throws an error at its coding path.
struct Unencodable: Encodable {
    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            0,
            EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "no")
        )
    }
}

/// A singly linked list whose `next` is a plain `encode`: one nested body per node.
final class PlainListNode: Encodable {
    let value: Int
    var next: PlainListNode?

    init(value: Int) { self.value = value }

    static func unlink(_ head: PlainListNode) {
        var nodes: [PlainListNode] = []
        var walk: PlainListNode? = head
        while let node = walk {
            nodes.append(node)
            walk = node.next
        }
        for node in nodes { node.next = nil }
    }
}

/// Records the order in which deferred assignments run.
final class AssignmentLog: @unchecked Sendable {
    // @unchecked: used by one decode on one thread.
    static let key = CodingUserInfoKey(rawValue: "assignmentLog")!
    var entries: [String] = []
}

final class LoggedNode: Codable {
    let name: String
    var children: [LoggedNode]
    weak var parent: LoggedNode?
    weak var partner: LoggedNode?

    init(name: String, children: [LoggedNode] = []) {
        self.name = name
        self.children = children
        for child in children { child.parent = self }
    }

    enum CodingKeys: String, CodingKey { case name, children, parent, partner }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(children, forKey: .children)
        try container.encodeLater(parent, forKey: .parent)
        try container.encodeLater(partner, forKey: .partner)
    }

    init(from decoder: any Decoder) throws {
        let log = decoder.userInfo[AssignmentLog.key] as! AssignmentLog
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        children = try container.decode([LoggedNode].self, forKey: .children)
        let name = self.name
        if try !container.decodeNil(forKey: .parent) {
            try container.decodeLater(LoggedNode.self, forKey: .parent) { [unowned self] in
                log.entries.append("\(name).parent")
                self.parent = $0
            }
        }
        if try !container.decodeNil(forKey: .partner) {
            try container.decodeLater(LoggedNode.self, forKey: .partner) { [unowned self] in
                log.entries.append("\(name).partner")
                self.partner = $0
            }
        }
    }
}

/// The engine's view of `LaterTreeNode`: the parent, which points forward, decodes later.
final class EngineTreeNode: GraphCoding {
    let name: String
    let children: [EngineTreeNode]
    weak var parent: EngineTreeNode?

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(name, forKey: "name")
        try archiver.encode(children, forKey: "children")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        name = try unarchiver.decode(String.self, forKey: "name")
        children = try unarchiver.decode([EngineTreeNode].self, forKey: "children")
        try unarchiver.decodeLater(EngineTreeNode?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
    }
}

/// Reads the engine's `Node` archives (keys "label", "next") through the bridge, with decodeLater.
final class LaterEngineNode: Decodable {
    let label: Int
    var next: LaterEngineNode?

    enum CodingKeys: String, CodingKey { case label, next }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        label = try container.decode(Int.self, forKey: .label)
        try container.decodeLater(LaterEngineNode?.self, forKey: .next) { [unowned self] in self.next = $0 }
    }
}
