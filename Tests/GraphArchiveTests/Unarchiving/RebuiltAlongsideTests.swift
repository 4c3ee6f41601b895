// Tests/GraphArchiveTests/Unarchiving/RebuiltAlongsideTests.swift - large zstd payloads rebuilt row-wise while they are decoded

import Foundation
import TestSupport
import Testing

@testable import GraphArchive

#if Zstd
@Suite("Rows rebuilt beside the decoder")
struct RebuiltAlongsideTests {
    /// Records whose row-wise payload passes `PayloadWindow.minimumSize`: several object blocks.
    let records = sampleRecords(300_000)

    func archive() throws -> Data {
        try GraphArchiver.archivedData(withRootObject: records, options: .init(compression: .zstd))
    }

    @Test func aLargePayloadIsRebuiltAsItIsDecoded() throws {
        let data = try archive()
        let loaded = try LoadedArchive.load(ArchiveBytes(copying: data), options: .init(), rebuildingAlongside: true)
        let window = try #require(loaded.stream as? RebuiltPayloadWindow)
        #expect(loaded.payloadRange.upperBound < window.end)
        // Waited for whole, the rows are those rebuilt before decoding, byte for byte.
        var memory = loaded.memory
        try window.load(upTo: window.end, memory: &memory)
        #expect(window.recordsLoaded == Int(loaded.header.objectCount))
        let before = try LoadedArchive.load(ArchiveBytes(copying: data), options: .init())
        #expect(before.stream?.isWhole == true)
        #expect(window.bytes.copyBytes(0..<window.end) == before.payload.copyBytes(before.payloadRange))
    }

