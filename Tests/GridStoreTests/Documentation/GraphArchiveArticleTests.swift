// Tests/GridStoreTests/Documentation/GraphArchiveArticleTests.swift - the GraphArchive DocC articles' Swift code, compiled and run

import Foundation
import GraphArchive
import Testing

// Each block of Sources/GraphArchive/GraphArchive.docc is copied here verbatim
// (DocumentationSnippetTests checks that it is), one namespace per article.

// MARK: - GettingStarted.md (and the landing page's example)

enum GettingStartedArticle {

    final class Song: GraphCoding {
        let title: String
        let seconds: Int

        init(title: String, seconds: Int) {
            self.title = title
            self.seconds = seconds
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(title, forKey: "title")
            try archiver.encode(seconds, forKey: "seconds")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            title = try unarchiver.decode(String.self, forKey: "title")
            seconds = try unarchiver.decode(Int.self, forKey: "seconds")
        }
    }

    final class Playlist: GraphCoding {
        var name: String
        var songs: [Song]

        init(name: String, songs: [Song]) {
            self.name = name
            self.songs = songs
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(name, forKey: "name")
            try archiver.encode(songs, forKey: "songs")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            name = try unarchiver.decode(String.self, forKey: "name")
            songs = try unarchiver.decode([Song].self, forKey: "songs")
        }
    }

    struct Walkthrough {
        var playlists: [Playlist]
        var back: [Playlist]
        var info: ArchiveInfo
        var compressed: ArchiveInfo
    }

    static func walkthrough(path: String) throws -> Walkthrough {
        let intro = Song(title: "Intro", seconds: 95)
        let mornings = Playlist(name: "Mornings", songs: [intro, Song(title: "Sunrise", seconds: 240)])
        let evenings = Playlist(name: "Evenings", songs: [intro])
        try GraphArchiver.archiveRootObject([mornings, evenings], toFile: path)

        let registry = GraphTypeRegistry([Song.self])
        let playlists = try GraphUnarchiver.unarchivedObject(
            ofType: [Playlist].self,
            fromFile: path,
            registry: registry
        )
        assert(playlists[0].songs[0] === playlists[1].songs[0])  // one Intro, in both playlists

        let data = try GraphArchiver.archivedData(withRootObject: playlists)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Playlist].self, from: data, registry: registry)

        let info = try GraphUnarchiver.archiveInfo(fromFile: path)
        print(info.objectCount, info.sharedReferenceCount, info.typeNames)  // 4 1 ["Playlist", "Song"]

        let plainInfo = info
        var options = GraphArchiver.Options()
        if ArchiveCompression.isZstdAvailable {
            options.compression = .zstd  // level 3; .zstd(level: 19) compresses harder
        }
        try GraphArchiver.archiveRootObject(playlists, toFile: path, options: options)
        let compressed = try GraphUnarchiver.archiveInfo(fromFile: path)

        let graph = try ArchiveGraph(contentsOfFile: path)
        try graph.forEachObject { object in
            print("#\(object.id) \(object.className)", object.fields.map(\.key))
        }
        assert(graph.objectCount == 4)
        return Walkthrough(playlists: playlists, back: back, info: plainInfo, compressed: compressed)
    }

    /// The error handling block, on a file that is missing and on one that is damaged.
    static func handleErrors(path: String, registry: GraphTypeRegistry) throws {
        do {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Playlist].self, fromFile: path, registry: registry)
        } catch let error as GraphArchiveError where error.code == .fileNotFound {
            print("no playlists yet")
        } catch let error as GraphArchiveError {
            print("cannot read \(path): \(error)")  // the message, key path and byte offset
        }
    }
}

// MARK: - WritingModels.md

enum WritingModelsArticle {
    enum Alignment: String {
        case left, center, right
    }

    struct Margins: GraphCoding, Equatable {
        var top: Double
        var bottom: Double

        init(top: Double, bottom: Double) {
            self.top = top
            self.bottom = bottom
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(top, forKey: "top")
            try archiver.encode(bottom, forKey: "bottom")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            top = try unarchiver.decode(Double.self, forKey: "top")
            bottom = try unarchiver.decode(Double.self, forKey: "bottom")
        }
    }

