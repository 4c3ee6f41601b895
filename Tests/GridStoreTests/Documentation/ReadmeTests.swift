// Tests/GridStoreTests/Documentation/ReadmeTests.swift - README.md's Swift code, compiled and run

import Foundation
import GraphArchive
import GridStore
import Testing

// Each README block is copied here verbatim (DocumentationSnippetTests checks that it is), in a
// namespace of its own where the README declares the same names twice.

/// "Writing a model": the GraphCoding classes.
enum ReadmeModel {
    final class Author: GraphCoding {
        let name: String

        init(name: String) { self.name = name }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(name, forKey: "name")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            name = try unarchiver.decode(String.self, forKey: "name")
        }
    }

    final class Book: GraphCoding {
        let title: String
        let author: Author  // a reference to another object
        var pages: Int

        init(title: String, author: Author, pages: Int) {
            self.title = title
            self.author = author
            self.pages = pages
        }

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(title, forKey: "title")
            try archiver.encode(author, forKey: "author")
            try archiver.encode(pages, forKey: "pages")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            title = try unarchiver.decode(String.self, forKey: "title")
            author = try unarchiver.decode(Author.self, forKey: "author")
            pages = try unarchiver.decode(Int.self, forKey: "pages")
        }
    }

    final class Folder: GraphCoding {
        let name: String
        private(set) var children: [Folder] = []
        private(set) weak var parent: Folder?

        init(name: String, in parent: Folder? = nil) {
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
            children = try unarchiver.decode([Folder].self, forKey: "children")
            try unarchiver.decodeLater(Folder?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
        }
    }

    // The next version of the app calls a Book a Volume; archives already saved say "Book".
    final class Volume: GraphCoding {
        static var archivedTypeAliases: [String] { ["Book"] }

        let title: String
        let author: Author

        func encode(with archiver: GraphArchiver) throws {
            try archiver.encode(title, forKey: "title")
            try archiver.encode(author, forKey: "author")
        }

        init(from unarchiver: borrowing GraphUnarchiver) throws {
            title = try unarchiver.decode(String.self, forKey: "title")
            author = try unarchiver.decode(Author.self, forKey: "author")
        }
    }

    /// The shelf, then the same archive read through the renamed class.
    static func sharedShelfAndRename() throws -> (shelf: [Book], volumes: [Volume]) {
        let ada = Author(name: "Ada Lovelace")
        let notes = Book(title: "Notes on the Analytical Engine", author: ada, pages: 66)
        let sketch = Book(title: "Sketch of the Analytical Engine", author: ada, pages: 20)

        let data = try GraphArchiver.archivedData(withRootObject: [notes, sketch, notes])

        // Only the classes of the root's type (Book) and those registered are ever created.
        let registry = GraphTypeRegistry([Author.self])
        let shelf = try GraphUnarchiver.unarchivedObject(ofType: [Book].self, from: data, registry: registry)

        assert(shelf[0] === shelf[2])  // one book, twice on the shelf
        assert(shelf[0].author === shelf[1].author)  // one author for both books

        let volumes = try GraphUnarchiver.unarchivedObject(ofType: [Volume].self, from: data, registry: registry)
        assert(volumes[0] === volumes[2])
        return (shelf, volumes)
    }

    static func folderCycle() throws -> Folder {
        let home = Folder(name: "home")
        _ = Folder(name: "music", in: home)
        let copy = try GraphUnarchiver.unarchivedObject(
            ofType: Folder.self,
            from: GraphArchiver.archivedData(withRootObject: home)
        )
        assert(copy.children[0].parent === copy)
        return copy
    }
}

/// "Writing a model": the same classes through the Codable bridge.
enum ReadmeCodableModel {
    final class Author: Codable {
        let name: String
        init(name: String) { self.name = name }
    }

    final class Book: Codable {
        let title: String
        let author: Author
        var pages: Int

        init(title: String, author: Author, pages: Int) {
            self.title = title
            self.author = author
            self.pages = pages
        }
    }

