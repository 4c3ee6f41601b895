// Tests/GraphArchiveTests/Unarchiving/ReferenceReadLifetimeTests.swift - references read once, twice or never

import Foundation
import Testing

@testable import GraphArchive

/// The object table keeps its own reference to every object until the decode ends, and every
/// reference an initializer reads is retained for it. Handing the table's reference to the
/// reader instead (no retain, no release) would take knowing that nothing reads the object
/// again; but an initializer may read a reference, drop it and read it again (a table that
/// handed its reference to the first read gave the second a freed link: tried, it crashed),
/// and a reference may appear in many records, or in none. These tests check that every object
/// comes back whole however its references are read, and is released exactly once: a leak
/// leaves a link counted alive, an extra release crashes (AddressSanitizer, which CI runs over
/// every test, reports a read of a freed link).
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

    /// References never read: the table alone holds the links the root does not reach, and
    /// releases each of them once.
    @Test func chainNeverRead() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.chain(40))
        let live = LiveObjects()
        var head: CountedLink? = try Self.decode(CountedLink.self, from: data, reading: .never, live: live)
        #expect(head?.value == 39 && head?.next == nil)
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
