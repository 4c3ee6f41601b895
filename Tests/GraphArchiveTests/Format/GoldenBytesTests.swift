// Tests/GraphArchiveTests/Format/GoldenBytesTests.swift - the exact bytes of small archives (FORMAT.md §10)

import Foundation
import Testing

@testable import GraphArchive

/// A tiny record type for golden archives.
final class Pin: GraphCoding {
    static var archivedTypeName: String { "Pin" }
    var tag: String
    var count: Int

    init(tag: String, count: Int) {
        self.tag = tag
        self.count = count
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(tag, forKey: "t")
        try archiver.encode(count, forKey: "c")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        tag = try unarchiver.decode(String.self, forKey: "t")
        count = try unarchiver.decode(Int.self, forKey: "c")
    }
}

@Suite("Golden bytes")
struct GoldenBytesTests {
    /// Checks `payload` after the header and that decode → re-encode reproduces the archive.
    func expectArchive(
        _ data: Data,
        payload expected: [UInt8],
        objects: UInt64,
        references: UInt64,
        types: UInt32,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let bytes = [UInt8](data)
        try #require(bytes.count == 64 + expected.count, sourceLocation: sourceLocation)
        // §3 header fields.
        #expect(
            Array(bytes[0..<8]) == [0x89, 0x47, 0x52, 0x41, 0x0D, 0x0A, 0x1A, 0x0A],
            sourceLocation: sourceLocation
        )
        #expect(bytes[8] == 1 && bytes[9] == 0, sourceLocation: sourceLocation)
        #expect(bytes[10] == 0 && bytes[11] == 0, sourceLocation: sourceLocation)
        func u64(_ offset: Int) -> UInt64 {
            (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
        }
        #expect(UInt32(truncatingIfNeeded: u64(12)) == types, sourceLocation: sourceLocation)
        #expect(u64(16) == UInt64(expected.count) && u64(24) == UInt64(expected.count), sourceLocation: sourceLocation)
        #expect(u64(32) == objects && u64(40) == references, sourceLocation: sourceLocation)
        #expect(u64(48) == XXH64.hash(expected), sourceLocation: sourceLocation)
        #expect(u64(56) == XXH64.hash(Array(bytes[0..<56])), sourceLocation: sourceLocation)
        #expect(Array(bytes[64...]) == expected, sourceLocation: sourceLocation)
    }

    @Test func sharedPinsInARootArray() throws {
        let pin = Pin(tag: "hi", count: 300)
        let other = Pin(tag: "", count: -1)
        let data = try GraphArchiver.archivedData(withRootObject: [pin, other, pin])
        try expectArchive(
            data,
            payload: [
                0x03, 0x04, 0x72, 0x6F, 0x6F, 0x74, 0x01, 0x74, 0x01, 0x63,  // §4.1 keys: "root", "t", "c"
                0x01, 0x00, 0x03, 0x50, 0x69, 0x6E,  // §4.2 types: object "Pin"
                0x01, 0x00, 0x02, 0x01, 0x02,  // §4.3 shapes: #0 = Pin(t, c)
                0x01, 0x00,  // §4.4 one top entry, key "root"
                // §6.5 reference array: 3 slots, deltas +1 +1 -1 (ZigZag 2 2 1) → 0, 1, 0
                0x0A, 0x03, 0x02, 0x02, 0x01,
                0x00, 0x82, 0x68, 0x69, 0x11, 0x2C, 0x01,  // object 0: shape 0, "hi", 300 (2 bytes)
                0x00, 0x80, 0x18, 0x00,  // object 1: shape 0, "", -1 (stored ~(-1) = 0 in 1 byte)
            ],
            objects: 2,
            references: 3,
            types: 1
        )
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Pin].self, from: data)
        #expect(back[0] === back[2] && back[0].count == 300 && back[1].count == -1)
        #expect(try GraphArchiver.archivedData(withRootObject: back) == data)
    }

    @Test func chainIsStoredInConstructionOrder() throws {
        // root → a → b: b must come first (§5.4).
        let b = Link(value: 2, next: nil)
        let a = Link(value: 1, next: b)
        let data = try GraphArchiver.archivedData(withRootObject: a)
        try expectArchive(
            data,
            payload: [
                0x03, 0x04, 0x72, 0x6F, 0x6F, 0x74, 0x01, 0x76, 0x01, 0x6E,  // keys: "root", "v", "n"
                0x01, 0x00, 0x04, 0x4C, 0x69, 0x6E, 0x6B,  // types: object "Link"
                0x01, 0x00, 0x02, 0x01, 0x02,  // shapes: #0 = Link(v, n)
                0x01, 0x00, 0x08, 0x01,  // top: "root" → object 1 (a)
                0x00, 0x42, 0x00,  // object 0 = b: v 2, n nil
                0x00, 0x41, 0x08, 0x00,  // object 1 = a: v 1, n → object 0
            ],
            objects: 2,
            references: 2,
            types: 1
        )
    }

    @Test func valuesOfEveryTagKind() throws {
        let archiver = GraphArchiver()
        try archiver.encode(Int.min, forKey: "min")
        try archiver.encode(UInt64.max, forKey: "max")
        try archiver.encode(1.5, forKey: "d")
        try archiver.encode(Float(2), forKey: "f")
        try archiver.encode(true, forKey: "b")
        try archiver.encode([UInt8]([1, 2]), forKey: "y")
        try archiver.encode(["k": [1]], forKey: "m")
        try archiver.finishEncoding()
        let payload = [UInt8](try archiver.encodedData)[64...]
        let expectedTop: [UInt8] = [
            0x07,  // seven top entries
            0x00, 0x1F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,  // min: Int.min as ~n in 8 bytes
            0x01, 0x17, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // max: UInt64.max
            0x02, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xF8, 0x3F,  // d: 1.5
            0x03, 0x03, 0x00, 0x00, 0x00, 0x40,  // f: 2.0 as binary32
            0x04, 0x02,  // b: true
            0x05, 0x07, 0x02, 0x01, 0x02,  // y: bytes [1, 2]
            0x06, 0x0B, 0x01, 0x81, 0x6B, 0x09, 0x01, 0x41,  // m: {"k": [1]}
        ]
        #expect(Array(payload.suffix(expectedTop.count)) == expectedTop)
    }
}
