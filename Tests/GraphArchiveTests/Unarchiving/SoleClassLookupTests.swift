// Tests/GraphArchiveTests/Unarchiving/SoleClassLookupTests.swift - typed lookups when one class has every object

import Foundation
import Testing

@testable import GraphArchive

/// An archive whose objects are all of one class keeps no class per object: a reference read
/// as exactly that class matches with one comparison, and any other class asked for goes the
/// full way, a superclass through a cast and an unrelated class to a type mismatch. With two
/// classes, each object's entry decides.
struct SoleClassLookupTests {
    @Test func referencesToTheOnlyClassReadAsItself() throws {
        var chain: Link? = Link(value: 1, next: Link(value: 2, next: Link(value: 3, next: nil)))
        defer { dismantle(&chain) }
        var decoded: Link? = try GraphUnarchiver.unarchivedObject(
            ofType: Link.self,
            from: GraphArchiver.archivedData(withRootObject: chain!)
        )
        defer { dismantle(&decoded) }
        #expect(decoded?.value == 1)
        #expect(decoded?.next?.value == 2)
        #expect(decoded?.next?.next?.value == 3)
        #expect(decoded?.next?.next?.next == nil)
    }

    @Test func referencesToTheOnlyClassReadAsASuperclass() throws {
        // Every object is a Reminder; `about` (`Note?`) and `children` (`[Note]`) ask for Note.
        let first = Reminder(title: "first", due: Date(timeIntervalSince1970: 0), about: nil)
        let second = Reminder(title: "second", due: Date(timeIntervalSince1970: 1), about: first)
        second.adopt([first])
        let data = try GraphArchiver.archivedData(withRootObject: second)
        #expect(try GraphUnarchiver.archiveInfo(from: data).typeNames == ["Reminder"])

        let decoded = try GraphUnarchiver.unarchivedObject(ofType: Reminder.self, from: data)
        let about = try #require(decoded.about as? Reminder)
        #expect(decoded.title == "second")
        #expect(about.title == "first")
        #expect(about.about == nil)
        #expect(decoded.children.count == 1)
        #expect(decoded.children.first === about)
        #expect(about.parent === decoded)
    }

    @Test func referencesToTheOnlyClassReadAsAnotherClassAreATypeMismatch() throws {
        let chain = Link(value: 1, next: Link(value: 2, next: nil))
        let data = try GraphArchiver.archivedData(withRootObject: chain)
        let error = expectArchiveError(.typeMismatch, mentioning: "which is neither Vehicle nor a subclass of it") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: LinkReadAsVehicle.self, from: data)
        }
        #expect(error?.keyPath == ["Link#1", "n"])
    }

    @Test func referencesOfTwoClassesAreEachReadAsTheirOwn() throws {
        let plain = Note(title: "plain")
        let reminder = Reminder(title: "reminder", due: Date(timeIntervalSince1970: 2), about: plain)
        let root = Reminder(title: "root", due: Date(timeIntervalSince1970: 3), about: reminder)
        root.adopt([plain, reminder])
        let decoded = try GraphUnarchiver.unarchivedObject(
            ofType: Reminder.self,
            from: GraphArchiver.archivedData(withRootObject: root),
            registry: GraphTypeRegistry([Note.self])
        )
        let about = try #require(decoded.about as? Reminder)
        #expect(about.title == "reminder")
        #expect(type(of: try #require(about.about)) == Note.self)
        #expect(about.about?.title == "plain")
        #expect(decoded.children.map(\.title) == ["plain", "reminder"])
        #expect(decoded.children[1] === about)
    }
}

/// Reads a `Link` archive's next link as a `Vehicle`, a class the archive has no object of.
final class LinkReadAsVehicle: GraphCoding {
    static let archivedTypeName = "Link"
    let next: Vehicle?

    init(from unarchiver: GraphUnarchiver) throws {
        _ = try unarchiver.decode(Int.self, forKey: "v")
        next = try unarchiver.decode(Vehicle?.self, forKey: "n")
    }

    func encode(with archiver: GraphArchiver) throws {}
}
