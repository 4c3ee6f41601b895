// Tests/GraphArchiveTests/Unarchiving/DecodingErrorTests.swift - wrong keys, wrong types, unknown types, damage

import Foundation
import Testing

@testable import GraphArchive

/// Reads a Record archive with different expectations.
final class Strict: GraphCoding {
    static var archivedTypeName: String { "Record" }
    init(from unarchiver: GraphUnarchiver) throws {
        _ = try unarchiver.decode(Int.self, forKey: "kEncodeKeyName")  // a String in the archive
    }
    func encode(with archiver: GraphArchiver) throws {}
}

final class Missing: GraphCoding {
    static var archivedTypeName: String { "Record" }
    let extra: Int?
    init(from unarchiver: GraphUnarchiver) throws {
        extra = try unarchiver.decodeIfPresent(Int.self, forKey: "absent")
        _ = try unarchiver.decode(String.self, forKey: "absentToo")
    }
    func encode(with archiver: GraphArchiver) throws {}
}

final class Narrow: GraphCoding {
    static var archivedTypeName: String { "Record" }
    init(from unarchiver: GraphUnarchiver) throws {
        _ = try unarchiver.decode(UInt8.self, forKey: "kEncodeKeyColor")
    }
    func encode(with archiver: GraphArchiver) throws {}
}

func archiveError(_ body: () throws -> Void) -> GraphArchiveError? {
    do {
        try body()
        return nil
    } catch let error as GraphArchiveError {
        return error
    } catch {
        return nil
    }
}

@Suite("Decoding errors")
struct DecodingErrorTests {
    let data = try! GraphArchiver.archivedData(withRootObject: [Record(name: "n", color: 300, date: "d")])

    @Test func wrongTypeNamesKeyAndTypes() throws {
        let error = try #require(
            archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [Strict].self, from: data) }
        )
        #expect(error.code == .typeMismatch)
        #expect(error.keyPath.contains("kEncodeKeyName"))
        #expect(error.message.contains("Int") && error.message.contains("String"))
    }

    @Test func missingKeyIsAnErrorUnlessOptional() throws {
        let error = try #require(
            archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [Missing].self, from: data) }
        )
        #expect(error.code == .keyNotFound)
        #expect(error.message.contains("absentToo"))
        #expect(error.message.contains("String"))
    }

    @Test func numberOutOfRange() throws {
        let error = try #require(
            archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [Narrow].self, from: data) }
        )
        #expect(error.code == .valueOutOfRange)
        #expect(error.message.contains("300") && error.message.contains("UInt8"))
    }

    @Test(arguments: [Int64(-1), 256, 1 << 40])
    func integersCheckedAgainstTheRequestedWidth(value: Int64) throws {
        let encoded = try GraphArchiver.archivedData(withRootObject: value)
        let error = try #require(
            archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: UInt8.self, from: encoded) }
        )
        #expect(error.code == .valueOutOfRange)
        #expect(try GraphUnarchiver.unarchivedObject(ofType: Int64.self, from: encoded) == value)
    }

    @Test func unknownTypeIsRefused() throws {
        let error = try #require(
            archiveError {
                _ = try GraphUnarchiver(forReadingFrom: data, registry: GraphTypeRegistry())
            }
        )
        #expect(error.code == .unknownType)
        #expect(error.message.contains("Record"))
    }

    @Test func aliasReadsRenamedType() throws {
        var registry = GraphTypeRegistry()
        // Pin reads keys t/c: absent → keyNotFound, proving Pin was chosen
        registry.register(Pin.self, forName: "Record")
        let error = try #require(
            archiveError {
                _ = try GraphUnarchiver(forReadingFrom: data, registry: registry)
            }
        )
        #expect(error.code == .keyNotFound)
    }

    @Test func truncationAndBitFlipsAreDetected() throws {
        let bytes = [UInt8](data)
        for length in [0, 7, 8, 63, 64, bytes.count - 1] {
            let error = archiveError {
                _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(bytes[0..<length]))
            }
            #expect(error != nil, "length \(length)")
        }
        for bit in stride(from: 0, to: bytes.count * 8, by: 13) {
            var damaged = bytes
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            let error = archiveError {
                _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(damaged))
            }
            #expect(error != nil, "bit \(bit)")
        }
        let extra = archiveError {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(bytes + [0]))
        }
        #expect(extra?.code == .trailingGarbage)
    }

    @Test func notAnArchive() throws {
        let error = archiveError { _ = try GraphUnarchiver.archiveInfo(from: Data("hello, world".utf8)) }
        #expect(error?.code == .badMagic)
    }

    @Test func apiMisuseIsAnError() throws {
        let archiver = GraphArchiver()
        #expect(archiveError { _ = try archiver.encodedData }?.code == .invalidState)
        try archiver.encode(1, forKey: "a")
        #expect(archiveError { try archiver.encode(2, forKey: "a") }?.code == .duplicateKey)
    }

    @Test func xxh64MatchesReferenceVectors() {
        #expect(XXH64.hash([UInt8]()) == 0xEF46_DB37_51D8_E999)
        #expect(XXH64.hash(Array("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(XXH64.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(XXH64.hash([UInt8](repeating: UInt8(ascii: "x"), count: 31)) == 0x60DD_0D01_083B_99F0)
        #expect(XXH64.hash([UInt8](repeating: UInt8(ascii: "x"), count: 32)) == 0xE2DF_261F_C2EC_30EB)
        #expect(XXH64.hash([UInt8](repeating: UInt8(ascii: "y"), count: 100)) == 0xCD30_0B25_F4B8_A0BF)
        let long = (0..<3).flatMap { _ in (0..<256).map(UInt8.init) }
        #expect(XXH64.hash(long) == 0x8E03_C838_C596_036F)
        // Streaming in uneven pieces gives the same digest.
        var state = XXH64()
        long.withUnsafeBytes { raw in
            var start = 0
            for size in [1, 5, 31, 32, 33, 100, 566] {
                state.update(UnsafeRawBufferPointer(rebasing: raw[start..<min(start + size, raw.count)]))
                start = min(start + size, raw.count)
            }
        }
        #expect(state.finalize() == 0x8E03_C838_C596_036F)
    }
}

