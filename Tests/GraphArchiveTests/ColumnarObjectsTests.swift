// Tests/GraphArchiveTests/ColumnarObjectsTests.swift - the columnar object section of zstd archives (FORMAT.md §5.5)

#if Zstd
import Foundation
import Testing

@testable import GraphArchive

/// A class with one key of its own per instance, so `count` instances make `count` shapes.
final class Sparse: GraphCoding {
    let id: Int

    init(id: Int) { self.id = id }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(id, forKey: "id")
        try archiver.encode(id * 3, forKey: "k\(id)")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        id = try unarchiver.decode(Int.self, forKey: "id")
        guard try unarchiver.decode(Int.self, forKey: "k\(id)") == id * 3 else {
            throw GraphArchiveError(.invalidValue, "k\(id) does not hold \(id * 3)")
        }
    }
}

/// An object holding nested values (a value record, arrays, dictionaries) and two objects of
/// other types, so records of three shapes alternate in the object section.
final class ColumnarHolder: GraphCoding {
    var everything = Everything()
    var matrix: [[Int]]
    var index: [String: [String]]
    let record: Record
    let pin: Pin

    init(_ number: Int) {
        matrix = [[number], [], [number, -number, 1 << 40]]
        index = ["n\(number)": ["a", String(repeating: "b", count: number % 90)], "e": []]
        record = Record(name: "record \(number)", color: number * 7, date: "2025-01-\(number % 28 + 1)")
        pin = Pin(tag: "pin \(number)", count: -number)
        everything.int = number
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(everything, forKey: "everything")
        try archiver.encode(matrix, forKey: "matrix")
        try archiver.encode(index, forKey: "index")
        try archiver.encode(record, forKey: "record")
        try archiver.encode(pin, forKey: "pin")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        everything = try unarchiver.decode(Everything.self, forKey: "everything")
        matrix = try unarchiver.decode([[Int]].self, forKey: "matrix")
        index = try unarchiver.decode([String: [String]].self, forKey: "index")
        record = try unarchiver.decode(Record.self, forKey: "record")
        pin = try unarchiver.decode(Pin.self, forKey: "pin")
    }
}

/// Archives `root` with zstd, checks the header flags, and reads it back from memory and from a
/// file, checking `verify` and `archiveInfo` agree; returns both copies.
func zstdRoundTrip<T: GraphValue>(
    _ root: T, registry: GraphTypeRegistry = GraphTypeRegistry(), sourceLocation: SourceLocation = #_sourceLocation
) throws -> (memory: T, file: T) {
    let data = try GraphArchiver.archivedData(withRootObject: root, options: .init(compression: .zstd))
    let flags = UInt16(data[10]) | UInt16(data[11]) << 8
    #expect(flags == 0b11, "zstdPayload and columnarObjects", sourceLocation: sourceLocation)
    let info = try GraphUnarchiver.verify(data)
    #expect(try GraphUnarchiver.archiveInfo(from: data) == info, sourceLocation: sourceLocation)
    let memory = try GraphUnarchiver.unarchivedObject(ofType: T.self, from: data, registry: registry)
    let file = try withTemporaryFolder { (folder) throws -> T in
        let path = folder + "/columnar.gridstore"
        try data.write(to: URL(fileURLWithPath: path))
        #expect(try GraphUnarchiver.verify(file: path) == info, sourceLocation: sourceLocation)
        return try GraphUnarchiver.unarchivedObject(ofType: T.self, fromFile: path, registry: registry)
    }
    // Rows rebuilt from columns are the uncompressed archive's payload, byte for byte.
    let plain = try GraphArchiver.archivedData(withRootObject: root)
    let loaded = try LoadedArchive.load(ArchiveBytes(copying: data), options: .init())
    #expect(loaded.payload.copyBytes(loaded.payloadRange) == [UInt8](plain.dropFirst(64)), sourceLocation: sourceLocation)
    return (memory, file)
}

/// The decompressed payload of zstd archive `archive`, before the object section is rebuilt.
func decompressedPayload(_ archive: [UInt8]) throws -> [UInt8] {
    let bytes = ArchiveBytes(copying: archive)
    var reader = bytes.reader()
    let header = try ArchiveHeader.decode(from: &reader)
    let stored = 64..<archive.count
    let payload = try PayloadCompression.decompress(
        payloadLength: Int(header.payloadLength), storedLength: stored.count,
        frameStart: Array(archive[stored].prefix(PayloadCompression.frameHeaderMaximumSize))
    ) { (decompress) throws(GraphArchiveError) in try bytes.withUnsafeBytes(stored, decompress) }
    return payload.copyBytes(0..<payload.count)
}

