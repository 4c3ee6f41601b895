// Tests/GraphArchiveTests/Unarchiving/StreamedLoadTests.swift - large archive files read as their objects are built

import Foundation
import TestSupport
import Testing

@testable import GraphArchive

/// An object with a large byte string its decoder does not read (FORMAT.md §5.2): an archive
/// of them is large while the graph it decodes to is small.
private final class Bulk: GraphCoding {
    let id: Int
    init(id: Int) { self.id = id }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(id, forKey: "id")
        try archiver.encode([UInt8](repeating: UInt8(truncatingIfNeeded: id), count: Bulk.padding), forKey: "padding")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        id = try unarchiver.decode(Int.self, forKey: "id")
    }

    static let padding = 4000
}

/// A ring of padded objects linked forwards through back links, with a deferred array: values
/// read after construction has moved past them.
private final class RingBulk: GraphCoding {
    let id: Int
    var next: RingBulk?
    var neighbours: [RingBulk] = []
    init(id: Int) { self.id = id }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(id, forKey: "id")
        try archiver.encode([UInt8](repeating: 7, count: Bulk.padding), forKey: "padding")
        try archiver.encodeLater(next, forKey: "next")
        try archiver.encodeLater(neighbours, forKey: "neighbours")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        id = try unarchiver.decode(Int.self, forKey: "id")
        try unarchiver.decodeLater(RingBulk?.self, forKey: "next") { [unowned self] in self.next = $0 }
        try unarchiver.decodeLater([RingBulk].self, forKey: "neighbours") { [unowned self] in self.neighbours = $0 }
    }
}

/// A ring of padded objects linked forwards by one back link each, the way trees link to their
/// parents: nil or one reference, which a deferred assignment copies rather than keeping the
/// file from there on.
private final class LinkBulk: GraphCoding {
    let id: Int
    var next: LinkBulk?
    init(id: Int) { self.id = id }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(id, forKey: "id")
        try archiver.encode([UInt8](repeating: 7, count: Bulk.padding), forKey: "padding")
        try archiver.encodeLater(next, forKey: "next")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        id = try unarchiver.decode(Int.self, forKey: "id")
        try unarchiver.decodeLater(LinkBulk?.self, forKey: "next") { [unowned self] in self.next = $0 }
    }
}

/// An uncompressed archive file large enough to be read as it is decoded.
private let bulkCount = 2_500
private let bulkArchive: Data = {
    let archive = try! GraphArchiver.archivedData(withRootObject: (0..<bulkCount).map(Bulk.init(id:)))
    precondition(archive.count >= PayloadWindow.minimumSize)
    return archive
}()

private func loadBulk(_ path: String, options: GraphUnarchiver.Options = .init()) throws -> [Bulk] {
    try GraphUnarchiver.unarchivedObject(ofType: [Bulk].self, fromFile: path, options: options)
}

@Suite("Large files read as they are decoded")
struct StreamedLoadTests {
    @Test func largeFileDecodesAsFromMemory() throws {
        try withTemporaryFolder { folder in
            let path = folder + "/bulk.gridstore"
            try bulkArchive.write(to: URL(fileURLWithPath: path))
            let loaded = try loadBulk(path)
            #expect(loaded.map(\.id) == Array(0..<bulkCount))
            let any = try GraphUnarchiver.unarchivedObject(ofType: [Bulk].self, fromAnyArchiveFile: path)
            #expect(any.map(\.id) == Array(0..<bulkCount))
        }
    }

