// Tests/GridStoreTests/Documentation/GridStoreArticleTests.swift - the GridStore DocC article's Swift code, compiled and run

import Foundation
import GraphArchive
import GridStore
import Testing

// Each block of Sources/GridStore/GridStore.docc is copied here verbatim (DocumentationSnippetTests
// checks that it is).

enum PersistingGridStatesArticle {
    static func loadChangeSave(path: String) throws -> (found: Bool, names: [String], store: GridStateDataSource) {
        let store = GridStateDataSource(archivePath: path)
        let found = try store.load()  // false on first launch: no file yet, an empty store

        let sunset = GridState(name: "Sunset", color: 0xFF8800, date: "2024-06-01T18:00:00Z")
        store.update { states in
            states.append(sunset)
            states.append(sunset)  // one record in two slots
        }
        try store.save()

        let names = store.read { states in states.map(\.name) }
        return (found, names, store)
    }

    static func updateTogether(path: String) throws -> Int {
        let store = GridStateDataSource(archivePath: path)
        let added = try store.updateArchive { states in
            states.append(GridState(name: "Dusk", color: 0x333366, date: "2024-06-02T21:00:00Z"))
            return states.count
        }
        return added
    }

    static func loadWithinBudget(path: String) throws -> GridStateDataSource {
        let store = GridStateDataSource(archivePath: path)
        store.decodingOptions.maximumMemoryBytes = 256 << 20
        try store.load()
        return store
    }

    /// Compiled, not run: it reads and saves the user's own archive and installs signal handlers.
    static func launch() throws {
        let store = GridStateDataSource.shared
        try store.load()
        store.saveOnTermination()
    }

    static func convert(path: String, keyedPath: String) throws -> (count: Int, states: [GridState]) {
        let count = try GridStateArchive.convert(file: path, toFile: keyedPath, format: .keyedPlist)
        let states = try GridStateArchive.readStates(fromFile: keyedPath)
        return (count, states)
    }

    static func importAndExport() throws -> (imported: [GridState], output: [UInt8]) {
        let csv = """
            name,color,date,id
            Sunset,16746496,2024-06-01T18:00:00Z,1
            Dawn,16764108,2024-06-02T05:10:00Z,2
            Sunset,16746496,2024-06-01T18:00:00Z,1
            """
        var importer = GridStateImporter(source: "states.csv")
        var imported: [GridState] = []
        try importer.read(Array(csv.utf8), format: .csv, into: &imported)
        assert(imported[0] === imported[2])

        var identity = GridStateIdentity()
        var output: [UInt8] = []
        for state in imported {
            JSONLinesWriter.appendLine(for: state, id: identity.number(of: state), to: &output)
        }
        return (imported, output)
    }

    static func generate() -> [GridState] {
        let generated = GridStateGenerator(count: 1_000, sharedFraction: 0.25, seed: 7).generate()
        return generated
    }
}

@Suite("GridStore article")
struct GridStoreArticleTests {
    @Test func storeLoadsChangesSavesAndConverts() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("grids.gridstore")
        let (found, names, store) = try PersistingGridStatesArticle.loadChangeSave(path: path)
        #expect(!found && names == ["Sunset", "Sunset"] && !store.hasUnsavedChanges)

        let reopened = GridStateDataSource(archivePath: path)
        #expect(try reopened.load())
        #expect(reopened.read { $0.count == 2 && $0[0] === $0[1] })

        let (count, states) = try PersistingGridStatesArticle.convert(path: path, keyedPath: folder.file("grids.plist"))
        #expect(count == 2 && states[0] === states[1] && states[0].color == 0xFF8800)
        #expect(try GridStateArchive.kind(ofFile: folder.file("grids.plist")) == .keyedArchive)
    }

    @Test func updateArchiveAddsToWhatIsOnDisk() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("grids.gridstore")
        #expect(try PersistingGridStatesArticle.updateTogether(path: path) == 1)
        #expect(try PersistingGridStatesArticle.updateTogether(path: path) == 2)
        #expect(try GridStateArchive.readStates(fromFile: path).map(\.name) == ["Dusk", "Dusk"])
    }

    @Test func aLoadOverItsMemoryBudgetFailsAndKeepsTheRecords() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("grids.gridstore")
        let states = GridStateGenerator(count: 1_000, sharedFraction: 0, seed: 3).generate()
        try GraphArchiver.archiveRootObject(states, toFile: path)
        let store = try PersistingGridStatesArticle.loadWithinBudget(path: path)
        #expect(store.count == 1_000)

        store.decodingOptions.maximumMemoryBytes = 16 << 10
        #expect {
            try store.load()
        } throws: { ($0 as? GraphArchiveError)?.code == .limitExceeded }
        #expect(store.count == 1_000)
    }

    @Test func importKeepsSharedIdsAndExportNumbersThem() throws {
        let (imported, output) = try PersistingGridStatesArticle.importAndExport()
        #expect(imported.map(\.name) == ["Sunset", "Dawn", "Sunset"] && imported[0] === imported[2])
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3 && lines[0].contains("\"id\":1") && lines[2].contains("\"id\":1"))
        #expect(lines[1].contains("\"id\":2") && lines[1].contains("\"name\":\"Dawn\""))
    }

    @Test func generatorRepeatsAQuarterOfTheSlots() {
        let generated = PersistingGridStatesArticle.generate()
        #expect(generated.count == 1_000)
        #expect(Set(generated.map(ObjectIdentifier.init)).count == 750)
    }
}
