// Tests/GraphArchiveTests/Unarchiving/DeferredAssignmentTimingTests.swift - decodeLater runs once its object exists

import Foundation
import TestSupport
import Testing

@testable import GraphArchive

/// What the nodes of one decode did, in order: built, or given their parent or their sibling.
final class DecodeEventLog: @unchecked Sendable {
    @TaskLocal static var current: DecodeEventLog?

    private let lock = NSLock()
    private var storage: [String] = []

    var events: [String] { lock.withLock { storage } }

    func record(_ event: String) {
        lock.withLock { storage.append(event) }
    }
}

/// A tree node whose parent link and list of later siblings are back links, logging when it
/// is built and when each deferred assignment reaches it.
final class EventNode: GraphCoding {
    let name: String
    var children: [EventNode] = []
    weak var parent: EventNode?
    /// The siblings after this one: an array, which waits for the last object.
    var laterSiblings: [EventNode] = []

    init(_ name: String, children: [EventNode] = []) {
        self.name = name
        self.children = children
        for (position, child) in children.enumerated() {
            child.parent = self
            child.laterSiblings = Array(children[(position + 1)...])
        }
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(name, forKey: "name")
        try archiver.encode(children, forKey: "children")
        try archiver.encodeLater(parent, forKey: "parent")
        try archiver.encodeLater(laterSiblings, forKey: "laterSiblings")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        name = try unarchiver.decode(String.self, forKey: "name")
        children = try unarchiver.decode([EventNode].self, forKey: "children")
        try unarchiver.decodeLater(EventNode?.self, forKey: "parent") { [unowned self] in
            self.parent = $0
            DecodeEventLog.current?.record("\(self.name).parent = \($0?.name ?? "nil")")
        }
        try unarchiver.decodeLater([EventNode].self, forKey: "laterSiblings") { [unowned self] in
            self.laterSiblings = $0
            DecodeEventLog.current?.record("\(self.name).laterSiblings = \($0.map(\.name))")
        }
        DecodeEventLog.current?.record("built \(name)")
    }
}

@Suite("Deferred assignments run once their objects exist")
struct DeferredAssignmentTimingTests {
    /// root → (a → a1), (b → b1): built children first, a1, a, b1, b, root.
    private func decodeLogged() throws -> (root: EventNode, events: [String]) {
        let root = EventNode(
            "root",
            children: [EventNode("a", children: [EventNode("a1")]), EventNode("b", children: [EventNode("b1")])]
        )
        let data = try GraphArchiver.archivedData(withRootObject: root)
        let log = DecodeEventLog()
        let decoded = try DecodeEventLog.$current.withValue(log) {
            try GraphUnarchiver.unarchivedObject(
                ofType: EventNode.self,
                from: data,
                registry: GraphTypeRegistry([EventNode.self])
            )
        }
        return (decoded, log.events)
    }

    @Test func aBackLinkIsAssignedOnceItsObjectIsBuiltNotAtTheEnd() throws {
        let (_, events) = try decodeLogged()
        let builtRoot = try #require(events.firstIndex(of: "built root"))
        for (child, parent) in [("a1", "a"), ("b1", "b")] {
            let assigned = try #require(events.firstIndex(of: "\(child).parent = \(parent)"))
            let built = try #require(events.firstIndex(of: "built \(parent)"))
            #expect(built < assigned && assigned < builtRoot, "\(child)'s parent link waited for the end")
        }
    }

    @Test func valuesOtherThanOneReferenceWaitForTheLastObjectInRequestOrder() throws {
        let (_, events) = try decodeLogged()
        let builtRoot = try #require(events.firstIndex(of: "built root"))
        let tail = Array(events[(builtRoot + 1)...])
        // After the root, the last object: every array, every link to the root and the root's
        // nil parent, in the order the initializers asked for them.
        #expect(tail.filter { $0.contains(".laterSiblings = ") }.count == 5)
        #expect(tail.contains("a.laterSiblings = [\"b\"]") && tail.contains("a.parent = root"))
        #expect(tail.last == "root.laterSiblings = []" && tail.dropLast().last == "root.parent = nil")
        let buildOrder = events.compactMap { $0.hasPrefix("built ") ? String($0.dropFirst(6)) : nil }
        let owners = tail.map { String($0.prefix { $0 != "." }) }
        let positions = owners.compactMap { buildOrder.firstIndex(of: $0) }
        #expect(positions.count == owners.count && positions == positions.sorted(), "\(tail)")
    }

