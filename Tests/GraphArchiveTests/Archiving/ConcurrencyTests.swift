// Tests/GraphArchiveTests/Archiving/ConcurrencyTests.swift - independent archivers and unarchivers on many threads
//
// Run under ThreadSanitizer too: swift test --sanitize=thread --filter Concurrency

import Dispatch
import Foundation
import Testing

@testable import GraphArchive

@Suite("Concurrency")
struct ConcurrencyTests {
    static let threads = 8

    /// Archivers and unarchivers share no state: each thread builds, archives and reads back its
    /// own graph, with shared instances and a cycle, at the same time as the others.
    @Test func independentArchiversAndUnarchiversOnManyThreads() {
        let failures = Failures.collect(iterations: Self.threads * 4) { round in
            let shared = Record(name: "shared \(round)", color: round, date: "2024")
            let records = (0..<500).map { $0 % 4 == 0 ? shared : Record(name: "r\($0)", color: round, date: "x") }
            let ring = (0..<3).map(Node.init)
            for (index, node) in ring.enumerated() { node.next = ring[(index + 1) % 3] }
            defer { for node in ring { node.next = nil } }
            let archiver = GraphArchiver()
            try archiver.encode(records, forKey: "records")
            try archiver.encode(ring[0], forKey: "ring")
            try archiver.finishEncoding()
            let data = try archiver.encodedData

            let unarchiver = try GraphUnarchiver(
                forReadingFrom: data,
                registry: GraphTypeRegistry([Record.self, Node.self])
            )
            let back = try unarchiver.decode([Record].self, forKey: "records")
            let node = try unarchiver.decode(Node.self, forKey: "ring")
            defer { node.next?.next?.next = nil }
            guard back.count == 500, back[0] === back[4], back.allSatisfy({ $0.color == round }),
                node.next?.next?.next === node
            else { throw Failures.mismatch("round \(round) read back something else") }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// One archive's bytes and one registry, read by many unarchivers at once.
    @Test func oneArchiveReadOnManyThreads() throws {
        let data = try GraphArchiver.archivedData(withRootObject: [Everything(), Everything()])
        let registry = GraphTypeRegistry([Record.self])
        let failures = Failures.collect(iterations: Self.threads * 4) { _ in
            let values = try GraphUnarchiver(forReadingFrom: data, registry: registry).decode(
                [Everything].self,
                forKey: "root"
            )
            if values != [Everything(), Everything()] { throw Failures.mismatch("values differ") }
            _ = try GraphUnarchiver.verify(data)
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Empty object arrays decoded on many threads at once. Building an empty array through
    /// `Array(unsafeUninitializedCapacity: 0)` writes to the standard library's shared empty-array
    /// storage, which ThreadSanitizer reported as a race (CI, stop 10); the decoder now returns `[]`.
    @Test func emptyObjectArraysOnManyThreads() throws {
        let data = try GraphArchiver.archivedData(withRootObject: (0..<50).map { Node($0) })
        let registry = GraphTypeRegistry([Node.self])
        let failures = Failures.collect(iterations: Self.threads * 8) { _ in
            let nodes = try GraphUnarchiver(forReadingFrom: data, registry: registry).decode(
                [Node].self,
                forKey: "root"
            )
            let empty = try GraphUnarchiver(
                forReadingFrom: GraphArchiver.archivedData(withRootObject: [Node]()),
                registry: registry
            ).decode([Node].self, forKey: "root")
            if nodes.count != 50 || !nodes.allSatisfy({ $0.children.isEmpty }) || !empty.isEmpty {
                throw Failures.mismatch("read back something else")
            }
        }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// Threads saving to their own files and, at the same time, to one common file: every file
    /// ends as one whole archive (for the common one, the last rename wins).
    @Test func saveFromManyThreads() throws {
        try withTemporaryFolder { folder in
            let common = folder + "/common"
            let failures = Failures.collect(iterations: Self.threads) { thread in
                for version in 0..<3 {
                    let number = thread * 10 + version
                    try ArchiveVersions.save(number, base: 500, to: "\(folder)/own-\(thread)")
                    try ArchiveVersions.save(number, base: 500, to: common)
                }
            }
            #expect(failures.isEmpty, "\(failures)")
            for thread in 0..<Self.threads {
                #expect(try ArchiveVersions.check("\(folder)/own-\(thread)", base: 500) == thread * 10 + 2)
            }
            let winner = try ArchiveVersions.check(common, base: 500)
            #expect(winner % 10 == 2)
            #expect(ArchiveVersions.temporaries(of: common).isEmpty)
        }
    }
}

/// Errors collected from many threads.
final class Failures: @unchecked Sendable {
    // @unchecked: every access to `messages` holds `lock`.
    private let lock = NSLock()
    private var messages: [String] = []

    /// Runs `body` for `iterations` indexes at once (`DispatchQueue.concurrentPerform`) and
    /// returns what the runs threw, as text.
    static func collect(iterations: Int, _ body: @Sendable (Int) throws -> Void) -> [String] {
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: iterations) { index in
            do {
                try body(index)
            } catch {
                failures.add("\(error)")
            }
        }
        return failures.all
    }

    /// An error for a run that read back something other than it wrote.
    static func mismatch(_ message: String) -> GraphArchiveError {
        GraphArchiveError(.invalidState, message)
    }

    private func add(_ message: String) {
        lock.lock()
        messages.append(message)
        lock.unlock()
    }

    private var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }
}
