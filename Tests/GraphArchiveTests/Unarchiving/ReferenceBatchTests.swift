// Tests/GraphArchiveTests/Unarchiving/ReferenceBatchTests.swift - packed reference arrays read a batch ahead

import Foundation
import Testing

@testable import GraphArchive

/// The unarchiver reads a packed reference array's references `ReferenceLookAhead.count` at a
/// time, ahead of the elements it builds from them: every length, sharing pattern and place an
/// array can be in must come back the same, and a bad reference must be reported where it is.
@Suite("Reference arrays read in batches")
struct ReferenceBatchTests {
    /// `count` slots over `count * 3 / 4` records (at least one): the first slots in order,
    /// the rest back references spread over them, as the grid-state generator makes them.
    static func slots(_ count: Int) -> [Record] {
        let records = (0..<max(1, count * 3 / 4)).map { Record(name: "record \($0)", color: $0, date: "d") }
        return (0..<count).map { $0 < records.count ? records[$0] : records[($0 &* 7_919) % records.count] }
    }

    static func expectSameSlots(
        _ decoded: [Record],
        as source: [Record],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(decoded.map(\.color) == source.map(\.color), sourceLocation: sourceLocation)
        for slot in source.indices {
            let first = source.firstIndex { $0 === source[slot] }!
            #expect(decoded[slot] === decoded[first], "slot \(slot)", sourceLocation: sourceLocation)
        }
        let distinct = Set(source.map(ObjectIdentifier.init)).count
        #expect(Set(decoded.map(ObjectIdentifier.init)).count == distinct, sourceLocation: sourceLocation)
    }

    /// Around every batch boundary, as the one-call decode's root array (whose objects are
    /// handed over) and as an array read through an unarchiver (retained).
    @Test(arguments: [1, 2, 15, 16, 17, 31, 32, 33, 100, 1_001])
    func everyLengthComesBackWithItsSharing(count: Int) throws {
        let source = Self.slots(count)
        let data = try GraphArchiver.archivedData(withRootObject: source)
        Self.expectSameSlots(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data), as: source)

        var registry = GraphTypeRegistry()
        registry.register(Record.self)
        let unarchiver = try GraphUnarchiver(forReadingFrom: data, registry: registry)
        let kept = try unarchiver.decode([Record].self, forKey: GraphArchiver.rootKey)
        Self.expectSameSlots(kept, as: source)
    }

    /// Inside an object, two arrays sharing records with each other and with the root.
    @Test func arraysInsideObjectsShareWithTheRoot() throws {
        let records = Self.slots(40)
        let shelves = [Shelf(records: Array(records[5..<30])), Shelf(records: records.reversed())]
        let data = try GraphArchiver.archivedData(withRootObject: shelves)
        var registry = GraphTypeRegistry()
        registry.register(Record.self)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Shelf].self, from: data, registry: registry)
        Self.expectSameSlots(back[0].records + back[1].records, as: shelves[0].records + shelves[1].records)
    }

    /// Reference 20 of 40 steps past the one object: the error names it and where it starts
    /// (the check before decoding had given the offset just past it).
    @Test func badReferenceInALaterBatchIsReportedWhereItIs() throws {
        // ZigZag deltas: +1 (object 0), then 0 (object 0 again), with reference 20 at +1.
        var deltas = [UInt8](repeating: 0, count: 40)
        deltas[0] = 2
        deltas[20] = 2
        let root = [ValueTag.referenceArray] + varint(40) + deltas
        let archive = HandBuilt.sharedRecords(root: root, referenceCount: 40)
        let rootStart = try #require(archive.bytes.firstRange(of: root)?.lowerBound)
        let error = expectArchiveError(.badObjectReference) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
        #expect(error?.offset == rootStart + 2 + 20)
    }

    /// A count far beyond what the bytes can hold: the object section's bytes read as more
    /// references step past the one object.
    @Test func countBeyondTheInputIsRefused() {
        let archive = HandBuilt.sharedRecords(root: [ValueTag.referenceArray] + varint(1_000_000) + [2, 0])
        expectArchiveError(.badObjectReference) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
    }
}

/// An object holding an array of records.
final class Shelf: GraphCoding {
    let records: [Record]

    init(records: [Record]) {
        self.records = records
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(records, forKey: "records")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        records = try unarchiver.decode([Record].self, forKey: "records")
    }
}