    /// Deferred values are read after construction has passed them, from copies of their
    /// bytes: a ring whose objects defer their next and an array of two neighbours loads within
    /// a budget of half the file, as one without back links does.
    @Test func deferredValuesAreReadAfterTheWindowMoves() throws {
        let ring = (0..<bulkCount).map(RingBulk.init(id:))
        for (index, node) in ring.enumerated() {
            node.next = ring[(index + 1) % ring.count]
            node.neighbours = [ring[(index + 7) % ring.count], ring[(index + 1_000) % ring.count]]
        }
        let archive = try GraphArchiver.archivedData(withRootObject: ring)
        #expect(archive.count >= PayloadWindow.minimumSize)
        try withTemporaryFolder { folder in
            let path = folder + "/ring.gridstore"
            try archive.write(to: URL(fileURLWithPath: path))
            var options = GraphUnarchiver.Options()
            options.maximumMemoryBytes = archive.count / 2
            let loaded = try GraphUnarchiver.unarchivedObject(ofType: [RingBulk].self, fromFile: path, options: options)
            #expect(loaded.map(\.id) == Array(0..<bulkCount))
            for (index, node) in loaded.enumerated() {
                #expect(node.next === loaded[(index + 1) % bulkCount])
                #expect(node.neighbours.map(\.id) == [(index + 7) % bulkCount, (index + 1_000) % bulkCount])
            }
        }
    }

