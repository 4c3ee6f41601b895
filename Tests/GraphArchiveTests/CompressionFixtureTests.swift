// Tests/GraphArchiveTests/CompressionFixtureTests.swift - a committed zstd archive, read with and without the Zstd trait

import Foundation
import Testing

@testable import GraphArchive

/// A zstd-compressed archive (level 19) written by this engine with libzstd 1.5.4, kept as bytes
/// so both builds read the very same archive: the root array [a, b, a] of two Records, where
/// a = ("Kitchen grid", 0x3366FF, "2024-03-15T12:34:56Z") and b = ("Garden", 0x00AA00,
/// "2025-01-02T03:04:05Z"). Header fields are FORMAT.md §3.
let zstdFixture: [UInt8] = [
    0x89, 0x47, 0x52, 0x41, 0x0D, 0x0A, 0x1A, 0x0A,  // magic
    0x01, 0x00,  // version 1.0
    0x01, 0x00,  // flags: bit 0, zstdPayload
    0x01, 0x00, 0x00, 0x00,  // typeCount 1 (Record)
    0x91, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // payloadLength 145
    0x90, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // storedLength 144
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // objectCount 2
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // referenceCount 3
    0x9C, 0x3B, 0xDF, 0xE1, 0xA6, 0x83, 0x56, 0xD7,  // payloadChecksum, XXH64 of the 144 stored bytes
    0x30, 0x31, 0xE9, 0x35, 0xC2, 0x55, 0x9F, 0xF7,  // headerChecksum
    // The stored payload: one zstd frame (magic 28 B5 2F FD, content size 145, content checksum).
    0x28, 0xB5, 0x2F, 0xFD, 0x24, 0x91, 0x1D, 0x04, 0x00, 0x82, 0x47, 0x1D,
    0x21, 0xA0, 0xED, 0xFF, 0xFF, 0xFF, 0xEF, 0x0A, 0xFF, 0xB7, 0xD1, 0x60,
    0xB4, 0xC2, 0xCF, 0x5A, 0x0D, 0x8C, 0x8F, 0xF0, 0xCD, 0x01, 0x33, 0x69,
    0x25, 0x33, 0xF7, 0x92, 0x99, 0x9B, 0x9D, 0x58, 0x29, 0x03, 0x55, 0x7E,
    0xBD, 0xBC, 0xC6, 0x4F, 0xDD, 0xB7, 0xCA, 0xDB, 0x6C, 0xD2, 0x03, 0xDC,
    0x58, 0xB7, 0xA0, 0x91, 0x56, 0x4C, 0xD6, 0x0B, 0xD6, 0x57, 0xA1, 0xB2,
    0x62, 0xF1, 0xDB, 0xE5, 0xFE, 0x2D, 0x71, 0x76, 0x22, 0x18, 0xD7, 0xB5,
    0x04, 0xDC, 0xDB, 0x15, 0x72, 0x11, 0x49, 0x2B, 0x00, 0x04, 0x04, 0xAD,
    0x01, 0x50, 0x03, 0x5A, 0xB1, 0xCE, 0xAF, 0x3D, 0x0D, 0xB4, 0xEE, 0xD0,
    0x72, 0x3A, 0xF7, 0x78, 0x63, 0xEC, 0xCF, 0x92, 0xC4, 0x1D, 0x6D, 0x8C,
    0x5F, 0xE0, 0xD3, 0x15, 0x21, 0xE7, 0x5D, 0x10, 0x02, 0x03, 0x00, 0xCC,
    0x50, 0x21, 0x0A, 0x65, 0x34, 0xD9, 0x66, 0x13, 0xAC, 0x6F, 0xEB, 0x9D,
]

@Suite("Compressed fixture")
struct CompressionFixtureTests {
    #if Zstd
    @Test func readsTheCommittedArchive() throws {
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(zstdFixture))
        #expect(back.count == 3 && back[0] === back[2] && back[0] !== back[1])
        #expect(back[0].name == "Kitchen grid" && back[0].color == 0x3366FF && back[0].date == "2024-03-15T12:34:56Z")
        #expect(back[1].name == "Garden" && back[1].color == 0x00AA00 && back[1].date == "2025-01-02T03:04:05Z")
        let info = try GraphUnarchiver.verify(Data(zstdFixture))
        #expect(info.compressionName == "zstd" && info.isCompressed)
        #expect(info.payloadBytes == 145 && info.storedPayloadBytes == 144 && info.archiveBytes == 208)
        #expect(info.objectCount == 2 && info.referenceCount == 3)
    }

    @Test func decompressesToTheSamePayloadAsAnUncompressedSave() throws {
        let loaded = try LoadedArchive.load(ArchiveBytes(copying: zstdFixture), options: .init())
        let payload = loaded.payload.copyBytes(loaded.payloadRange)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(zstdFixture))
        let plain = try GraphArchiver.archivedData(withRootObject: back)
        #expect(payload == [UInt8](plain.dropFirst(64)))
    }

    @Test func readsTheCommittedArchiveFromAFile() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/fixture.gridstore"
            try Data(zstdFixture).write(to: URL(fileURLWithPath: path))
            let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path)
            #expect(back.count == 3 && back[0] === back[2])
            #expect(try GraphUnarchiver.archiveInfo(fromFile: path).storedPayloadBytes == 144)
        }
    }
    #else
    @Test func refusesTheCommittedArchiveClearly() throws {
        let errors = [
            archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(zstdFixture)) },
            archiveError { _ = try GraphUnarchiver.archiveInfo(from: Data(zstdFixture)) },
            archiveError { _ = try GraphUnarchiver.verify(Data(zstdFixture)) },
        ]
        for error in errors {
            #expect(error?.code == .compressionUnavailable)
            #expect(error?.message.contains("no zstd support") == true)
        }
    }

    @Test func refusesTheCommittedArchiveFromAFileClearly() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/fixture.gridstore"
            try Data(zstdFixture).write(to: URL(fileURLWithPath: path))
            let error = archiveError { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path) }
            #expect(error?.code == .compressionUnavailable)
            #expect(error?.message.contains("zstd-compressed archive") == true)
        }
    }
    #endif
}
