// Tests/GraphArchiveTests/Format/ValueSkippingTests.swift - ValueScanner.skipValue, its in-line path for scalars and the rest (FORMAT.md §6)

import Testing

@testable import GraphArchive

@Suite("Value skipping")
struct ValueSkippingTests {
    /// One value of every tag the in-line path steps over, and of the tags it leaves to the
    /// scanner, each followed by a byte that must not be read: the skip ends exactly after it.
    @Test(
        arguments: [
            [0x00], [0x01], [0x02], [0x03, 1, 2, 3, 4], [0x04, 1, 2, 3, 4, 5, 6, 7, 8], [0x05, 1, 2, 3, 4, 5, 6, 7, 8],
            [0x10, 0xFF], [0x17, 1, 2, 3, 4, 5, 6, 7, 8], [0x18, 0x00], [0x1F, 1, 2, 3, 4, 5, 6, 7, 8], [0x40], [0x7F],
            [0x80], [0x83, 0x61, 0x62, 0x63], [0xBF] + [UInt8](repeating: 0x61, count: 63),
            [0x06, 0x02, 0x61, 0x62], [0x07, 0x01, 0xFF], [0x08, 0x02], [0x09, 0x02, 0x40, 0x81, 0x61],
            [0x0A, 0x02, 0x02, 0x02], [0x0B, 0x01, 0x81, 0x6B, 0x40], [0x0C, 0x00, 0x40, 0x41],
        ] as [[UInt8]]
    )
    func stepsExactlyOverOneValue(value: [UInt8]) throws {
        let end = try Self.skip(value + [0x20])
        #expect(end == value.count)
    }

    /// A scalar cut short is left to the scanner, which reports it as such.
    @Test(arguments: [[0x03, 1, 2], [0x05, 1], [0x12, 1], [0x85, 0x61, 0x62], [0x1F]] as [[UInt8]])
    func aScalarCutShortIsTruncated(value: [UInt8]) {
        expectArchiveError(.truncated) { _ = try Self.skip(value) }
    }

    /// Tags no value has are refused, as before the in-line path.
    @Test(arguments: [0x0D, 0x20, 0x3F, 0xC0, 0xFF] as [UInt8])
    func reservedTagsAreCorrupt(tag: UInt8) {
        expectArchiveError(.corrupt, mentioning: "unknown value tag") {
            _ = try Self.skip([tag, 0, 0, 0, 0, 0, 0, 0, 0])
        }
    }

    /// The fast skip over plain values passes the values whose tags give their lengths, and
    /// stops at a tag said to start a value longer than the fast path copies (which takes the
    /// checked path) as at one that does not say.
    @Test func plainSkipStopsAtValuesLongerThanItCopies() throws {
        let longest = ColumnCursors.longestPlainCell
        let lengths = ColumnCursors(shapeValueCounts: [2]) { tag in
            switch tag {
            case 0x01: 2
            case 0x02: longest
            case 0x03: longest + 1
            default: 0
            }
        }
        var bytes: [UInt8] = [0x01, 0xEE, 0x02] + [UInt8](repeating: 0xEE, count: longest - 1)
        let plainEnd = bytes.count
        bytes += [0x03] + [UInt8](repeating: 0xEE, count: longest) + [0x01, 0xEE]
        let (passed, end) = bytes.withUnsafeBytes { raw in
            ByteReader.withReader(over: raw) { reader in
                (reader.skipPlainValues(4, lengths: lengths), reader.offset)
            }
        }
        #expect(passed == 2 && end == plainEnd)
    }

    /// Skips one value with a scanner for one shape of two values and four objects; returns where it ended.
    private static func skip(_ bytes: [UInt8]) throws -> Int {
        let scanner = ValueScanner(shapeValueCounts: [2], objectCount: 4, maximumDepth: 8)
        return try bytes.withUnsafeBytes { raw in
            try ByteReader.withReader(over: raw) { (reader) throws(GraphArchiveError) in
                try scanner.skipValue(&reader)
                return reader.offset
            }
        }
    }
}
