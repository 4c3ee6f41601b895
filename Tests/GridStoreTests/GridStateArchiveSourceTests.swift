// Tests/GridStoreTests/GridStateArchiveSourceTests.swift - archives from memory, stored forms, keyed saves

import Foundation
import GraphArchive
import Testing

@testable import GridStore

@Suite("Archive sources and stored forms")
struct GridStateArchiveSourceTests {
    @Test func anArchiveInMemoryReadsVerifiesAndCountsAsItsFileDoes() throws {
        let folder = try TemporaryDirectory()
        let states = GridStateGenerator(count: 30, sharedFraction: 0.5).generate()
        for format in GridStateArchive.Format.allCases {
            let path = folder.file("a.\(format.rawValue)")
            let archive = try GridStateArchive.archive(states, compression: .none)
            try GridStateArchive.write(archive, toFile: path, format: format)
            let data = try GridStateArchive.encoded(archive, format: format)
            #expect(Array(data) == folder.bytes(of: "a.\(format.rawValue)"))

            let fromMemory = try GridStateArchive.readStates(from: .bytes(data))
            #expect(fromMemory.map(\.name) == states.map(\.name))
            #expect(Set(fromMemory.map(ObjectIdentifier.init)).count == 15)
            #expect(try GridStateArchive.info(of: .bytes(data)) == GridStateArchive.info(fromFile: path))
            let verified = try GridStateArchive.verify(.bytes(data))
            #expect(verified.records == 30)
            #expect(verified.info == (try GridStateArchive.verify(file: path)).info)
        }
    }

    @Test func damagedBytesInMemoryFailAsADamagedFileDoes() throws {
        let archive = try GridStateArchive.archive(GridStateGenerator(count: 5).generate(), compression: .none)
        var data = try GridStateArchive.encoded(archive, format: .gridstore)
        data[data.count - 3] ^= 0xFF
        #expect(throws: GraphArchiveError.self) { try GridStateArchive.readStates(from: .bytes(data)) }
        #expect(throws: GraphArchiveError.self) { try GridStateArchive.verify(.bytes(data)) }
        #expect(throws: GraphArchiveError.self) { try GridStateArchive.readStates(from: .bytes(Data("junk".utf8))) }
    }

    @Test func storedFormComesFromTheFirstBytesAlone() throws {
        let folder = try TemporaryDirectory()
        let states = GridStateGenerator(count: 10).generate()
        try GridStateArchive.write(
            GridStateArchive.archive(states, compression: .none),
            toFile: folder.file("plain"),
            format: .gridstore
        )
        try GridStateArchive.write(
            GridStateArchive.archive(states, compression: .none),
            toFile: folder.file("keyed"),
            format: .keyedPlist
        )
        #expect(
            GridStateArchive.storedForm(ofFile: folder.file("plain"))
                == GridStateArchive.StoredForm(format: .gridstore, compression: .none)
        )
        #expect(
            GridStateArchive.storedForm(ofFile: folder.file("keyed"))
                == GridStateArchive.StoredForm(format: .keyedPlist, compression: .none)
        )
        if ArchiveCompression.isZstdAvailable {
            try GridStateArchive.write(
                GridStateArchive.archive(states, compression: .zstd(level: 19)),
                toFile: folder.file("zstd")
            )
            // The level is not recorded: a kept zstd archive is the default level.
            #expect(
                GridStateArchive.storedForm(ofFile: folder.file("zstd"))
                    == GridStateArchive.StoredForm(format: .gridstore, compression: .zstd)
            )
        }
        #expect(GridStateArchive.storedForm(ofFile: folder.file("missing")) == nil)
        try Data("not an archive".utf8).write(to: URL(fileURLWithPath: folder.file("text")))
        #expect(GridStateArchive.storedForm(ofFile: folder.file("text")) == nil)
        // A damaged header is no sound header.
        var plain = try #require(folder.bytes(of: "plain"))
        plain[10] ^= 0x01
        try Data(plain).write(to: URL(fileURLWithPath: folder.file("damaged")))
        #expect(GridStateArchive.storedForm(ofFile: folder.file("damaged")) == nil)
        try Data(plain.prefix(40)).write(to: URL(fileURLWithPath: folder.file("short")))
        #expect(GridStateArchive.storedForm(ofFile: folder.file("short")) == nil)
    }

    @Test func theDataSourceSavesInItsFormat() throws {
        let folder = try TemporaryDirectory()
        let store = GridStateDataSource(archivePath: folder.file("grids.plist"))
        store.format = .keyedPlist
        store.compression = .zstd  // unused: keyed archives are never compressed
        let shared = GridState(name: "s", color: 1, date: "d")
        store.replaceAll(with: [shared, GridState(name: "t", color: 2, date: "d"), shared])
        try store.save()
        #expect(folder.bytes(of: "grids.plist")?.starts(with: Array("bplist00".utf8)) == true)
        let other = GridStateDataSource(archivePath: folder.file("grids.plist"))
        #expect(try other.load())
        #expect(other.read { states in states[0] === states[2] && states.count == 3 })
    }
}
