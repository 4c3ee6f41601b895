// Tests/GraphArchiveTests/Archiving/ClassHierarchyTests.swift - non-final GraphCoding classes and their subclasses

import Foundation
import Testing

@testable import GraphArchive

/// A base class as NSCoding code has them: subclasses extend `encode(with:)` and `init(from:)`
/// through `super`, and list themselves for decoding in `archivedSubclasses`.
class Note: GraphCoding {
    class var archivedSubclasses: [any GraphCoding.Type] { [Checklist.self, Reminder.self] }

    var title: String
    var tags: [String]
    var children: [Note] = []
    weak var parent: Note?

    init(title: String, tags: [String] = []) {
        self.title = title
        self.tags = tags
    }

    func adopt(_ children: [Note]) {
        self.children = children
        for child in children { child.parent = self }
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(title, forKey: "title")
        try archiver.encode(tags, forKey: "tags")
        try archiver.encode(children, forKey: "children")
        try archiver.encodeConditionalObject(parent, forKey: "parent")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        title = try unarchiver.decode(String.self, forKey: "title")
        tags = try unarchiver.decode([String].self, forKey: "tags")
        children = try unarchiver.decode([Note].self, forKey: "children")
        try unarchiver.decodeLater(Note?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
    }

    /// The class and every field, for comparing a decoded note with its original.
    var summary: String { "\(type(of: self)) \(title) \(tags)" }
}

final class Checklist: Note {
    var items: [String]
    var done: [Bool]

    init(title: String, items: [String]) {
        self.items = items
        self.done = items.map { _ in false }
        super.init(title: title, tags: ["list"])
    }

    override func encode(with archiver: GraphArchiver) throws {
        try super.encode(with: archiver)
        try archiver.encode(items, forKey: "items")
        try archiver.encode(done, forKey: "done")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        items = try unarchiver.decode([String].self, forKey: "items")
        done = try unarchiver.decode([Bool].self, forKey: "done")
        try super.init(from: unarchiver)
    }

    override var summary: String { super.summary + " \(items) \(done)" }
}

/// A subclass with subclasses of its own, listed in its own `archivedSubclasses`, and a
/// reference typed as the base class.
class Reminder: Note {
    override class var archivedSubclasses: [any GraphCoding.Type] { [UrgentReminder.self] }

    var due: Date
    var about: Note?

    init(title: String, due: Date, about: Note?) {
        self.due = due
        self.about = about
        super.init(title: title)
    }

    override func encode(with archiver: GraphArchiver) throws {
        try super.encode(with: archiver)
        try archiver.encode(due, forKey: "due")
        try archiver.encode(about, forKey: "about")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        due = try unarchiver.decode(Date.self, forKey: "due")
        about = try unarchiver.decode(Note?.self, forKey: "about")
        try super.init(from: unarchiver)
    }

    override var summary: String { super.summary + " \(due) about: \(about?.title ?? "-")" }
}

final class UrgentReminder: Reminder {
    var level: Int

    init(title: String, due: Date, about: Note?, level: Int) {
        self.level = level
        super.init(title: title, due: due, about: about)
    }

    override func encode(with archiver: GraphArchiver) throws {
        try super.encode(with: archiver)
        try archiver.encode(level, forKey: "level")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        level = try unarchiver.decode(Int.self, forKey: "level")
        try super.init(from: unarchiver)
    }

    override var summary: String { super.summary + " level \(level)" }
}

/// A hierarchy whose base class names itself with a `class var` its subclass forgot to override.
class Figure: GraphCoding {
    class var archivedTypeName: String { "Figure" }

    init() {}
    func encode(with archiver: GraphArchiver) throws {}
    required init(from unarchiver: borrowing GraphUnarchiver) throws {}
}

final class Circle: Figure {}

/// A base class that lists no subclasses: they must be registered by the caller.
class Vehicle: GraphCoding {
    var wheels: Int

    init(wheels: Int) { self.wheels = wheels }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(wheels, forKey: "wheels")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        wheels = try unarchiver.decode(Int.self, forKey: "wheels")
    }
}

final class Bicycle: Vehicle {
    init() { super.init(wheels: 2) }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        try super.init(from: unarchiver)
    }
}

/// Notes of every class: a plain note, a checklist, a reminder about the checklist, an urgent
/// reminder about the plain note, and the checklist again.
func mixedNotes() -> [Note] {
    let plain = Note(title: "plain", tags: ["a", "b"])
    let groceries = Checklist(title: "groceries", items: ["milk", "eggs"])
    groceries.done = [true, false]
    let reminder = Reminder(title: "shop", due: Date(timeIntervalSinceReferenceDate: 1000), about: groceries)
    let urgent = UrgentReminder(title: "call", due: Date(timeIntervalSinceReferenceDate: 2000), about: plain, level: 3)
    return [plain, groceries, reminder, urgent, groceries]
}

