// Tests/GraphArchiveTests/Compression/CompressionCorruptTests.swift - damaged and hostile compressed archives

#if Zstd
import Foundation
import Testing

@testable import GraphArchive

/// `archive` with its stored payload replaced by `stored` (and, if given, its payload length
/// changed), both checksums made right again: only what zstd reads is wrong.
func resealed(_ archive: [UInt8], stored: [UInt8], payloadLength: UInt64? = nil) throws -> [UInt8] {
    let bytes = ArchiveBytes(copying: archive)
    var reader = bytes.reader()
    var header = try ArchiveHeader.decode(from: &reader)
    header.flags.insert(.zstdPayload)
    header.storedLength = UInt64(stored.count)
    header.payloadChecksum = XXH64.hash(stored)
    if let payloadLength { header.payloadLength = payloadLength }
    return header.encoded() + stored
}

/// A zstd frame of run-length blocks, written out by hand (RFC 8878 §3.1.1): each block repeats
/// one byte `blockSize` times, so a few bytes stand for as much content as one likes.
func handMadeFrame(contentSize: UInt64?, blocks: Int, blockSize: Int = 1 << 17, windowLog: Int = 17) -> [UInt8] {
    var frame: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]  // magic number 0xFD2FB528, little endian
    // Frame header descriptor: an 8-byte content size or none; no single segment, checksum or dictionary.
    frame.append(contentSize == nil ? 0x00 : 0xC0)
    frame.append(UInt8(windowLog - 10) << 3)  // window descriptor: exponent, mantissa 0: a 2^windowLog window
    if let contentSize {
        // content size, little endian
        frame += (0..<8).map { UInt8(truncatingIfNeeded: contentSize >> (8 * UInt64($0))) }
    }
    for index in 0..<blocks {
        // Block header, 3 bytes little endian: last-block bit, type 1 (RLE), size of the run.
        let header = UInt32(blockSize) << 3 | 1 << 1 | (index == blocks - 1 ? 1 : 0)
        frame += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16)]
        frame.append(0x41)  // the byte of the run
    }
    return frame
}

/// The errors loading `archive` gives from memory and from a file (the two read paths).
func loadErrors(_ archive: [UInt8], options: GraphUnarchiver.Options = .init()) throws -> [GraphArchiveError?] {
    let fromData = archiveError {
        _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(archive), options: options)
    }
    let fromFile = try withTemporaryFolder { folder in
        let path = folder + "/hostile.gridstore"
        try Data(archive).write(to: URL(fileURLWithPath: path))
        return archiveError {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path, options: options)
        }
    }
    return [fromData, fromFile]
}

/// A memory limit chosen above what the bombs below claim, so that their payload buffer is
/// allocated and their structure checked while it is decompressed.
private var generousBudget: GraphUnarchiver.Options {
    var options = GraphUnarchiver.Options()
    options.maximumMemoryBytes = 4 << 30
    return options
}

@Suite("Compression: damaged and hostile archives")
struct CompressionCorruptTests {
    let records = sampleRecords(1000)
    let archive: [UInt8]
    var stored: [UInt8] { Array(archive.dropFirst(64)) }

    init() throws {
        archive = try [UInt8](GraphArchiver.archivedData(withRootObject: records, options: .init(compression: .zstd)))
    }

    @Test func flippedStoredByteIsCaughtByTheArchiveChecksumFirst() throws {
        var damaged = archive
        damaged[64 + stored.count / 2] ^= 0x10
        for error in try loadErrors(damaged) {
            #expect(error?.code == .checksumMismatch)
        }
    }

    @Test func cutFileIsTruncated() throws {
        for error in try loadErrors(Array(archive.dropLast(7))) {
            #expect(error?.code == .truncated)
        }
    }

    @Test func brokenContentChecksumIsZstdsOwnError() throws {
        var frame = stored
        frame[frame.count - 1] ^= 0xFF  // the frame's last 4 bytes are zstd's content checksum
        for error in try loadErrors(try resealed(archive, stored: frame)) {
            #expect(error?.code == .compressionFailed)
            #expect(error?.message.hasPrefix("zstd: ") == true)
            #expect(error?.message.contains("checksum") == true)
        }
    }

