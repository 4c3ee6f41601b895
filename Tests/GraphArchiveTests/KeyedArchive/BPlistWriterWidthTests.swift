// Tests/GraphArchiveTests/KeyedArchive/BPlistWriterWidthTests.swift - reference and offset widths at their boundaries
//
// The binary property list writer writes containers with 4-byte references and narrows them
// at the end when the object count allows 1 or 2 bytes (a width that holds the count itself,
// as CF's reader requires); the offset table's width follows the table's start. Each side of each boundary is read back by Foundation's own reader
// (PropertyListSerialization, CF's binary plist parser) and the trailer is checked.

import Foundation
import Testing

@testable import GraphArchive

@Suite struct BPlistWriterWidthTests {
    /// The trailer's offset size, reference size and object count.
    private static func trailer(_ data: Data) -> (offsetSize: Int, referenceSize: Int, objectCount: Int) {
        let trailer = Array(data.suffix(BPlist.trailerSize))
        let count = trailer[8..<16].reduce(0) { $0 << 8 | Int($1) }
        return (Int(trailer[6]), Int(trailer[7]), count)
    }

    /// A property list `{"items": [strings…], "pairs": {key: string…}}` of `objectCount`
    /// objects in all: distinct strings of `stringLength` characters, a third of them under
    /// keys of the dictionary, so that arrays and dictionaries of many references (a count
    /// past the header's nibble) are narrowed.
    private static func plist(objectCount: Int, stringLength: Int = 6) throws -> (Data, [String], [String: String]) {
        // "items", "pairs", the array, the two dictionaries: 5 objects; then one per string.
        let stringCount = objectCount - 5
        let strings = (0..<stringCount).map { index in
            let digits = String(index)
            return String(repeating: "s", count: max(stringLength - digits.count, 1)) + digits
        }
        let pairCount = stringCount / 3
        var writer = BPlistWriter()
        var start = writer.stackPosition
        for string in strings[(2 * pairCount)...] { writer.push(writer.string(string)) }
        let items = writer.closeArray(from: start)
        start = writer.stackPosition
        var pairs: [String: String] = [:]
        for pair in 0..<pairCount {
            let (key, value) = (strings[2 * pair], strings[2 * pair + 1])
            writer.push(writer.string(key))
            writer.push(writer.string(value))
            pairs[key] = value
        }
        let dictionary = writer.closeDictionary(from: start)
        start = writer.stackPosition
        writer.push(writer.string("items"))
        writer.push(items)
        writer.push(writer.string("pairs"))
        writer.push(dictionary)
        let root = writer.closeDictionary(from: start)
        #expect(writer.objectCount == objectCount)
        let data = try writer.finish(top: root).withUnsafeBytes { Data($0) }
        return (data, Array(strings[(2 * pairCount)...]), pairs)
    }

    /// Reads `data` with Foundation and checks it holds `items` and `pairs`.
    private static func expectReads(_ data: Data, items: [String], pairs: [String: String]) throws {
        var format = PropertyListSerialization.PropertyListFormat.xml
        let value = try PropertyListSerialization.propertyList(from: data, options: [], format: &format)
        #expect(format == .binary)
        let root = try #require(value as? [String: Any])
        #expect(root["items"] as? [String] == items)
        #expect(root["pairs"] as? [String: String] == pairs)
    }

    @Test(arguments: [(6, 1), (255, 1), (256, 2), (65_535, 2), (65_536, 4)])
    func referencesTakeTheFewestBytesForTheObjectCount(objectCount: Int, referenceSize: Int) throws {
        let (data, items, pairs) = try Self.plist(objectCount: objectCount)
        let trailer = Self.trailer(data)
        #expect(trailer.objectCount == objectCount)
        #expect(trailer.referenceSize == referenceSize)
        try Self.expectReads(data, items: items, pairs: pairs)
    }

    @Test func offsetsTakeTheFewestBytesForTheTableStart() throws {
        // 20 objects: the table starts near 20 × (string length + 2); lengths put it either
        // side of 256 and of 65,536.
        for (length, offsetSize) in [(4, 1), (16, 2), (4_000, 2), (4_500, 4)] {
            let (data, items, pairs) = try Self.plist(objectCount: 20, stringLength: length)
            let trailer = Self.trailer(data)
            #expect(trailer.offsetSize == offsetSize, "strings of \(length) bytes")
            #expect(trailer.referenceSize == 1)
            try Self.expectReads(data, items: items, pairs: pairs)
        }
    }

    @Test func objectOffsetsKeepTheirHighBitsPastEachFourGiB() {
        // Offsets only grow; those past 2^32 are kept as 32 bits and where each 4 GiB starts,
        // including a jump over a whole 4 GiB (one object of more than 4 GiB).
        let values = [0, 8, 0xFFFF_FFFF, 1 << 32, (1 << 32) + 5, (3 << 32) + 1, (3 << 32) + 2, 5 << 32]
        var offsets = ObjectOffsets()
        for value in values { offsets.append(value) }
        var read: [Int] = []
        offsets.forEveryOffset { read.append($0) }
        #expect(offsets.count == values.count)
        #expect(read == values)
    }

    @Test func keyedArchivesPastTheNarrowReferencesReadBack() throws {
        // 15,000 records: over 65,536 objects, so the references stay 4 bytes and nothing is
        // copied again; NSKeyedUnarchiver-compatible output read back by the reader.
        let records = (0..<15_000).map { Record(name: "name \($0)", color: $0 % 7, date: "2026-12-\($0)") }
        let data = try KeyedArchive.archivedData(withRootObject: records)
        #expect(Self.trailer(data).referenceSize == 4)
        var registry = GraphTypeRegistry()
        registry.register(Record.self)
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: data,
            registry: registry
        )
        #expect(back.map(\.name) == records.map(\.name))
        #expect(back.map(\.color) == records.map(\.color))
        #expect(back.map(\.date) == records.map(\.date))
    }
}
