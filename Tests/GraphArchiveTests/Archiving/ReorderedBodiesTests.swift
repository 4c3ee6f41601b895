// Tests/GraphArchiveTests/Archiving/ReorderedBodiesTests.swift - bodies copied into construction order (FORMAT.md §5.4)

import Foundation
import Testing

@testable import GraphArchive

/// A link whose records take one of 150 shapes (the key of its payload varies), so that past
/// the 128th a record's shape id outgrows its one-byte placeholder and the bytes after it move:
/// `next` and `friends` point forward, so every body is reordered.
final class ShapeShiftingLink: GraphCoding {
    static let shapes = 150
    let variant: Int
    var next: ShapeShiftingLink?
    var friends: [ShapeShiftingLink] = []
    weak var watched: ShapeShiftingLink?

    init(variant: Int) { self.variant = variant }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(variant, forKey: "variant")
        try archiver.encode(ShapeShiftingPayload(variant: variant), forKey: "payload\(variant % Self.shapes)")
        try archiver.encode(next, forKey: "next")
        try archiver.encode(friends, forKey: "friends")
        try archiver.encodeConditionalObject(watched, forKey: "watched")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        variant = try unarchiver.decode(Int.self, forKey: "variant")
        let payload = try unarchiver.decode(
            ShapeShiftingPayload.self,
            forKey: "payload\(variant % Self.shapes)"
        )
        guard payload.variant == variant else {
            throw GraphArchiveError(.corrupt, "payload of link \(variant) holds \(payload.variant)")
        }
        next = try unarchiver.decode(ShapeShiftingLink?.self, forKey: "next")
        friends = try unarchiver.decode([ShapeShiftingLink].self, forKey: "friends")
        try unarchiver.decodeLater(ShapeShiftingLink?.self, forKey: "watched") { [unowned self] in self.watched = $0 }
    }
}

/// A value record of one of 140 shapes (an extra key that varies, which the reader skips).
struct ShapeShiftingPayload: GraphCoding {
    let variant: Int

    init(variant: Int) { self.variant = variant }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(variant, forKey: "variant")
        try archiver.encode(true, forKey: "extra\(variant % 140)")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        variant = try unarchiver.decode(Int.self, forKey: "variant")
    }
}

@Suite("Reordered bodies")
struct ReorderedBodiesTests {
    /// 400 links, each pointing at the next and at the two after it, and every third watching
    /// an earlier link (a back link on a cycle) or one nothing else archives (nil once read).
    static func links() -> (all: [ShapeShiftingLink], strangers: [ShapeShiftingLink]) {
        let all = (0..<400).map(ShapeShiftingLink.init(variant:))
        let strangers = (0..<10).map { ShapeShiftingLink(variant: 1000 + $0) }
        for (index, link) in all.enumerated() {
            if index + 1 < all.count { link.next = all[index + 1] }
            link.friends = Array(all[min(index + 2, all.count)..<min(index + 4, all.count)])
            if index % 3 == 0 {
                link.watched = index % 2 == 0 ? all[index / 2] : strangers[index % strangers.count]
            }
        }
        return (all, strangers)
    }

    /// Records whose shape ids take two bytes, holding value records whose shape ids do too,
    /// come back with every reference where it was.
    @Test func linksOfManyShapesRoundTripThroughTheReordering() throws {
        let (all, strangers) = Self.links()
        let archiver = GraphArchiver()
        try archiver.encode(all[0], forKey: GraphArchiver.rootKey)
        #expect(
            archiver.state.notesPlaces && !archiver.state.edgePlaces.isEmpty,
            "the reordering would read the bodies instead"
        )
        try archiver.finishEncoding()
        let data = try archiver.encodedData
        _ = try GraphUnarchiver.verify(data)
        let head = try GraphUnarchiver.unarchivedObject(ofType: ShapeShiftingLink.self, from: data)

        var decoded: [ShapeShiftingLink] = []
        var walk: ShapeShiftingLink? = head
        while let link = walk {
            decoded.append(link)
            walk = link.next
        }
        #expect(decoded.map(\.variant) == all.map(\.variant))
        for (index, link) in decoded.enumerated() {
            let friends = all[index].friends.map(\.variant)
            #expect(link.friends.map(\.variant) == friends)
            #expect(zip(link.friends, friends).allSatisfy { $0 === decoded[$1] }, "link \(index)'s friends")
            if let watched = all[index].watched, !strangers.contains(where: { $0 === watched }) {
                #expect(link.watched === decoded[watched.variant], "link \(index) watches another")
            } else {
                #expect(link.watched == nil, "link \(index) watches a link nothing archived")
            }
        }
    }

    /// Records that repeat their type's last shape, once its id takes two bytes: the record
    /// before sets the candidate, and the placeholder still grows.
    @Test func repeatedShapesPastTheOneByteIdsRoundTrip() throws {
        let variants = Array(0..<ShapeShiftingLink.shapes) + Array(repeating: ShapeShiftingLink.shapes - 1, count: 40)
        let links = variants.map(ShapeShiftingLink.init(variant:))
        for (link, next) in zip(links, links.dropFirst()) { link.next = next }
        let archiver = GraphArchiver()
        try archiver.encode(links[0], forKey: GraphArchiver.rootKey)
        #expect(archiver.state.shapes.count > 0x80)
        try archiver.finishEncoding()
        let data = try archiver.encodedData
        var walk: ShapeShiftingLink? = try GraphUnarchiver.unarchivedObject(ofType: ShapeShiftingLink.self, from: data)
        var read: [Int] = []
        while let link = walk {
            read.append(link.variant)
            walk = link.next
        }
        #expect(read == variants)
    }

    /// Copying bodies by the references' noted places writes the bytes that reading every
    /// value and rewriting its references writes.
    @Test func notedPlacesWriteWhatReadingTheBodiesWrites() throws {
        let (all, _) = Self.links()
        func archive(notingPlaces: Bool) throws -> Data {
            let archiver = GraphArchiver()
            try archiver.encode(all[0], forKey: GraphArchiver.rootKey)
            if !notingPlaces { archiver.state.notesPlaces = false }
            try archiver.finishEncoding()
            return try archiver.encodedData
        }
        #expect(try archive(notingPlaces: true) == archive(notingPlaces: false))
    }
}
