// Tests/GraphArchiveTests/Unarchiving/CorruptInputTests.swift - damaged and crafted archives are refused, never crash

import Foundation
import Testing

@testable import GraphArchive

/// Small archives of each kind the engine writes, with the call that reads each back.
enum SampleArchive: String, CaseIterable, CustomTestStringConvertible {
    case flatRecords, sharedReferences, cycles, nestedValues
    #if Zstd
    /// The shared references, zstd-compressed: damage must be caught before zstd reads a byte.
    case compressed
    #endif

    var testDescription: String { rawValue }

    func archive() throws -> [UInt8] {
        switch self {
        case .flatRecords:
            let records = (0..<3).map { Record(name: "r\($0)", color: $0 * 1000, date: "2024-0\($0 + 1)-01") }
            return Array(try GraphArchiver.archivedData(withRootObject: records))
        case .sharedReferences:
            let a = Record(name: "a", color: 1, date: "x")
            let b = Record(name: "b", color: -2, date: "y")
            return Array(try GraphArchiver.archivedData(withRootObject: [a, b, a, a]))
        case .cycles:
            let parent = Node(0)
            parent.children = (1...2).map(Node.init)
            for child in parent.children { child.parent = parent }
            parent.children[0].next = parent.children[1]
            parent.children[1].next = parent.children[0]
            parent.buddy = parent.children[1]
            defer { for node in parent.children { node.next = nil } }
            return Array(try GraphArchiver.archivedData(withRootObject: parent))
        case .nestedValues:
            return Array(try GraphArchiver.archivedData(withRootObject: [Everything()]))
        #if Zstd
        case .compressed:
            let a = Record(name: "a", color: 1, date: "x")
            let records = [a] + (0..<20).map { Record(name: "record \($0)", color: $0, date: "2024") } + [a]
            return Array(
                try GraphArchiver.archivedData(withRootObject: records, options: .init(compression: .zstd))
            )
        #endif
        }
    }

    /// Every reader of the archive: the object decoder, `verify` and `archiveInfo`.
    func readers() -> [(String, (Data) throws -> Void)] {
        let decode: (Data) throws -> Void
        switch self {
        #if Zstd
        case .compressed:
            decode = { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: $0) }
        #endif
        case .flatRecords, .sharedReferences:
            decode = { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: $0) }
        case .cycles:
            decode = { data in
                let root = try GraphUnarchiver.unarchivedObject(ofType: Node.self, from: data)
                for node in root.children { node.next = nil }
            }
        case .nestedValues:
            decode = { _ = try GraphUnarchiver.unarchivedObject(ofType: [Everything].self, from: $0) }
        }
        return [
            ("decode", decode),
            ("verify", { _ = try GraphUnarchiver.verify($0) }),
            ("archiveInfo", { _ = try GraphUnarchiver.archiveInfo(from: $0) }),
        ]
    }
}

