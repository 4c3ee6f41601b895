// Tests/GraphArchiveTests/Files/LentInputTests.swift - one-call decodes read the caller's Data in place

import Foundation
import Testing

@testable import GraphArchive

// The one-call decodes (`GraphUnarchiver.unarchivedObject(ofType:from:)`,
// `GraphArchiveDecoder.decode(_:from:)`) read the archive where the `Data` holds it instead of
// copying it. An unarchiver or `Decoder` that a decoding initializer keeps must then read
// nothing once the call is over: the `Data` may be gone. Under AddressSanitizer a read of the
// released bytes fails these tests.

/// The unarchiver the last `KeepingRecord` was built with (one test uses it at a time).
nonisolated(unsafe) private var keptUnarchiver: GraphUnarchiver?
/// The decoder the last `KeepingModel` was built with.
nonisolated(unsafe) private var keptDecoder: (any Decoder)?

/// Keeps the unarchiver it is decoded with; a record named "fail" then throws.
private final class KeepingRecord: GraphCoding {
    let name: String

    init(name: String) { self.name = name }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(name, forKey: "name")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        name = try unarchiver.decode(String.self, forKey: "name")
        keptUnarchiver = unarchiver
        if name == "fail" { throw GraphArchiveError(.invalidValue, "asked to fail") }
    }
}

/// Keeps the decoder it is decoded with.
private final class KeepingModel: Codable {
    let name: String

    enum CodingKeys: String, CodingKey { case name }

    init(name: String) { self.name = name }

    init(from decoder: any Decoder) throws {
        name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
        keptDecoder = decoder
    }
}

@Suite("Lent input", .serialized)
struct LentInputTests {
    /// Decodes records from an archive whose `Data` is released when this returns.
    private static func decodeRecords(_ names: [String]) throws -> [KeepingRecord] {
        let data = try GraphArchiver.archivedData(withRootObject: names.map { KeepingRecord(name: $0) })
        return try GraphUnarchiver.unarchivedObject(ofType: [KeepingRecord].self, from: data)
    }

    @Test func keptUnarchiverCannotReadAfterTheCall() throws {
        keptUnarchiver = nil
        let records = try Self.decodeRecords(["a", "b"])
        #expect(records.map(\.name) == ["a", "b"])
        let kept = try #require(keptUnarchiver)
        #expect(throws: GraphArchiveError.self) { _ = try kept.decode(String.self, forKey: "name") }
        do {
            _ = try kept.decode([KeepingRecord].self, forKey: GraphArchiver.rootKey)
            Issue.record("a closed unarchiver read its root again")
        } catch let error as GraphArchiveError {
            #expect(error.code == .invalidState)
            #expect(error.message.contains("can no longer be read"))
        }
        keptUnarchiver = nil
    }

    @Test func unarchiverKeptByAFailingInitializerCannotRead() throws {
        keptUnarchiver = nil
        #expect(throws: GraphArchiveError.self) { _ = try Self.decodeRecords(["a", "fail", "c"]) }
        let kept = try #require(keptUnarchiver)
        #expect(throws: GraphArchiveError.self) {
            _ = try kept.decode([KeepingRecord].self, forKey: GraphArchiver.rootKey)
        }
        keptUnarchiver = nil
    }

    @Test func keptDecoderCannotReadAfterTheCall() throws {
        keptDecoder = nil
        func decode() throws -> [KeepingModel] {
            let data = try GraphArchiveEncoder().encode([KeepingModel(name: "x"), KeepingModel(name: "y")])
            return try GraphArchiveDecoder().decode([KeepingModel].self, from: data)
        }
        #expect(try decode().map(\.name) == ["x", "y"])
        let kept = try #require(keptDecoder)
        #expect(throws: (any Error).self) {
            _ = try kept.container(keyedBy: KeepingModel.CodingKeys.self).decode(String.self, forKey: .name)
        }
        #expect(throws: (any Error).self) { _ = try KeepingModel(from: kept) }
        keptDecoder = nil
    }

    /// A `Data` that is a slice of a larger one (its indices do not start at zero).
    @Test func dataSlicesDecode() throws {
        let records = (0..<50).map { Record(name: "record \($0)", color: $0, date: "d") }
        let archive = try GraphArchiver.archivedData(withRootObject: records)
        let padded = Data([1, 2, 3]) + archive + Data([9])
        let slice = padded[3..<(3 + archive.count)]
        #expect(slice.startIndex == 3)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: slice)
        #expect(back.map(\.color) == Array(0..<50))

        let models = (0..<50).map { KeepingModel(name: "m\($0)") }
        let codable = try GraphArchiveEncoder().encode(models)
        let codableSlice = (Data([7]) + codable)[1...]
        #expect(
            try GraphArchiveDecoder().decode([KeepingModel].self, from: codableSlice).map(\.name) == models.map(\.name)
        )
    }

    @Test func emptyDataIsAClearError() {
        do {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data())
            Issue.record("an empty archive decoded")
        } catch let error as GraphArchiveError {
            #expect(error.code == .truncated)
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(throws: DecodingError.self) { _ = try GraphArchiveDecoder().decode([KeepingModel].self, from: Data()) }
    }
}
