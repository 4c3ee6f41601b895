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

    /// An archive stored in one frame, as before §3.3 (flags 0b111), of the same records: its
    /// rows are rebuilt alongside too, from a payload decompressed before the decode.
    @Test func aLargeArchiveInOneFrameIsRebuiltAsItIsDecoded() throws {
        let data = try archive()
        let (header, payload, _) = try Self.decompressed(data)
        let oneFrame = Data(try Self.sealedInOneFrame(payload, header: header))
        let loaded = try LoadedArchive.load(
            ArchiveBytes(copying: oneFrame),
            options: .init(),
            rebuildingAlongside: true
        )
        #expect(loaded.stream is RebuiltPayloadWindow)
        expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: oneFrame), records)
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/one-frame.gridstore"
            try oneFrame.write(to: URL(fileURLWithPath: path))
            expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path), records)
        }
    }

    /// A file changed after its checksum was verified, while its blocks are decompressed beside
    /// the decoder: the decode reports the change.
    @Test func aFileChangedWhileItsBlocksAreDecompressedIsReported() throws {
        let data = try archive()
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/changing.gridstore"
            try data.write(to: URL(fileURLWithPath: path))
            let file = try ArchiveFile(path: path, maximumBytes: .max)
            let loaded = try LoadedArchive.load(file: file, options: .init(), rebuildingAlongside: true)
            let window = try #require(loaded.stream as? RebuiltPayloadWindow)
            // Changed after the checksum pass: the last byte of the frame index.
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seek(toOffset: UInt64(data.count - 1))
            try handle.write(contentsOf: [data[data.count - 1] ^ 0x01])
            try handle.close()
            var memory = loaded.memory
            try window.load(upTo: window.end, memory: &memory)
            let error = archiveError { try window.verify() }
            #expect(error?.code == .ioError && error?.message.contains("changed while it was being read") == true)
        }
    }

    /// The header, decompressed payload and frames of the two-frame archive `data`.
    static func decompressed(_ data: Data) throws -> (ArchiveHeader, [UInt8], StoredFrames) {
        let archive = [UInt8](data)
        let bytes = ArchiveBytes(copying: archive)
        var reader = bytes.reader()
        let header = try ArchiveHeader.decode(from: &reader)
        return (header, try decompressedPayload(archive), try storedFrames(archive))
    }

    /// `payload` stored in one frame under `header`, as before §3.3.
    static func sealedInOneFrame(_ payload: [UInt8], header: ArchiveHeader) throws -> [UInt8] {
        let frame = try zstdFrame(payload)
        var header = header
        header.flags = [.zstdPayload, .columnarObjects, .objectBlocks]
        header.storedLength = UInt64(frame.count)
        header.payloadChecksum = XXH64.hash(frame)
        return header.encoded() + frame
    }

    /// `data` with the first shape id of its last object block set to 127, resealed in two
    /// frames as the writer stores them.
    static func damagingLastBlock(of data: Data) throws -> [UInt8] {
        var (header, payload, frames) = try decompressed(data)
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
        try compressed.write(OutputChunk(Array(payload[..<frames.blocksLength])).writer)
        let (storedLength, checksum) = try compressed.finish(
            tables: OutputChunk(Array(payload[frames.blocksLength...])).writer,
            top: ByteWriter(),
            blockFieldBytes: frames.blockFieldBytes
        )
        header.storedLength = UInt64(storedLength)
        header.payloadChecksum = checksum
        return header.encoded() + compressed.frameInMemory().writer.bytes
    }
}
#endif