@Suite("Files")
struct FileTests {
    @Test func saveAndLoadFile() throws {
        let scratch = try TemporaryDirectory()
        defer { withExtendedLifetime(scratch) {} }
        let folder = scratch.path
        let path = folder + "/grids.gridstore"
        let record = Record(name: "x", color: 1, date: "d")
        try GraphArchiver.archiveRootObject([record, record], toFile: path)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path)
        #expect(back.count == 2 && back[0] === back[1])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["grids.gridstore"])
    }

    @Test func failedSaveLeavesTheOldArchive() throws {
        let scratch = try TemporaryDirectory()
        defer { withExtendedLifetime(scratch) {} }
        let folder = scratch.path
        let path = folder + "/grids.gridstore"
        try GraphArchiver.archiveRootObject([Record(name: "old", color: 1, date: "d")], toFile: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // The encode fails midway (duplicate key), so nothing is written.
        final class Broken: GraphCoding {
            init() {}
            init(from unarchiver: GraphUnarchiver) throws {}
            func encode(with archiver: GraphArchiver) throws {
                try archiver.encode(1, forKey: "k")
                try archiver.encode(2, forKey: "k")
            }
        }
        #expect(throws: GraphArchiveError.self) { try GraphArchiver.archiveRootObject([Broken()], toFile: path) }
        // The write itself fails: the target's folder is gone.
        #expect(throws: GraphArchiveError.self) {
            try GraphArchiver.archiveRootObject(
                [Record(name: "new", color: 2, date: "d")],
                toFile: folder + "/missing/x"
            )
        }
        // Writing over a directory fails cleanly.
        try FileManager.default.createDirectory(atPath: folder + "/dir", withIntermediateDirectories: true)
        #expect(throws: GraphArchiveError.self) {
            try GraphArchiver.archiveRootObject([Record(name: "new", color: 2, date: "d")], toFile: folder + "/dir")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["dir", "grids.gridstore"])
    }

    @Test func missingFileIsFileNotFound() {
        let error = archiveError {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: "/nonexistent/x")
        }
        #expect(error?.code == .fileNotFound)
    }
}
