// Tests/GraphArchiveTests/Archiving/ReversedLinkCopyTests.swift - a chain's bodies copied last to first (FORMAT.md §5.4)

import Foundation
import Testing

@testable import GraphArchive

/// A chain link that writes its reference in one of several ways: the reversed copy of a chain
/// meets tagged references at each place in a body, short bodies and long ones, and bodies it
/// leaves to the general copy (a packed reference).
final class StyledLink: GraphCoding {
    enum Style: Int, CaseIterable {
        /// The value, then the reference: the body ends with it.
        case last
        /// The reference, then the value: bytes after it.
        case first
        /// Over 32 bytes on each side of the reference (copied by `memcpy`, not by words).
        case padded
        /// The reference in a packed array (not tagged).
        case packed
        /// A conditional reference, to a link the top level also archives.
        case conditional
    }

    let value: Int
    let style: Style
    var next: StyledLink?

    init(value: Int, style: Style, next: StyledLink?) {
        self.value = value
        self.style = style
        self.next = next
    }

    static let padding = String(repeating: "p", count: 40)

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(style.rawValue, forKey: "style")
        switch style {
        case .last:
            try archiver.encode(value, forKey: "value")
            try archiver.encode(next, forKey: "next")
        case .first:
            try archiver.encode(next, forKey: "next")
            try archiver.encode(value, forKey: "value")
        case .padded:
            try archiver.encode(Self.padding, forKey: "before")
            try archiver.encode(next, forKey: "next")
            try archiver.encode(Self.padding, forKey: "after")
            try archiver.encode(value, forKey: "value")
        case .packed:
            try archiver.encode(value, forKey: "value")
            try archiver.encode(next.map { [$0] } ?? [], forKey: "next")
        case .conditional:
            try archiver.encode(value, forKey: "value")
            try archiver.encodeConditionalObject(next, forKey: "next")
        }
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        guard let style = Style(rawValue: try unarchiver.decode(Int.self, forKey: "style")) else {
            throw GraphArchiveError(.invalidValue, "no such style")
        }
        self.style = style
        value = try unarchiver.decode(Int.self, forKey: "value")
        switch style {
        case .packed: next = try unarchiver.decode([StyledLink].self, forKey: "next").first
        default: next = try unarchiver.decode(StyledLink?.self, forKey: "next")
        }
        if style == .padded {
            let around = [
                try unarchiver.decode(String.self, forKey: "before"),
                try unarchiver.decode(String.self, forKey: "after"),
            ]
            guard around == [Self.padding, Self.padding] else { throw GraphArchiveError(.invalidValue, "padding") }
        }
    }

    /// `count` links valued 0, 1, 2, ..., link `i` of `style(i)`.
    static func chain(_ count: Int, style: (Int) -> Style) -> [StyledLink] {
        var links: [StyledLink] = []
        var next: StyledLink?
        for value in (0..<count).reversed() {
            next = StyledLink(value: value, style: style(value), next: next)
            links.append(next!)
        }
        return links.reversed()
    }

    /// Cuts a chain apart link by link (releasing its head would recurse once per link).
    static func dismantle(_ links: [StyledLink]) {
        for link in links { link.next = nil }
    }
}

@Suite("Reversed copy of a chain's links")
struct ReversedLinkCopyTests {
    /// Archives the chain from `links[0]` under "chain", then, when any link refers to the next
    /// conditionally, every link under "all" (so that each has a body). Through the general
    /// ordering when `general`, which reads the references' places or, without `notingPlaces`,
    /// every value.
    static func archive(_ links: [StyledLink], general: Bool, notingPlaces: Bool = true) throws -> Data {
        let archiver = GraphArchiver()
        try archiver.encode(links[0], forKey: "chain")
        if links.contains(where: { $0.style == .conditional }) { try archiver.encode(links, forKey: "all") }
        let pointsForward = archiver.state.bodyReferencesPointForward
        #expect(pointsForward, "every body refers to a link met after it")
        if general { archiver.state.bodyReferencesPointForward = false }
        if !notingPlaces { archiver.state.notesPlaces = false }
        try archiver.finishEncoding()
        return try archiver.encodedData
    }

    /// Checks that `data` holds the chain `links`, values and styles, through to its end.
    static func expectChain(_ data: Data, _ links: [StyledLink]) throws {
        #expect(try GraphUnarchiver.verify(data).objectCount == links.count)
        let unarchiver = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry([StyledLink.self]))
        var walk = try unarchiver.decode(StyledLink?.self, forKey: "chain")
        var read: [StyledLink] = []
        while let link = walk {
            read.append(link)
            walk = link.next
        }
        defer { StyledLink.dismantle(read) }
        #expect(read.map(\.value) == links.map(\.value))
        #expect(read.map(\.style) == links.map(\.style))
    }

    /// Chains past 16,384 links, so that references take one, two and three varint bytes before
    /// and after renumbering: the reversed copy writes what the general ordering writes, and it
    /// reads back.
    @Test(arguments: [
        [StyledLink.Style.last], [.first], [.padded], [.last, .first, .padded], [.last, .packed, .first],
        [.last, .conditional], [.conditional, .padded, .first],
    ])
    func chainOfStylesCopiesAsTheGeneralOrdering(styles: [StyledLink.Style]) throws {
        // Runs of each style, long ones and single links, so the copy stops and starts again.
        let links = StyledLink.chain(17_000) { value in
            let run = value % 100 < 60 ? 0 : value % styles.count
            return styles[run]
        }
        defer { StyledLink.dismantle(links) }
        let reversed = try Self.archive(links, general: false)
        #expect(try Self.archive(links, general: true) == reversed)
        #expect(try Self.archive(links, general: true, notingPlaces: false) == reversed)
        try Self.expectChain(reversed, links)
    }

    /// Short chains: the one-link chain (a body without a reference), and chains whose last body
    /// or first body breaks the run.
    @Test(arguments: 1...4)
    func shortChainsCopyAsTheGeneralOrdering(count: Int) throws {
        for broken in [nil, 0, count - 1] {
            let links = StyledLink.chain(count) { $0 == broken ? .packed : .last }
            defer { StyledLink.dismantle(links) }
            let reversed = try Self.archive(links, general: false)
            #expect(try Self.archive(links, general: true) == reversed)
            try Self.expectChain(reversed, links)
        }
    }
}