    /// With both archive checksums made right, every flip inside the frame either fails cleanly
    /// or (where zstd ignores the bit) gives the original records back; never a crash or wrong data.
    @Test func flipsInsideAFrameWithValidChecksumsFailCleanly() throws {
        var codes: Set<GraphArchiveError.Code> = []
        for position in stride(from: 0, to: stored.count, by: max(1, stored.count / 150)) {
            var frame = stored
            frame[position] ^= 1 << UInt8(position % 8)
            let damaged = try resealed(archive, stored: frame)
            do {
                let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(damaged))
                expectSameRecords(back, records)
            } catch let error as GraphArchiveError {
                codes.insert(error.code)
            }
        }
        #expect(codes.contains(.compressionFailed))
        #expect(codes.isSubset(of: [.compressionFailed, .corrupt]))
    }

    @Test func frameCutShortWithValidChecksums() throws {
        for error in try loadErrors(try resealed(archive, stored: Array(stored.dropLast(9)))) {
            #expect(error?.code == .corrupt || error?.code == .compressionFailed)
        }
    }

    @Test func bytesAfterTheFrameAreRefused() throws {
        for error in try loadErrors(try resealed(archive, stored: stored + [0, 1, 2, 3])) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("after its zstd frame") == true)
        }
        // A second whole frame is refused too: the payload is exactly one frame (FORMAT.md §3.2).
        for error in try loadErrors(try resealed(archive, stored: stored + stored)) {
            #expect(error?.code == .corrupt)
        }
    }

    @Test func storedBytesThatAreNoFrame() throws {
        for stored in [[], Array("not a zstd frame at all".utf8)] {
            for error in try loadErrors(try resealed(archive, stored: stored)) {
                #expect(error?.code == .corrupt)
                #expect(error?.message.contains("does not start with a zstd frame header") == true)
            }
        }
    }

    @Test func frameRecordingAnotherSizeIsRefusedBeforeDecoding() throws {
        let frame = handMadeFrame(contentSize: 2000, blocks: 1, blockSize: 2000)
        for error in try loadErrors(try resealed(archive, stored: frame, payloadLength: 1000)) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("records 2000 bytes") == true)
        }
    }

    // MARK: - Decompression bombs

    /// 1 TiB claimed by a 47-byte frame: the reader's limit refuses it before allocating.
    @Test func bombClaimingATerabyteIsRefusedByTheLimit() throws {
        let frame = handMadeFrame(contentSize: 1 << 40, blocks: 8)
        let bomb = try resealed(archive, stored: frame, payloadLength: 1 << 40)
        #expect(bomb.count < 120)
        for error in try loadErrors(bomb) {
            #expect(error?.code == .limitExceeded)
            #expect(error?.message.contains("maximumDecompressedBytes") == true)
        }
    }

    /// With the limit lifted, the size no frame that short can produce is still refused before
    /// allocating (the 1 TiB allocation would otherwise trap).
    @Test func bombIsRefusedByTheFrameBoundWhenTheLimitIsLifted() throws {
        var lifted = GraphUnarchiver.Options()
        lifted.maximumDecompressedBytes = Int.max
        let frame = handMadeFrame(contentSize: 1 << 40, blocks: 8)
        for error in try loadErrors(try resealed(archive, stored: frame, payloadLength: 1 << 40), options: lifted) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("more than \(frame.count) bytes of zstd frame can hold") == true)
        }
    }

    /// A 33 KB frame of run-length blocks that inflates to 1 GiB of one byte repeated: a size the
    /// frame can hold. With a memory limit chosen that allows it, the buffer is allocated; its
    /// structure is checked as it is decompressed: the first object blocks are nonsense, and
    /// decoding stops there, with the buffer's pages never touched (the child's peak resident
    /// memory grows by far less than the gigabyte it would if the frame were inflated whole
    /// first).
    @Test(arguments: [0x00, 0x41] as [UInt8])
    func bombOfGarbageFailsInItsFirstBlocks(fill: UInt8) async throws {
        var frame = handMadeFrame(contentSize: nil, blocks: 8192)
        for block in 0..<8192 { frame[6 + 4 * block + 3] = fill }
        let bomb = try resealed(archive, stored: frame, payloadLength: 1 << 30)
        #expect(bomb.count < 40_000)
        await #expect(processExitsWith: .success) { [bomb = bomb as [UInt8]] in
            var before = rusage()
            getrusage(RUSAGE_SELF.rawValue, &before)
            for error in try loadErrors(bomb, options: generousBudget) {
                #expect(error?.code == .corrupt, "\(String(describing: error))")
                #expect(error?.message.contains("object block") == true, "\(String(describing: error))")
            }
            var after = rusage()
            getrusage(RUSAGE_SELF.rawValue, &after)
            #expect(after.ru_maxrss - before.ru_maxrss < 64 << 10, "grew by \(after.ru_maxrss - before.ru_maxrss) KiB")
        }
    }

    /// Without a chosen limit, the same 33 KB bomb is refused on its header: 1 GiB is more than
    /// any archive of its size needs (1024 times its size, at least 256 MiB), whatever the
    /// machine could give.
    @Test func bombIsRefusedOnItsHeaderByTheBudgetForItsSize() throws {
        let frame = handMadeFrame(contentSize: nil, blocks: 8192)
        let bomb = try resealed(archive, stored: frame, payloadLength: 1 << 30)
        for error in try loadErrors(bomb) {
            #expect(error?.code == .limitExceeded, "\(String(describing: error))")
            #expect(
                error?.message.contains("the memory budget for an input of 32.1 KiB (1024 times its size") == true,
                "\(String(describing: error))"
            )
            #expect(error?.offset == 16)
        }
    }

    /// A 33 KB archive whose header declares 40 million objects is refused on its header, before
    /// its payload is decompressed: their table alone is more than an input of its size may cost.
    @Test func headerDeclaringMillionsOfObjectsIsRefusedBeforeDecompressing() throws {
        let frame = handMadeFrame(contentSize: nil, blocks: 1024)
        let stored = try resealed(archive, stored: frame, payloadLength: 64 << 20)
        let bytes = ArchiveBytes(copying: stored)
        var reader = bytes.reader()
        var header = try ArchiveHeader.decode(from: &reader)
        header.objectCount = 40_000_000
        let bomb: [UInt8] = header.encoded() + frame
        for error in try loadErrors(bomb) {
            #expect(error?.code == .limitExceeded, "\(String(describing: error))")
            #expect(error?.message.contains("the 40000000 objects the header declares") == true)
            #expect(error?.offset == 32)
        }
    }

    /// An archive without objects whose frame inflates to zeros: the tables (no keys, types,
    /// shapes or top-level values) end after 4 bytes, and the rest is refused at once.
    @Test func bombAfterEmptyTablesFailsAtOnce() async throws {
        let empty = try [UInt8](
            GraphArchiver.archivedData(withRootObject: [Record](), options: .init(compression: .zstd))
        )
        let bytes = ArchiveBytes(copying: empty)
        var reader = bytes.reader()
        var header = try ArchiveHeader.decode(from: &reader)
        header.typeCount = 0
        header.objectCount = 0
        var frame = handMadeFrame(contentSize: nil, blocks: 8192)
        for block in 0..<8192 { frame[6 + 4 * block + 3] = 0 }
        header.payloadLength = 1 << 30
        header.storedLength = UInt64(frame.count)
        header.payloadChecksum = XXH64.hash(frame)
        let bomb: [UInt8] = header.encoded() + frame
        await #expect(processExitsWith: .success) { [bomb = bomb as [UInt8]] in
            var before = rusage()
            getrusage(RUSAGE_SELF.rawValue, &before)
            for error in try loadErrors(bomb, options: generousBudget) {
                #expect(error?.code == .corrupt)
                #expect(error?.message == "1073741820 bytes left over after the top section")
                #expect(error?.offset == 4)
            }
            var after = rusage()
            getrusage(RUSAGE_SELF.rawValue, &after)
            #expect(after.ru_maxrss - before.ru_maxrss < 64 << 10)
        }
    }

    /// A frame that does not record its size and expands to 4 MiB, in an archive claiming 1000
    /// bytes: decoding stops at the 1000-byte output, nothing larger is allocated.
    @Test func frameThatExpandsWithoutEndStopsAtThePayloadLength() throws {
        let frame = handMadeFrame(contentSize: nil, blocks: 4096, blockSize: 1024, windowLog: 10)
        for error in try loadErrors(try resealed(archive, stored: frame, payloadLength: 1000)) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("holds more than the header's payload length of 1000 bytes") == true)
        }
    }

    /// A frame that does not record its size may ask for a window larger than its payload (a
    /// frame compressed before its length was known does, FORMAT.md §5.6): zstd decodes into
    /// the output buffer itself and allocates no window, so the frame is read like any other
    /// (here it holds fewer bytes than claimed). Beyond zstd's own cap of 2^27 it is refused.
    @Test func frameAskingForAWindowBeyondItsPayloadAllocatesNoWindow() throws {
        let withinCap = handMadeFrame(contentSize: nil, blocks: 2, blockSize: 100, windowLog: 27)
        for error in try loadErrors(try resealed(archive, stored: withinCap, payloadLength: 1000)) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("holds 200 bytes") == true)
        }
        let beyondCap = handMadeFrame(contentSize: nil, blocks: 2, windowLog: 28)
        for error in try loadErrors(try resealed(archive, stored: beyondCap, payloadLength: 1000)) {
            #expect(error?.code == .compressionFailed)
            #expect(error?.message.contains("too much memory") == true)
        }
    }

    @Test func frameShorterThanThePayloadLength() throws {
        let frame = handMadeFrame(contentSize: nil, blocks: 1, blockSize: 100, windowLog: 10)
        for error in try loadErrors(try resealed(archive, stored: frame, payloadLength: 1000)) {
            #expect(error?.code == .corrupt)
            #expect(error?.message.contains("holds 100 bytes") == true)
        }
    }
}
#endif
