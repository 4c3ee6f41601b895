// Tests/GraphArchiveTests/Internals/PagePopulatorTests.swift - pages made resident ahead of a writer

import Dispatch
import Foundation
import Testing

@testable import GraphArchive

@Suite("Page populator")
struct PagePopulatorTests {
    /// The pieces a populator was asked for, and a signal per piece.
    final class Calls: @unchecked Sendable {
        // @unchecked: `pieces` is read and written only under `lock`.
        private let lock = NSLock()
        private var pieces: [Range<Int>] = []
        let called = DispatchSemaphore(value: 0)
        /// What a call returns once this many calls have been made before it.
        let refuseAfter: Int

        init(refuseAfter: Int = .max) {
            self.refuseAfter = refuseAfter
        }

        func record(_ piece: Range<Int>) -> Bool {
            lock.lock()
            pieces.append(piece)
            let count = pieces.count
            lock.unlock()
            called.signal()
            return count <= refuseAfter
        }

        var recorded: [Range<Int>] {
            lock.lock()
            defer { lock.unlock() }
            return pieces
        }

        /// Waits for calls until their pieces reach `end`; false if they stop short of it.
        func waitUntilPopulated(to end: Int) -> Bool {
            while recorded.last?.upperBound ?? Int.min < end {
                guard called.wait(timeout: .now() + 30) == .success else { return false }
            }
            return true
        }
    }

    /// A writer that does not move gets its lead populated, and no more: pieces in order, one
    /// after another from the range's start, each ending on a huge page (counted from the
    /// boundary) or where the lead ends. Each report of the writer moves the end along; once
    /// the writer has passed the whole range, the populator returns.
    @Test func piecesFollowTheWriterWithinTheLead() throws {
        let piece = PagePopulator.piece
        let lead = PagePopulator.lead
        let start = 5000
        let boundary = start - 3 * 4096
        let range = start..<(start + 3 * lead + 12345)
        let calls = Calls()
        let populator = PagePopulator(range: range, boundary: boundary) { calls.record($0) }
        #expect(calls.waitUntilPopulated(to: start + lead))
        // The writer moves to the middle of a huge page, short of what has been populated.
        let moved = start + lead / 2 + piece / 2
        populator.advance(to: moved)
        #expect(calls.waitUntilPopulated(to: moved + lead))
        populator.advance(to: range.upperBound)
        populator.wait()

        let pieces = calls.recorded
        #expect(pieces.first?.lowerBound == start)
        #expect(pieces.last?.upperBound == moved + lead)
        for (before, after) in zip(pieces, pieces.dropFirst()) { #expect(before.upperBound == after.lowerBound) }
        for piece in pieces {
            #expect(!piece.isEmpty && piece.count <= PagePopulator.piece)
            let onBoundary = (piece.upperBound - boundary) % PagePopulator.piece == 0
            #expect(onBoundary || piece.upperBound == start + lead || piece.upperBound == moved + lead)
        }
    }

    /// Where the system refuses (a kernel before Linux 5.14), the populator asks no more, and
    /// the writer's reports and `stop` find it gone.
    @Test func aRefusalEndsThePopulator() {
        let calls = Calls(refuseAfter: 1)
        let populator = PagePopulator(range: 0..<(64 << 20), boundary: 0) { calls.record($0) }
        populator.wait()
        #expect(calls.recorded == [0..<PagePopulator.piece, PagePopulator.piece..<(2 * PagePopulator.piece)])
        populator.advance(to: 16 << 20)
        populator.stop()
        populator.wait()
        #expect(calls.recorded.count == 2)
    }

    /// A stopped populator returns without populating the rest of its range.
    @Test func aStoppedPopulatorReturns() {
        let calls = Calls()
        let populator = PagePopulator(range: 0..<(1 << 30), boundary: 0) { calls.record($0) }
        #expect(calls.waitUntilPopulated(to: PagePopulator.lead))
        populator.stop()
        populator.wait()
        #expect(calls.recorded.last?.upperBound == PagePopulator.lead)
    }

    #if os(Linux)
    /// Whether each page of `bytes` (from `ArchiveBytes(reservingMapped:)`) that `range` touches is resident.
    static func residentPages(of bytes: ArchiveBytes, _ range: Range<Int>) -> [Bool] {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        return bytes.withUnsafeBytes(0..<bytes.count) { (buffer) -> [Bool] in
            let address = Int(bitPattern: buffer.baseAddress)
            let start = (address + range.lowerBound) / page * page
            let end = (address + range.upperBound + page - 1) / page * page
            var vector = [UInt8](repeating: 0, count: (end - start) / page)
            let result = mincore(UnsafeMutableRawPointer(bitPattern: start), end - start, &vector)
            precondition(result == 0, "mincore failed")
            return vector.map { $0 & 1 != 0 }
        }
    }

    /// The pages a range touches are made resident, with their bytes as they were, and no
    /// page outside it; or, where the system cannot, none.
    @Test func populatingMakesExactlyTheTouchedPagesResident() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let bytes = try ArchiveBytes(reservingMapped: 64 * page, hugePages: false)
        _ = bytes.fill((3 * page)..<(3 * page + 2)) { (target) in
            target.copyBytes(from: [1, 2])
            return 2
        }
        let populated = bytes.populate((page + 5)..<(5 * page - 7))
        let resident = Self.residentPages(of: bytes, 0..<bytes.count)
        #expect(resident[0] == false)
        #expect(resident[1..<5].allSatisfy { $0 == populated })
        #expect(resident[3])
        #expect(resident[5...].allSatisfy { !$0 })
        #expect(bytes.copyBytes((3 * page)..<(3 * page + 3)) == [1, 2, 0])
    }

    #if Zstd
    /// Decompressing into a reservation with room before it populates the payload's pages
    /// (all of them resident once it is written) and none of the room more than a huge page
    /// before it, which the rows alone write.
    @Test func decompressionPopulatesItsOutputOnly() throws {
        let data = try GraphArchiver.archivedData(
            withRootObject: sampleRecords(200_000),
            options: .init(compression: .zstd)
        )
        let (header, plain) = try RebuiltAlongsideTests.decompressed(data)
        let length = Int(header.payloadLength)
        let room = length + (4 << 20)
        let payload = try RebuiltAlongsideTests.decompressed(data, roomBefore: room).payload
        let whole = try #require(payload.slice(from: -room, count: room + length))
        #expect(Self.residentPages(of: whole, room..<(room + length)).allSatisfy { $0 })
        #expect(Self.residentPages(of: whole, 0..<(room - ZeroedMemory.hugePageBytes)).allSatisfy { !$0 })
        #expect(payload.copyBytes(0..<length) == plain.copyBytes(0..<plain.count))
    }
    #endif
    #endif
}
