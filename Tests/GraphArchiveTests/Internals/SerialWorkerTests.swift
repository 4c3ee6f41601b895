// Tests/GraphArchiveTests/Internals/SerialWorkerTests.swift - jobs on another thread, in order, and their errors

import Testing

@testable import GraphArchive

@Suite("Serial worker")
struct SerialWorkerTests {
    final class Log {
        var entries: [Int] = []
    }

    @Test func jobsRunInOrderAndTheCallerSeesThemAllWhenDrained() throws {
        let worker = SerialWorker(Log())
        for job in 0..<1_000 {
            var handedOver = 0
            try worker.submit(preparing: { _ in handedOver = job }, { log in log.entries.append(handedOver) })
        }
        let entries = try worker.drained { $0.entries }
        #expect(entries == Array(0..<1_000))
    }

    @Test func theFirstErrorSkipsTheJobsAfterItAndIsThrownToTheCaller() throws {
        let log = Log()
        let worker = SerialWorker(log)
        try worker.submit(preparing: { _ in }, { log in log.entries.append(1) })
        try worker.submit(
            preparing: { _ in },
            { (_: Log) throws(GraphArchiveError) in throw GraphArchiveError(.ioError, "disk full") }
        )
        // A submit waits for the job before it to end, so the one after the failing job throws.
        #expect(throws: GraphArchiveError.self) {
            try worker.submit(preparing: { _ in }, { log in log.entries.append(2) })
        }
        #expect(throws: GraphArchiveError.self) { try worker.drained { _ in } }
        #expect(log.entries == [1])
    }
}