/// A zstd archive of `payload` (a columnar payload written by hand) with valid checksums and
/// the header of ``ColumnarObjectsTests/pins``, its object count replaced by `objectCount`.
func sealedColumnar(_ payload: [UInt8], objectCount: UInt64 = 2) throws -> [UInt8] {
    var frame: [UInt8] = []
    try PayloadCompression.compress([OutputChunk(payload)], level: 3) { frame += $0 }
    var header = ArchiveHeader()
    header.flags = [.zstdPayload, .columnarObjects]
    header.typeCount = 1
    header.payloadLength = UInt64(payload.count)
    header.storedLength = UInt64(frame.count)
    header.objectCount = objectCount
    header.referenceCount = 3
    header.payloadChecksum = XXH64.hash(frame)
    return header.encoded() + frame
}

@Suite("Columnar object section")
struct ColumnarObjectsTests {
    /// The tables and top section of the golden archive [pin, other, pin] (as GoldenBytesTests).
    static let pinsPrefix: [UInt8] = [
        0x03, 0x04, 0x72, 0x6F, 0x6F, 0x74, 0x01, 0x74, 0x01, 0x63,  // §4.1 keys: "root", "t", "c"
        0x01, 0x00, 0x03, 0x50, 0x69, 0x6E,  // §4.2 types: object "Pin"
        0x01, 0x00, 0x02, 0x01, 0x02,  // §4.3 shapes: #0 = Pin(t, c)
        0x01, 0x00,  // §4.4 one top entry, key "root"
        0x0A, 0x03, 0x02, 0x02, 0x01,  // §6.5 reference array: objects 0, 1, 0
    ]
    /// The columnar object section of the same archive (§5.5).
    static let pinsColumns: [UInt8] = [
        0x00, 0x00,  // shape stream: object 0 has shape 0, object 1 has shape 0
        0x82, 0x68, 0x69, 0x80,  // column (shape 0, key "t"): "hi", ""
        0x11, 0x2C, 0x01, 0x18, 0x00,  // column (shape 0, key "c"): 300 (2 bytes), -1
    ]
    static var pins: [Pin] {
        let pin = Pin(tag: "hi", count: 300)
        return [pin, Pin(tag: "", count: -1), pin]
    }

