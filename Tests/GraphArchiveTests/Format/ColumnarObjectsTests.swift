// Tests/GraphArchiveTests/Format/ColumnarObjectsTests.swift - the columnar object table of zstd archives (FORMAT.md §5.5, §5.6)

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
    _ root: T,
    registry: GraphTypeRegistry = GraphTypeRegistry(),
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> (memory: T, file: T) {
    let data = try GraphArchiver.archivedData(withRootObject: root, options: .init(compression: .zstd))
    let flags = UInt16(data[10]) | UInt16(data[11]) << 8
    #expect(flags == 0b111, "zstdPayload, columnarObjects and objectBlocks", sourceLocation: sourceLocation)
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
    #expect(
        loaded.payload.copyBytes(loaded.payloadRange) == [UInt8](plain.dropFirst(64)),
        sourceLocation: sourceLocation
    )
    return (memory, file)
}

/// The decompressed payload of zstd archive `archive`, before the object section is rebuilt.
func decompressedPayload(_ archive: [UInt8]) throws -> [UInt8] {
    let bytes = ArchiveBytes(copying: archive)
    var reader = bytes.reader()
    let header = try ArchiveHeader.decode(from: &reader)
    let stored = 64..<archive.count
    let payload = try PayloadCompression.decompress(
        payloadLength: Int(header.payloadLength),
        storedLength: stored.count,
        frameStart: Array(archive[stored].prefix(PayloadCompression.frameHeaderMaximumSize))
    ) { (decompress) throws(GraphArchiveError) in try bytes.withUnsafeBytes(stored, decompress) }
    return payload.copyBytes(0..<payload.count)
}

/// A zstd archive of `payload` (a columnar payload written by hand) with valid checksums and
/// the header of ``ColumnarObjectsTests/pins``, its object count replaced by `objectCount`:
/// the one-piece columnar table of §5.5, or with `blocks` the blocked one of §5.6.
func sealedColumnar(_ payload: [UInt8], objectCount: UInt64 = 2, blocks: Bool = false) throws -> [UInt8] {
    let compressed = try CompressedPayload(level: 3, file: nil)
    try compressed.write(OutputChunk(payload).writer)
    _ = try compressed.finish()
    let frame = compressed.frameInMemory().writer.bytes
    var header = ArchiveHeader()
    header.flags = blocks ? [.zstdPayload, .columnarObjects, .objectBlocks] : [.zstdPayload, .columnarObjects]
    header.typeCount = 1
    header.payloadLength = UInt64(payload.count)
    header.storedLength = UInt64(frame.count)
    header.objectCount = objectCount
    header.referenceCount = 3
    header.payloadChecksum = XXH64.hash(frame)
    return header.encoded() + frame
}

