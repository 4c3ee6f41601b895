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

/// Writes records whose references the optional-object `encode` is given in every way it can
/// be: records made during the encode (no one else holds them), one record twice, and one
/// written as a conditional object first.
final class OwnershipProbe: GraphCoding {
    static let madeCount = 100
    var shared = Record(name: "shared", color: -1, date: "")
    var conditional = Record(name: "conditional", color: -2, date: "")
    /// The records the last encode made, watched.
    private(set) var made: [Weak<Record>] = []
    /// What a decode read: the records made, `shared` again and `conditional` as first written.
    let fresh: [Record]
    private(set) var sharedAgain: Record?
    private(set) var conditionalFirst: Record?

    init() { fresh = [] }

    func encode(with archiver: GraphArchiver) throws {
        made = []
        for index in 0..<Self.madeCount {
            let record = Record(name: "made", color: index, date: "")
            made.append(Weak(record))
            // The record's last reference goes to the archiver.
            try archiver.encode(consume record as Record?, forKey: "made\(index)")
        }
        try archiver.encode(shared as Record?, forKey: "shared")
        try archiver.encode(shared as Record?, forKey: "sharedAgain")
        try archiver.encodeConditionalObject(conditional, forKey: "conditional")
        try archiver.encode(conditional as Record?, forKey: "conditionalAgain")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        fresh = try (0..<Self.madeCount).map {
            try unarchiver.decode(Record.self, forKey: "made\($0)")
        }
        shared = try unarchiver.decode(Record.self, forKey: "shared")
        sharedAgain = try unarchiver.decode(Record.self, forKey: "sharedAgain")
        try unarchiver.decodeLater(Record?.self, forKey: "conditional") { (probe: OwnershipProbe, record) in
            probe.conditionalFirst = record
        }
        conditional = try unarchiver.decode(Record.self, forKey: "conditionalAgain")
    }
}

/// A weak reference, to watch an object's lifetime.
final class Weak<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
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

    @Test("encode of an optional object keeps each object alive for the archive, and no longer")
    func referencesGivenToEncode() throws {
        // Several probes: a record's keys take the inlinable form's fast path once its shape
        // is known, from the second probe on.
        let probes = (0..<3).map { _ in OwnershipProbe() }
        let data = try GraphArchiver.archivedData(withRootObject: probes)

        for probe in probes {
            // Each record made during the encode lived until the archive was written (one
            // freed earlier could have left its address to the next, which would have been
            // taken for it) and was released then.
            #expect(probe.made.count == OwnershipProbe.madeCount)
            #expect(probe.made.allSatisfy { $0.object == nil })
            // The objects the probe holds are its own again: the archiver let go of every
            // reference it took, whether it met the object first, again, or after a
            // conditional reference.
            #expect(isKnownUniquelyReferenced(&probe.shared))
            #expect(isKnownUniquelyReferenced(&probe.conditional))
        }

        let decoded = try GraphUnarchiver.unarchivedObject(
            ofType: [OwnershipProbe].self,
            from: data,
            registry: GraphTypeRegistry([OwnershipProbe.self, Record.self])
        )
        #expect(decoded.count == probes.count)
        let leaves = decoded.flatMap(\.fresh)
        #expect(leaves.map(\.color) == Array(repeating: Array(0..<OwnershipProbe.madeCount), count: 3).flatMap { $0 })
        #expect(Set(leaves.map(ObjectIdentifier.init)).count == leaves.count)
        for probe in decoded {
            #expect(probe.shared.color == -1 && probe.sharedAgain === probe.shared)
            #expect(probe.conditional.color == -2 && probe.conditionalFirst === probe.conditional)
        }
    }
}
