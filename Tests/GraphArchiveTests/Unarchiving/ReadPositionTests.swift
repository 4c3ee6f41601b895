// Tests/GraphArchiveTests/Unarchiving/ReadPositionTests.swift - which value a record reads next, and errors' keys

import Foundation
import Testing

@testable import GraphArchive

/// Reads a Record's name as an Int first, which fails, then as the String it is, then its color
/// and date in stored order; the date as an Int, which fails, when the color is 7.
final class RetryingRecordReader: GraphCoding {
    static var archivedTypeName: String { "Record" }
    let record: Record
    init(from unarchiver: GraphUnarchiver) throws {
        let number = try? unarchiver.decode(Int.self, forKey: "kEncodeKeyName")
        let name = try number.map(String.init) ?? unarchiver.decode(String.self, forKey: "kEncodeKeyName")
        let color = try unarchiver.decode(Int.self, forKey: "kEncodeKeyColor")
        if color == 7 { _ = try unarchiver.decode(Int.self, forKey: "kEncodeKeyDate") }
        record = Record(name: name, color: color, date: try unarchiver.decode(String.self, forKey: "kEncodeKeyDate"))
    }
    func encode(with archiver: GraphArchiver) throws {}
}

/// Reads a Record's date and name out of stored order (`Backwards`), then its color in stored
/// order again; its date again as an Int, which fails, when the color is 7.
final class BackwardsThenForwards: GraphCoding {
    static var archivedTypeName: String { "Record" }
    let backwards: Backwards
    let color: Int
    init(from unarchiver: GraphUnarchiver) throws {
        backwards = try Backwards(from: unarchiver)
        color = try unarchiver.decode(Int.self, forKey: "kEncodeKeyColor")
        if color == 7 { _ = try unarchiver.decode(Int.self, forKey: "kEncodeKeyDate") }
    }
    func encode(with archiver: GraphArchiver) throws {}
}

/// A record's next value stored is read in one step (`DecodingState.finishNextValue`); after a
/// read that failed, or reads out of stored order, the reads still find their keys' values,
/// and an error names the key being read.
@Suite("Read position")
struct ReadPositionTests {
    let first = [Record(name: "first", color: 300, date: "d1"), Record(name: "again", color: 5, date: "d2")]
    let withSeven = [Record(name: "first", color: 300, date: "d1"), Record(name: "second", color: 7, date: "d2")]

    @Test func readsAfterAFailedRead() throws {
        let data = try GraphArchiver.archivedData(withRootObject: first)
        let records = try GraphUnarchiver.unarchivedObject(ofType: [RetryingRecordReader].self, from: data)
        #expect(records.map(\.record.name) == ["first", "again"])
        #expect(records.map(\.record.color) == [300, 5])
        #expect(records.map(\.record.date) == ["d1", "d2"])
    }

    @Test func readsInOrderAfterReadsOutOfOrder() throws {
        let data = try GraphArchiver.archivedData(withRootObject: first)
        let records = try GraphUnarchiver.unarchivedObject(ofType: [BackwardsThenForwards].self, from: data)
        #expect(records.map(\.backwards.name) == ["first", "again"])
        #expect(records.map(\.backwards.date) == ["d1", "d2"])
        #expect(records.map(\.color) == [300, 5])
    }

    /// `outOfOrder`: read by `BackwardsThenForwards`, else by `RetryingRecordReader`.
    @Test(arguments: [false, true])
    func anErrorNamesTheKeyBeingRead(outOfOrder: Bool) throws {
        let data = try GraphArchiver.archivedData(withRootObject: withSeven)
        let error = try #require(
            archiveError {
                if outOfOrder {
                    _ = try GraphUnarchiver.unarchivedObject(ofType: [BackwardsThenForwards].self, from: data)
                } else {
                    _ = try GraphUnarchiver.unarchivedObject(ofType: [RetryingRecordReader].self, from: data)
                }
            }
        )
        #expect(error.code == .typeMismatch)
        #expect(error.keyPath.suffix(2) == ["Record#1", "kEncodeKeyDate"])
    }
}
