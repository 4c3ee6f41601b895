// Tests/GridStoreTests/GridStateFileURLTests.swift - the grid-state file calls' URL forms

import Foundation
import GraphArchive
import GridStore
import Testing

@Suite("Grid-state file URLs")
struct GridStateFileURLTests {
    @Test func aStoreSavesAndEveryReadFindsItThroughFileURLs() throws {
        let folder = try TemporaryDirectory()
        let url = URL(fileURLWithPath: folder.file("my grids.gridstore"))
        let store = try GridStateDataSource(archiveURL: url)
        #expect(store.archivePath == url.path)
        let sunset = GridState(name: "Sunset", color: 0xFF8800, date: "2024-06-01T18:00:00Z")
        store.replaceAll(with: [sunset, sunset])
        try store.save()

        let states = try GridStateArchive.readStates(from: url)
        #expect(states.map(\.name) == ["Sunset", "Sunset"] && states[0] === states[1])
        #expect(try GridStateArchive.info(from: url).objectCount == 1)
        #expect(try GridStateArchive.verify(url).records == 2)

        let keyed = URL(fileURLWithPath: folder.file("grids.plist"))
        #expect(try GridStateArchive.convert(url, to: keyed, format: .keyedPlist) == 2)
        #expect(try GridStateArchive.kind(ofFile: keyed.path) == .keyedArchive)
        let again = URL(fileURLWithPath: folder.file("again.gridstore"))
        try GridStateArchive.write(GridStateArchive.archive(states, compression: .none), to: again)
        #expect(try GridStateArchive.readStates(from: again).count == 2)
        #expect(try GridStateArchive.kind(of: again) == .gridstore)
        #expect(
            GridStateArchive.storedForm(of: keyed)
                == GridStateArchive.StoredForm(format: .keyedPlist, compression: .none)
        )
        #expect(GridStateArchive.storedForm(of: URL(fileURLWithPath: folder.file("missing"))) == nil)
    }

    /// The lock, the importer's input and the default location take URLs too.
    @Test func locksInputsAndTheDefaultLocationTakeFileURLs() throws {
        let folder = try TemporaryDirectory()
        let url = URL(fileURLWithPath: folder.file("new folder/grids.gridstore"))
        let lock = try GridStateArchive.lock(url, timeout: .zero)
        #expect(lock.isLocked && lock.archivePath == url.path)
        lock.unlock()

        let csv = URL(fileURLWithPath: folder.file("in.csv"))
        try Data("name,color,date\nSunset,1,d\n".utf8).write(to: csv)
        #expect(try GridStateImporter.contents(of: csv) == Array("name,color,date\nSunset,1,d\n".utf8))

        let home = ArchiveLocation.defaultArchiveURL(environment: ["HOME": folder.path])
        #expect(home.path == folder.path + "/.local/share/gridstore/grids.gridstore")
        try ArchiveLocation.createParentFolders(of: home)
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder.path + "/.local/share/gridstore", isDirectory: &isFolder))
        #expect(isFolder.boolValue)
    }

    @Test func nonFileURLsAreAnInvalidValueError() throws {
        let remote = try #require(URL(string: "https://example.com/grids.gridstore"))
        #expect {
            _ = try GridStateDataSource(archiveURL: remote)
        } throws: { ($0 as? GraphArchiveError)?.code == .invalidValue }
        #expect {
            _ = try GridStateArchive.readStates(from: remote)
        } throws: { ($0 as? GraphArchiveError)?.code == .invalidValue }
        #expect {
            _ = try GridStateArchive.lock(remote)
        } throws: { ($0 as? GraphArchiveError)?.code == .invalidValue }
        #expect(GridStateArchive.storedForm(of: remote) == nil)
    }
}