    final class Page: GraphCoding {
        var text: String
        var margins: Margins  // a struct: stored inline, one copy per page
        var alignment: Alignment
        var footnote: String?  // nil is stored as nil
        var tags: Set<String>
        var modified: Date

        init(text: String, margins: Margins, alignment: Alignment = .left, footnote: String? = nil) {
            self.text = text
            self.margins = margins
            self.alignment = alignment
            self.footnote = footnote
            self.tags = []
            self.modified = Date()
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(text, forKey: "text")
            try archiver.encode(margins, forKey: "margins")
            try archiver.encode(alignment.rawValue, forKey: "alignment")
            try archiver.encode(footnote, forKey: "footnote")
            try archiver.encode(tags, forKey: "tags")
            try archiver.encode(modified, forKey: "modified")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            text = try unarchiver.decode(String.self, forKey: "text")
            margins = try unarchiver.decode(Margins.self, forKey: "margins")
            let name = try unarchiver.decode(String.self, forKey: "alignment")
            guard let alignment = Alignment(rawValue: name) else {
                throw GraphArchiveError(.invalidValue, "unknown alignment \"\(name)\"")
            }
            self.alignment = alignment
            footnote = try unarchiver.decode(String?.self, forKey: "footnote")
            tags = try unarchiver.decode(Set<String>.self, forKey: "tags")
            modified = try unarchiver.decode(Date.self, forKey: "modified")
        }
    }

    public final class Swatch: GraphCoding {
        public var name: String {
            get { storedName }
            set { storedName = newValue }
        }
        private var storedName: String

        public init(name: String) { storedName = name }

        public func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(storedName, forKey: "name")
        }

        public init(from unarchiver: borrowing GraphUnarchiver) throws {
            storedName = try unarchiver.decode(String.self, forKey: "name")
        }
    }

    class Vehicle: GraphCoding {
        class var archivedSubclasses: [any GraphCoding.Type] { [Truck.self] }

        var wheels: Int

        init(wheels: Int) { self.wheels = wheels }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(wheels, forKey: "wheels")
        }

        required init(from unarchiver: borrowing GraphUnarchiver) throws {
            wheels = try unarchiver.decode(Int.self, forKey: "wheels")
        }
    }

    final class Truck: Vehicle {
        var payload: Double

        init(wheels: Int, payload: Double) {
            self.payload = payload
            super.init(wheels: wheels)
        }

        override func encode(with archiver: GraphArchiver) throws {
            try super.encode(with: archiver)
            try archiver.encode(payload, forKey: "payload")
        }

        required init(from unarchiver: borrowing GraphUnarchiver) throws {
            payload = try unarchiver.decode(Double.self, forKey: "payload")
            try super.init(from: unarchiver)
        }
    }

    static func fleet() throws -> [Vehicle] {
        let fleet: [Vehicle] = [Vehicle(wheels: 2), Truck(wheels: 6, payload: 12.5)]
        let data = try GraphArchiver.archivedData(withRootObject: fleet)
        let parked = try GraphUnarchiver.unarchivedObject(ofType: [Vehicle].self, from: data)
        assert((parked[1] as? Truck)?.payload == 12.5)
        return parked
    }

    /// Page as version 2 declares it: a field that archives of version 1 lack.
    final class NumberedPage: GraphCoding {
        static var archivedTypeAliases: [String] { ["Page"] }

        var text: String
        var number: Int

        init(text: String, number: Int) {
            self.text = text
            self.number = number
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(text, forKey: "text")
            try archiver.encode(number, forKey: "number")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            text = try unarchiver.decode(String.self, forKey: "text")
            // Version 2 numbers its pages; archives written by version 1 have no "number".
            number = try unarchiver.decodeIfPresent(Int.self, forKey: "number") ?? 0
        }
    }

    /// A page as an older program archived it, under the class name "LegacyPage".
    final class LegacyPage: GraphCoding {
        let page: Page

        init(_ page: Page) { self.page = page }

        func encode(with archiver: GraphArchiver) throws { try page.encode(with: archiver) }

        init(from unarchiver: borrowing GraphUnarchiver) throws { page = try Page(from: unarchiver) }
    }

    static func topLevelValues(_ pages: [Page]) throws -> (title: String, pages: [Page], copy: [Page]) {
        let archiver = GraphArchiver()
        try archiver.encode(pages, forKey: "pages")
        try archiver.encode("Draft", forKey: "title")
        try archiver.finishEncoding()
        let data = try archiver.encodedData

        let unarchiver = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry([Page.self]))
        let title = try unarchiver.decode(String.self, forKey: "title")
        let restoredPages = try unarchiver.decode([Page].self, forKey: "pages")

        let copy = try GraphArchiver.deepCopy(of: pages)
        return (title, restoredPages, copy)
    }

    static func legacyName(_ pages: [Page]) throws -> [Page] {
        let data = try GraphArchiver.archivedData(withRootObject: pages.map(LegacyPage.init))
        var registry = GraphTypeRegistry([Page.self])
        registry.register(Page.self, forName: "LegacyPage")  // what an older program called it
        let legacy = try GraphUnarchiver.unarchivedObject(ofType: [Page].self, from: data, registry: registry)
        return legacy
    }
}

