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
    }

    @Test func nonFileURLsAreAnInvalidValueError() throws {
        let remote = try #require(URL(string: "https://example.com/grids.gridstore"))
        #expect {
            _ = try GridStateDataSource(archiveURL: remote)
        } throws: { ($0 as? GraphArchiveError)?.code == .invalidValue }
        #expect {
            _ = try GridStateArchive.readStates(from: remote)
        } throws: { ($0 as? GraphArchiveError)?.code == .invalidValue }
    }
}