/// A mixed root: a long array of records, whose bodies fill object blocks while they are
/// written, then nodes whose bodies refer forward (cycles) and force the rest to be reordered.
struct RecordsThenCycles: GraphCoding {
    var records: [Record]
    var nodes: [Node]

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(records, forKey: "records")
        try archiver.encode(nodes, forKey: "nodes")
    }

    init(records: [Record], nodes: [Node]) {
        self.records = records
        self.nodes = nodes
    }

    init(from unarchiver: GraphUnarchiver) throws {
        records = try unarchiver.decode([Record].self, forKey: "records")
        nodes = try unarchiver.decode([Node].self, forKey: "nodes")
    }
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
    /// The columnar object table of the same archive (§5.5), which §5.6 stores as one block.
    static let pinsColumns: [UInt8] = [
        0x00, 0x00,  // shape stream: object 0 has shape 0, object 1 has shape 0
        0x82, 0x68, 0x69, 0x80,  // column (shape 0, key "t"): "hi", ""
        0x11, 0x2C, 0x01, 0x18, 0x00,  // column (shape 0, key "c"): 300 (2 bytes), -1
    ]
    static var pins: [Pin] {
        let pin = Pin(tag: "hi", count: 300)
        return [pin, Pin(tag: "", count: -1), pin]
    }

    /// The header of the one block of the pins (§5.6): 12 bytes follow, holding 2 records.
    static let pinsBlockHeader: [UInt8] = [0x0C, 0x02]

    @Test func goldenLayoutOfATinyArchive() throws {
        let data = try GraphArchiver.archivedData(withRootObject: Self.pins, options: .init(compression: .zstd))
        let archive = [UInt8](data)
        #expect(archive[10] == 0x07 && archive[11] == 0x00)  // §3.1 flags: zstdPayload | columnarObjects | objectBlocks
        #expect(try decompressedPayload(archive) == Self.pinsBlockHeader + Self.pinsColumns + Self.pinsPrefix)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Pin].self, from: data)
        #expect(back[0] === back[2] && back[0].tag == "hi" && back[0].count == 300 && back[1].count == -1)
        // The hand-sealed archives of the same records read the same: blocked (§5.6), and the
        // one-piece columnar table that archives written before blocks have (§5.5).
        for handSealed in [
            try sealedColumnar(Self.pinsBlockHeader + Self.pinsColumns + Self.pinsPrefix, blocks: true),
            try sealedColumnar(Self.pinsPrefix + Self.pinsColumns),
        ] {
            let handMade = try GraphUnarchiver.unarchivedObject(ofType: [Pin].self, from: Data(handSealed))
            #expect(handMade.map(\.tag) == ["hi", "", "hi"] && handMade[0] === handMade[2])
        }
    }

    /// The pins in two blocks of one record each: the second block's record is object 1, which
    /// the top section's references reach across the block boundary.
    @Test func recordsNumberOnAcrossBlocks() throws {
        let blocks: [UInt8] = [
            0x08, 0x01, 0x00, 0x82, 0x68, 0x69, 0x11, 0x2C, 0x01,  // block: 1 record, Pin("hi", 300)
            0x05, 0x01, 0x00, 0x80, 0x18, 0x00,  // block: 1 record, Pin("", -1)
        ]
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Pin].self,
            from: Data(try sealedColumnar(blocks + Self.pinsPrefix, blocks: true))
        )
        #expect(back.map(\.tag) == ["hi", "", "hi"] && back.map(\.count) == [300, -1, 300] && back[0] === back[2])
    }

    /// 150,000 records are about 4.9 MB row-wise: three blocks, written while the array is
    /// encoded; the same through a save, whose blocks go straight to the file.
    @Test func manyBlocksInMemoryAndStraightToAFile() throws {
        let records = sampleRecords(150_000, sharedFraction: 0.25)
        let back = try zstdRoundTrip(records)
        expectSameRecords(back.memory, records)
        let plain = try GraphArchiver.archivedData(withRootObject: records)
        #expect(plain.count > 2 * ColumnarObjects.blockBytes)
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/blocks.gridstore"
            try GraphArchiver.archiveRootObject(records, toFile: path, options: .init(compression: .zstd))
            let saved = try Data(contentsOf: URL(fileURLWithPath: path))
            // A save compresses on one thread; so does an encode in memory told to.
            var oneThread = GraphArchiver.Options(compression: .zstd)
            oneThread.zstdWorkers = 0
            #expect(saved == (try GraphArchiver.archivedData(withRootObject: records, options: oneThread)))
            expectSameRecords(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path), records)
            // Rows rebuilt from the blocks are the uncompressed payload, byte for byte.
            let loaded = try LoadedArchive.load(ArchiveBytes(copying: saved), options: .init())
            #expect(loaded.payload.copyBytes(loaded.payloadRange) == [UInt8](plain.dropFirst(64)))
        }
    }

    /// Blocks written before the writer leaves construction order keep their numbers; the
    /// bodies after them are reordered (cycles), in memory and in a save.
    @Test func reorderingAfterBlocksKeepsTheBlockedObjects() throws {
        let records = sampleRecords(100_000, sharedFraction: 0.1)
        let nodes = (0..<2000).map(Node.init)
        for (index, node) in nodes.enumerated() {
            node.next = nodes[(index + 1) % nodes.count]
            node.parent = nodes[index / 2]
            node.children = index % 5 == 0 ? [nodes[(index + 3) % nodes.count]] : []
        }
        let root = RecordsThenCycles(records: records, nodes: nodes)
        let registry = GraphTypeRegistry([Record.self, Node.self])
        func check(_ back: RecordsThenCycles) {
            expectSameRecords(back.records, records)
            #expect(back.nodes.count == nodes.count)
            for (index, node) in back.nodes.enumerated() {
                #expect(node.label == index && node.next === back.nodes[(index + 1) % nodes.count])
                #expect(node.parent === back.nodes[index / 2])
            }
        }
        check(try zstdRoundTrip(root, registry: registry).memory)
        let plainInfo = try GraphUnarchiver.verify(try GraphArchiver.archivedData(withRootObject: root))
        try withTemporaryFolder { (folder) throws in
            let path = folder + "/mixed.gridstore"
            try GraphArchiver.archiveRootObject(root, toFile: path, options: .init(compression: .zstd))
            check(
                try GraphUnarchiver.unarchivedObject(ofType: RecordsThenCycles.self, fromFile: path, registry: registry)
            )
            let info = try GraphUnarchiver.verify(file: path)
            #expect(info.objectCount == plainInfo.objectCount && info.referenceCount == plainInfo.referenceCount)
        }
    }

    /// An archive written before object blocks existed (§5.5, flags 0b11), committed as bytes:
    /// [a, b, a] of two Records, as the row-wise fixture of CompressionFixtureTests.
    @Test func readsAColumnarArchiveWrittenBeforeBlocks() throws {
        #expect(columnarFixture[10] == 0x03)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: Data(columnarFixture))
        #expect(back.count == 3 && back[0] === back[2] && back[0] !== back[1])
        #expect(back[0].name == "Kitchen grid" && back[0].color == 0x3366FF && back[0].date == "2024-03-15T12:34:56Z")
        #expect(back[1].name == "Garden" && back[1].color == 0x00AA00 && back[1].date == "2025-01-02T03:04:05Z")
    }

    @Test func flatRecordsWithSharedReferences() throws {
        let records = sampleRecords(5000, sharedFraction: 0.25)
        let back = try zstdRoundTrip(records)
        expectSameRecords(back.memory, records)
        expectSameRecords(back.file, records)
    }

    @Test func cellsOfEveryLengthInOneColumn() throws {
        // Names of 0 to 149 bytes: a tag gives the length of those under 64, which the rebuild
        // copies whole; the longer ones it steps over with the checked walk, mid-record.
        let records = (0..<3000).map {
            Record(name: String(repeating: "n", count: $0 % 150), color: $0, date: "d\($0)")
        }
        let back = try zstdRoundTrip(records)
        for copy in [back.memory, back.file] {
            #expect(copy.map(\.name) == records.map(\.name))
            #expect(copy.map(\.color) == records.map(\.color) && copy.map(\.date) == records.map(\.date))
        }
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
            from: GraphArchiver.archivedData(withRootObject: objects, options: .init(compression: .zstd))
        )
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
        let keyed = try KeyedArchive.keyedArchiveData(
            fromGridstoreArchive: native,
            options: KeyedArchiveWritingTests.uaGridState
        )
        let compressed = try KeyedArchive.gridstoreArchiveData(fromKeyedArchive: keyed, compression: .zstd)
        let plain = try KeyedArchive.gridstoreArchiveData(fromKeyedArchive: keyed)
        #expect(compressed[10] == 0x07)
        let loaded = try LoadedArchive.load(ArchiveBytes(copying: compressed), options: .init())
        #expect(loaded.payload.copyBytes(loaded.payloadRange) == [UInt8](plain.dropFirst(64)))
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            from: compressed,
            registry: gridStateRegistry
        )
        expectSameRecords(back, records)
        // And back to a keyed archive from the compressed one.
        #expect(
            try KeyedArchive.keyedArchiveData(
                fromGridstoreArchive: compressed,
                options: KeyedArchiveWritingTests.uaGridState
            )
                == keyed
        )
    }

    // MARK: - Damaged columnar payloads (valid checksums: only the layout is wrong)

    func expectCorrupt(
        _ archive: [UInt8],
        offset: Int?,
        saying text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var errors = try loadErrors(archive)  // as [Record]; the layout fails before any type is looked up
        errors.append(archiveError { _ = try GraphUnarchiver.verify(Data(archive)) })
        errors.append(archiveError { _ = try GraphUnarchiver.archiveInfo(from: Data(archive)) })
        for error in errors {
            #expect(error?.code == .corrupt, sourceLocation: sourceLocation)
            #expect(error?.offset == offset, sourceLocation: sourceLocation)
            #expect(
                error?.message.contains(text) == true,
                "\(error?.message ?? "no error")",
                sourceLocation: sourceLocation
            )
        }
    }

    @Test func shapeIDOutOfRange() throws {
        var columns = Self.pinsColumns
        columns[1] = 0x05  // object 1 claims shape 5; the archive has one shape
        try expectCorrupt(
            try sealedColumnar(Self.pinsPrefix + columns),
            offset: Self.pinsPrefix.count + 1,
            saying: "refers to shape 5, but the archive has 1"
        )
    }

    @Test func columnCutShort() throws {
        let columns = Array(Self.pinsColumns.dropLast())  // -1 loses its byte: 0x18 wants one more
        try expectCorrupt(
            try sealedColumnar(Self.pinsPrefix + columns),
            offset: Self.pinsPrefix.count + columns.count,
            saying: "the column of key \"c\" of shape 0 runs past the end of its object block"
        )
    }

    @Test func bytesAfterTheLastColumn() throws {
        let payload = Self.pinsPrefix + Self.pinsColumns + [0x40, 0x40]
        try expectCorrupt(
            try sealedColumnar(payload),
            offset: payload.count - 2,
            saying: "2 bytes left over after the last column"
        )
    }

    @Test func badTagInAColumn() throws {
        var columns = Self.pinsColumns
        columns[5] = 0xFE  // the cell "" of object 1 becomes a reserved tag
        try expectCorrupt(
            try sealedColumnar(Self.pinsPrefix + columns),
            offset: Self.pinsPrefix.count + 5,
            saying: "unknown value tag 0xfe"
        )
    }

    @Test func objectCountLargerThanTheShapeStream() throws {
        let payload = Self.pinsPrefix + Self.pinsColumns
        // One record too many: the third shape id is read from the first column ("hi" = 82 68 …).
        try expectCorrupt(
            try sealedColumnar(payload, objectCount: 3),
            offset: Self.pinsPrefix.count + 2,
            saying: "refers to shape 13314"
        )
        // More than the bytes after the top section: refused before anything is counted.
        try expectCorrupt(
            try sealedColumnar(payload, objectCount: 30),
            offset: 32,
            saying: "header claims 30 objects, more than the shape stream can hold"
        )
    }

    @Test func columnarFlagWithoutCompressionIsRefused() throws {
        for flags: ArchiveHeader.Flags in [[.columnarObjects], [.objectBlocks], [.zstdPayload, .objectBlocks]] {
            var header = ArchiveHeader()
            header.flags = flags
            let archive = header.encoded()
            let error = archiveError { _ = try GraphUnarchiver.archiveInfo(from: Data(archive)) }
            #expect(error?.code == .corrupt && error?.offset == 10)
        }
    }

    // MARK: - Damaged blocks (§5.6)

    func blocked(_ blocks: [UInt8]) -> [UInt8] { blocks + Self.pinsColumns + Self.pinsPrefix }

    @Test func blockLongerThanThePayload() throws {
        try expectCorrupt(
            try sealedColumnar(blocked([0x7F, 0x02]), blocks: true),
            offset: 0,
            saying: "object block of 127 bytes runs past the end of the payload"
        )
    }

    @Test func blockRecordCountOutOfRange() throws {
        try expectCorrupt(
            try sealedColumnar(blocked([0x0C, 0x00]), blocks: true),
            offset: 1,
            saying: "object block claims 0 records; 1 to 2 are left"
        )
        try expectCorrupt(
            try sealedColumnar(blocked([0x0C, 0x03]), blocks: true),
            offset: 1,
            saying: "object block claims 3 records; 1 to 2 are left"
        )
    }

    @Test func columnRunsPastItsBlock() throws {
        // The last cell (-1) lost its second byte, and the block its length: the cell would
        // take the tables' first byte.
        let payload = [0x0B, 0x02] + Self.pinsColumns.dropLast() + Self.pinsPrefix
        try expectCorrupt(
            try sealedColumnar(payload, blocks: true),
            offset: 12,
            saying: "the column of key \"c\" of shape 0 runs past the end of its object block"
        )
    }

    @Test func bytesAfterTheTopSection() throws {
        let payload = blocked(Self.pinsBlockHeader) + [0x40]
        try expectCorrupt(
            try sealedColumnar(payload, blocks: true),
            offset: payload.count - 1,
            saying: "1 bytes left over after the top section"
        )
        // Without objects (§5.5 as §5.6), nothing may follow the top section either.
        let empty: [UInt8] = [
            0x01, 0x04, 0x72, 0x6F, 0x6F, 0x74,  // keys: "root"
            0x01, 0x00, 0x03, 0x50, 0x69, 0x6E,  // types: object "Pin"
            0x01, 0x00, 0x00,  // shapes: #0 = Pin()
            0x01, 0x00, 0x09, 0x00,  // top: root = []
        ]
        for blocks in [false, true] {
            try expectCorrupt(
                try sealedColumnar(empty + [0x40, 0x40], objectCount: 0, blocks: blocks),
                offset: empty.count,
                saying: "2 bytes left over after the top section"
            )
        }
    }
}
#endif