// MARK: - SharedReferencesAndCycles.md

enum SharedReferencesArticle {
    final class Person: GraphCoding {
        let name: String
        var friends: [Person] = []

        init(name: String) { self.name = name }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(name, forKey: "name")
            try archiver.encodeLater(friends, forKey: "friends")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            name = try unarchiver.decode(String.self, forKey: "name")
            try unarchiver.decodeLater([Person].self, forKey: "friends") { [unowned self] in self.friends = $0 }
        }
    }

    final class Category: GraphCoding {
        let name: String
        private(set) var children: [Category] = []
        private(set) weak var parent: Category?

        init(name: String, parent: Category? = nil) {
            self.name = name
            self.parent = parent
            parent?.children.append(self)
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(name, forKey: "name")
            try archiver.encode(children, forKey: "children")
            try archiver.encodeConditionalObject(parent, forKey: "parent")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            name = try unarchiver.decode(String.self, forKey: "name")
            children = try unarchiver.decode([Category].self, forKey: "children")
            try unarchiver.decodeLater(Category?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
        }
    }

    /// The article's Category before its back link was marked: the parent is a plain reference.
    final class UnmarkedCategory: GraphCoding {
        static var archivedTypeName: String { "Category" }

        let name: String
        var children: [UnmarkedCategory] = []
        weak var parent: UnmarkedCategory?

        init(name: String, parent: UnmarkedCategory? = nil) {
            self.name = name
            self.parent = parent
            parent?.children.append(self)
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(name, forKey: "name")
            try archiver.encode(children, forKey: "children")
            try archiver.encode(parent, forKey: "parent")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            name = try unarchiver.decode(String.self, forKey: "name")
            children = try unarchiver.decode([UnmarkedCategory].self, forKey: "children")
            parent = try unarchiver.decode(UnmarkedCategory?.self, forKey: "parent")
        }
    }

    static func friends() throws -> [Person] {
        let ann = Person(name: "Ann")
        let bob = Person(name: "Bob")
        let eve = Person(name: "Eve")
        ann.friends = [bob, eve]
        bob.friends = [ann]
        eve.friends = [eve, bob]

        let data = try GraphArchiver.archivedData(withRootObject: [ann, bob, eve])
        let people = try GraphUnarchiver.unarchivedObject(ofType: [Person].self, from: data)
        assert(people[0].friends[0] === people[1] && people[1].friends[0] === people[0])
        assert(people[2].friends[0] === people[2])
        return people
    }

    static func categories() throws -> (tree: Category, branch: Category) {
        let media = Category(name: "Media")
        let music = Category(name: "Music", parent: media)
        _ = Category(name: "Jazz", parent: music)

        let tree = try GraphArchiver.deepCopy(of: media)
        assert(tree.children[0].children[0].parent === tree.children[0])

        let branch = try GraphArchiver.deepCopy(of: music)
        assert(branch.parent == nil && branch.children[0].parent === branch)
        return (tree, branch)
    }
}

// MARK: - CodableBridge.md

enum CodableBridgeArticle {
    final class Artist: Codable {
        let name: String
        init(name: String) { self.name = name }
    }

    struct Track: Codable {
        var title: String
        var artist: Artist
        var released: Date
    }

