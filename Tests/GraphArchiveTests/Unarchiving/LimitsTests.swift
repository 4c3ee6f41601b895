// Tests/GraphArchiveTests/Unarchiving/LimitsTests.swift - decoding limits and allocation bounds on hostile counts

import Foundation
import Testing

@testable import GraphArchive

#if canImport(Glibc)
import Glibc
#endif

@Suite("Decoding limits")
struct LimitsTests {
    static func options(_ change: (inout GraphUnarchiver.Options) -> Void) -> GraphUnarchiver.Options {
        var options = GraphUnarchiver.Options()
        change(&options)
        return options
    }

    static func records(_ count: Int) -> [Record] {
        (0..<count).map { Record(name: "record \($0)", color: $0, date: "2024-01-01") }
    }

    // MARK: - Each limit, exceeded

    @Test func maximumDepth() throws {
        let data = try GraphArchiver.archivedData(withRootObject: [[[[1]]]])
        let shallow = Self.options { $0.maximumDepth = 2 }
        expectArchiveError(.limitExceeded, mentioning: "maximumDepth (2)") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [[[[Int]]]].self, from: data, options: shallow)
        }
        expectArchiveError(.limitExceeded, mentioning: "maximumDepth (2)") {
            _ = try GraphUnarchiver.verify(data, options: shallow)
        }
        let enough = Self.options { $0.maximumDepth = 4 }
        #expect(
            try GraphUnarchiver.unarchivedObject(ofType: [[[[Int]]]].self, from: data, options: enough) == [[[[1]]]]
        )
    }

    /// A hostile file nesting 200,000 arrays stops at the default depth instead of the stack's end.
    @Test func deepNestingStopsAtTheDefaultLimit() {
        let nesting: [UInt8] = Array(repeating: [ValueTag.array, 1], count: 200_000).flatMap { $0 } + [0x41]
        let archive = HandBuilt.topValue(nesting)
        expectArchiveError(.limitExceeded, mentioning: "maximumDepth (512)") {
            _ = try GraphUnarchiver.verify(archive.data)
        }
        expectArchiveError(.limitExceeded, mentioning: "maximumDepth (512)") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Int].self, from: archive.data)
        }
    }

    @Test func deepValueRecordsStopAtTheLimit() throws {
        var everything = Everything()
        everything.nested = [[1]]
        let data = try GraphArchiver.archivedData(withRootObject: [[everything]])
        expectArchiveError(.limitExceeded, mentioning: "maximumDepth (3)") {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [[Everything]].self,
                from: data,
                options: Self.options { $0.maximumDepth = 3 }
            )
        }
    }

    @Test func maximumObjectCount() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.records(10))
        expectArchiveError(.limitExceeded, mentioning: "maximumObjectCount (9)") {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                from: data,
                options: Self.options { $0.maximumObjectCount = 9 }
            )
        }
        let exact = Self.options { $0.maximumObjectCount = 10 }
        #expect(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data, options: exact).count == 10)
    }

    @Test func maximumArchiveBytes() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.records(3))
        let small = Self.options { $0.maximumArchiveBytes = data.count - 1 }
        try withTemporaryFolder { folder in
            let path = folder + "/records.archive"
            try data.write(to: URL(fileURLWithPath: path))
            expectArchiveError(.limitExceeded, mentioning: "maximumArchiveBytes") {
                _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path, options: small)
            }
            expectArchiveError(.limitExceeded, mentioning: "maximumArchiveBytes") {
                _ = try GraphUnarchiver.verify(file: path, options: small)
            }
        }
        // Bytes already in memory obey the same limit as a file.
        expectArchiveError(.limitExceeded, mentioning: "maximumArchiveBytes") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data, options: small)
        }
        let exact = Self.options { $0.maximumArchiveBytes = data.count }
        #expect(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data, options: exact).count == 3)
    }

    /// A sparse 17 GiB file (no disk used) is refused by the default limit before any byte is read.
    @Test func fileOverTheDefaultLimitIsRefusedBeforeReading() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/huge.archive"
            let descriptor = open(path, O_CREAT | O_WRONLY, 0o644)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            try #require(ftruncate(descriptor, off_t(17) << 30) == 0)
            expectArchiveError(.limitExceeded, mentioning: "maximumArchiveBytes (17179869184)") {
                _ = try GraphUnarchiver.verify(file: path)
            }
        }
    }

    @Test func maximumDecompressedBytes() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.records(3))
        let payload = data.count - ArchiveHeader.size
        expectArchiveError(.limitExceeded, mentioning: "maximumDecompressedBytes (\(payload - 1))") {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                from: data,
                options: Self.options { $0.maximumDecompressedBytes = payload - 1 }
            )
        }
    }

    #if Zstd
    @Test func maximumDecompressedBytesOfACompressedArchive() throws {
        let data = try GraphArchiver.archivedData(
            withRootObject: Self.records(100),
            options: .init(compression: .zstd)
        )
        let info = try GraphUnarchiver.archiveInfo(from: data)
        #expect(info.payloadBytes > info.storedPayloadBytes)
        // Under the payload size but over the stored size: the limit is on what decompression yields.
        let limit = info.payloadBytes - 1
        try withTemporaryFolder { folder in
            let path = folder + "/records.archive"
            try data.write(to: URL(fileURLWithPath: path))
            for read in [
                {
                    _ = try GraphUnarchiver.unarchivedObject(
                        ofType: [Record].self,
                        from: data,
                        options: Self.options { $0.maximumDecompressedBytes = limit }
                    )
                },
                {
                    _ = try GraphUnarchiver.unarchivedObject(
                        ofType: [Record].self,
                        fromFile: path,
                        options: Self.options { $0.maximumDecompressedBytes = limit }
                    )
                },
            ] as [() throws -> Void] {
                expectArchiveError(.limitExceeded, mentioning: "maximumDecompressedBytes (\(limit))", read)
            }
        }
    }
    #endif

    @Test func maximumStringLength() throws {
        let long = Record(name: String(repeating: "n", count: 100), color: 0, date: "")
        let data = try GraphArchiver.archivedData(withRootObject: [long])
        let short = Self.options { $0.maximumStringLength = 99 }
        expectArchiveError(.limitExceeded, mentioning: "maximumStringLength (99)") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data, options: short)
        }
        // Byte strings and the names in the tables count too.
        let bytes = try GraphArchiver.archivedData(withRootObject: [UInt8](repeating: 7, count: 100))
        expectArchiveError(.limitExceeded, mentioning: "maximumStringLength (99)") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [UInt8].self, from: bytes, options: short)
        }
        expectArchiveError(.limitExceeded, mentioning: "name of 14 bytes exceeds maximumStringLength (10)") {
            // "kEncodeKeyName"
            _ = try GraphUnarchiver.verify(data, options: Self.options { $0.maximumStringLength = 10 })
        }
    }

    @Test func maximumCollectionCount() throws {
        let limit = Self.options { $0.maximumCollectionCount = 10 }
        let integers = try GraphArchiver.archivedData(withRootObject: Array(0..<11))
        expectArchiveError(.limitExceeded, mentioning: "maximumCollectionCount (10)") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Int].self, from: integers, options: limit)
        }
        let table = try GraphArchiver.archivedData(
            withRootObject: Dictionary(uniqueKeysWithValues: (0..<11).map { ($0, $0) })
        )
        expectArchiveError(.limitExceeded, mentioning: "maximumCollectionCount (10)") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Int: Int].self, from: table, options: limit)
        }
        let record = Record(name: "shared", color: 0, date: "")
        let references = try GraphArchiver.archivedData(withRootObject: Array(repeating: record, count: 11))
        expectArchiveError(.limitExceeded, mentioning: "maximumCollectionCount (10)") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: references, options: limit)
        }
        let enough = Self.options { $0.maximumCollectionCount = 11 }
        #expect(try GraphUnarchiver.unarchivedObject(ofType: [Int].self, from: integers, options: enough).count == 11)
    }

    // MARK: - Counts read from the file never size an allocation beyond the input

    /// Small archives (under 200 bytes) whose counts claim up to a billion elements, each within
    /// the default limits so that only the input-size bound stands between them and the allocator.
    static func forgedCountArchives() -> [(String, Data)] {
        let billion = varint(1 << 30 - 1)
        let halfGiB = varint(1 << 29)
        var archives: [(String, HandBuiltArchive)] = [
            ("array of value records", HandBuilt.topValue([ValueTag.array] + billion + [ValueTag.valueRecord, 0])),
            ("array of strings", HandBuilt.topValue([ValueTag.array] + billion + shortString("x"))),
            ("dictionary", HandBuilt.topValue([ValueTag.dictionary] + billion + shortString("k") + [0x41])),
            ("string", HandBuilt.topValue([ValueTag.string] + halfGiB + Array("abc".utf8))),
            ("byte string", HandBuilt.topValue([ValueTag.bytes] + halfGiB + [1, 2, 3])),
            ("reference array", HandBuilt.sharedRecords(root: [ValueTag.referenceArray] + billion + [2, 0, 0])),
            (
                "top-level count",
                HandBuiltArchive(
                    varint(1) + name("root") + varint(0) + varint(0) + billion,
                    typeCount: 0,
                    objectCount: 0
                )
            ),
        ]
        // The header may claim as many objects as the payload has bytes; the records are not there.
        var objects = HandBuilt.sharedRecords()
        objects.header.objectCount = UInt64(objects.payload.count)
        archives.append(("object count", objects))
        var forged = archives.map { ($0.0, $0.1.data) }
        #if Zstd
        // A 100-byte zstd archive whose header claims 15 GiB of payload (under the 16 GiB default).
        if var compressed = try? Array(
            GraphArchiver.archivedData(withRootObject: [1, 2, 3], options: .init(compression: .zstd))
        ) {
            for index in 0..<8 {
                compressed[16 + index] = UInt8(truncatingIfNeeded: (UInt64(15) << 30) >> (8 * UInt64(index)))
            }
            forged.append(("compressed payload length", Data(withRecomputedChecksums(compressed))))
        }
        #endif
        return forged
    }

    static func readAll(_ data: Data) {
        _ = try? GraphUnarchiver.verify(data)
        _ = try? GraphUnarchiver.archiveInfo(from: data)
        _ = try? GraphUnarchiver.unarchivedObject(ofType: [Everything].self, from: data)
        _ = try? GraphUnarchiver.unarchivedObject(ofType: [String].self, from: data)
        _ = try? GraphUnarchiver.unarchivedObject(ofType: [String: Int].self, from: data)
        _ = try? GraphUnarchiver.unarchivedObject(ofType: String.self, from: data)
        _ = try? GraphUnarchiver.unarchivedObject(ofType: [UInt8].self, from: data)
        _ = try? GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data)
    }

    @Test func forgedCountsAreRefused() {
        for (what, data) in Self.forgedCountArchives() {
            #expect(data.count < 200, "\(what)")
            #expect(throws: GraphArchiveError.self, "\(what)") { _ = try GraphUnarchiver.verify(data) }
        }
    }

    @Test func collectionCapacityIsBoundedByTheBytesLeft() throws {
        let bytes = ArchiveBytes(copying: varint(1 << 30 - 1) + [0x41, 0x42])  // a count of a billion, then 2 bytes
        var state = DecodingState(
            reader: bytes.reader(),
            tables: ArchiveTables(),
            objectCount: 0,
            options: GraphUnarchiver.Options(),
            memory: MemoryBudget(GraphUnarchiver.Options())
        )
        let (count, capacity) = try state.readCollectionCount(at: 0)
        #expect(count == 1 << 30 - 1)
        #expect(capacity == 2)
    }

    /// The reading runs in a child process whose address space may grow by only 256 MiB: any
    /// reservation sized by a forged count (gigabytes) would fail there and kill the child.
    @Test func forgedCountsNeverReserveMemoryBeyondTheInput() async {
        await #expect(processExitsWith: .success) {
            limitAddressSpaceGrowth(to: 256 << 20)
            for (_, data) in LimitsTests.forgedCountArchives() {
                LimitsTests.readAll(data)
            }
        }
    }

    /// The check above can fail: under the same limit, one gigabyte-sized reservation kills the child.
    @Test func addressSpaceLimitCatchesAGigabyteReservation() async {
        await #expect(processExitsWith: .failure) {
            limitAddressSpaceGrowth(to: 256 << 20)
            var array: [UInt8] = []
            array.reserveCapacity(1 << 30)
            array.append(1)
            print(array.count)
        }
    }
}

/// Caps this process's address space at its current size plus `bytes`.
func limitAddressSpaceGrowth(to bytes: Int) {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    let pages = Int(statm.split(separator: " ").first ?? "") ?? 0
    let current = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    var limit = rlimit(rlim_cur: rlim_t(current + bytes), rlim_max: rlim_t(current + bytes))
    precondition(current > 0 && setrlimit(Int32(RLIMIT_AS.rawValue), &limit) == 0, "cannot limit the address space")
}
