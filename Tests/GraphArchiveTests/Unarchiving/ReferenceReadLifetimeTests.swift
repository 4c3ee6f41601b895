// Tests/GraphArchiveTests/Unarchiving/ReferenceReadLifetimeTests.swift - references read once, twice or never

import Foundation
import Testing

@testable import GraphArchive

/// The object table keeps its own reference to every object until the decode ends, and every
/// reference an initializer reads is retained for it; except in a one-call decode of an archive
/// with as many references as objects (a chain, a tree), where the first reference read to an
/// object takes the table's reference (no retain, no release). An initializer may read a
/// reference, drop it and read it again (the table then has nothing left to give: the link may
/// be freed), and a reference may appear in many records, or in none: such a decode starts
/// again, retaining as usual. These tests check that every object comes back whole however its
/// references are read, and is released exactly once: a leak leaves a link counted alive, an
/// extra release crashes (AddressSanitizer, which CI runs over every test, reports a read of a
/// freed link).
@Suite("References read once, twice or never")
struct ReferenceReadLifetimeTests {
    /// `count` links, each the next of the one after it, the last one returned; each link's
    /// `back` (a conditional back link) is the link after it, so that links form cycles too.
    static func chain(_ count: Int) -> CountedLink {
        var links: [CountedLink] = []
        for value in 0..<count {
            let link = CountedLink(value, next: links.last)
            links.last?.back = link
            links.append(link)
        }
        return links.last!
    }

    /// `count` links, each the next of the one after it, the last one returned, and no back
    /// links: every link is referenced once, so the one-call decode hands each link to the
    /// reference that reads it first.
    static func plainChain(_ count: Int) -> CountedLink {
        var head: CountedLink?
        for value in 0..<count { head = CountedLink(value, next: head) }
        return head!
    }

    static func decode<T: GraphValue>(
        _: T.Type,
        from data: Data,
        reading: CountedLink.Reading,
        live: LiveObjects
    ) throws -> T {
        try CountedLink.$reading.withValue(reading) {
            try CountedLink.$live.withValue(live) {
                try GraphUnarchiver.unarchivedObject(ofType: T.self, from: data)
            }
        }
    }