    static func sharedShelf() throws -> [Book] {
        let ada = Author(name: "Ada Lovelace")
        let notes = Book(title: "Notes on the Analytical Engine", author: ada, pages: 66)
        let sketch = Book(title: "Sketch of the Analytical Engine", author: ada, pages: 20)

        let data = try GraphArchiveEncoder().encode([notes, sketch, notes])
        let shelf = try GraphArchiveDecoder().decode([Book].self, from: data)
        assert(shelf[0] === shelf[2] && shelf[0].author === shelf[1].author)
        return shelf
    }
}

/// "The library in use": compiled, not run, since it reads and saves the user's own archive
/// and installs signal handlers.
enum ReadmeLibraryInUse {
    static func dataSource() throws {
        // The record: the seed's UAGridState, archived by key with the app's own keys
        // ("kEncodeKeyName", "kEncodeKeyColor", "kEncodeKeyDate"), so the same decoding code reads both.
        let sunset = GridState(name: "Sunset", color: 0xFF8800, date: "2024-06-01T18:00:00Z")

        // Launch: load the shared data source. A missing file is an empty store (first launch); a
        // damaged one throws and is never silently replaced by an empty one.
        let store = GridStateDataSource.shared
        try store.load()

        // The applicationWillResignActive equivalent: SIGTERM, SIGINT, SIGHUP or a normal exit save
        // the store first if it changed.
        store.saveOnTermination()

        // Use it from any thread or task; records are reached under the store's lock.
        store.update { states in
            states.append(sunset)
            states.append(sunset)  // the same instance twice: archived once, loaded back shared
        }
        let count = store.read { $0.count }

        // Or save now, atomically: the file holds the old archive or the whole new one, never a mix.
        try store.save()
        _ = count
    }

    static func engine(_ states: [GridState], path: String) throws -> (back: [GridState], info: ArchiveInfo) {
        try GraphArchiver.archiveRootObject(states, toFile: path)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromFile: path)
        let info = try GraphUnarchiver.archiveInfo(fromFile: path)  // counts and sizes, checksum verified
        return (back, info)
    }
}

@Suite("README")
struct ReadmeTests {
    @Test func booksShareTheirAuthorAndReadThroughTheRenamedClass() throws {
        let (shelf, volumes) = try ReadmeModel.sharedShelfAndRename()
        #expect(
            shelf.map(\.title) == [
                "Notes on the Analytical Engine", "Sketch of the Analytical Engine", "Notes on the Analytical Engine",
            ]
        )
        #expect(shelf[0] === shelf[2] && shelf[0] !== shelf[1])
        #expect(shelf[0].author === shelf[1].author && shelf[1].pages == 20)
        #expect(volumes.map(\.title) == shelf.map(\.title))
        #expect(volumes[0] === volumes[2] && volumes[0].author === volumes[1].author)
    }

    @Test func folderParentLinksCloseTheCycle() throws {
        let home = try ReadmeModel.folderCycle()
        #expect(home.name == "home" && home.parent == nil)
        #expect(home.children.map(\.name) == ["music"])
        #expect(home.children[0].parent === home)
    }

    @Test func codableBooksShareTheirAuthor() throws {
        let shelf = try ReadmeCodableModel.sharedShelf()
        #expect(shelf.map(\.pages) == [66, 20, 66])
        #expect(shelf[0] === shelf[2] && shelf[0].author === shelf[1].author)
    }

    @Test func engineSavesAndLoadsGridStates() throws {
        let folder = try TemporaryDirectory()
        let sunset = GridState(name: "Sunset", color: 0xFF8800, date: "2024-06-01T18:00:00Z")
        let (back, info) = try ReadmeLibraryInUse.engine([sunset, sunset], path: folder.file("grids.gridstore"))
        #expect(back.count == 2 && back[0] === back[1] && back[0].name == "Sunset")
        #expect(info.objectCount == 1 && info.checksumVerified)
    }
}
