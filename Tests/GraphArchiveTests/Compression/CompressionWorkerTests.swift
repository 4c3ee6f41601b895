// Tests/GraphArchiveTests/Compression/CompressionWorkerTests.swift - zstd archives compressed on zstd's worker threads

import Foundation
import Testing

@testable import GraphArchive

#if Zstd
@Suite("Compression on zstd workers")
struct CompressionWorkerTests {
    /// Records whose payload takes several object blocks (FORMAT.md §5.6), so workers are used.
    let records = sampleRecords(150_000)

    func archive(workers: Int?, records: [Record]? = nil) throws -> Data {
        var options = GraphArchiver.Options(compression: .zstd)
        options.zstdWorkers = workers
        return try GraphArchiver.archivedData(withRootObject: records ?? self.records, options: options)
    }

    @Test(arguments: [1, 2])
    func archivesWrittenWithWorkersReadBackTheSameGraph(workers: Int) throws {
        let data = try archive(workers: workers)
        let info = try GraphUnarchiver.verify(data)
        #expect(info.payloadBytes > 2 * ColumnarObjects.blockBytes)
        expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data), records)
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/workers.gridstore"
            try data.write(to: URL(fileURLWithPath: path))
            expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path), records)
        }
    }

    @Test func bytesAreTheSameForOneSetting() throws {
        #expect(try archive(workers: 1) == archive(workers: 1))
        #expect(try archive(workers: 0) == archive(workers: 0))
    }

    @Test func workersChangeTheBytesOnlyWhereTheLibraryHasThem() throws {
        let single = try archive(workers: 0)
        let threaded = try archive(workers: 1)
        // Without a column per zstd block the frame differs (and is a little larger).
        #expect((single == threaded) == (Zstd.maximumWorkers == 0))
        // The number of workers does not change the bytes.
        #expect(try archive(workers: 2) == threaded)
    }

    @Test func aSaveCompressesOnTheCallingThreadUnlessAsked() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/saved.gridstore"
            try GraphArchiver.archiveRootObject(records, toFile: path, options: .init(compression: .zstd))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == archive(workers: 0))
            var options = GraphArchiver.Options(compression: .zstd)
            options.zstdWorkers = 1
            try GraphArchiver.archiveRootObject(records, toFile: path, options: options)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == archive(workers: 1))
        }
    }

    @Test func aPayloadOfOneBlockIsCompressedOnTheCallingThread() throws {
        let small = sampleRecords(2000)
        #expect(try archive(workers: 2, records: small) == archive(workers: 0, records: small))
    }

    @Test func workersAreAskedForWithinTheLibrarysBound() throws {
        #expect(CompressedPayload.automaticWorkers(isSave: true) == 0)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(CompressedPayload.automaticWorkers(isSave: false) == (cores >= 3 ? 2 : cores == 2 ? 1 : 0))
        var compressor = try ZstdCompressor(level: 3, windowLog: 19)
        #expect(compressor.useWorkers(0) == 0)
        #expect(compressor.useWorkers(Int.max) == Zstd.maximumWorkers)
    }
}
#endif
