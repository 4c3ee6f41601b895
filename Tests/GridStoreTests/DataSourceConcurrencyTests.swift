// Tests/GridStoreTests/DataSourceConcurrencyTests.swift - the shared data source under many threads
//
// Run under ThreadSanitizer too: swift test --sanitize=thread --filter DataSourceConcurrency

import Dispatch
import Foundation
import GraphArchive
import GridStore
import Testing

/// The tests that use the app's singleton, one at a time (it is one store for the whole process).
@Suite("Shared data source under many threads", .serialized)
struct DataSourceConcurrencyTests {
    static let threads = 8
    static let rounds = 30

    /// `GridStateDataSource.shared`, pointed at a fresh file for the test and restored after.
    func withSharedStore(_ body: (GridStateDataSource, String) throws -> Void) throws {
        let folder = try TemporaryDirectory()
        let store = GridStateDataSource.shared
        let (previousPath, previousCompression) = (store.archivePath, store.compression)
        defer {
            store.replaceAll(with: [])
            store.archivePath = previousPath
            store.compression = previousCompression
        }
        store.archivePath = folder.file("shared.gridstore")
        try body(store, store.archivePath)
    }

    /// OS threads (not tasks) append, edit the one shared record, switch compression, read and
    /// save at once; every save leaves a whole archive and the last holds every change.
    @Test func sharedStoreMutatedAndSavedFromManyThreads() throws {
        try withSharedStore { store, path in
            store.replaceAll(with: [GridState(name: "shared", color: 0, date: "2024-01-01T00:00:00Z")])
            let errors = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
                do {
                    for round in 0..<Self.rounds {
                        store.update { states in
                            states[0].color += 1
                            states.append(states[0])
                            states.append(GridState(name: "thread \(thread) round \(round)", color: round, date: "d"))
                        }
                        if round % 6 == thread % 6 {
                            if ArchiveCompression.isZstdAvailable {
                                store.compression = round % 12 < 6 ? .zstd(level: 1) : .none
                            }
                            try store.save()
                            // Whatever the other threads do, the file is one whole archive.
                            _ = try GraphUnarchiver.verify(file: path)
                        }
                        _ = try store.saveIfChanged()
                        _ = store.read { $0.count }
                    }
                } catch {
                    errors.withLock { $0.append("thread \(thread): \(error)") }
                }
            }
            #expect(errors.withLock { $0 }.isEmpty)
            try store.save()
            #expect(!store.hasUnsavedChanges)

            let reopened = GridStateDataSource(archivePath: path)
            try reopened.load()
            let total = Self.threads * Self.rounds
            let (count, sharedSlots, sharedColor) = reopened.read { states in
                (states.count, states.filter { $0 === states[0] }.count, states[0].color)
            }
            #expect(count == 1 + 2 * total)
            #expect(sharedSlots == 1 + total)
            #expect(sharedColor == total)
        }
    }

    /// Loads race saves and changes: the store is always one archive's records or a later
    /// change of them, and the file always loads.
    @Test func loadsRacingSavesLeaveAWholeArchive() throws {
        try withSharedStore { store, path in
            store.replaceAll(with: (0..<200).map { GridState(name: "r\($0)", color: $0, date: "d") })
            try store.save()
            let errors = Locked<[String]>([])
            DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
                do {
                    for round in 0..<Self.rounds {
                        switch (thread + round) % 3 {
                        case 0: try store.load()
                        case 1: try store.save()
                        default:
                            store.update { states in
                                states.append(GridState(name: "t\(thread)", color: -1, date: "d"))
                            }
                        }
                        let states = try GridStateArchive.readStates(fromFile: path)
                        if states.count < 200 { throw GraphArchiveError(.corrupt, "file lost records") }
                    }
                } catch {
                    errors.withLock { $0.append("thread \(thread): \(error)") }
                }
            }
            #expect(errors.withLock { $0 }.isEmpty)
            try store.save()
            let onDisk = try GridStateArchive.readStates(fromFile: path).count
            #expect(onDisk == store.count)
        }
    }
}
