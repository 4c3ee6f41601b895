// Tests/GridStoreTests/DataSourceLockingTests.swift - data sources of several processes on one archive
//
// Run under ThreadSanitizer too: swift test --sanitize=thread --filter DataSourceLocking

import Dispatch
import Foundation
import GraphArchive
import GridStore
import Testing

/// `count` distinct records named `prefix` 0, 1, ...
private func records(_ count: Int, _ prefix: String) -> [GridState] {
    (0..<count).map { GridState(name: "\(prefix) \($0)", color: $0, date: "2024-01-01T00:00:00Z") }
}

@Suite("Data sources of several processes")
struct DataSourceLockingTests {
    /// Two processes at once each append 10 records, 20 times over, through `updateArchive`:
    /// every append lands (1,000 + 2 × 20 × 10), none is overwritten by the other's save.
    @Test func concurrentUpdatesFromTwoProcessesLoseNothing() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("shared.gridstore")
        let seed = GridStateDataSource(archivePath: path)
        seed.replaceAll(with: records(1_000, "seed"))
        try seed.save()
        async let first = #expect(processExitsWith: .success) { [path = path as String] in
            let store = GridStateDataSource(archivePath: path)
            store.lockTimeout = .seconds(60)
            for round in 0..<20 { try store.updateArchive { $0.append(contentsOf: records(10, "a\(round)")) } }
        }
        async let second = #expect(processExitsWith: .success) { [path = path as String] in
            let store = GridStateDataSource(archivePath: path)
            store.lockTimeout = .seconds(60)
            for round in 0..<20 { try store.updateArchive { $0.append(contentsOf: records(10, "b\(round)")) } }
        }
        _ = await (first, second)
        let states = try GridStateArchive.readStates(fromFile: path)
        #expect(states.count == 1_400)
        #expect(Set(states.map(\.name)).count == 1_400)
    }

    /// The same with threads of one process, each with a store of its own on the one file.
    @Test func concurrentUpdatesFromStoresOfOneProcessLoseNothing() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("shared.gridstore")
        let errors = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            let store = GridStateDataSource(archivePath: path)
            store.lockTimeout = .seconds(60)
            for round in 0..<10 {
                do {
                    try store.updateArchive { $0.append(contentsOf: records(5, "t\(thread) r\(round)")) }
                } catch {
                    errors.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(errors.withLock { $0 }.isEmpty)
        #expect(try GridStateArchive.readStates(fromFile: path).count == 4 * 10 * 5)
    }

    /// A store that holds the lock (an app between its load and its save) keeps every other
    /// writer out: a save with no time to wait fails with `.locked` and leaves the archive as
    /// it was; once the lock is released, it goes through.
    @Test func heldLockKeepsOtherWritersOutUntilReleased() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("app.gridstore")
        let app = GridStateDataSource(archivePath: path)
        try app.lockArchive()
        #expect(app.holdsArchiveLock)
        try app.load()
        app.append(contentsOf: records(3, "app"))
        try app.save()  // the holder saves under the lock it holds

        let other = GridStateDataSource(archivePath: path)
        other.lockTimeout = .zero
        other.replaceAll(with: records(5, "other"))
        let error = try #require(throws: GraphArchiveError.self) { try other.save() }
        #expect(error.code == .locked)
        #expect(error.message.contains("\(path) is locked by another process (pid \(getpid()))"))
        #expect(try GridStateArchive.readStates(fromFile: path).count == 3)
        #expect(throws: GraphArchiveError.self) { try other.updateArchive { $0.append(contentsOf: records(1, "x")) } }

        app.unlockArchive()
        #expect(!app.holdsArchiveLock)
        try other.save()
        #expect(try GridStateArchive.readStates(fromFile: path).count == 5)
    }

    /// A save into a folder that does not exist yet creates it before taking the lock beside the file.
    @Test func saveIntoAMissingFolderTakesItsLockThere() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("new/deeper/grids.gridstore")
        let store = GridStateDataSource(archivePath: path)
        store.replaceAll(with: records(2, "r"))
        try store.save()
        #expect(FileManager.default.fileExists(atPath: folder.file("new/deeper/.grids.gridstore.lock")))
        #expect(try GridStateArchive.readStates(fromFile: path).count == 2)
    }

    /// `updateArchive` replaces the store's records with the archive's before changing them,
    /// and a body that throws saves nothing.
    @Test func updateStartsFromTheArchiveAndAThrowingBodySavesNothing() throws {
        let folder = try TemporaryDirectory()
        let path = folder.file("grids.gridstore")
        let writer = GridStateDataSource(archivePath: path)
        writer.replaceAll(with: records(4, "disk"))
        try writer.save()

        let store = GridStateDataSource(archivePath: path)
        store.replaceAll(with: records(9, "memory"))
        let count = try store.updateArchive { states -> Int in
            states.append(contentsOf: records(1, "new"))
            return states.count
        }
        #expect(count == 5 && !store.hasUnsavedChanges)
        struct Refused: Error {}
        #expect(throws: Refused.self) { try store.updateArchive { _ in throw Refused() } }
        #expect(try GridStateArchive.readStates(fromFile: path).count == 5)
    }
}
