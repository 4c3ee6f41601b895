// Tests/GridStoreTests/GridStateDataSourceTests.swift - the shared store: load, save, concurrency

import Foundation
import GraphArchive
import Testing

@testable import GridStore

@Suite("Data source")
struct GridStateDataSourceTests {
    @Test func missingFileIsAnEmptyStoreAndCreatesNothing() throws {
        let folder = try TemporaryDirectory()
        let store = GridStateDataSource(archivePath: folder.file("none/grids.gridstore"))
        store.replaceAll(with: [GridState(name: "stale", color: 1, date: "d")])
        #expect(try store.load() == false)
        #expect(store.count == 0)
        #expect(!store.hasUnsavedChanges)
        #expect(!FileManager.default.fileExists(atPath: folder.file("none")))
    }

    @Test func saveCreatesFoldersAndLoadRestoresSharing() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("a/b/grids.gridstore")
        let store = GridStateDataSource(archivePath: path)
        store.replaceAll(with: GridStateGenerator(count: 300, sharedFraction: 0.5, seed: 9).generate())
        #expect(store.hasUnsavedChanges)
        try store.save()
        #expect(!store.hasUnsavedChanges)

        let reopened = GridStateDataSource(archivePath: path)
        #expect(try reopened.load())
        let (names, distinct) = reopened.read { states in
            (states.map(\.name), Set(states.map(ObjectIdentifier.init)).count)
        }
        #expect(names == store.read { $0.map(\.name) })
        #expect(distinct == 150)
    }

    /// A record's fields are `var`s (behind private storage): edits through them are what
    /// the archive holds, in every slot that shares the record.
    @Test func editedRecordsArchiveTheirNewValues() throws {
        let shared = GridState(name: "before", color: 1, date: "2020-01-01T00:00:00Z")
        let other = GridState(name: "other", color: 2, date: "2021-01-01T00:00:00Z")
        shared.name = "after, edited"
        shared.color += 0x10_0000
        shared.date.append(" (local)")
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [GridState].self,
            from: GraphArchiver.archivedData(withRootObject: [shared, other, shared])
        )
        #expect(back.map(\.name) == ["after, edited", "other", "after, edited"])
        #expect(back.map(\.color) == [0x10_0001, 2, 0x10_0001])
        #expect(back[0].date == "2020-01-01T00:00:00Z (local)")
        #expect(back[0] === back[2] && back[0] !== back[1])
    }

    @Test func aDamagedArchiveThrowsAndIsNeverReplaced() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("grids.gridstore")
        try GraphArchiver.archiveRootObject(GridStateGenerator(count: 50).generate(), toFile: path)
        var bytes = try #require(folder.bytes(of: "grids.gridstore"))
        bytes[bytes.count - 3] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let store = GridStateDataSource(archivePath: path)
        store.replaceAll(with: [GridState(name: "kept", color: 7, date: "d")])
        #expect(throws: GraphArchiveError.self) { try store.load() }
        #expect(store.read { $0.map(\.name) } == ["kept"])
        #expect(folder.bytes(of: "grids.gridstore") == bytes)
    }

    @Test func saveIfChangedWritesOnlyChanges() throws {
        let folder = try TemporaryDirectory()
        let store = GridStateDataSource(archivePath: folder.file("grids.gridstore"))
        #expect(try store.load() == false)
        #expect(try store.saveIfChanged() == false)
        #expect(folder.bytes(of: "grids.gridstore") == nil)
        store.update { $0.append(GridState(name: "n", color: 1, date: "d")) }
        #expect(try store.saveIfChanged())
        #expect(try store.saveIfChanged() == false)
    }

    @Test func compressionSettingReachesTheArchive() throws {
        let folder = try TemporaryDirectory()
        let store = GridStateDataSource(archivePath: folder.file("grids.gridstore"))
        store.compression = .zstd
        store.replaceAll(with: GridStateGenerator(count: 20).generate())
        do {
            try store.save()
            #expect(try GridStateArchive.info(fromFile: store.archivePath).compressionName == "zstd")
        } catch let error as GraphArchiveError {
            // Builds without zstd support say so, and write nothing.
            #expect(error.code == .compressionUnavailable)
            #expect(folder.bytes(of: "grids.gridstore") == nil)
        }
    }

    /// Many tasks append, edit shared records and save at once; the last save holds every record
    /// and the sharing, and no save ever leaves a file that does not load.
    @Test func mutatedAndSavedFromManyTasksAtOnce() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("grids.gridstore")
        let store = GridStateDataSource(archivePath: path)
        store.replaceAll(with: [GridState(name: "shared", color: 0, date: "2024-01-01T00:00:00Z")])
        let tasks = 16
        let rounds = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for round in 0..<rounds {
                        store.update { states in
                            let shared = states[0]
                            shared.color += 1
                            states.append(shared)
                            states.append(GridState(name: "task \(task) round \(round)", color: round, date: "d"))
                        }
                        if round % 10 == task % 10 {
                            try store.save()
                            // Whatever another task is doing, the file on disk is a whole archive.
                            _ = try GridStateArchive.readStates(fromFile: path)
                        }
                        _ = store.read { states in states.count }
                    }
                }
            }
            try await group.waitForAll()
        }
        try store.save()

        let reopened = GridStateDataSource(archivePath: path)
        try reopened.load()
        let (count, sharedSlots, sharedColor, names) = reopened.read { states in
            (
                states.count, states.filter { $0 === states[0] }.count, states[0].color,
                Set(states.filter { $0 !== states[0] }.map(\.name))
            )
        }
        #expect(count == 1 + 2 * tasks * rounds)
        #expect(sharedSlots == 1 + tasks * rounds)
        #expect(sharedColor == tasks * rounds)
        #expect(names.count == tasks * rounds)
        #expect(!store.hasUnsavedChanges)
    }
}
