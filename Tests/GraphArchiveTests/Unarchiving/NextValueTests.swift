// Tests/GraphArchiveTests/Unarchiving/NextValueTests.swift - an initializer's next value, read with room after it

import Foundation
import Testing

@testable import GraphArchive

/// `decode` reads an integer or an object reference that is the record's next value, with nine
/// bytes of input after its start, in one step; anything else it reads the full way. With that
/// room, each value still decodes as before, and each kind of damage still gets its own error.
struct NextValueTests {
    /// Nine bytes that follow each tested value: a key the initializers do not read.
    static let padding = shortString("padding!")

    /// Two `Link`s, object 1 (the root) stored with `value` and `next`, each record followed by
    /// `padding` under a third key (object 0: 1, nil).
    static func paddedChain(value: [UInt8], next: [UInt8]) -> HandBuiltArchive {
        let payload =
            varint(4) + name("root") + name("v") + name("n") + name("p")  // key table
            + varint(1) + [TypeKind.object] + name("Link")  // type table
            + varint(1) + varint(0) + varint(3) + varint(1) + varint(2) + varint(3)  // shape 0: v n p
            + varint(1) + varint(0) + [ValueTag.objectReference] + varint(1)  // root: object 1
            + varint(0) + [ValueTag.smallIntegerBase + 1, ValueTag.null] + padding  // object 0
            + varint(0) + value + next + padding  // object 1
        return HandBuiltArchive(payload, typeCount: 1, objectCount: 2, referenceCount: 2)
    }

    static let reference0 = [ValueTag.objectReference] + varint(0)

    static func decode(_ archive: HandBuiltArchive) throws -> Link {
        try GraphUnarchiver.unarchivedObject(ofType: Link.self, from: archive.data)
    }

    /// Where object 1's `next` starts in the archive (the header is 64 bytes).
    static func nextOffset(_ archive: HandBuiltArchive, next: [UInt8]) -> Int {
        64 + archive.payload.count - padding.count - next.count
    }

    @Test(arguments: [0, 63, 64, 255, 256, -1, -64, -65, Int(Int32.max), Int(Int32.min), 1 << 40, Int.max, Int.min])
    func integersOfEveryWidthRoundTrip(value: Int) throws {
        // Every link but the last has the records after it to read ahead into.
        var chain: Link? = Link(value: value, next: Link(value: value &+ 1, next: Link(value: value, next: nil)))
        defer { dismantle(&chain) }
        var decoded: Link? = try GraphUnarchiver.unarchivedObject(
            ofType: Link.self,
            from: GraphArchiver.archivedData(withRootObject: chain!)
        )
        defer { dismantle(&decoded) }
        #expect(decoded?.value == value)
        #expect(decoded?.next?.value == value &+ 1)
        #expect(decoded?.next?.next?.value == value)
        #expect(decoded?.next?.next?.next == nil)
    }

    @Test func referenceAndNilAreRead() throws {
        let root = try Self.decode(Self.paddedChain(value: [ValueTag.smallIntegerBase + 2], next: Self.reference0))
        #expect(root.value == 2)
        #expect(root.next?.value == 1)
        #expect(root.next?.next == nil)
    }

    @Test func integersPastIntAreOutOfRange() {
        for tag in [ValueTag.unsignedBase + 7, ValueTag.negativeBase + 7] {
            let value = [tag] + [UInt8](repeating: 0xFF, count: 8)
            expectArchiveError(.valueOutOfRange, mentioning: "does not fit Int") {
                _ = try Self.decode(Self.paddedChain(value: value, next: Self.reference0))
            }
        }
    }

    /// Expects object 1's `next`, stored as `next`, to fail with `code` at its offset.
    @discardableResult
    static func expectFailure(
        _ code: GraphArchiveError.Code,
        mentioning text: String,
        next: [UInt8],
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> GraphArchiveError? {
        let archive = paddedChain(value: [ValueTag.smallIntegerBase + 2], next: next)
        let error = expectArchiveError(code, mentioning: text, sourceLocation: sourceLocation) {
            _ = try decode(archive)
        }
        #expect(error?.offset == nextOffset(archive, next: next), sourceLocation: sourceLocation)
        return error
    }

    @Test func valueOfAnotherKindIsATypeMismatch() {
        expectArchiveError(.typeMismatch, mentioning: "expected Int") {
            _ = try Self.decode(Self.paddedChain(value: shortString("two"), next: Self.reference0))
        }
        Self.expectFailure(.typeMismatch, mentioning: "expected Link", next: [ValueTag.smallIntegerBase + 7])
    }

    @Test func referenceToTheObjectBeingBuiltIsAnUnresolvedCycle() {
        let next = [ValueTag.objectReference] + varint(1)
        let error = Self.expectFailure(.unresolvedCycle, mentioning: "object #1", next: next)
        #expect(error?.keyPath == ["Link#1", "n"])
    }

    /// Past the objects, with an index of one byte and of four (longer than read in one step).
    @Test(arguments: [5, 1 << 21] as [UInt64])
    func referencePastTheObjectTableIsRefused(index: UInt64) {
        Self.expectFailure(
            .badObjectReference,
            mentioning: "reference to object \(index), but the archive has 2",
            next: [ValueTag.objectReference] + varint(index)
        )
    }

    @Test func nilForANonOptionalReferenceIsATypeMismatch() {
        let archive = Self.paddedChain(value: [ValueTag.smallIntegerBase + 2], next: [ValueTag.null])
        expectArchiveError(.typeMismatch, mentioning: "expected LinkNotNil") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: LinkNotNil.self, from: archive.data)
        }
    }
}

/// A `Link` read with its next link required (the non-optional `decode` of a reference), under
/// `Link`'s archived name.
final class LinkNotNil: GraphCoding {
    static let archivedTypeName = "Link"
    let value: Int
    let next: LinkNotNil

    init(from unarchiver: GraphUnarchiver) throws {
        value = try unarchiver.decode(Int.self, forKey: "v")
        next = try unarchiver.decode(LinkNotNil.self, forKey: "n")
    }

    func encode(with archiver: GraphArchiver) throws {}
}