    class Shape: Codable {
        var name: String
        init(name: String) { self.name = name }
    }

    final class Circle: Shape {
        var radius: Double

        init(name: String, radius: Double) {
            self.radius = radius
            super.init(name: name)
        }

        private enum CodingKeys: String, CodingKey {
            case radius
        }

        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            radius = try container.decode(Double.self, forKey: .radius)
            try super.init(from: decoder)
        }

        override func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(radius, forKey: .radius)
            try super.encode(to: encoder)
        }
    }

    final class Node: Codable {
        let name: String
        var children: [Node] = []
        weak var parent: Node?

        init(name: String, parent: Node? = nil) {
            self.name = name
            self.parent = parent
            parent?.children.append(self)
        }

        private enum CodingKeys: String, CodingKey {
            case name, children, parent
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(children, forKey: .children)
            try container.encodeLater(parent, forKey: .parent)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            children = try container.decode([Node].self, forKey: .children)
            try container.decodeLater(Node?.self, forKey: .parent) { [unowned self] in self.parent = $0 }
        }
    }

    static func tracks() throws -> [Track] {
        let nina = Artist(name: "Nina Simone")
        let tracks = [
            Track(title: "Sinnerman", artist: nina, released: Date(timeIntervalSince1970: -94_694_400)),
            Track(title: "Feeling Good", artist: nina, released: Date(timeIntervalSince1970: -141_177_600)),
        ]

        let data = try GraphArchiveEncoder().encode(tracks)
        let back = try GraphArchiveDecoder().decode([Track].self, from: data)
        assert(back[0].artist === back[1].artist)
        return back
    }

    static func shapes() throws -> [Shape] {
        let drawing: [Shape] = [Circle(name: "sun", radius: 3), Shape(name: "sky")]
        let archive = try GraphArchiveEncoder().encode(drawing)

        var decoder = GraphArchiveDecoder()
        decoder.register(Circle.self)
        let shapes = try decoder.decode([Shape].self, from: archive)
        assert((shapes[0] as? Circle)?.radius == 3)
        return shapes
    }

    static func tree() throws -> Node {
        let root = Node(name: "root")
        _ = Node(name: "leaf", parent: root)
        let copy = try GraphArchiveDecoder().decode(Node.self, from: GraphArchiveEncoder().encode(root))
        assert(copy.children[0].parent === copy)
        return copy
    }
}

// MARK: - KeyedArchives.md

enum KeyedArchivesArticle {
    final class Contact: GraphCoding {
        // The app's Objective-C class name, as its archives spell it.
        static var archivedTypeAliases: [String] { ["MYContact"] }

        var name: String
        var age: Int
        var manager: Contact?

        init(name: String, age: Int, manager: Contact? = nil) {
            self.name = name
            self.age = age
            self.manager = manager
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(name, forKey: "name")
            try archiver.encode(age, forKey: "age")
            try archiver.encode(manager, forKey: "manager")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            name = try unarchiver.decode(String.self, forKey: "name")
            age = try unarchiver.decode(Int.self, forKey: "age")
            manager = try unarchiver.decode(Contact?.self, forKey: "manager")
        }
    }

    static func roundTrip(path: String) throws -> (contacts: [Contact], keyedAgain: Data) {
        let boss = Contact(name: "Grace", age: 85)
        let team = [boss, Contact(name: "Alan", age: 41, manager: boss)]

        var options = KeyedArchive.Options()
        options.setClassName("MYContact", for: Contact.self)
        try KeyedArchive.archiveRootObject(team, toFile: path, options: options)

        let contacts = try GraphUnarchiver.unarchivedObject(ofType: [Contact].self, fromKeyedArchiveFile: path)

        let either = try GraphUnarchiver.unarchivedObject(ofType: [Contact].self, fromAnyArchiveFile: path)
        assert(either.map(\.name) == contacts.map(\.name))

        let keyed = try Data(contentsOf: URL(fileURLWithPath: path))
        let native = try KeyedArchive.gridstoreArchiveData(fromKeyedArchive: keyed)
        let keyedAgain = try KeyedArchive.keyedArchiveData(fromGridstoreArchive: native, options: options)
        return (contacts, keyedAgain)
    }

