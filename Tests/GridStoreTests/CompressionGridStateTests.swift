// Tests/GridStoreTests/CompressionGridStateTests.swift - the showcase data set, zstd-compressed

#if Zstd
import Foundation
import GraphArchive
import Testing

@testable import GridStore

@Suite("Compressed grid states")
struct CompressionGridStateTests {
    /// 200k generated grid states, a quarter of the slots shared, through a compressed file.
    @Test func largeGeneratedArrayRoundTripsWithSharing() throws {
        let states = GridStateGenerator(count: 200_000, sharedFraction: 0.25, seed: 11).generate()
        let folder = NSTemporaryDirectory() + "gridstore-compressed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/grids.gridstore"

        try GraphArchiver.archiveRootObject(states, toFile: path, options: .init(compression: .zstd))
        let info = try GraphUnarchiver.verify(file: path)
        #expect(info.compressionName == "zstd")
        #expect(info.objectCount == 150_000 && info.referenceCount == 200_000)
        #expect(info.storedPayloadBytes * 2 < info.payloadBytes)

        let back = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromFile: path)
        #expect(back.count == states.count)
        var firstSlot: [ObjectIdentifier: Int] = [:]
        var backFirstSlot: [ObjectIdentifier: Int] = [:]
        var mismatches = 0
        for slot in states.indices {
            let a = states[slot]
            let b = back[slot]
            let first = firstSlot[ObjectIdentifier(a), default: slot]
            firstSlot[ObjectIdentifier(a)] = first
            let backFirst = backFirstSlot[ObjectIdentifier(b), default: slot]
            backFirstSlot[ObjectIdentifier(b)] = backFirst
            if a.name != b.name || a.color != b.color || a.date != b.date || first != backFirst { mismatches += 1 }
        }
        #expect(mismatches == 0)
        #expect(Set(back.map(ObjectIdentifier.init)).count == 150_000)
    }
}
#endif
