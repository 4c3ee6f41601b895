// Tests/GraphArchiveTests/Unarchiving/ObjectLifetimeTests.swift - decoded objects live exactly as long as their holders

import Foundation
import Testing

@testable import GraphArchive

/// The unarchiver's object table hands its own references to the one-call decode's root array
/// (`DecodedObjects`). These tests check that every decoded object is released exactly once:
/// a leak leaves a weak reference set, an extra release crashes (and AddressSanitizer, which
/// CI runs over every test, reports it).
@Suite("Decoded object lifetime")
struct ObjectLifetimeTests {
    /// 300 slots over 120 records, some slots sharing a record, in a scattered order.
    static func sharedSlots() -> [Record] {
        let records = (0..<120).map { Record(name: "record \($0)", color: $0, date: "2024") }
        return (0..<300).map { records[($0 * 7) % 120] }
    }

    @Test func oneCallRootArrayOwnsItsObjects() throws {
        let slots = Self.sharedSlots()
        let data = try GraphArchiver.archivedData(withRootObject: slots)
        var back: [Record]? = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data)
        let decoded = back!
        for slot in 0..<300 {
            #expect(decoded[slot].color == slots[slot].color)
            if slot + 120 < 300 { #expect(decoded[slot] === decoded[slot + 120]) }  // same record 120 slots on
        }
        #expect(Set(decoded.map(ObjectIdentifier.init)).count == 120)
        let weakRecords = decoded.map(WeakBox.init)
        _ = consume decoded
        back = nil
        #expect(weakRecords.allSatisfy { $0.object == nil }, "decoded records outlived their array")
    }

    /// A table of over 1 MiB (200,000 objects) has pages of its own (`allocateTable`): the
    /// objects it holds and hands over are still released exactly once, with and without a
    /// kept unarchiver.
    @Test func largeObjectTablesReleaseEveryObject() throws {
        let records = (0..<200_000).map { Record(name: "", color: $0, date: "") }
        let slots = records + records.prefix(50_000)
        let data = try GraphArchiver.archivedData(withRootObject: slots)
        var back: [Record]? = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data)
        #expect(back!.count == 250_000 && back![3] === back![200_003] && back![199_999].color == 199_999)
        var weakRecords = back!.prefix(200_000).map(WeakBox.init)
        back = nil
        #expect(weakRecords.allSatisfy { $0.object == nil }, "decoded records outlived their array")

        var unarchiver: GraphUnarchiver? = try GraphUnarchiver(
            forReadingFrom: data,
            registry: GraphTypeRegistry([Record.self])
        )
        let kept = try unarchiver!.decode([Record].self, forKey: GraphArchiver.rootKey)
        weakRecords = kept.prefix(200_000).map(WeakBox.init)
        _ = consume kept
        #expect(weakRecords.allSatisfy { $0.object != nil }, "the unarchiver let go of its objects")
        unarchiver = nil
        #expect(weakRecords.allSatisfy { $0.object == nil }, "decoded records outlived the unarchiver")
    }

    /// Objects reachable only through other objects are not in the root array: the table
    /// releases those itself, and the root array's objects keep them alive until then.
    @Test func objectsBehindTheRootArrayAreReleasedWithIt() throws {
        let parents = (0..<40).map(Node.init)
        for parent in parents {
            parent.children = (0..<3).map { Node(1000 + parent.label * 3 + $0) }
        }
        let data = try GraphArchiver.archivedData(withRootObject: parents + parents.prefix(10))
        var back: [Node]? = try GraphUnarchiver.unarchivedObject(ofType: [Node].self, from: data)
        #expect(back!.count == 50)
        #expect(back![3] === back![43])
        #expect(back![7].children.map(\.label) == [1021, 1022, 1023])
        let weakNodes = back!.flatMap { [$0] + $0.children }.map(WeakBox.init)
        back = nil
        #expect(weakNodes.allSatisfy { $0.object == nil }, "decoded nodes outlived their array")
    }

    /// An unarchiver a caller keeps may be asked for the same objects again, after the caller
    /// dropped what it returned first: it never gives its references away.
    @Test func unarchiverKeepsItsObjectsForLaterReads() throws {
        let slots = Self.sharedSlots()
        let data = try GraphArchiver.archivedData(withRootObject: slots)
        var unarchiver: GraphUnarchiver? = try GraphUnarchiver(
            forReadingFrom: data,
            registry: GraphTypeRegistry([Record.self])
        )
        var first: [Record]? = try unarchiver!.decode([Record].self, forKey: "root")
        let weakFirst = first!.map(WeakBox.init)
        first = nil
        #expect(weakFirst.allSatisfy { $0.object != nil }, "the unarchiver let go of its objects")
        let second = try unarchiver!.decode([Record].self, forKey: "root")
        unarchiver = nil
        #expect(second.map(\.color) == slots.map(\.color))
        #expect(second.indices.allSatisfy { second[$0] === weakFirst[$0].object })
        let weakRecords = second.map(WeakBox.init)
        _ = consume second
        #expect(weakRecords.allSatisfy { $0.object == nil })
    }

    /// A root array nested in an optional still takes the table's references; nested arrays
    /// and arrays read by initializers do not.
    @Test func optionalAndNestedRootArrays() throws {
        let slots = Self.sharedSlots()
        var optional: [Record]?? = try GraphUnarchiver.unarchivedObject(
            ofType: [Record]?.self,
            from: GraphArchiver.archivedData(withRootObject: slots as [Record]?)
        )
        #expect(optional??.count == 300)
        let weakOptional = (optional!!).map(WeakBox.init)
        optional = nil
        #expect(weakOptional.allSatisfy { $0.object == nil })

        var nested: [[Record]]? = try GraphUnarchiver.unarchivedObject(
            ofType: [[Record]].self,
            from: GraphArchiver.archivedData(withRootObject: [slots, Array(slots.reversed())])
        )
        #expect(nested![0][0] === nested![1][299])
        let weakNested = nested!.joined().map(WeakBox.init)
        nested = nil
        #expect(weakNested.allSatisfy { $0.object == nil })
    }
}

final class WeakBox {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}