    static func severalKeys(_ contacts: [Contact]) throws -> [Contact] {
        let archiver = GraphArchiver()
        try archiver.encode(contacts, forKey: "team")
        try archiver.finishEncoding()
        let data = try archiver.keyedArchiveData()
        let unarchiver = try GraphUnarchiver(forReadingKeyedArchive: data, registry: GraphTypeRegistry([Contact.self]))
        let members = try unarchiver.decode([Contact].self, forKey: "team")
        return members
    }
}

// MARK: - HostileInput.md

enum HostileInputArticle {
    typealias Playlist = GettingStartedArticle.Playlist
    typealias Song = GettingStartedArticle.Song

    static func readUpload(_ upload: Data) throws {
        var limits = GraphUnarchiver.Options()
        limits.maximumArchiveBytes = 64 << 20  // 64 MiB
        limits.maximumDecompressedBytes = 256 << 20
        limits.maximumObjectCount = 1_000_000
        limits.maximumStringLength = 1 << 20
        limits.maximumCollectionCount = 1_000_000
        limits.maximumDepth = 64
        limits.maximumMemoryBytes = 512 << 20

        do {
            let playlists = try GraphUnarchiver.unarchivedObject(
                ofType: [Playlist].self,
                from: upload,
                registry: GraphTypeRegistry([Song.self]),
                options: limits
            )
            print("read \(playlists.count) playlists")
        } catch let error as GraphArchiveError {
            print("rejected: \(error.code): \(error)")
        }
    }

    static func appendUnderLock(path: String) throws {
        try ArchiveLock.withLock(onArchive: path) {
            var songs = try GraphUnarchiver.unarchivedObject(ofType: [Song].self, fromFile: path)
            songs.append(Song(title: "Encore", seconds: 180))
            try GraphArchiver.archiveRootObject(songs, toFile: path)
        }
    }

    /// A song that refuses a negative length.
    final class ValidatedSong: GraphCoding {
        let title: String
        let seconds: Int

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(title, forKey: "title")
            try archiver.encode(seconds, forKey: "seconds")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            title = try unarchiver.decode(String.self, forKey: "title")
            seconds = try unarchiver.decode(Int.self, forKey: "seconds")
            guard seconds >= 0 else {
                throw GraphArchiveError(.invalidValue, "a song cannot last \(seconds) s", keyPath: ["seconds"])
            }
        }
    }
}

// MARK: - The tests

