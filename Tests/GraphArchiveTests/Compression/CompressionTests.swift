// Tests/GraphArchiveTests/Compression/CompressionTests.swift - zstd round trips, the CLI syntax, sizes, streaming writes

import Foundation
import Testing

@testable import GraphArchive

/// `count` records, the last `sharedFraction` of the slots repeating earlier ones, the same for the same seed.
func sampleRecords(_ count: Int, sharedFraction: Double = 0.25, seed: UInt64 = 1) -> [Record] {
    var state = seed
    func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
    let words = ["amber", "basalt", "cedar", "delta", "ember", "frost", "grid", "harbor", "iris", "jade"]
    let distinct = max(1, count - Int(Double(count) * sharedFraction))
    var records: [Record] = []
    records.reserveCapacity(count)
    for index in 0..<count {
        if index >= distinct {
            records.append(records[Int(next() % UInt64(distinct))])
            continue
        }
        let name = "\(words[Int(next() % 10)]) \(words[Int(next() % 10)]) \(next() % 1000)"
        let date = "202\(next() % 7)-0\(1 + next() % 9)-1\(next() % 10)T12:\(10 + next() % 50):00Z"
        records.append(Record(name: name, color: Int(next() & 0xFF_FFFF), date: date))
    }
    return records
}

/// Expects `back` to hold the same records as `original`, shared in the same slots.
func expectSameRecords(_ back: [Record], _ original: [Record], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(back.count == original.count, sourceLocation: sourceLocation)
    guard back.count == original.count else { return }
    var originalIndex: [ObjectIdentifier: Int] = [:]
    var backIndex: [ObjectIdentifier: Int] = [:]
    for slot in original.indices {
        let a = original[slot]
        let b = back[slot]
        guard a.name == b.name, a.color == b.color, a.date == b.date else {
            Issue.record("slot \(slot) differs", sourceLocation: sourceLocation)
            return
        }
        // The first slot each instance appears in must match on both sides: same sharing.
        let first = originalIndex[ObjectIdentifier(a), default: slot]
        originalIndex[ObjectIdentifier(a)] = first
        let backFirst = backIndex[ObjectIdentifier(b), default: slot]
        backIndex[ObjectIdentifier(b)] = backFirst
        guard first == backFirst else {
            Issue.record("slot \(slot) shares with \(backFirst), expected \(first)", sourceLocation: sourceLocation)
            return
        }
    }
}
@Suite("Compression syntax")
struct CompressionSyntaxTests {
    @Test(arguments: [
        ("none", ArchiveCompression.none), ("zstd", .zstd(level: 3)), ("zstd:1", .zstd(level: 1)),
        ("zstd:19", .zstd(level: 19)), ("zstd:-5", .zstd(level: -5)), ("zstd:0", .zstd(level: 0)),
    ])
    func parsesTheCommandLineForms(text: String, expected: ArchiveCompression) throws {
        let parsed = try ArchiveCompression(parsing: text)
        #expect(parsed == expected)
        #expect(try ArchiveCompression(parsing: parsed.description) == parsed)
    }

    @Test(arguments: ["", "zstd:", "zstd:x", "zstd:3:4", "ZSTD", "gzip", "zstd 3", " none", "zstd:3.5"])
    func refusesOtherText(text: String) {
        let error = archiveError { _ = try ArchiveCompression(parsing: text) }
        #expect(error?.code == .invalidValue)
        #expect(error?.message.contains("none, zstd or zstd:LEVEL") == true)
    }

    @Test func defaultLevelIsThree() {
        #expect(ArchiveCompression.zstd == .zstd(level: 3))
        #expect(ArchiveCompression.defaultZstdLevel == 3)
    }

    #if Zstd
    @Test func reportsSupportAndTheLibraryLevels() throws {
        #expect(ArchiveCompression.isZstdAvailable)
        let levels = try #require(ArchiveCompression.zstdLevels)
        #expect(levels.contains(-5) && levels.contains(1) && levels.contains(19) && levels.contains(22))
    }

    @Test(arguments: [23, 1000, -1_000_000, Int.max, Int.min])
    func levelsOutsideTheLibraryRangeAreRefused(level: Int) throws {
        let parseError = archiveError { _ = try ArchiveCompression(parsing: "zstd:\(level)") }
        #expect(parseError?.code == .invalidValue)
        #expect(parseError?.message.contains("out of range") == true)
        let saveError = archiveError {
            _ = try GraphArchiver.archivedData(
                withRootObject: [1, 2],
                options: .init(compression: .zstd(level: level))
            )
        }
        #expect(saveError?.code == .invalidValue)
    }
    #else
    @Test func reportsNoSupport() {
        #expect(!ArchiveCompression.isZstdAvailable)
        #expect(ArchiveCompression.zstdLevels == nil)
    }
    #endif
}

