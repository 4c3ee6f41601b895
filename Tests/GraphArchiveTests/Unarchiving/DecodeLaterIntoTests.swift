// Tests/GraphArchiveTests/Unarchiving/DecodeLaterIntoTests.swift - decodeLater(_:forKey:into:), whose closure takes the object

import Foundation
import Testing

@testable import GraphArchive

/// `Node`'s links, decoded with closures that capture nothing: each is passed the node.
final class IntoNode: GraphCoding {
    static var archivedTypeName: String { "Node" }

    var label: Int
    var next: IntoNode?
    weak var parent: IntoNode?
    var children: [IntoNode] = []
    /// The order the node's assignments ran in.
    var assigned: [String] = []

    init(_ label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
        try archiver.encodeLater(next, forKey: "next")
        try archiver.encodeLater(parent, forKey: "parent")
        try archiver.encodeLater(children, forKey: "children")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
        try unarchiver.decodeLater(IntoNode?.self, forKey: "next") { (node: IntoNode, next) in
            node.next = next
            node.assigned.append("next")
        }
        try unarchiver.decodeLater(IntoNode?.self, forKey: "parent") { [unowned self] in
            self.parent = $0
            self.assigned.append("parent")
        }
        try unarchiver.decodeLater([IntoNode].self, forKey: "children") { (node: IntoNode, children) in
            node.children = children
            node.assigned.append("children")
        }
    }
}

/// Reads `IntoNode`'s archive with closures that capture a value: kept per request.
final class CapturingIntoNode: GraphCoding {
    static var archivedTypeName: String { "Node" }

    var next: CapturingIntoNode?
    var children: [CapturingIntoNode] = []
    var assigned: [String] = []

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        let label = try unarchiver.decode(Int.self, forKey: "label")
        try unarchiver.decodeLater(CapturingIntoNode?.self, forKey: "next") { (node: CapturingIntoNode, next) in
            node.next = next
            node.assigned.append("next of \(label)")
        }
        try unarchiver.decodeLater([CapturingIntoNode].self, forKey: "children") {
            (node: CapturingIntoNode, children) in
            node.children = children
            node.assigned.append("children of \(label)")
        }
    }
}

/// Reads `IntoNode`'s archive, asking for its `next` as a `Record`, which it is not.
final class MistypedIntoNode: GraphCoding {
    static var archivedTypeName: String { "Node" }

    var next: Record?

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        try unarchiver.decodeLater(Record?.self, forKey: "next") { (node: MistypedIntoNode, next) in node.next = next }
    }
}

/// Reads `IntoNode`'s archive, with closures that take the node as a class it is not.
final class MisownedIntoNode: GraphCoding {
    static var archivedTypeName: String { "Node" }

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        try unarchiver.decodeLater(MisownedIntoNode?.self, forKey: "next") { (_: Record, _) in }
    }
}

/// Writes an integer where `IntoNumberReader` reads a back link.
final class IntoNumber: GraphCoding {
    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(7, forKey: "next")
    }

    init() {}

    init(from unarchiver: borrowing GraphUnarchiver) throws {}
}

final class IntoNumberReader: GraphCoding {
    static var archivedTypeName: String { "IntoNumber" }

    var next: IntoNumberReader?

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        try unarchiver.decodeLater(IntoNumberReader?.self, forKey: "next") { (node: IntoNumberReader, next) in
            node.next = next
        }
    }
}

@Suite("decodeLater(_:forKey:into:)")
struct DecodeLaterIntoTests {
    /// A ring of three nodes under a root, each with its parent: every link closes a cycle.
    static func ring() -> IntoNode {
        let root = IntoNode(0)
        let children = (1...3).map(IntoNode.init)
        for (index, child) in children.enumerated() {
            child.parent = root
            child.next = children[(index + 1) % children.count]
        }
        root.children = children
        return root
    }

    @Test("restores references, nil and arrays, in the order they were asked for")
    func roundTrip() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.ring())
        let root = try GraphUnarchiver.unarchivedObject(ofType: IntoNode.self, from: data)
        #expect(root.parent == nil && root.next == nil)
        #expect(root.children.map(\.label) == [1, 2, 3])
        for (index, child) in root.children.enumerated() {
            #expect(child.parent === root)
            #expect(child.next === root.children[(index + 1) % 3])
            #expect(child.assigned == ["next", "parent", "children"])
        }
        #expect(root.assigned == ["next", "parent", "children"])
    }

    @Test("closures that capture values are kept per request and run in order")
    func capturingClosures() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.ring())
        let root = try GraphUnarchiver.unarchivedObject(ofType: CapturingIntoNode.self, from: data)
        #expect(root.next == nil && root.children.count == 3)
        #expect(root.assigned == ["next of 0", "children of 0"])
        for (index, child) in root.children.enumerated() {
            #expect(child.next === root.children[(index + 1) % 3])
            #expect(child.assigned == ["next of \(index + 1)", "children of \(index + 1)"])
        }
    }

    @Test("a reference to an object of another class is a type mismatch at the field")
    func mistypedReference() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.ring())
        let error = #expect(throws: GraphArchiveError.self) {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: MistypedIntoNode.self,
                from: data,
                registry: GraphTypeRegistry([Record.self])
            )
        }
        #expect(error?.code == .typeMismatch)
        #expect(error?.keyPath.last == "next")
        #expect(error?.message.contains("Record") == true)
    }

    @Test("a value that is not a reference is read when the assignment runs: a type mismatch at the field")
    func notAReference() throws {
        let data = try GraphArchiver.archivedData(withRootObject: IntoNumber())
        let error = #expect(throws: GraphArchiveError.self) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: IntoNumberReader.self, from: data)
        }
        #expect(error?.code == .typeMismatch)
        #expect(error?.keyPath == ["IntoNumber#0", "next"])
    }

    @Test("a closure that takes the object as a class it is not is a type mismatch")
    func misownedClosure() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.ring())
        let error = #expect(throws: GraphArchiveError.self) {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: MisownedIntoNode.self,
                from: data,
                registry: GraphTypeRegistry([Record.self])
            )
        }
        #expect(error?.code == .typeMismatch)
        #expect(error?.keyPath.last == "next")
    }

    @Test("outside an object's initializer there is no object to pass: invalid state")
    func outsideInitializer() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.ring())
        let unarchiver = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry([IntoNode.self]))
        let error = #expect(throws: GraphArchiveError.self) {
            try unarchiver.decodeLater(IntoNode?.self, forKey: GraphArchiver.rootKey) { (_: IntoNode, _) in }
        }
        #expect(error?.code == .invalidState)
        #expect(error?.keyPath == [GraphArchiver.rootKey])
        let missing = #expect(throws: GraphArchiveError.self) {
            try unarchiver.decodeLater(IntoNode?.self, forKey: "absent") { (_: IntoNode, _) in }
        }
        #expect(missing?.code == .keyNotFound)
    }
}