@Suite("GraphArchive articles")
struct GraphArchiveArticleTests {
    @Test func gettingStartedSavesLoadsAndInspects() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("playlists.gridstore")
        let result = try GettingStartedArticle.walkthrough(path: path)
        #expect(result.playlists.map(\.name) == ["Mornings", "Evenings"])
        #expect(result.playlists[0].songs[0] === result.playlists[1].songs[0])
        #expect(result.back[0].songs[0] === result.back[1].songs[0])
        #expect(result.info.objectCount == 4 && result.info.sharedReferenceCount == 1)
        #expect(result.info.typeNames == ["Playlist", "Song"])
        #expect(result.compressed.isCompressed == ArchiveCompression.isZstdAvailable)
        #expect(result.compressed.objectCount == 4)
    }

    @Test func gettingStartedHandlesMissingAndDamagedFiles() throws {
        let folder = try TemporaryDirectory()
        let registry = GraphTypeRegistry([GettingStartedArticle.Song.self])
        try GettingStartedArticle.handleErrors(path: folder.file("none.gridstore"), registry: registry)
        let damaged = folder.file("damaged.gridstore")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: damaged))
        try GettingStartedArticle.handleErrors(path: damaged, registry: registry)
    }

    @Test func pagesKeepTheirFieldsAndReadThroughNewerAndOlderDeclarations() throws {
        typealias Article = WritingModelsArticle
        let page = Article.Page(text: "one", margins: Article.Margins(top: 1, bottom: 2), alignment: .center)
        page.tags = ["draft"]
        let pages = [
            page, Article.Page(text: "two", margins: Article.Margins(top: 0, bottom: 0), footnote: "fn"), page,
        ]
        let (title, restored, copy) = try Article.topLevelValues(pages)
        #expect(title == "Draft")
        for decoded in [restored, copy] {
            #expect(decoded.map(\.text) == ["one", "two", "one"] && decoded[0] === decoded[2])
            #expect(decoded[0].margins == Article.Margins(top: 1, bottom: 2) && decoded[0].alignment == .center)
            #expect(decoded[0].tags == ["draft"] && decoded[0].footnote == nil && decoded[1].footnote == "fn")
            #expect(decoded[0].modified == page.modified)
        }
        #expect(copy[0] !== page)

        let numbered = try GraphUnarchiver.unarchivedObject(
            ofType: [Article.NumberedPage].self,
            from: GraphArchiver.archivedData(withRootObject: pages)
        )
        #expect(numbered.map(\.number) == [0, 0, 0] && numbered.map(\.text) == ["one", "two", "one"])

        let legacy = try Article.legacyName(pages)
        #expect(legacy.map(\.text) == ["one", "two", "one"])
    }

    @Test func aLibraryClassWithPrivateStorageRoundTrips() throws {
        let swatch = WritingModelsArticle.Swatch(name: "Ochre")
        let data = try GraphArchiver.archivedData(withRootObject: [swatch, swatch])
        let back = try GraphUnarchiver.unarchivedObject(ofType: [WritingModelsArticle.Swatch].self, from: data)
        #expect(back[0].name == "Ochre" && back[0] === back[1])
        back[0].name = "Umber"
        #expect(back[1].name == "Umber")
    }

    @Test func subclassesComeBackAsTheirOwnClass() throws {
        let parked = try WritingModelsArticle.fleet()
        #expect(parked.map(\.wheels) == [2, 6])
        #expect(
            !(parked[0] is WritingModelsArticle.Truck) && (parked[1] as? WritingModelsArticle.Truck)?.payload == 12.5
        )
    }

    @Test func unknownAlignmentFailsTheRead() throws {
        typealias Article = WritingModelsArticle
        final class BadPage: GraphCoding {
            static var archivedTypeName: String { "Page" }
            func encode(with archiver: GraphArchiver) throws {
                try archiver.encode("text", forKey: "text")
                try archiver.encode(Article.Margins(top: 0, bottom: 0), forKey: "margins")
                try archiver.encode("justified", forKey: "alignment")
            }
            init() {}
            init(from unarchiver: borrowing GraphUnarchiver) throws {}
        }
        let data = try GraphArchiver.archivedData(withRootObject: [BadPage()])
        #expect(throws: GraphArchiveError.self) {
            try GraphUnarchiver.unarchivedObject(ofType: [Article.Page].self, from: data)
        }
    }

    @Test func friendsAndCategoriesCloseTheirCycles() throws {
        let people = try SharedReferencesArticle.friends()
        #expect(people.map(\.name) == ["Ann", "Bob", "Eve"])
        #expect(people[0].friends.map(\.name) == ["Bob", "Eve"] && people[0].friends[1] === people[2])
        #expect(people[2].friends[0] === people[2] && people[2].friends[1] === people[1])
        for person in people { person.friends = [] }

        let (tree, branch) = try SharedReferencesArticle.categories()
        #expect(tree.name == "Media" && tree.parent == nil && tree.children[0].parent === tree)
        #expect(branch.name == "Music" && branch.parent == nil && branch.children.map(\.name) == ["Jazz"])
    }

    /// The article quotes this message, wrapped: it must stay what encoding says.
    @Test func unmarkedParentLinkFailsTheEncodeWithTheQuotedMessage() throws {
        let media = SharedReferencesArticle.UnmarkedCategory(name: "Media")
        _ = SharedReferencesArticle.UnmarkedCategory(name: "Music", parent: media)
        defer { media.children = [] }
        let article = try String(
            contentsOf: DocumentationSnippetTests.root.appendingPathComponent(
                "Sources/GraphArchive/GraphArchive.docc/SharedReferencesAndCycles.md"
            ),
            encoding: .utf8
        )
        let quoted = article.components(separatedBy: "```\n")[1].split(separator: "\n").joined(separator: " ")
        #expect(quoted.hasPrefix("the objects refer to one another"), "\(quoted)")
        do {
            _ = try GraphArchiver.archivedData(withRootObject: media)
            Issue.record("a cycle of plain references was archived")
        } catch let error as GraphArchiveError {
            #expect(error.code == .unresolvedCycle)
            #expect(error.message == quoted)
        }
    }

    @Test func codableTracksShapesAndTrees() throws {
        let tracks = try CodableBridgeArticle.tracks()
        #expect(tracks.map(\.title) == ["Sinnerman", "Feeling Good"] && tracks[0].artist === tracks[1].artist)
        #expect(tracks[0].released == Date(timeIntervalSince1970: -94_694_400))

        let shapes = try CodableBridgeArticle.shapes()
        #expect(shapes.map(\.name) == ["sun", "sky"] && shapes[0] is CodableBridgeArticle.Circle)
        #expect(!(shapes[1] is CodableBridgeArticle.Circle))

        let tree = try CodableBridgeArticle.tree()
        #expect(tree.name == "root" && tree.children.map(\.name) == ["leaf"] && tree.children[0].parent === tree)
    }

    @Test func unregisteredSubclassIsATypeMismatch() throws {
        let drawing: [CodableBridgeArticle.Shape] = [CodableBridgeArticle.Circle(name: "sun", radius: 3)]
        let archive = try GraphArchiveEncoder().encode(drawing)
        #expect(throws: DecodingError.self) {
            try GraphArchiveDecoder().decode([CodableBridgeArticle.Shape].self, from: archive)
        }
    }

    @Test func contactsRoundTripThroughKeyedArchives() throws {
        let folder = try TemporaryDirectory()
        let (contacts, keyedAgain) = try KeyedArchivesArticle.roundTrip(path: folder.file("contacts.plist"))
        #expect(contacts.map(\.name) == ["Grace", "Alan"] && contacts[1].manager === contacts[0])
        #expect(ArchiveKind.detect(keyedAgain) == .keyedArchive)
        let again = try GraphUnarchiver.unarchivedObject(
            ofType: [KeyedArchivesArticle.Contact].self,
            fromKeyedArchive: keyedAgain
        )
        #expect(again.map(\.age) == [85, 41] && again[1].manager === again[0])
        let members = try KeyedArchivesArticle.severalKeys(contacts)
        #expect(members.map(\.name) == ["Grace", "Alan"] && members[1].manager === members[0])
    }

    @Test func tightLimitsRejectWhatTheyDoNotFit() throws {
        let song = GettingStartedArticle.Song(title: String(repeating: "la", count: 1 << 20), seconds: 1)
        let upload = try GraphArchiver.archivedData(
            withRootObject: [GettingStartedArticle.Playlist(name: "long", songs: [song])]
        )
        try HostileInputArticle.readUpload(upload)
        var limits = GraphUnarchiver.Options()
        limits.maximumStringLength = 1 << 20
        #expect {
            try GraphUnarchiver.unarchivedObject(
                ofType: [GettingStartedArticle.Playlist].self,
                from: upload,
                registry: GraphTypeRegistry([GettingStartedArticle.Song.self]),
                options: limits
            )
        } throws: { ($0 as? GraphArchiveError)?.code == .limitExceeded }
    }

    @Test func aLockedUpdateKeepsWhatWasThere() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("songs.gridstore")
        try GraphArchiver.archiveRootObject([GettingStartedArticle.Song(title: "Opening", seconds: 60)], toFile: path)
        try HostileInputArticle.appendUnderLock(path: path)
        let songs = try GraphUnarchiver.unarchivedObject(ofType: [GettingStartedArticle.Song].self, fromFile: path)
        #expect(songs.map(\.title) == ["Opening", "Encore"])
    }

    @Test func negativeLengthFailsTheRead() throws {
        let data = try GraphArchiver.archivedData(withRootObject: [GettingStartedArticle.Song(title: "x", seconds: -1)])
        var registry = GraphTypeRegistry()
        registry.register(HostileInputArticle.ValidatedSong.self, forName: "Song")
        #expect {
            try GraphUnarchiver.unarchivedObject(
                ofType: [HostileInputArticle.ValidatedSong].self,
                from: data,
                registry: registry
            )
        } throws: { ($0 as? GraphArchiveError)?.code == .invalidValue }
    }
}
