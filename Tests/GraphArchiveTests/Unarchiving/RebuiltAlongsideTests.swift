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

    @Test func aDecodeThatFailsEarlyLeavesTheRebuildToStop() throws {
        let data = try archive()
        for _ in 0..<3 {
            let error = archiveError {
                _ = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry())
            }
            #expect(error?.code == .unknownType)
        }
    }

    /// `data` with the first shape id of its last object block set to 127, resealed.
    static func damagingLastBlock(of data: Data) throws -> [UInt8] {
        let bytes = ArchiveBytes(copying: data)
        var reader = bytes.reader()
        var header = try ArchiveHeader.decode(from: &reader)
        let frameStart = bytes.copyBytes(64..<(64 + PayloadCompression.frameHeaderMaximumSize))
        var payload = try PayloadCompression.decompress(
            payloadLength: Int(header.payloadLength),
            storedLength: data.count - 64,
            frameStart: frameStart,
            feed: { (decompress) throws(GraphArchiveError) in try bytes.withUnsafeBytes(64..<data.count, decompress) }
        ).copyBytes(0..<Int(header.payloadLength))
        let columnar = ArchiveBytes(copying: payload)
        var blocks = columnar.reader()
        var recordsLeft = Int(header.objectCount)
        var lastShapeStream = 0
        while recordsLeft > 0 {
            let length = try blocks.readCount()
            let end = blocks.offset + length
            recordsLeft -= Int(try blocks.readVarint())
            lastShapeStream = blocks.offset
            blocks.offset = end
        }
        withExtendedLifetime(columnar) {}
        payload[lastShapeStream] = 127
        let compressed = try CompressedPayload(level: 3, file: nil, workers: 0)
        try compressed.write(OutputChunk(payload).writer)
        let (storedLength, checksum) = try compressed.finish()
        header.storedLength = UInt64(storedLength)
        header.payloadChecksum = checksum
        return header.encoded() + compressed.frameInMemory().writer.bytes
    }
}
#endif