#if Zstd
@Suite("Compression round trips")
struct CompressionRoundTripTests {
    @Test(arguments: [-5, 1, 3, 9, 19], [0, 1, 1000])
    func roundTripsInMemoryAndThroughFiles(level: Int, count: Int) throws {
        let records = sampleRecords(count)
        let options = GraphArchiver.Options(compression: .zstd(level: level))
        let data = try GraphArchiver.archivedData(withRootObject: records, options: options)
        let plain = try GraphArchiver.archivedData(withRootObject: records)

        let info = try GraphUnarchiver.verify(data)
        #expect(info.isCompressed && info.compressionName == "zstd" && info.compression == nil)
        #expect(info.archiveBytes == data.count)
        #expect(info.storedPayloadBytes == data.count - 64)
        // The uncompressed payload's bytes, plus one block's length and record count (§5.6).
        #expect((0...10).contains(info.payloadBytes - (plain.count - 64)))
        #expect(info.rootElementCount == count)
        expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data), records)

        try withTemporaryFolder { (folder) throws in
            let path = folder + "/records.gridstore"
            try GraphArchiver.archiveRootObject(records, toFile: path, options: options)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == data)
            #expect(try GraphUnarchiver.verify(file: path) == info)
            #expect(try GraphUnarchiver.archiveInfo(fromFile: path) == info)
            expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path), records)
        }
    }

    @Test func uncompressedArchivesReportTheirSizes() throws {
        let data = try GraphArchiver.archivedData(withRootObject: sampleRecords(10))
        let info = try GraphUnarchiver.archiveInfo(from: data)
        #expect(!info.isCompressed && info.compressionName == "none" && info.compression == ArchiveCompression.none)
        #expect(info.storedPayloadBytes == info.payloadBytes && info.archiveBytes == data.count)
    }

    /// Large enough for several 256 KiB read pieces and several object blocks (FORMAT.md §5.6).
    @Test func largeArchiveRoundTripsThroughAFile() throws {
        let records = sampleRecords(300_000)
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/large.gridstore"
            try GraphArchiver.archiveRootObject(records, toFile: path, options: .init(compression: .zstd))
            let info = try GraphUnarchiver.archiveInfo(fromFile: path)
            #expect(info.payloadBytes > 4 * ColumnarObjects.blockBytes)
            #expect(info.storedPayloadBytes < info.payloadBytes / 2)
            #expect(info.objectCount == 225_000 && info.referenceCount == 300_000)
            expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path), records)
        }
    }

    @Test func streamedFileEqualsTheInMemoryBytesInEitherOrder() throws {
        let records = sampleRecords(5000)
        try withTemporaryFolder { (folder) throws in
            // File first: compressed straight into the file; then in memory.
            let first = GraphArchiver(options: .init(compression: .zstd(level: 5)))
            try first.encode(records, forKey: "grids")
            try first.finishEncoding()
            try first.write(toFile: folder + "/a")
            let memory = try first.encodedData
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/a")) == memory)
            #expect(try first.encodedBytes == [UInt8](memory))
            // Memory first: the file reuses the compressed bytes.
            let second = GraphArchiver(options: .init(compression: .zstd(level: 5)))
            try second.encode(records, forKey: "grids")
            try second.finishEncoding()
            let again = try second.encodedData
            try second.write(toFile: folder + "/b")
            #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/b")) == again)
            #expect(again == memory)
        }
    }

    @Test func saveWithABadLevelLeavesTheOldArchive() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/grids.gridstore"
            try GraphArchiver.archiveRootObject(sampleRecords(3), toFile: path, options: .init(compression: .zstd))
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let error = archiveError {
                try GraphArchiver.archiveRootObject(
                    sampleRecords(5),
                    toFile: path,
                    options: .init(compression: .zstd(level: 99))
                )
            }
            #expect(error?.code == .invalidValue)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["grids.gridstore"])
        }
    }

    @Test func deepCopyThroughACompressedArchive() throws {
        let records = sampleRecords(100)
        expectSameRecords(
            try GraphArchiver.deepCopy(of: records, options: .init(compression: .zstd(level: 1))),
            records
        )
    }
}
#else
@Suite("Compression without the Zstd trait")
struct CompressionUnavailableTests {
    @Test func savingCompressedIsRefusedAndWritesNothing() throws {
        let dataError = archiveError {
            _ = try GraphArchiver.archivedData(withRootObject: sampleRecords(3), options: .init(compression: .zstd))
        }
        #expect(dataError?.code == .compressionUnavailable)
        #expect(dataError?.message.contains("Zstd trait") == true)
        try withTemporaryFolder { (folder) throws in
            let fileError = archiveError {
                try GraphArchiver.archiveRootObject(
                    sampleRecords(3),
                    toFile: folder + "/x",
                    options: .init(compression: .zstd)
                )
            }
            #expect(fileError?.code == .compressionUnavailable)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
    }

    @Test func parsingTheZstdFormsMeansTheSameAsWithZstd() throws {
        #expect(try ArchiveCompression(parsing: "zstd:19") == .zstd(level: 19))
        #expect(try ArchiveCompression(parsing: "zstd:-131072") == .zstd(level: -131_072))
        for text in ["zstd:23", "zstd:-131073"] {
            #expect(archiveError { _ = try ArchiveCompression(parsing: text) }?.code == .invalidValue)
        }
    }
}
#endif
