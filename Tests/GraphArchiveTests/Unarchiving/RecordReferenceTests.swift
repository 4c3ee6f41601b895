// Tests/GraphArchiveTests/Unarchiving/RecordReferenceTests.swift - a reference read by an initializer, damaged

import Foundation
import Testing

@testable import GraphArchive

/// An initializer's single reference is read and checked in one step (the tag, then the index
/// against the objects built so far, and only past those against the archive's): each kind of
/// damage still gets its own error, at the reference, and none traps.
struct RecordReferenceTests {
    /// A chain of two `Link`s, object 1 (the root) referring to object 0 through `next`, whose
    /// stored value is `next` (object 0's is nil).
    static func chain(next: [UInt8]) -> HandBuiltArchive {
        let payload =
            varint(3) + name("root") + name("v") + name("n")  // key table
            + varint(1) + [TypeKind.object] + name("Link")  // type table
            + varint(1) + varint(0) + varint(2) + varint(1) + varint(2)  // shape 0: Link, keys v n
            + varint(1) + varint(0) + [ValueTag.objectReference] + varint(1)  // root: object 1
            + varint(0) + [ValueTag.smallIntegerBase + 1, ValueTag.null]  // object 0: v 1, n nil
            + varint(0) + [ValueTag.smallIntegerBase + 2] + next  // object 1: v 2, n `next`
        return HandBuiltArchive(payload, typeCount: 1, objectCount: 2, referenceCount: 2)
    }

    /// Where object 1's `next` starts in the archive (the header is 64 bytes).
    static func nextOffset(_ archive: HandBuiltArchive, next: [UInt8]) -> Int {
        64 + archive.payload.count - next.count
    }

    static func decode(_ archive: HandBuiltArchive) throws -> Link {
        try GraphUnarchiver.unarchivedObject(ofType: Link.self, from: archive.data)
    }

    @Test func referenceToAnObjectBuiltBeforeIsRead() throws {
        let root = try Self.decode(Self.chain(next: [ValueTag.objectReference] + varint(0)))
        #expect(root.value == 2)
        #expect(root.next?.value == 1)
        #expect(root.next?.next == nil)
    }

    @Test(arguments: [2, 5, 1 << 40, UInt64(Int.max), UInt64.max] as [UInt64])
    func referencePastTheObjectTableIsRefused(index: UInt64) {
        let next = [ValueTag.objectReference] + varint(index)
        let archive = Self.chain(next: next)
        let error = expectArchiveError(
            .badObjectReference,
            mentioning: "reference to object \(index), but the archive has 2"
        ) { _ = try Self.decode(archive) }
        #expect(error?.offset == Self.nextOffset(archive, next: next))
    }

    @Test func referenceToTheObjectBeingBuiltIsAnUnresolvedCycle() {
        let next = [ValueTag.objectReference] + varint(1)
        let archive = Self.chain(next: next)
        let error = expectArchiveError(.unresolvedCycle, mentioning: "object #1") { _ = try Self.decode(archive) }
        #expect(error?.offset == Self.nextOffset(archive, next: next))
        #expect(error?.keyPath == ["Link#1", "n"])
    }

    @Test func valueOfAnotherKindIsATypeMismatch() {
        let next = [ValueTag.smallIntegerBase + 7]
        let archive = Self.chain(next: next)
        let error = expectArchiveError(.typeMismatch, mentioning: "expected Link") { _ = try Self.decode(archive) }
        #expect(error?.offset == Self.nextOffset(archive, next: next))
    }

    @Test func referenceCutOffByTheEndIsTruncation() {
        // The index's varint says more bytes follow, and none do.
        expectArchiveError(.truncated) { _ = try Self.decode(Self.chain(next: [ValueTag.objectReference, 0x80])) }
    }
}
