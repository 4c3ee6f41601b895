// Tests/GraphArchiveTests/Files/FileURLTests.swift - every file API's URL form reads and writes the same files

import Foundation
import GraphArchive
import Testing

@Suite("File URLs")
struct FileURLTests {
    static func sharedRecords() -> [Record] {
        let sunset = Record(name: "Sunset", color: 0xFF8800, date: "2024-06-01")
        return [sunset, Record(name: "Dawn", color: 0xFFCC00, date: "2024-06-02"), sunset]
    }

    static func expectShared(_ records: [Record]) {
        #expect(records.map(\.name) == ["Sunset", "Dawn", "Sunset"])
        #expect(records.count == 3 && records[0] === records[2])
    }

    @Test func gridstoreArchivesSaveAndLoadThroughFileURLs() throws {
        try withTemporaryFolder { folder in
            let url = URL(fileURLWithPath: folder).appendingPathComponent("shelf with spaces.gridstore")
            try GraphArchiver.archiveRootObject(Self.sharedRecords(), to: url)
            #expect(FileManager.default.fileExists(atPath: folder + "/shelf with spaces.gridstore"))

            Self.expectShared(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: url))
            Self.expectShared(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromAnyArchive: url))
            let unarchiver = try GraphUnarchiver(contentsOf: url, registry: GraphTypeRegistry([Record.self]))
            Self.expectShared(try unarchiver.decode([Record].self, forKey: GraphArchiver.rootKey))

            #expect(try GraphUnarchiver.archiveInfo(from: url).objectCount == 2)
            #expect(try GraphUnarchiver.archiveInfo(fromAnyArchive: url).objectCount == 2)
            #expect(try GraphUnarchiver.verify(url).checksumVerified)
            #expect(try GraphUnarchiver.verify(anyArchive: url).referenceCount == 3)
            #expect(try ArchiveKind.detect(fileAt: url) == .gridstore)
            #expect(try !GraphUnarchiver.isPayloadCompressed(archiveFileAt: url))
            #expect(try ArchiveGraph(contentsOf: url).objectCount == 2)

            let archiver = GraphArchiver()
            try archiver.encode(Self.sharedRecords(), forKey: GraphArchiver.rootKey)
            try archiver.finishEncoding()
            let copy = url.deletingLastPathComponent().appendingPathComponent("copy.gridstore")
            try archiver.write(to: copy)
            #expect(try Data(contentsOf: copy) == Data(contentsOf: url))
        }
    }

    @Test func keyedArchivesSaveLoadAndConvertThroughFileURLs() throws {
        try withTemporaryFolder { folder in
            let base = URL(fileURLWithPath: folder)
            let keyed = base.appendingPathComponent("shelf.plist")
            try KeyedArchive.archiveRootObject(Self.sharedRecords(), to: keyed)
            #expect(try ArchiveKind.detect(fileAt: keyed) == .keyedArchive)
            Self.expectShared(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromKeyedArchive: keyed))
            Self.expectShared(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromAnyArchive: keyed))
            let registry = GraphTypeRegistry([Record.self])
            let unarchiver = try GraphUnarchiver(contentsOfKeyedArchive: keyed, registry: registry)
            Self.expectShared(try unarchiver.decode([Record].self, forKey: GraphArchiver.rootKey))
            let anyUnarchiver = try GraphUnarchiver(contentsOfAnyArchive: keyed, registry: registry)
            Self.expectShared(try anyUnarchiver.decode([Record].self, forKey: GraphArchiver.rootKey))
            #expect(try KeyedArchive.archiveInfo(fromKeyedArchive: keyed).objectCount == 2)

            let native = base.appendingPathComponent("shelf.gridstore")
            try KeyedArchive.writeGridstoreArchive(fromKeyedArchive: keyed, to: native)
            Self.expectShared(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: native))
            let keyedAgain = base.appendingPathComponent("again.plist")
            try KeyedArchive.writeKeyedArchive(fromGridstoreArchive: native, to: keyedAgain)
            Self.expectShared(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromKeyedArchive: keyedAgain))

            let graph = try ArchiveGraph(contentsOf: keyed)
            let fromGraph = base.appendingPathComponent("graph.gridstore")
            #expect(try graph.writeGridstoreArchive(to: fromGraph) == Data(contentsOf: fromGraph).count)
            let keyedFromGraph = base.appendingPathComponent("graph.plist")
            #expect(try graph.writeKeyedArchive(to: keyedFromGraph) == Data(contentsOf: keyedFromGraph).count)

            let archiver = GraphArchiver()
            try archiver.encode(Self.sharedRecords(), forKey: GraphArchiver.rootKey)
            try archiver.finishEncoding()
            let keyedFromArchiver = base.appendingPathComponent("archiver.plist")
            try archiver.writeKeyedArchive(to: keyedFromArchiver)
            Self.expectShared(
                try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromKeyedArchive: keyedFromArchiver)
            )
        }
    }

    struct Shelf: Codable, Equatable {
        var titles: [String]
    }

    @Test func codableCodersAndLocksTakeFileURLs() throws {
        try withTemporaryFolder { folder in
            let url = URL(fileURLWithPath: folder).appendingPathComponent("shelf.gridstore")
            try GraphArchiveEncoder().encode(Shelf(titles: ["Notes", "Sketch"]), to: url)
            #expect(try GraphArchiveDecoder().decode(Shelf.self, from: url) == Shelf(titles: ["Notes", "Sketch"]))

            let lock = try ArchiveLock(archiveURL: url)
            #expect(lock.isLocked && lock.archivePath == url.path)
            #expect(try ArchiveLock.lockFileURL(forArchive: url).path == lock.lockFilePath)
            lock.unlock()
            #expect(try ArchiveLock.withLock(onArchive: url) { 7 } == 7)
        }
    }

    /// Archives are local files: a URL of another scheme is refused before anything is read.
    @Test func nonFileURLsAreAnInvalidValueError() throws {
        let remote = try #require(URL(string: "https://example.com/shelf.gridstore"))
        let error = expectArchiveError(.invalidValue) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: remote)
        }
        #expect(error?.message.contains("https://example.com/shelf.gridstore is not a file URL") == true)
        _ = expectArchiveError(.invalidValue) { try GraphArchiver.archiveRootObject([Record](), to: remote) }
        _ = expectArchiveError(.invalidValue) { try KeyedArchive.archiveRootObject([Record](), to: remote) }
    }
}