@Suite("Class hierarchies")
struct ClassHierarchyTests {
    @Test func baseClassArrayKeepsEachSubclassAndIdentity() throws {
        let notes = mixedNotes()
        let data = try GraphArchiver.archivedData(withRootObject: notes)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Note].self, from: data)
        #expect(back.map(\.summary) == notes.map(\.summary))
        #expect(back[1] === back[4])
        #expect((back[2] as? Reminder)?.about === back[1])
        #expect((back[3] as? Reminder)?.about === back[0])
        #expect(back[3] is UrgentReminder && back[1] is Checklist && type(of: back[0]) == Note.self)
        #expect(try GraphUnarchiver.archiveInfo(from: data).objectCount == 4)
    }

    /// Bodies written one after another switch between a class and its subclasses both ways,
    /// and repeat each (the type of the body before is checked on the object, not assumed).
    @Test func runsOfAClassAndItsSubclassesKeepEachClass() throws {
        let notes = mixedNotes()
        let list = Checklist(title: "list", items: ["x"])
        let run: [Note] = [notes[0], Note(title: "second"), notes[1], list, notes[0], notes[3], notes[2], list]
        let data = try GraphArchiver.archivedData(withRootObject: run)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Note].self, from: data)
        #expect(back.map(\.summary) == run.map(\.summary))
        #expect(back.map { ObjectIdentifier(type(of: $0)) } == run.map { ObjectIdentifier(type(of: $0)) })
    }

    @Test func eachClassIsArchivedUnderItsOwnName() throws {
        let data = try GraphArchiver.archivedData(withRootObject: mixedNotes())
        let names = try GraphUnarchiver.archiveInfo(from: data).typeNames
        #expect(Set(names) == ["Note", "Checklist", "Reminder", "UrgentReminder"])
    }

    @Test func optionalsAndDictionariesTypedAsTheBaseClassHoldSubclasses() throws {
        let notes = mixedNotes()
        let byTitle: [String: Note] = Dictionary(uniqueKeysWithValues: notes.prefix(4).map { ($0.title, $0) })
        let data = try GraphArchiver.archivedData(withRootObject: byTitle)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [String: Note].self, from: data)
        #expect(back.mapValues(\.summary) == byTitle.mapValues(\.summary))
        #expect((back["shop"] as? Reminder)?.about === back["groceries"])

        let single: Note? = notes[3]
        let one = try GraphUnarchiver.unarchivedObject(
            ofType: Note?.self,
            from: GraphArchiver.archivedData(withRootObject: single)
        )
        #expect(one?.summary == notes[3].summary)
        #expect((one as? Reminder)?.about?.summary == notes[0].summary)
    }

    /// A subclass instance stands where its own class or any superclass is asked for.
    @Test func subclassArrayAndSuperclassReferencesDecodeTogether() throws {
        // About nothing: asking for `[Reminder]` registers Reminder and its listed subclasses,
        // not the plain Note a reminder may be about.
        let urgent = UrgentReminder(
            title: "call",
            due: Date(timeIntervalSinceReferenceDate: 2000),
            about: nil,
            level: 3
        )
        let data = try GraphArchiver.archivedData(withRootObject: [urgent])
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Reminder].self, from: data)
        #expect(back.map(\.summary) == [urgent.summary])
        let asUrgent = try GraphUnarchiver.unarchivedObject(ofType: [UrgentReminder].self, from: data)
        #expect(asUrgent.first?.level == 3)
    }

    /// A tree of mixed classes with weak parent links, in all 24 orders of four of its notes.
    @Test func mixedTreeRoundTripsInEveryOrder() throws {
        let root = Checklist(title: "root", items: ["x"])
        let a = Note(title: "a")
        // `about` is a plain reference: it may not close a cycle with `children`.
        let b = Reminder(title: "b", due: Date(timeIntervalSinceReferenceDate: 5), about: a)
        let c = UrgentReminder(title: "c", due: Date(timeIntervalSinceReferenceDate: 6), about: nil, level: 1)
        root.adopt([a, b])
        a.adopt([c])
        for order in permutations([root, a, b, c] as [Note]) {
            let back = try GraphUnarchiver.unarchivedObject(
                ofType: [Note].self,
                from: GraphArchiver.archivedData(withRootObject: order)
            )
            #expect(back.map(\.summary) == order.map(\.summary))
            let byTitle = Dictionary(uniqueKeysWithValues: back.map { ($0.title, $0) })
            #expect(byTitle["root"]?.children.map(\.title) == ["a", "b"])
            #expect(byTitle["a"]?.parent === byTitle["root"] && byTitle["c"]?.parent === byTitle["a"])
            #expect((byTitle["b"] as? Reminder)?.about === byTitle["a"])
        }
    }

    /// Subclasses a base class does not list are registered by the caller; until then the
    /// error says which class is missing and where to register it.
    @Test func unlistedSubclassIsAClearErrorUntilRegistered() throws {
        let data = try GraphArchiver.archivedData(withRootObject: [Vehicle(wheels: 4), Bicycle()] as [Vehicle])
        let error = expectArchiveError(.unknownType) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Vehicle].self, from: data)
        }
        #expect(error?.message.contains("\"Bicycle\"") == true && error?.message.contains("archivedSubclasses") == true)

        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Vehicle].self,
            from: data,
            registry: GraphTypeRegistry([Bicycle.self])
        )
        #expect(back.map(\.wheels) == [4, 2] && back[1] is Bicycle)
    }

    /// Registering a base class registers the subclasses it lists, theirs too.
    @Test func registeringABaseClassRegistersItsListedSubclasses() {
        let registry = GraphTypeRegistry([Note.self])
        #expect(registry.names == ["Checklist", "Note", "Reminder", "UrgentReminder"])
    }

    /// A reference typed as a class, decoding an object of an unrelated class, says so.
    @Test func unrelatedClassWhereABaseClassIsExpectedIsATypeMismatch() throws {
        let data = try GraphArchiver.archivedData(withRootObject: [Record(name: "r", color: 1, date: "d")])
        let error = expectArchiveError(.typeMismatch) {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [Note].self,
                from: data,
                registry: GraphTypeRegistry([Record.self])
            )
        }
        #expect(
            error?.message.contains("expected Note, found object #0, a Record") == true,
            "\(String(describing: error))"
        )
    }

    /// A subclass that inherits its base class's `class var archivedTypeName` would be read
    /// back as the base class: encoding refuses it and says what to override.
    @Test func twoClassesUnderOneArchivedNameIsAnEncodingError() throws {
        let error = expectArchiveError(.invalidValue) {
            _ = try GraphArchiver.archivedData(withRootObject: [Figure(), Circle()])
        }
        #expect(error?.message.contains("both archived as \"Figure\"") == true, "\(String(describing: error))")
        #expect(error?.message.contains("class var") == true)
    }

    @Test func deepCopyKeepsSubclasses() throws {
        let copy = try GraphArchiver.deepCopy(of: mixedNotes())
        #expect(copy.map(\.summary) == mixedNotes().map(\.summary))
        #expect(copy[1] === copy[4] && (copy[2] as? Reminder)?.about === copy[1])
    }

    // MARK: - Keyed archives

    /// `$classes` names the real hierarchy, as NSKeyedArchiver writes it for NSObject subclasses.
    @Test func keyedArchiveWritesEachClassChain() throws {
        let data = try KeyedArchive.archivedData(withRootObject: mixedNotes())
        let chains = try classChains(inKeyedArchive: data)
        #expect(chains["Note"] == ["Note", "NSObject"])
        #expect(chains["Checklist"] == ["Checklist", "Note", "NSObject"])
        #expect(chains["UrgentReminder"] == ["UrgentReminder", "Reminder", "Note", "NSObject"])

        let back = try GraphUnarchiver.unarchivedObject(ofType: [Note].self, fromKeyedArchive: data)
        #expect(back.map(\.summary) == mixedNotes().map(\.summary))
        #expect(back[1] === back[4] && (back[2] as? Reminder)?.about === back[1])
    }

    /// Class names mapped for an app apply along the chain; a reader that knows only a
    /// superclass reads the record as that class, as NSKeyedUnarchiver falls back along `$classes`.
    @Test func keyedArchiveReaderFallsBackAlongTheClassChain() throws {
        var options = KeyedArchive.Options()
        options.setClassName("AppChecklist", for: Checklist.self)
        options.setClassName("AppNote", for: Note.self)
        let data = try KeyedArchive.archivedData(withRootObject: mixedNotes(), options: options)
        #expect(try classChains(inKeyedArchive: data)["AppChecklist"] == ["AppChecklist", "AppNote", "NSObject"])

        // Only the base class is known, under the app's name: every record is read as a Note.
        var registry = GraphTypeRegistry()
        registry.register(Note.self, forName: "AppNote")
        let back = try GraphUnarchiver(forReadingKeyedArchive: data, registry: registry)
            .decode([Note].self, forKey: GraphArchiver.rootKey)
        #expect(back.map(\.title) == mixedNotes().map(\.title))
        #expect(back.allSatisfy { type(of: $0) == Note.self })
        #expect(back[1] === back[4])
    }
}

/// The `$classes` array of every class definition in keyed archive `data`, by `$classname`.
func classChains(inKeyedArchive data: Data) throws -> [String: [String]] {
    let plist = try PropertyListSerialization.propertyList(from: data, format: nil)
    let objects = try #require((plist as? [String: Any])?["$objects"] as? [Any])
    var chains: [String: [String]] = [:]
    for case let definition as [String: Any] in objects {
        if let name = definition["$classname"] as? String, let classes = definition["$classes"] as? [String] {
            chains[name] = classes
        }
    }
    return chains
}
