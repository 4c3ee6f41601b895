// Tests/GraphArchiveTests/Archiving/RoundTripTests.swift - values, sharing, cycles, deep graphs

import Foundation
import Testing

@testable import GraphArchive

@Suite("Round trips")
struct RoundTripTests {
    @Test func everyValueKindRoundTrips() throws {
        let value = Everything()
        let data = try GraphArchiver.archivedData(withRootObject: value)
        let back = try GraphUnarchiver.unarchivedObject(ofType: Everything.self, from: data)
        #expect(back == value)
        #expect(back.float.sign == .minus)
    }

    @Test func nanRoundTripsBitForBit() throws {
        let values: [Double] = [
            .nan, -.infinity, .leastNonzeroMagnitude, -0.0, .greatestFiniteMagnitude,
        ]
        let data = try GraphArchiver.archivedData(withRootObject: values)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Double].self, from: data)
        #expect(back.map(\.bitPattern) == values.map(\.bitPattern))
    }

    @Test func sharedInstancesComeBackIdentical() throws {
        let a = Record(name: "a", color: 1, date: "2024-01-01")
        let b = Record(name: "a", color: 1, date: "2024-01-01")  // equal to a, but distinct
        let data = try GraphArchiver.archivedData(withRootObject: [a, b, a, a, b])
        let info = try GraphUnarchiver.archiveInfo(from: data)
        #expect(info.objectCount == 2)
        #expect(info.referenceCount == 5)
        #expect(info.rootElementCount == 5)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data)
        #expect(back.count == 5)
        #expect(back[0] === back[2] && back[0] === back[3])
        #expect(back[1] === back[4])
        #expect(back[0] !== back[1])
    }

    @Test func selfReferenceRestored() throws {
        let node = Node(1)
        node.next = node
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: Node.self,
            from: GraphArchiver.archivedData(withRootObject: node)
        )
        #expect(back.next === back)
        back.next = nil
    }

    @Test func ringRestored() throws {
        let nodes = (0..<5).map(Node.init)
        for index in nodes.indices { nodes[index].next = nodes[(index + 1) % 5] }
        let data = try GraphArchiver.archivedData(withRootObject: nodes[2])
        let back = try GraphUnarchiver.unarchivedObject(ofType: Node.self, from: data)
        var walk = back
        var labels: [Int] = []
        for _ in 0..<5 {
            labels.append(walk.label)
            walk = walk.next!
        }
        #expect(labels == [2, 3, 4, 0, 1])
        #expect(walk === back)
        for node in nodes { node.next = nil }
        back.next = nil
    }

    @Test func parentChildCycleRestoredFromEitherEnd() throws {
        let parent = Node(0)
        let children = (1...3).map(Node.init)
        parent.children = children
        for child in children { child.parent = parent }
        for root in [parent, children[1]] {
            let back = try GraphUnarchiver.unarchivedObject(
                ofType: Node.self,
                from: GraphArchiver.archivedData(withRootObject: root)
            )
            let top = root === parent ? back : back.parent!
            #expect(top.label == 0)
            #expect(top.children.map(\.label) == [1, 2, 3])
            #expect(top.children.allSatisfy { $0.parent === top })
        }
    }

    @Test func plainDecodeOfCycleIsAClearError() throws {
        let first = Link(value: 1, next: nil)
        // A cycle through `let` references cannot be built; encode a Node ring, decode as Link.
        let ring = Node(1)
        ring.next = ring
        var registry = GraphTypeRegistry()
        registry.register(LinkAsNode.self, forName: "Node")
        let data = try GraphArchiver.archivedData(withRootObject: ring)
        #expect {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: LinkAsNode.self,
                from: data,
                registry: registry
            )
        } throws: { error in
            (error as? GraphArchiveError)?.code == .unresolvedCycle
        }
        ring.next = nil
        _ = first
    }

    @Test func millionLinkChainNeedsNoDeepStack() throws {
        var head: Link? = nil
        for value in 0..<1_000_000 { head = Link(value: value, next: head) }
        let data = try GraphArchiver.archivedData(withRootObject: head!)
        var back: Link? = try GraphUnarchiver.unarchivedObject(ofType: Link.self, from: data)
        var count = 0
        var walk: Link? = back
        var expected = 999_999
        while let link = walk {
            #expect(link.value == expected)
            if link.value != expected { break }
            expected -= 1
            count += 1
            walk = link.next
        }
        #expect(count == 1_000_000)
        // Release iteratively: a recursive deinit of a million links would overflow the stack.
        walk = nil
        dismantle(&head)
        dismantle(&back)
    }

    @Test func conditionalReferencesInBothOrders() throws {
        let friend = Node(0)
        let node = Node(1)
        node.buddy = friend
        // The buddy is never encoded unconditionally: nil.
        let alone = try GraphUnarchiver.unarchivedObject(
            ofType: Node.self,
            from: GraphArchiver.archivedData(withRootObject: node)
        )
        #expect(alone.buddy == nil)
        // Encoded unconditionally after the conditional reference.
        let after = try GraphUnarchiver.unarchivedObject(
            ofType: [Node].self,
            from: GraphArchiver.archivedData(withRootObject: [node, friend])
        )
        #expect(after[0].buddy === after[1])
        // Encoded unconditionally before it.
        let before = try GraphUnarchiver.unarchivedObject(
            ofType: [Node].self,
            from: GraphArchiver.archivedData(withRootObject: [friend, node])
        )
        #expect(before[1].buddy === before[0])
        // Only unconditional references count towards the shared-reference statistics.
        let info = try GraphUnarchiver.archiveInfo(
            from: GraphArchiver.archivedData(withRootObject: node)
        )
        #expect(info.objectCount == 1)
    }

    /// A long top-level array has its bodies written between runs of references: references
    /// that reach across those runs (forward, backward, conditional, to objects outside the
    /// array) must come back exactly as they were.
    @Test func longTopLevelArrayWithReferencesAcrossItsRuns() throws {
        let count = 10_000
        let nodes = (0..<count).map(Node.init)
        let outsiders = (0..<100).map { Node(-1 - $0) }
        var strangers: [Node] = []
        for (position, node) in nodes.enumerated() {
            node.next = nodes[(position * 7_919 + 4_099) % count]  // far ahead or far behind
            if position % 3 == 0 { node.parent = outsiders[position % outsiders.count] }
            if position % 5 == 0 { node.buddy = nodes[(position + 5_000) % count] }
            if position % 11 == 0 {  // a buddy outside the archive: not kept
                let stranger = Node(-10_000 - position)
                strangers.append(stranger)
                node.buddy = stranger
            }
        }
        let array = nodes + [nodes[9_999], nodes[0]]
        let data = try GraphArchiver.archivedData(withRootObject: array)
        let info = try GraphUnarchiver.archiveInfo(from: data)
        #expect(info.objectCount == count + outsiders.count)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Node].self, from: data)
        #expect(back.count == count + 2)
        #expect(back[count] === back[count - 1] && back[count + 1] === back[0])
        var parents: [Int: Node] = [:]
        for position in 0..<count {
            let node = back[position]
            #expect(node.label == position)
            #expect(node.next === back[(position * 7_919 + 4_099) % count])
            #expect((node.parent?.label) == (position % 3 == 0 ? -1 - position % outsiders.count : nil))
            if let parent = node.parent { #expect(parent === parents[parent.label, default: parent]) }
            parents[node.parent?.label ?? 0] = node.parent
            if position % 11 == 0 {
                #expect(node.buddy == nil)
            } else if position % 5 == 0 {
                #expect(node.buddy === back[(position + 5_000) % count])
            }
        }
        for node in back + nodes { node.next = nil }
    }

    /// Objects made on the fly while encoding (a computed property) die as soon as the call
    /// returns unless the archiver holds them: their addresses would then be reused by the next
    /// ones, which would wrongly be taken for the same objects. Large arrays and single objects
    /// are held in different ways; both must keep distinct objects distinct.
    @Test func objectsMadeWhileEncodingStayDistinct() throws {
        let data = try GraphArchiver.archivedData(withRootObject: FreshRecords(batches: 6, perBatch: 100))
        #expect(try GraphUnarchiver.archiveInfo(from: data).objectCount == 6 * 100 + 6 * 3 + 1)
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: FreshRecords.self,
            from: data,
            registry: GraphTypeRegistry([Record.self])
        )
        let all = back.decoded.flatMap { $0 }
        #expect(all.count == 6 * (100 + 3))
        #expect(Set(all.map(ObjectIdentifier.init)).count == all.count)
        #expect(all.map(\.color) == (0..<6).flatMap { batch in (0..<103).map { batch * 1_000 + $0 } })
    }

    @Test func incrementalFormWithSeveralRootKeys() throws {
        let archiver = GraphArchiver()
        let shared = Record(name: "s", color: 7, date: "d")
        try archiver.encode(shared, forKey: "Data")
        try archiver.encode([shared, shared], forKey: "kRootKey")
        try archiver.encode(42, forKey: "answer")
        try archiver.finishEncoding()
        let data = try archiver.encodedData

        let unarchiver = try GraphUnarchiver(
            forReadingFrom: data,
            registry: GraphTypeRegistry([Record.self])
        )
        #expect(unarchiver.containsValue(forKey: "Data"))
        #expect(!unarchiver.containsValue(forKey: "root"))
        let one = try unarchiver.decode(Record.self, forKey: "Data")
        let two = try unarchiver.decode([Record].self, forKey: "kRootKey")
        #expect(try unarchiver.decode(Int.self, forKey: "answer") == 42)
        #expect(two[0] === one && two[1] === one)
    }

    @Test func deepCopyMirrorsSharingAndCycles() throws {
        let a = Node(1)
        let b = Node(2)
        a.next = b
        b.next = a
        let copy = try GraphArchiver.deepCopy(of: [a, b, a])
        #expect(copy[0] !== a)
        #expect(copy[0] === copy[2])
        #expect(copy[0].next === copy[1])
        #expect(copy[1].next === copy[0])
        a.next = nil
        copy[0].next = nil
    }
}

/// Decodes the Node shape with a plain `decode` of "next": cannot restore a cycle.
final class LinkAsNode: GraphCoding {
    let next: LinkAsNode?
    init(from unarchiver: GraphUnarchiver) throws {
        next = try unarchiver.decode(LinkAsNode?.self, forKey: "next")
    }
    func encode(with archiver: GraphArchiver) throws {}
}

/// Releases a chain head first, one link at a time, so no deinit recurses down the chain.
func dismantle(_ head: inout Link?) {
    var nodes: [Link] = []
    var walk = head
    head = nil
    while let link = walk {
        nodes.append(link)
        walk = link.next
    }
    walk = nil
    nodes.reverse()
    while !nodes.isEmpty { nodes.removeLast() }
}