    @Test func goldenLayoutOfATinyArchive() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.pins, options: .init(compression: .zstd))
        let archive = [UInt8](data)
        #expect(archive[10] == 0x03 && archive[11] == 0x00)  // §3.1 flags: zstdPayload | columnarObjects
        #expect(try decompressedPayload(archive) == Self.pinsPrefix + Self.pinsColumns)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Pin].self, from: data)
        #expect(back[0] === back[2] && back[0].tag == "hi" && back[0].count == 300 && back[1].count == -1)
        // The hand-sealed archive of the same payload reads the same.
        let handMade = try GraphUnarchiver.unarchivedObject(
            ofType: [Pin].self, from: Data(try sealedColumnar(Self.pinsPrefix + Self.pinsColumns)))
        #expect(handMade.map(\.tag) == ["hi", "", "hi"] && handMade[0] === handMade[2])
    }

    @Test func flatRecordsWithSharedReferences() throws {
        let records = sampleRecords(5000, sharedFraction: 0.25)
        let back = try zstdRoundTrip(records)
        expectSameRecords(back.memory, records)
        expectSameRecords(back.file, records)
    }

    @Test func chainInConstructionOrder() throws {
        var head: Link?
        for value in 0..<3000 { head = Link(value: value, next: head) }
        var link = try #require(try zstdRoundTrip(head).memory)
        var expected = 2999
        while let next = link.next {
            #expect(link.value == expected)
            expected -= 1
            link = next
        }
        #expect(link.value == 0 && expected == 0)
    }

    @Test func cyclesAndConditionalReferences() throws {
        let nodes = (0..<50).map(Node.init)
        for (index, node) in nodes.enumerated() {
            node.next = nodes[(index + 1) % nodes.count]
            node.parent = nodes[index / 2]
            node.buddy = nodes[(index * 7) % nodes.count]
            node.children = index % 5 == 0 ? [nodes[(index + 3) % 50], nodes[(index + 4) % 50]] : []
        }
        let back = try zstdRoundTrip(nodes).memory
        #expect(back.count == 50)
        for (index, node) in back.enumerated() {
            #expect(node.label == index)
            #expect(node.next === back[(index + 1) % 50] && node.parent === back[index / 2])
            #expect(node.buddy === back[(index * 7) % 50])
            #expect(node.children.map(\.label) == nodes[index].children.map(\.label))
        }
    }

    @Test func nestedValuesAndInterleavedTypes() throws {
        let holders = (0..<300).map(ColumnarHolder.init)
        let back = try zstdRoundTrip(holders, registry: GraphTypeRegistry([Record.self, Pin.self])).file
        #expect(back.count == 300)
        for (index, holder) in back.enumerated() {
            #expect(holder.everything == holders[index].everything)
            #expect(holder.matrix == holders[index].matrix && holder.index == holders[index].index)
            #expect(holder.record.name == "record \(index)" && holder.record.color == index * 7)
            #expect(holder.pin.tag == "pin \(index)" && holder.pin.count == -index)
        }
    }

    @Test func moreShapesThanOneByteIDs() throws {
        let objects = (0..<300).map(Sparse.init) + (0..<300).reversed().map(Sparse.init)
        let back = try zstdRoundTrip(objects).memory
        #expect(back.map(\.id) == objects.map(\.id))
        let info = try GraphUnarchiver.archiveInfo(
            from: GraphArchiver.archivedData(withRootObject: objects, options: .init(compression: .zstd)))
        #expect(info.objectCount == 600)
    }

    @Test func archivesWithoutObjects() throws {
        #expect(try zstdRoundTrip([Record]()).memory.isEmpty)
        #expect(try zstdRoundTrip(Everything()).memory == Everything())
    }

    @Test func keyedArchiveTranscodedWithZstdIsColumnar() throws {
        // The transcoder hands the assembler one section holding the top section and the records.
        let records = sampleRecords(40, sharedFraction: 0.5)
        let native = try GraphArchiver.archivedData(withRootObject: records)
        let keyed = try KeyedArchive.keyedArchiveData(fromArchive: native, options: KeyedArchiveWritingTests.uaGridState)
        let compressed = try KeyedArchive.archiveData(fromKeyedArchive: keyed, compression: .zstd)
        let plain = try KeyedArchive.archiveData(fromKeyedArchive: keyed)
        #expect(compressed[10] == 0x03)
        let loaded = try LoadedArchive.load(ArchiveBytes(copying: compressed), options: .init())
        #expect(loaded.payload.copyBytes(loaded.payloadRange) == [UInt8](plain.dropFirst(64)))
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: compressed, registry: gridStateRegistry)
        expectSameRecords(back, records)
        // And back to a keyed archive from the compressed one.
        #expect(try KeyedArchive.keyedArchiveData(fromArchive: compressed, options: KeyedArchiveWritingTests.uaGridState) == keyed)
    }

    // MARK: - Damaged columnar payloads (valid checksums: only the layout is wrong)

    func expectCorrupt(
        _ archive: [UInt8], offset: Int?, saying text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var errors = try loadErrors(archive)  // as [Record]; the layout fails before any type is looked up
        errors.append(archiveError { _ = try GraphUnarchiver.verify(Data(archive)) })
        errors.append(archiveError { _ = try GraphUnarchiver.archiveInfo(from: Data(archive)) })
        for error in errors {
            #expect(error?.code == .corrupt, sourceLocation: sourceLocation)
            #expect(error?.offset == offset, sourceLocation: sourceLocation)
            #expect(error?.message.contains(text) == true, "\(error?.message ?? "no error")", sourceLocation: sourceLocation)
        }
    }

    @Test func shapeIDOutOfRange() throws {
        var columns = Self.pinsColumns
        columns[1] = 0x05  // object 1 claims shape 5; the archive has one shape
        try expectCorrupt(
            try sealedColumnar(Self.pinsPrefix + columns), offset: Self.pinsPrefix.count + 1,
            saying: "refers to shape 5, but the archive has 1")
    }

    @Test func columnCutShort() throws {
        let columns = Array(Self.pinsColumns.dropLast())  // -1 loses its byte: 0x18 wants one more
        try expectCorrupt(
            try sealedColumnar(Self.pinsPrefix + columns), offset: Self.pinsPrefix.count + columns.count,
            saying: "the column of key \"c\" of shape 0 runs past the end of the payload")
    }

    @Test func bytesAfterTheLastColumn() throws {
        let payload = Self.pinsPrefix + Self.pinsColumns + [0x40, 0x40]
        try expectCorrupt(
            try sealedColumnar(payload), offset: payload.count - 2, saying: "2 bytes left over after the last column")
    }

    @Test func badTagInAColumn() throws {
        var columns = Self.pinsColumns
        columns[5] = 0xFE  // the cell "" of object 1 becomes a reserved tag
        try expectCorrupt(
            try sealedColumnar(Self.pinsPrefix + columns), offset: Self.pinsPrefix.count + 5, saying: "unknown value tag 0xfe")
    }

    @Test func objectCountLargerThanTheShapeStream() throws {
        let payload = Self.pinsPrefix + Self.pinsColumns
        // One record too many: the third shape id is read from the first column ("hi" = 82 68 …).
        try expectCorrupt(
            try sealedColumnar(payload, objectCount: 3), offset: Self.pinsPrefix.count + 2,
            saying: "refers to shape 13314")
        // More than the bytes after the top section: refused before anything is counted.
        try expectCorrupt(
            try sealedColumnar(payload, objectCount: 30), offset: 32,
            saying: "header claims 30 objects, more than the shape stream can hold")
    }

    @Test func columnarFlagWithoutCompressionIsRefused() throws {
        var header = ArchiveHeader()
        header.flags = [.columnarObjects]
        let archive = header.encoded()
        let error = archiveError { _ = try GraphUnarchiver.archiveInfo(from: Data(archive)) }
        #expect(error?.code == .corrupt && error?.offset == 10)
    }
}
#endif