    @Test func decodesTheSameGraphFromMemoryAndFromAFile() throws {
        let data = try archive()
        expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data), records)
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/large.gridstore"
            try data.write(to: URL(fileURLWithPath: path))
            expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path), records)
        }
    }

    /// The last block's first shape id made one the shape table lacks: the decoder builds the
    /// records before it, then gets the rebuild's error, as a check of the whole payload does.
    @Test func aDamagedLaterBlockFailsTheDecodeAsItFailsVerification() throws {
        let data = try archive()
        let damaged = Data(try Self.damagingLastBlock(of: data))
        let verifying = archiveError { _ = try GraphUnarchiver.verify(damaged) }
        let decoding = archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: damaged) }
        #expect(verifying?.code == .corrupt)
        #expect(decoding?.code == verifying?.code && decoding?.offset == verifying?.offset)
        #expect(decoding?.message == verifying?.message)
    }

    /// Bytes changed at seeded places in the blocks of a large payload, their shape streams
    /// and columns (what sets how long each block's rows are, and so whether they stay behind
    /// the bytes read): the decode rebuilding its rows over the payload gives the graph or a
    /// `GraphArchiveError`, never a crash, and never a graph from what the check refuses.
    @Test(arguments: 0..<8)
    func changedPayloadBytesDecodeOrFailCleanly(seed: Int) throws {
        let data = try archive()
        var random = SeededGenerator(seed: UInt64(seed))
        let changed = Data(
            try Self.resealed(data) { payload, shapeStreams in
                for _ in 0..<3 {
                    // Within one block: its shape stream, then its columns.
                    let block = Int.random(in: shapeStreams.indices, using: &random)
                    let end = block + 1 < shapeStreams.count ? shapeStreams[block + 1] : payload.count
                    let offset = Int.random(in: shapeStreams[block]..<end, using: &random)
                    payload[offset] = UInt8.random(in: 0...255, using: &random)
                }
            }
        )
        var decodeError: (any Error)?
        do {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: changed)
        } catch {
            decodeError = error
        }
        #expect(
            decodeError == nil || decodeError is GraphArchiveError,
            "seed \(seed): \(String(describing: decodeError))"
        )
        let verifyError = archiveError { _ = try GraphUnarchiver.verify(changed) }
        // A payload the check refuses is never decoded into a graph.
        #expect(verifyError == nil || decodeError != nil, "seed \(seed): decoded what the check refuses")
        // Rows rebuilt over the payload are the rows rebuilt apart, or both fail: none was
        // written over a byte not read yet.
        let apart = try? LoadedArchive.load(ArchiveBytes(copying: changed), options: .init())
        var over: [UInt8]?
        do {
            let loaded = try LoadedArchive.load(
                ArchiveBytes(copying: changed),
                options: .init(),
                rebuildingAlongside: true
            )
            let window = try #require(loaded.stream as? RebuiltPayloadWindow)
            var memory = loaded.memory
            try window.load(upTo: window.end, memory: &memory)
            over = window.bytes.copyBytes(0..<window.end)
        } catch is GraphArchiveError {}
        let rebuiltApart = apart.map { $0.payload.copyBytes($0.payloadRange) }
        // Compared as one Bool: a failure should not print megabytes of rows.
        let same = over == rebuiltApart
        #expect(
            same,
            "seed \(seed): \(over?.count ?? -1) rows bytes over the payload, \(rebuiltApart?.count ?? -1) apart"
        )
    }

    @Test func aDecodeThatFailsEarlyLeavesTheRebuildToStop() throws {
        let data = try archive()
        for _ in 0..<3 {
            let error = archiveError {
                _ = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry())
            }
            #expect(error?.code == .unknownType)
        }
    }

    /// The rows of a large payload go into the room reserved before it, over its own bytes once
    /// they are read, and what they leave of it is given back once they are all written.
    @Test func theRowsAreWrittenOverTheirPayload() throws {
        let data = try archive()
        let loaded = try LoadedArchive.load(ArchiveBytes(copying: data), options: .init(), rebuildingAlongside: true)
        let window = try #require(loaded.stream as? RebuiltPayloadWindow)
        let rows = window.bytes
        // A slice of a reservation: one of the same reservation holds the bytes after the rows.
        #expect(rows.slice(from: rows.count, count: 1 << 20) != nil)
        #expect(ArchiveBytes(copying: data).slice(from: 0, count: 1) == nil)
        var memory = loaded.memory
        try window.load(upTo: window.end, memory: &memory)
        let before = try LoadedArchive.load(ArchiveBytes(copying: data), options: .init())
        #expect(rows.copyBytes(0..<rows.count) == before.payload.copyBytes(before.payloadRange))
    }

    /// Rows that start only `rowsLead` bytes before their payload, in the same reservation, come
    /// out as rows rebuilt apart: cells of every length (copied whole or the checked way), a
    /// few records at a time across the boundaries between blocks, never reaching a byte not
    /// read yet.
    @Test func rowsAsCloseToTheirPayloadAsTheLeadAllowsAreRebuiltIntact() throws {
        let holders = (0..<40_000).map(ColumnarHolder.init)
        let data = try GraphArchiver.archivedData(withRootObject: holders, options: .init(compression: .zstd))
        let (header, separate) = try Self.decompressed(data)
        let apart = try ColumnarObjects.rows(fromColumnar: separate, header: header, options: .init())
        let room = Int(header.payloadLength) + ColumnCursors.longestPlainCell
        let payload = try Self.decompressed(data, roomBefore: room).payload
        #expect(try Self.shapeStreams(of: payload, header: header).count >= 4)
        var rebuild = try ColumnarObjects.Rebuild(stored: payload, header: header, options: .init())
        let rows = try #require(payload.slice(from: -rebuild.rowsLead, count: rebuild.rowCount))
        var output = rows.sequentialWriter()
        try rebuild.writeHead(into: &output)
        var written = 0
        while true {
            let records = try rebuild.writeNextRecords(into: &output, atMost: 777)
            guard records > 0 else { break }
            written += records
        }
        #expect(written == Int(header.objectCount) && output.count == rows.count)
        #expect(rows.copyBytes(0..<rows.count) == apart.copyBytes(0..<apart.count))
        // What the rows did not overwrite is given back, and only that.
        let last = rows.copyBytes((rows.count - 1)..<rows.count)
        payload.discard(pastEndOf: rows)
        #expect(rows.copyBytes((rows.count - 1)..<rows.count) == last)
        #if os(Linux)
        let rowsEnd = rows.count - rebuild.rowsLead
        #expect(payload.copyBytes((rowsEnd + 8192)..<(rowsEnd + 12288)).allSatisfy { $0 == 0 })
        #endif
    }

    @Test func slicesOfAReservationShareItsBytesWithinItsBounds() throws {
        let middle = try ArchiveBytes.reservingMapped(3 << 20, roomBefore: 1 << 20)
        #expect(middle.slice(from: -(1 << 20) - 1, count: 1) == nil)
        #expect(middle.slice(from: -(1 << 20), count: (4 << 20) + 1) == nil)
        let whole = try #require(middle.slice(from: -(1 << 20), count: 4 << 20))
        _ = middle.fill(0..<3) { (target) in
            target.copyBytes(from: [7, 8, 9])
            return 3
        }
        #expect(whole.copyBytes((1 << 20)..<((1 << 20) + 3)) == [7, 8, 9])
        // A huge page's start is at or before the offset, less than 2 MiB away, and its own.
        for offset in [-(1 << 20), -1, 0, 5, 3 << 20] {
            let start = middle.hugePageStart(of: offset)
            #expect(start <= offset && offset - start < 2 << 20)
            #expect(middle.hugePageStart(of: start) == start)
            #expect(middle.hugePageStart(of: start - 1) == start - (2 << 20))
        }
    }

    /// The header of `data` and its payload, decompressed (with `roomBefore` reserved before it).
    static func decompressed(_ data: Data, roomBefore: Int = 0) throws -> (header: ArchiveHeader, payload: ArchiveBytes)
    {
        let bytes = ArchiveBytes(copying: data)
        var reader = bytes.reader()
        let header = try ArchiveHeader.decode(from: &reader)
        let payload = try PayloadCompression.decompress(
            payloadLength: Int(header.payloadLength),
            storedLength: data.count - 64,
            frameStart: bytes.copyBytes(64..<(64 + PayloadCompression.frameHeaderMaximumSize)),
            roomBefore: roomBefore,
            feed: { (decompress) throws(GraphArchiveError) in try bytes.withUnsafeBytes(64..<data.count, decompress) }
        )
        return (header, payload)
    }

    /// Where the shape stream of each object block (FORMAT.md §5.6) of `payload` starts.
    static func shapeStreams(of payload: ArchiveBytes, header: ArchiveHeader) throws -> [Int] {
        var blocks = payload.reader()
        var recordsLeft = Int(header.objectCount)
        var starts: [Int] = []
        while recordsLeft > 0 {
            let length = try blocks.readCount()
            let end = blocks.offset + length
            recordsLeft -= Int(try blocks.readVarint())
            starts.append(blocks.offset)
            blocks.offset = end
        }
        return starts
    }

    /// `data` with the first shape id of its last object block set to 127, resealed.
    static func damagingLastBlock(of data: Data) throws -> [UInt8] {
        try resealed(data) { payload, shapeStreams in payload[shapeStreams.last!] = 127 }
    }

    /// `data` with its decompressed payload changed by `change` (given where each block's
    /// shape stream starts), compressed again and resealed: its checksums match, so the change
    /// reaches the rebuild and the decoder.
    static func resealed(_ data: Data, _ change: (inout [UInt8], [Int]) -> Void) throws -> [UInt8] {
        let (read, columnar) = try decompressed(data)
        var header = read
        var payload = columnar.copyBytes(0..<columnar.count)
        change(&payload, try shapeStreams(of: columnar, header: header))
        let compressed = try CompressedPayload(level: 3, file: nil, workers: 0)
        try compressed.write(OutputChunk(payload).writer)
        let (storedLength, checksum) = try compressed.finish()
        header.storedLength = UInt64(storedLength)
        header.payloadChecksum = checksum
        return header.encoded() + compressed.frameInMemory().writer.bytes
    }
}
#endif