    #if Zstd
    /// A large decompressed payload is given back as the objects are built, deferred values
    /// and all, from memory and from a file.
    @Test func largeCompressedPayloadsDecode() throws {
        let ring = (0..<bulkCount).map(RingBulk.init(id:))
        for (index, node) in ring.enumerated() {
            node.next = ring[(index + 1) % ring.count]
            node.neighbours = [ring[(index + 7) % ring.count]]
        }
        var options = GraphArchiver.Options()
        options.compression = .zstd(level: 1)
        let rings = try GraphArchiver.archivedData(withRootObject: ring, options: options)
        let bulk = try GraphArchiver.archivedData(
            withRootObject: (0..<bulkCount).map(Bulk.init(id:)),
            options: options
        )
        #expect(try GraphUnarchiver.archiveInfo(from: bulk).payloadBytes >= PayloadWindow.minimumSize)
        try withTemporaryFolder { folder in
            try rings.write(to: URL(fileURLWithPath: folder + "/ring.gridstore"))
            try bulk.write(to: URL(fileURLWithPath: folder + "/bulk.gridstore"))
            for loaded in [
                try GraphUnarchiver.unarchivedObject(ofType: [RingBulk].self, from: rings),
                try GraphUnarchiver.unarchivedObject(ofType: [RingBulk].self, fromFile: folder + "/ring.gridstore"),
            ] {
                #expect(loaded.map(\.id) == Array(0..<bulkCount))
                #expect(loaded.indices.allSatisfy { loaded[$0].next === loaded[($0 + 1) % bulkCount] })
                #expect(loaded.indices.allSatisfy { loaded[$0].neighbours[0] === loaded[($0 + 7) % bulkCount] })
            }
            #expect(
                try GraphUnarchiver.unarchivedObject(ofType: [Bulk].self, from: bulk).map(\.id) == Array(0..<bulkCount)
            )
            #expect(try loadBulk(folder + "/bulk.gridstore").map(\.id) == Array(0..<bulkCount))
        }
    }
    #endif

    /// The file is never held whole: a budget smaller than the file, but larger than the graph
    /// and a window of the file, is enough; the same budget refuses the archive from memory.
    @Test func budgetBelowTheFileSizeIsEnough() throws {
        var options = GraphUnarchiver.Options()
        options.maximumMemoryBytes = bulkArchive.count / 2
        try withTemporaryFolder { folder in
            let path = folder + "/bulk.gridstore"
            try bulkArchive.write(to: URL(fileURLWithPath: path))
            #expect(try loadBulk(path, options: options).count == bulkCount)
        }
        options.maximumMemoryBytes = bulkArchive.count / 32
        try withTemporaryFolder { folder in
            let path = folder + "/bulk.gridstore"
            try bulkArchive.write(to: URL(fileURLWithPath: path))
            let error = archiveError { _ = try loadBulk(path, options: options) }
            #expect(error?.code == .limitExceeded)
        }
    }

    /// Deferred single references do not keep the file: a ring linked by them loads within a
    /// budget of half the file, as an archive without back links does.
    @Test func deferredReferencesDoNotKeepTheFile() throws {
        let ring = (0..<bulkCount).map(LinkBulk.init(id:))
        for (index, node) in ring.enumerated() { node.next = ring[(index + 1) % ring.count] }
        let archive = try GraphArchiver.archivedData(withRootObject: ring)
        #expect(archive.count >= PayloadWindow.minimumSize)
        var options = GraphUnarchiver.Options()
        options.maximumMemoryBytes = archive.count / 2
        try withTemporaryFolder { folder in
            let path = folder + "/links.gridstore"
            try archive.write(to: URL(fileURLWithPath: path))
            let loaded = try GraphUnarchiver.unarchivedObject(ofType: [LinkBulk].self, fromFile: path, options: options)
            #expect(loaded.map(\.id) == Array(0..<bulkCount))
            #expect(loaded.indices.allSatisfy { loaded[$0].next === loaded[($0 + 1) % bulkCount] })
        }
    }

    /// A byte changed anywhere in the payload fails the checksum, before any object is built,
    /// whether the decoder would trip on it (the tables, an id) or never read it (padding no
    /// initializer asks for).
    @Test(arguments: ["tables", "first id", "first padding", "middle padding", "last byte"])
    func damageAnywhereIsAChecksumMismatch(place: String) throws {
        var damaged = bulkArchive
        let offset =
            switch place {
            case "tables": ArchiveHeader.size + 1
            case "first id": damaged.firstRange(of: Data("padding".utf8))!.upperBound + 4
            case "first padding": damaged.firstRange(of: Data([0, 0, 0, 0, 0, 0, 0, 0]))!.lowerBound
            case "middle padding": damaged.count / 2
            default: damaged.count - 1
            }
        damaged[offset] ^= 0x01
        try withTemporaryFolder { folder in
            let path = folder + "/damaged.gridstore"
            try damaged.write(to: URL(fileURLWithPath: path))
            let error = archiveError { _ = try loadBulk(path) }
            #expect(error?.code == .checksumMismatch, "\(place): \(String(describing: error))")
        }
    }

    /// A file cut short or changed by another process after its checksum and tables were
    /// read: the decode fails when it reaches the missing bytes, or says the file changed
    /// (when a changed byte trips the decoder, or at the end, where its bytes are hashed again).
    @Test(arguments: ["cut in the middle", "cut at the last byte", "changed in the middle", "changed last byte"])
    func fileChangedWhileDecodingFails(change: String) throws {
        try withTemporaryFolder { folder in
            let path = folder + "/bulk.gridstore"
            try bulkArchive.write(to: URL(fileURLWithPath: path))
            let loaded = try LoadedArchive.load(
                streaming: ArchiveFile(path: path, maximumBytes: .max),
                options: GraphUnarchiver.Options()
            )
            #expect(loaded.stream != nil)
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            switch change {
            case "cut in the middle": try handle.truncate(atOffset: UInt64(bulkArchive.count / 2))
            case "cut at the last byte": try handle.truncate(atOffset: UInt64(bulkArchive.count - 1))
            default:
                let offset = change == "changed last byte" ? bulkArchive.count - 1 : bulkArchive.count / 2
                try handle.seek(toOffset: UInt64(offset))
                try handle.write(contentsOf: Data([bulkArchive[offset] ^ 0x80]))
            }
            try handle.close()
            let error = archiveError {
                _ = try GraphUnarchiver(
                    loaded: loaded,
                    registry: GraphTypeRegistry([Bulk.self]),
                    options: GraphUnarchiver.Options()
                )
            }
            let expected: GraphArchiveError.Code = change.hasPrefix("cut") ? .truncated : .ioError
            #expect(error?.code == expected, "\(change): \(String(describing: error))")
            if !change.hasPrefix("cut") { #expect(error?.message == "\(path) changed while it was being read") }
        }
    }
}
