// Tests/GridStoreTests/ArchiveLocationTests.swift - where the archive lives by default

import Testing

@testable import GridStore

@Suite("Archive location")
struct ArchiveLocationTests {
    @Test func gridstoreFileWins() {
        let path = ArchiveLocation.defaultArchivePath(
            environment: ["GRIDSTORE_FILE": "/data/my.gridstore", "XDG_DATA_HOME": "/xdg"],
            homeDirectory: "/home/u"
        )
        #expect(path == "/data/my.gridstore")
    }

    @Test func xdgDataHomeIsNext() {
        let path = ArchiveLocation.defaultArchivePath(environment: ["XDG_DATA_HOME": "/xdg/"], homeDirectory: "/home/u")
        #expect(path == "/xdg/gridstore/grids.gridstore")
    }

    @Test(arguments: [[:], ["XDG_DATA_HOME": ""], ["XDG_DATA_HOME": "relative/path"], ["GRIDSTORE_FILE": ""]])
    func homeIsTheFallback(environment: [String: String]) {
        let path = ArchiveLocation.defaultArchivePath(environment: environment, homeDirectory: "/home/u")
        #expect(path == "/home/u/.local/share/gridstore/grids.gridstore")
    }
}
