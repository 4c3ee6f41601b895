// Tests/GraphArchiveTests/Format/VarintReadingTests.swift - ByteReader.readVarint across its fast paths (FORMAT.md §2.2)

import Testing

@testable import GraphArchive

@Suite("Varint reading")
struct VarintReadingTests {
    /// Values at every length boundary, each read with and without bytes after it (up to three
    /// bytes are read inline from a four-byte load, which needs four bytes left; with fewer,
    /// the out-of-line path reads them).
    @Test(
        arguments: [
            0, 1, 127, 128, 300, 16_383, 16_384, 100_000, 2_097_151, 2_097_152, 268_435_455, 1 << 35, UInt64.max,
        ] as [UInt64]
    )
    func valuesComeBackWhateverFollows(value: UInt64) throws {
        let encoded = varint(value)
        for trailing in [[], [0x7F], [0x00, 0xFF], [0x00, 0x00, 0x00]] as [[UInt8]] {
            let bytes = encoded + trailing
            let (read, offset) = try Self.read(bytes)
            #expect(read == value)
            #expect(offset == encoded.count)
        }
    }

    /// Longer forms than needed are accepted (§2.2), on both paths.
    @Test(
        arguments: [
            ([0x80, 0x00], 0, 2), ([0x81, 0x80, 0x00], 1, 3), ([0xFF, 0x80, 0x00, 0x42], 127, 3),
            ([0x80, 0x80, 0x80, 0x00], 0, 4),
        ] as [([UInt8], UInt64, Int)]
    )
    func longerFormsAreRead(bytes: [UInt8], value: UInt64, length: Int) throws {
        let (read, offset) = try Self.read(bytes)
        #expect(read == value && offset == length)
    }

    @Test func aVarintCutOffIsTruncated() {
        for bytes in [[0x80], [0x80, 0x80], [0xFF, 0xFF, 0xFF]] as [[UInt8]] {
            expectArchiveError(.truncated, mentioning: "varint") { _ = try Self.read(bytes) }
        }
    }

    private static func read(_ bytes: [UInt8]) throws -> (UInt64, Int) {
        try bytes.withUnsafeBytes { raw in
            try ByteReader.withReader(over: raw) { (reader) throws(GraphArchiveError) in
                (try reader.readVarint(), reader.offset)
            }
        }
    }
}