    /// Each link is referenced once, by the link after it, and read once or twice: the chain
    /// comes back whole, and its links are released when it is.
    @Test(arguments: [CountedLink.Reading.once, .twiceDroppingTheFirst])
    func chainReadOnceOrTwice(reading: CountedLink.Reading) throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.chain(40))
        let live = LiveObjects()
        var head: CountedLink? = try Self.decode(CountedLink.self, from: data, reading: reading, live: live)
        var walk = head
        for value in (0..<40).reversed() {
            #expect(walk?.value == value)
            if value > 0 { #expect(walk?.next?.back === walk, "link \(value - 1)'s back link") }
            walk = walk?.next
        }
        #expect(walk == nil)
        #expect(live.count == 40)
        head = nil
        #expect(live.count == 0, "decoded links outlived their chain")
    }

    /// A chain without back links, compressed or not, read once, twice (the first read dropped,
    /// so that the table cannot give the second the link it gave away) or twice with the
    /// initializer catching any error: it comes back whole, each link released once, with no
    /// link left over from a decode that had to start again.
    @Test(arguments: [CountedLink.Reading.once, .twiceDroppingTheFirst, .twiceIgnoringErrors], [false, true])
    func plainChainReadOnceOrTwice(reading: CountedLink.Reading, compressed: Bool) throws {
        let options = GraphArchiver.Options(compression: compressed ? .zstd : .none)
        let data = try GraphArchiver.archivedData(withRootObject: Self.plainChain(300), options: options)
        let info = try GraphUnarchiver.archiveInfo(from: data)
        #expect(info.objectCount == 300 && info.referenceCount == 300)
        let live = LiveObjects()
        var head: CountedLink? = try Self.decode(CountedLink.self, from: data, reading: reading, live: live)
        #expect(live.count == 300, "links of a decode started again outlived it")
        var walk = head
        for value in (0..<300).reversed() {
            #expect(walk?.value == value)
            walk = walk?.next
        }
        #expect(walk == nil)
        walk = nil
        head = nil
        #expect(live.count == 0, "decoded links outlived their chain")
    }

    /// A root array of distinct links, each link's `next` another link read once: as many
    /// references as objects, each taken by its one reader.
    @Test func rootArrayOfLinksReadOnce() throws {
        let links = (0..<70).map { CountedLink($0, next: CountedLink(1_000 + $0, next: nil)) }
        let data = try GraphArchiver.archivedData(withRootObject: links)
        let live = LiveObjects()
        var back: [CountedLink]? = try Self.decode([CountedLink].self, from: data, reading: .once, live: live)
        #expect(back?.map(\.value) == Array(0..<70))
        #expect(back?.map { $0.next?.value } == (0..<70).map { 1_000 + $0 })
        #expect(live.count == 140)
        back = nil
        #expect(live.count == 0, "decoded links outlived their array")
    }

    /// A chain of three whose last link's `next` was edited to the first link: the first link
    /// is referenced twice and the middle one by nothing, so there are as many references as
    /// objects still. The second read of the first link cannot take what the first read took,
    /// and the decode starts again: the head's `next` is the first link, and the middle link,
    /// which nothing reaches, is released with the decode.
    @Test(arguments: [CountedLink.Reading.once, .twiceIgnoringErrors])
    func linkReferencedTwiceAndLinkReferencedNever(reading: CountedLink.Reading) throws {
        let original = [UInt8](try GraphArchiver.archivedData(withRootObject: Self.plainChain(3)))
        var payload = Array(original[64...])
        let reference = [ValueTag.objectReference, 1]
        let starts = payload.indices.dropLast().filter { Array(payload[$0...($0 + 1)]) == reference }
        try #require(starts.count == 1, "the head's reference to the middle link")
        payload[starts[0] + 1] = 0
        let typeCount = UInt32(original[12]) | UInt32(original[13]) << 8
        let data = HandBuiltArchive(payload, typeCount: typeCount, objectCount: 3, referenceCount: 3).data
        let live = LiveObjects()
        var head: CountedLink? = try Self.decode(CountedLink.self, from: data, reading: reading, live: live)
        #expect(head?.value == 2 && head?.next?.value == 0 && head?.next?.next == nil)
        #expect(live.count == 2, "the link nothing reaches outlived the decode")
        head = nil
        #expect(live.count == 0)
    }

    /// References never read: the table alone holds the links the root does not reach, and
    /// releases each of them once; a chain without back links too, whose table would have
    /// handed each link to the reference that read it.
    @Test(arguments: [false, true])
    func chainNeverRead(withoutBackLinks: Bool) throws {
        let chain = withoutBackLinks ? Self.plainChain(130) : Self.chain(40)
        let data = try GraphArchiver.archivedData(withRootObject: chain)
        let live = LiveObjects()
        var head: CountedLink? = try Self.decode(CountedLink.self, from: data, reading: .never, live: live)
        #expect(head?.value == (withoutBackLinks ? 129 : 39) && head?.next == nil)
        #expect(live.count == 1, "links no one holds outlived the decode")
        head = nil
        #expect(live.count == 0)
    }

    /// One link referenced by many others, and many times by the root array: every reader gets
    /// the same instance, however it reads it, and it is released once, with the last holder.
    @Test(arguments: [CountedLink.Reading.once, .twiceDroppingTheFirst, .never])
    func sharedLink(reading: CountedLink.Reading) throws {
        let hub = CountedLink(100, next: nil)
        let spokes = (0..<10).map { CountedLink($0, next: hub) }
        let data = try GraphArchiver.archivedData(withRootObject: spokes + spokes + [hub, hub])
        let live = LiveObjects()
        var back: [CountedLink]? = try Self.decode([CountedLink].self, from: data, reading: reading, live: live)
        let decoded = back!
        #expect(decoded.map(\.value) == Array(0..<10) + Array(0..<10) + [100, 100])
        #expect((0..<10).allSatisfy { decoded[$0] === decoded[$0 + 10] })
        #expect(decoded[..<10].allSatisfy { reading == .never ? $0.next == nil : $0.next === decoded[20] })
        #expect(decoded[21] === decoded[20])
        #expect(live.count == 11)
        _ = consume decoded
        back = nil
        #expect(live.count == 0, "decoded links outlived their array")
    }
}

/// A chain link that counts itself in the decode's `LiveObjects` and reads its `next` as the
/// decode's `Reading` says; `back` is a weak back link, decoded later.
final class CountedLink: GraphCoding {
    enum Reading: Sendable {
        case once
        /// Reads `next` before `value` and drops it, then again as the next value stored.
        case twiceDroppingTheFirst
        /// As `twiceDroppingTheFirst`, each read with `try?`: an error reads as nil.
        case twiceIgnoringErrors
        case never
    }

    @TaskLocal static var reading = Reading.once
    @TaskLocal static var live: LiveObjects?

    let value: Int
    var next: CountedLink?
    weak var back: CountedLink?
    private let live: LiveObjects?

    init(_ value: Int, next: CountedLink?) {
        self.value = value
        self.next = next
        live = nil
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(value, forKey: "value")
        try archiver.encode(next, forKey: "next")
        try archiver.encodeConditionalObject(back, forKey: "back")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        switch Self.reading {
        case .once:
            value = try unarchiver.decode(Int.self, forKey: "value")
            next = try unarchiver.decode(CountedLink?.self, forKey: "next")
        case .twiceDroppingTheFirst:
            let first = try unarchiver.decode(CountedLink?.self, forKey: "next")?.value
            value = try unarchiver.decode(Int.self, forKey: "value")
            next = try unarchiver.decode(CountedLink?.self, forKey: "next")
            guard next?.value == first else {
                throw GraphArchiveError(.corrupt, "link \(value) read two different links")
            }
        case .twiceIgnoringErrors:
            _ = try? unarchiver.decode(CountedLink?.self, forKey: "next")
            value = try unarchiver.decode(Int.self, forKey: "value")
            next = try? unarchiver.decode(CountedLink?.self, forKey: "next")
        case .never:
            value = try unarchiver.decode(Int.self, forKey: "value")
            next = nil
        }
        live = Self.live
        live?.add(1)
        try unarchiver.decodeLater(CountedLink?.self, forKey: "back") { (link: CountedLink, back) in link.back = back }
    }

    deinit { live?.add(-1) }
}