/// `bytes` with both checksums recomputed, so a change reaches the checks behind them.
func withRecomputedChecksums(_ bytes: [UInt8]) -> [UInt8] {
    var sealed = bytes
    func store(_ value: UInt64, at offset: Int) {
        for index in 0..<8 { sealed[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }
    store(XXH64.hash(Array(bytes[ArchiveHeader.size...])), at: 48)
    store(XXH64.hash(Array(sealed[0..<56])), at: 56)
    return sealed
}

@Suite("Corrupt input")
struct CorruptInputTests {
    // MARK: - Exhaustive damage

    @Test(arguments: SampleArchive.allCases)
    func everyTruncationIsRefused(kind: SampleArchive) throws {
        let archive = try kind.archive()
        for (reader, read) in kind.readers() {
            try read(Data(archive))  // the whole archive is fine
            for length in 0..<archive.count {
                let error = expectArchiveError(.truncated) { try read(Data(archive[..<length])) }
                if error?.code != .truncated {
                    Issue.record("\(reader) of \(length) of \(archive.count) bytes")
                    return
                }
            }
        }
    }

    /// The checksums catch every single-bit flip: the magic, header and payload each name theirs.
    @Test(arguments: SampleArchive.allCases)
    func everyBitFlipIsCaughtByTheChecksums(kind: SampleArchive) throws {
        let archive = try kind.archive()
        for (reader, read) in kind.readers() {
            for bit in 0..<(archive.count * 8) {
                var damaged = archive
                damaged[bit / 8] ^= 1 << UInt8(bit % 8)
                let expected: GraphArchiveError.Code =
                    switch bit / 8 {
                    case 0..<8: .badMagic
                    case 8..<ArchiveHeader.size: .headerChecksumMismatch
                    default: .checksumMismatch
                    }
                let error = expectArchiveError(expected) { try read(Data(damaged)) }
                if error?.code != expected {
                    Issue.record("\(reader) with bit \(bit) flipped")
                    return
                }
            }
        }
    }

    /// With the checksums recomputed, every flip reaches the structural checks: each reader then
    /// either refuses the archive with a `GraphArchiveError` or reads a well-formed one; none traps.
    @Test(arguments: SampleArchive.allCases)
    func everyResealedBitFlipIsRefusedOrReadCleanly(kind: SampleArchive) throws {
        let archive = try kind.archive()
        var refused = 0
        var total = 0
        for (reader, read) in kind.readers() {
            for bit in (8 * 8)..<(archive.count * 8) where !(48 * 8..<64 * 8).contains(bit) {
                var damaged = archive
                damaged[bit / 8] ^= 1 << UInt8(bit % 8)
                total += 1
                do {
                    try read(Data(withRecomputedChecksums(damaged)))
                } catch is GraphArchiveError {
                    refused += 1
                } catch {
                    Issue.record("\(reader) with bit \(bit) flipped threw \(error)")
                }
            }
        }
        // Many flips break the structure; the others change a value (a letter, a number) and still read.
        #expect(refused > total / 5, "\(refused) of \(total) refused")
    }

    // MARK: - The hand-built archive itself

    @Test func handBuiltArchiveMatchesTheEncoder() throws {
        let a = Record(name: "a", color: 1, date: "d")
        #expect(HandBuilt.sharedRecords().bytes == Array(try GraphArchiver.archivedData(withRootObject: [a, a])))
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: HandBuilt.sharedRecords().data)
        #expect(back.count == 2 && back[0] === back[1] && back[0].name == "a")
    }

    // MARK: - Header

    @Test func notAnArchive() {
        expectArchiveError(.badMagic) { _ = try GraphUnarchiver.verify(Data("{\"json\": true}".utf8)) }
        expectArchiveError(.truncated) { _ = try GraphUnarchiver.verify(Data()) }
    }

    @Test func newerMajorVersionIsRefused() {
        var archive = HandBuilt.sharedRecords()
        archive.header.majorVersion = 2  // byte 8
        expectArchiveError(.unsupportedVersion, mentioning: "2.0") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
    }

    @Test func newerMinorVersionIsRead() throws {
        var archive = HandBuilt.sharedRecords()
        archive.header.minorVersion = 9  // byte 9: additions a 1.0 reader may ignore
        #expect(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data).count == 2)
    }

    @Test func unknownRequiredFlagIsRefused() {
        var archive = HandBuilt.sharedRecords()
        archive.header.flags = ArchiveHeader.Flags(rawValue: 1 << 3)  // bytes 10-11: a required feature we lack
        expectArchiveError(.unsupportedVersion, mentioning: "0x8") { _ = try GraphUnarchiver.verify(archive.data) }
    }

    @Test func unknownOptionalFlagIsIgnored() throws {
        var archive = HandBuilt.sharedRecords()
        archive.header.flags = ArchiveHeader.Flags(rawValue: 1 << 12)  // a hint bit (8...15)
        #expect(try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data).count == 2)
    }

    @Test func payloadAndStoredLengthsMustAgreeWhenUncompressed() {
        var archive = HandBuilt.sharedRecords()
        archive.payloadLength = UInt64(archive.payload.count + 1)  // bytes 16-23
        expectArchiveError(.corrupt, mentioning: "stored and payload lengths") {
            _ = try GraphUnarchiver.verify(archive.data)
        }
    }

    @Test func storedLengthLongerThanTheFileIsTruncation() {
        var archive = HandBuilt.sharedRecords()
        archive.storedLength = UInt64(archive.payload.count + 10)
        archive.payloadLength = archive.storedLength
        expectArchiveError(.truncated, mentioning: "header promises") { _ = try GraphUnarchiver.verify(archive.data) }
    }

    @Test func bytesAfterTheStoredPayloadAreTrailingGarbage() {
        let bytes = HandBuilt.sharedRecords().bytes + [0]
        expectArchiveError(.trailingGarbage) { _ = try GraphUnarchiver.verify(Data(bytes)) }
    }

    /// Regression: counts past `Int.max` trapped while converting them for `ArchiveInfo`.
    @Test(arguments: [(UInt64.max, 2), (1, UInt64.max), (UInt64(Int.max) + 1, 0), (1000, 2)] as [(UInt64, UInt64)])
    func headerCountsBeyondThePayloadAreRefused(objectCount: UInt64, referenceCount: UInt64) {
        let archive = HandBuilt.sharedRecords(objectCount: objectCount, referenceCount: referenceCount)  // bytes 32-47
        for read in SampleArchive.sharedReferences.readers().map(\.1) {
            expectArchiveError(.corrupt, mentioning: "more than the payload can hold") { try read(archive.data) }
        }
    }

    @Test func typeCountMustMatchTheTypeTable() {
        var archive = HandBuilt.sharedRecords()
        archive.header.typeCount = 2  // bytes 12-15
        expectArchiveError(.corrupt, mentioning: "header says 2") { _ = try GraphUnarchiver.verify(archive.data) }
    }

    // MARK: - Tables

    @Test func overlongVarintIsRefused() {
        // Key count as 11 continuation bytes: more than 64 bits.
        let archive = HandBuiltArchive(Array(repeating: 0xFF, count: 10) + [0x01], typeCount: 0, objectCount: 0)
        expectArchiveError(.corrupt, mentioning: "varint overflows") { _ = try GraphUnarchiver.verify(archive.data) }
    }

    @Test func varintCutOffByTheEndIsTruncation() {
        let archive = HandBuiltArchive([0x80, 0x80], typeCount: 0, objectCount: 0)  // key count never ends
        expectArchiveError(.truncated, mentioning: "varint") { _ = try GraphUnarchiver.verify(archive.data) }
    }

    @Test func tableCountLargerThanTheInputIsRefused() {
        let archive = HandBuiltArchive(varint(1 << 40) + name("root"), typeCount: 0, objectCount: 0)  // 2^40 keys
        expectArchiveError(.corrupt, mentioning: "exceeds the bytes left") {
            _ = try GraphUnarchiver.verify(archive.data)
        }
    }

    @Test func keyNameThatIsNotUTF8IsRefused() {
        let payload = varint(1) + [3, 0x61, 0xC3, 0x28]  // one key: "a" then a broken two-byte sequence
        let archive = HandBuiltArchive(payload, typeCount: 0, objectCount: 0)
        expectArchiveError(.invalidUTF8) { _ = try GraphUnarchiver.verify(archive.data) }
    }

    @Test func unknownTypeKindIsRefused() {
        var archive = HandBuilt.sharedRecords()
        let kindOffset = archive.payload.firstIndex(of: 6)! - 1  // the byte before the name "Record" (length 6)
        archive.payload[kindOffset] = 7
        expectArchiveError(.corrupt, mentioning: "unknown type kind 7") { _ = try GraphUnarchiver.verify(archive.data) }
    }

    @Test func shapeOfAMissingTypeIsRefused() {
        var archive = HandBuilt.sharedRecords()
        let tables = HandBuilt.recordTables()
        archive.payload[tables.count - 5] = 3  // shape 0's type: 3, but there is 1 type
        expectArchiveError(.corrupt, mentioning: "shape refers to type 3") {
            _ = try GraphUnarchiver.verify(archive.data)
        }
    }

    @Test func shapeWithAMissingKeyIsRefused() {
        var archive = HandBuilt.sharedRecords()
        archive.payload[HandBuilt.recordTables().count - 1] = 9  // shape 0's third key: 9 of 4
        expectArchiveError(.corrupt, mentioning: "shape refers to key 9") {
            _ = try GraphUnarchiver.verify(archive.data)
        }
    }

    @Test func shapeListingAKeyTwiceIsRefused() {
        var archive = HandBuilt.sharedRecords()
        archive.payload[HandBuilt.recordTables().count - 1] = 1  // keys 1 2 1
        expectArchiveError(.corrupt, mentioning: "twice") { _ = try GraphUnarchiver.verify(archive.data) }
    }

    // MARK: - Values

    @Test func unknownTagIsRefused() {
        // Object 0's name holds tag 0x0D, which no value starts with.
        let archive = HandBuilt.sharedRecords(objects: varint(0) + [0x0D] + [0x41] + shortString("d"))
        expectArchiveError(.corrupt, mentioning: "unknown value tag 0xd") {
            _ = try GraphUnarchiver.verify(archive.data)
        }
        expectArchiveError(.typeMismatch, mentioning: "unknown tag 0xd") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
    }

    @Test func unknownTagInATopLevelValueIsRefused() {
        expectArchiveError(.corrupt, mentioning: "unknown value tag 0xfe") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Int].self, from: HandBuilt.topValue([0xFE]).data)
        }
    }

    @Test func referenceBeyondTheObjectTableIsRefused() {
        // root: a single reference to object 5; the archive has one object.
        let archive = HandBuilt.sharedRecords(root: [ValueTag.objectReference, 5], referenceCount: 1)
        for read in SampleArchive.sharedReferences.readers().map(\.1) {
            expectArchiveError(.badObjectReference, mentioning: "object 5") { try read(archive.data) }
        }
    }

    /// The header's `referenceCount` must be the number of references the archive holds.
    @Test(arguments: [0, 1, 3] as [UInt64])
    func referenceCountThatDisagreesWithTheReferencesFailsVerify(referenceCount: UInt64) throws {
        let archive = HandBuilt.sharedRecords(referenceCount: referenceCount)
        expectArchiveError(
            .corrupt,
            mentioning: "header's referenceCount is \(referenceCount), but the archive holds 2 object references"
        ) { _ = try GraphUnarchiver.verify(archive.data) }
        #expect(try GraphUnarchiver.verify(HandBuilt.sharedRecords(referenceCount: 2).data).objectCount == 1)
    }

    @Test func referenceArrayStepsBeforeObjectZero() {
        let archive = HandBuilt.sharedRecords(root: [ValueTag.referenceArray, 2, 2, 3])  // deltas +1, then -2
        expectArchiveError(.badObjectReference, mentioning: "before object 0") {
            _ = try GraphUnarchiver.verify(archive.data)
        }
    }

    @Test func referenceArrayStepsPastTheLastObject() {
        let archive = HandBuilt.sharedRecords(root: [ValueTag.referenceArray, 2, 2, 2])  // objects 0, then 1 of 1
        expectArchiveError(.badObjectReference) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
    }

    @Test func recordShapeOutOfRangeIsRefused() {
        // shape 7 of 1
        let archive = HandBuilt.sharedRecords(objects: varint(7) + Array(HandBuilt.recordBody().dropFirst()))
        for read in SampleArchive.sharedReferences.readers().map(\.1).prefix(2) {
            expectArchiveError(.corrupt, mentioning: "shape 7") { try read(archive.data) }
        }
    }

    @Test func objectRecordedWithAValueTypeIsRefused() {
        var archive = HandBuilt.sharedRecords()
        let kindOffset = archive.payload.firstIndex(of: 6)! - 1
        archive.payload[kindOffset] = TypeKind.value  // "Record" becomes a value type
        expectArchiveError(.corrupt, mentioning: "value type") { _ = try GraphUnarchiver.verify(archive.data) }
        expectArchiveError(.corrupt, mentioning: "value type") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
    }

    @Test func trailingBytesAfterTheLastObjectAreRefused() {
        let archive = HandBuilt.sharedRecords(objects: HandBuilt.recordBody() + [0x00])
        for read in SampleArchive.sharedReferences.readers().map(\.1).prefix(2) {
            expectArchiveError(.trailingGarbage) { try read(archive.data) }
        }
    }

    @Test func missingObjectIsTruncation() {
        let archive = HandBuilt.sharedRecords(objects: [])
        expectArchiveError(.truncated) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
    }

    @Test func topLevelKeyOutOfRangeIsRefused() {
        var archive = HandBuilt.topValue([0x41])
        archive.payload[archive.payload.count - 2] = 4  // key 4 of 1
        expectArchiveError(.corrupt, mentioning: "uses key 4") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: Int.self, from: archive.data)
        }
    }

    @Test func repeatedTopLevelKeyIsRefused() {
        var archive = HandBuilt.topValue([0x41] + varint(0) + [0x42])  // "root" = 1, then "root" = 2
        archive.payload[archive.payload.count - 5] = 2  // two top-level values
        expectArchiveError(.corrupt, mentioning: "appears twice") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: Int.self, from: archive.data)
        }
    }

    @Test func repeatedDictionaryKeyIsRefused() {
        // ["k": 1, "k": 2]
        let archive = HandBuilt.topValue(
            [ValueTag.dictionary, 2] + shortString("k") + [0x41] + shortString("k") + [0x42]
        )
        expectArchiveError(.corrupt, mentioning: "same key twice") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [String: Int].self, from: archive.data)
        }
    }

    @Test func stringThatIsNotUTF8IsRefused() {
        let archive = HandBuilt.topValue([ValueTag.shortStringBase + 2, 0xFF, 0xFE])
        expectArchiveError(.invalidUTF8) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: String.self, from: archive.data)
        }
    }

    @Test func integerTooWideForTheRequestedTypeIsRefused() throws {
        let archive = HandBuilt.topValue([ValueTag.unsignedBase + 1, 0x2C, 0x01])  // 300 in two bytes
        expectArchiveError(.valueOutOfRange, mentioning: "300") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: Int8.self, from: archive.data)
        }
        #expect(try GraphUnarchiver.unarchivedObject(ofType: Int16.self, from: archive.data) == 300)
    }

    @Test func valueOfAnotherTypeIsATypeMismatch() {
        let archive = HandBuilt.topValue(shortString("seven"))
        expectArchiveError(.typeMismatch, mentioning: "expected Int, found String") {
            _ = try GraphUnarchiver.unarchivedObject(ofType: Int.self, from: archive.data)
        }
    }

    // MARK: - Types

    @Test func unregisteredTypeIsNeverCreated() {
        let archive = HandBuilt.sharedRecords(typeName: "Evil")
        let error = expectArchiveError(.unknownType, mentioning: "\"Evil\"") {
            _ = try GraphUnarchiver(forReadingFrom: archive.data, registry: GraphTypeRegistry([Record.self]))
        }
        #expect(error?.keyPath == ["Evil"])
        // Asking for [Record] registers Record, never a class by the archive's say-so.
        expectArchiveError(.unknownType) {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: archive.data)
        }
        // An empty registry creates nothing at all.
        expectArchiveError(.unknownType) {
            _ = try GraphUnarchiver(forReadingFrom: HandBuilt.sharedRecords().data, registry: GraphTypeRegistry())
        }
    }

    @Test func registeredAliasIsCreated() throws {
        let archive = HandBuilt.sharedRecords(typeName: "UARecord")
        var registry = GraphTypeRegistry()
        registry.register(Record.self, forName: "UARecord")
        let unarchiver = try GraphUnarchiver(forReadingFrom: archive.data, registry: registry)
        #expect(try unarchiver.decode([Record].self, forKey: "root").map(\.name) == ["a", "a"])
    }

    @Test func objectOfTheWrongClassIsATypeMismatch() {
        // Record registered under the name the archive gives to Node's objects.
        var registry = GraphTypeRegistry()
        registry.register(Record.self, forName: "Node")
        let archive = HandBuilt.sharedRecords(typeName: "Node")
        expectArchiveError(.typeMismatch, mentioning: "expected Node") {
            let unarchiver = try GraphUnarchiver(forReadingFrom: archive.data, registry: registry)
            _ = try unarchiver.decode([Node].self, forKey: "root")
        }
    }
}