    @Test func theDecodedTreeHasEveryBackLink() throws {
        let (root, _) = try decodeLogged()
        let (a, b) = (root.children[0], root.children[1])
        #expect(root.parent == nil && a.parent === root && b.parent === root)
        #expect(a.children[0].parent === a && b.children[0].parent === b)
        #expect(a.laterSiblings.count == 1 && a.laterSiblings[0] === b && b.laterSiblings.isEmpty)
    }
}

/// A padded object whose `link`, nil or a reference to an earlier one, is read as an `Int?`:
/// directly, or deferred.
private final class MisreadLink: GraphCoding {
    static let deferred = TaskLocalFlag()
    var link: MisreadLink?
    init(link: MisreadLink?) { self.link = link }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode([UInt8](repeating: 7, count: 4_000), forKey: "padding")
        try archiver.encode(link, forKey: "link")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        if Self.deferred.isSet {
            try unarchiver.decodeLater(Int?.self, forKey: "link") { _ in }
        } else {
            _ = try unarchiver.decode(Int?.self, forKey: "link")
        }
    }
}

/// A padded object whose `links`, references to the (up to) three objects before it, are read
/// as `[Int]`: directly, or deferred (when `MisreadLink.deferred` is set).
private final class MisreadLinks: GraphCoding {
    var links: [MisreadLinks]
    init(links: [MisreadLinks]) { self.links = links }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode([UInt8](repeating: 7, count: 4_000), forKey: "padding")
        try archiver.encode(links, forKey: "links")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        links = []
        if MisreadLink.deferred.isSet {
            try unarchiver.decodeLater([Int].self, forKey: "links") { _ in }
        } else {
            _ = try unarchiver.decode([Int].self, forKey: "links")
        }
    }
}

/// A flag set for the decodes inside `set(_:)`.
final class TaskLocalFlag: Sendable {
    @TaskLocal private static var value = false
    var isSet: Bool { Self.value }
    func set<R>(_ body: () throws -> R) rethrows -> R { try Self.$value.withValue(true, operation: body) }
}

@Suite("Deferred values read from a copy")
struct DeferredCopyTests {
    /// A deferred reference in a file read as it is decoded is read from a copy of its bytes;
    /// an error in it names the object and gives the offset in the payload, as the same value
    /// read directly does, and as it does read in place from memory.
    @Test func errorsInACopiedValueMatchTheValueReadInPlace() throws {
        var links: [MisreadLink] = []
        for _ in 0..<2_500 { links.append(MisreadLink(link: links.last)) }
        try expectDeferredErrorsMatchDirectOnes(
            links,
            suffix: "found a MisreadLink object (#0)",
            keyPath: ["MisreadLink#1", "link"]
        )
    }

    /// The same for a short packed reference array, which is copied too.
    @Test func errorsInACopiedReferenceArrayMatchTheArrayReadInPlace() throws {
        var objects: [MisreadLinks] = []
        for _ in 0..<2_500 { objects.append(MisreadLinks(links: Array(objects.suffix(3)))) }
        try expectDeferredErrorsMatchDirectOnes(
            objects,
            suffix: "expected [Int], found an array of 1 MisreadLinks object",
            keyPath: ["MisreadLinks#1", "links"]
        )
    }

    /// Decodes the archive of `objects` from a file read as it is decoded, with the objects'
    /// values read directly (the error must end with `suffix`), then deferred (`MisreadLink.deferred`
    /// set), from the file and from memory: the same error, at the same offset, at `keyPath`.
    private func expectDeferredErrorsMatchDirectOnes<T: GraphCoding & AnyObject>(
        _ objects: [T],
        suffix: String,
        keyPath: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let data = try GraphArchiver.archivedData(withRootObject: objects)
        #expect(data.count >= PayloadWindow.minimumSize, sourceLocation: sourceLocation)
        try withTemporaryFolder { folder in
            let path = folder + "/links.gridstore"
            try data.write(to: URL(fileURLWithPath: path))
            let direct = archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [T].self, fromFile: path) }
            #expect(direct?.code == .typeMismatch, sourceLocation: sourceLocation)
            #expect(
                direct?.message.hasSuffix(suffix) == true,
                "\(String(describing: direct))",
                sourceLocation: sourceLocation
            )
            for deferred in MisreadLink.deferred.set({
                [
                    archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [T].self, fromFile: path) },
                    archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [T].self, from: data) },
                ]
            }) {
                #expect(deferred?.code == direct?.code, sourceLocation: sourceLocation)
                #expect(deferred?.message == direct?.message, sourceLocation: sourceLocation)
                #expect(deferred?.offset != nil && deferred?.offset == direct?.offset, sourceLocation: sourceLocation)
                #expect(deferred?.keyPath == keyPath, sourceLocation: sourceLocation)
            }
        }
    }
}
