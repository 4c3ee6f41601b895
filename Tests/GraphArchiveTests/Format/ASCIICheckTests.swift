// Tests/GraphArchiveTests/Format/ASCIICheckTests.swift - ByteReader.isASCII, the string reader's fast path

import Foundation
import Testing

@testable import GraphArchive

@Suite("ASCII check")
struct ASCIICheckTests {
    /// Every length up to five words, each with one high-bit byte at every position: the check
    /// reads whole words that overlap, so a byte it skips would go unseen at some length.
    @Test(arguments: 0...40)
    func findsAHighBitAtEveryPosition(length: Int) {
        // Inside a larger buffer with high-bit bytes around it: the check must not read them.
        let padding = [UInt8](repeating: 0xFF, count: 8)
        var bytes = padding + [UInt8](repeating: 0x41, count: length) + padding
        #expect(Self.isASCII(bytes, length: length))
        for position in 0..<length {
            for high: UInt8 in [0x80, 0xC3, 0xFF] {
                bytes[padding.count + position] = high
                #expect(
                    !Self.isASCII(bytes, length: length),
                    "length \(length), 0x\(String(high, radix: 16)) at \(position)"
                )
            }
            bytes[padding.count + position] = 0x7F
            #expect(Self.isASCII(bytes, length: length))
        }
    }

    @Test func emptyBufferWithoutStorageIsASCII() {
        #expect(ByteReader.isASCII(UnsafeBufferPointer(start: nil, count: 0)))
    }

    /// Strings decode the same either way: an ASCII string by the fast path, others validated,
    /// and invalid UTF-8 (here a lone continuation byte near the end) rejected.
    @Test(arguments: ["", "a", "abc", "grid 42", "2024-03-15T12:34:56Z", "café au lait", "naïve façade ✓ 2024"])
    func stringsDecodeOnEitherPath(text: String) throws {
        let utf8 = Array(text.utf8)
        let decoded = try Self.readString(utf8)
        #expect(decoded == text)
        let broken = utf8 + [0x80, 0x41]
        #expect(throws: GraphArchiveError.self) {
            try Self.readString(broken)
        }
    }

    /// ASCII strings of every length across the inline (up to 15 bytes) and allocated forms come
    /// back equal, with the same characters, by the fast path that hands the bytes over as ASCII.
    @Test(arguments: 0...40)
    func asciiStringsOfEveryLengthDecodeEqual(length: Int) throws {
        let text = String((0..<length).map { Character(Unicode.Scalar(UInt8(0x20 + ($0 * 7) % 95))) })
        let decoded = try Self.readString(Array(text.utf8))
        #expect(decoded == text)
        #expect(Array(decoded.unicodeScalars) == Array(text.unicodeScalars))
        #expect(decoded.count == length && decoded.utf8.count == length)
        #expect(decoded + "é" == text + "é")
    }

    private static func readString(_ bytes: [UInt8]) throws -> String {
        try bytes.withUnsafeBytes { raw in
            try ByteReader.withReader(over: raw) { (reader) throws(GraphArchiveError) in
                try reader.readString(count: bytes.count)
            }
        }
    }

    private static func isASCII(_ bytes: [UInt8], length: Int) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            ByteReader.isASCII(UnsafeBufferPointer(rebasing: buffer[8..<(8 + length)]))
        }
    }
}
