// Tests/GraphArchiveTests/KeyedArchive/KeyedArchiveCorruptInputTests.swift - hostile keyed archives are refused, never crash

import Foundation
import Testing

@testable import GraphArchive

/// The smallest keyed archive, byte by byte: `$top` = {"root": UID 1}, `$objects` = ["$null", "hi"].
let minimalKeyedArchive: [UInt8] = [
    0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30,  // 0: "bplist00"
    0xD4, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // 8: object 0, dict of 4: keys 1-4, values 5-8
    0x59, 0x24, 0x61, 0x72, 0x63, 0x68, 0x69, 0x76, 0x65, 0x72,  // 17: object 1, "$archiver"
    0x58, 0x24, 0x76, 0x65, 0x72, 0x73, 0x69, 0x6F, 0x6E,  // 27: object 2, "$version"
    0x54, 0x24, 0x74, 0x6F, 0x70,  // 36: object 3, "$top"
    0x58, 0x24, 0x6F, 0x62, 0x6A, 0x65, 0x63, 0x74, 0x73,  // 41: object 4, "$objects"
    0x5F, 0x10, 0x0F,  // 50: object 5, ASCII string, length in the next integer: 15
    0x4E, 0x53, 0x4B, 0x65, 0x79, 0x65, 0x64, 0x41, 0x72, 0x63, 0x68, 0x69, 0x76, 0x65, 0x72,  // "NSKeyedArchiver"
    0x12, 0x00, 0x01, 0x86, 0xA0,  // 68: object 6, 4-byte integer 100000
    0xD1, 0x09, 0x0A,  // 73: object 7, dict of 1 ($top): key 9, value 10
    0xA2, 0x0B, 0x0C,  // 76: object 8, array of 2 ($objects): 11, 12
    0x54, 0x72, 0x6F, 0x6F, 0x74,  // 79: object 9, "root"
    0x80, 0x01,  // 84: object 10, UID 1
    0x55, 0x24, 0x6E, 0x75, 0x6C, 0x6C,  // 86: object 11, "$null"
    0x52, 0x68, 0x69,  // 92: object 12, "hi"
    0x08, 0x11, 0x1B, 0x24, 0x29, 0x32, 0x44, 0x49, 0x4C, 0x4F, 0x54, 0x56, 0x5C,  // 95: offset table
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // 108: trailer: unused, sort version
    0x01,  // 114: offset size
    0x01,  // 115: reference size
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0D,  // 116: 13 objects
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // 124: top object 0
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x5F,  // 132: offset table at 95
]

/// Opens `bytes` as a keyed archive and decodes "root" as a string.
func decodeMinimal(_ bytes: [UInt8]) throws -> String {
    let unarchiver = try GraphUnarchiver(forReadingKeyedArchive: Data(bytes), registry: GraphTypeRegistry())
    return try unarchiver.decode(String.self, forKey: "root")
}

/// `minimalKeyedArchive` with `bytes` written at `offset`.
func patched(_ offset: Int, _ bytes: [UInt8]) -> [UInt8] {
    var copy = minimalKeyedArchive
    copy.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    return copy
}

/// Expects decoding to throw a GraphArchiveError with `code` whose message mentions `text`.
func expectRefused(
    _ code: GraphArchiveError.Code,
    mentioning text: String = "",
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    #expect(sourceLocation: sourceLocation) {
        try body()
    } throws: { error in
        guard let error = error as? GraphArchiveError else { return false }
        return error.code == code && (text.isEmpty || error.message.contains(text))
    }
}

@Suite("Keyed archives: corrupt input")
struct KeyedArchiveCorruptInputTests {
    @Test func minimalArchiveDecodes() throws {
        #expect(try decodeMinimal(minimalKeyedArchive) == "hi")
    }

    // MARK: - The binary property list

    @Test func wrongMagicIsNotAKeyedArchive() {
        expectRefused(.badMagic, mentioning: "bplist00") { _ = try decodeMinimal(patched(7, [0x31])) }
        expectRefused(.badMagic) { _ = try decodeMinimal(Array("not a plist at all, just some text bytes".utf8)) }
    }

    @Test func everyTruncationIsRefused() {
        for length in 0..<minimalKeyedArchive.count {
            #expect(throws: GraphArchiveError.self, "prefix of \(length) bytes") {
                _ = try decodeMinimal(Array(minimalKeyedArchive.prefix(length)))
            }
        }
    }

    @Test func damagedTrailersAreRefused() {
        expectRefused(.corrupt, mentioning: "offset size") { _ = try decodeMinimal(patched(114, [0x00])) }
        expectRefused(.corrupt, mentioning: "reference size") { _ = try decodeMinimal(patched(115, [0x09])) }
        expectRefused(.corrupt, mentioning: "top object") { _ = try decodeMinimal(patched(131, [0x0D])) }
        expectRefused(.corrupt, mentioning: "offset table") { _ = try decodeMinimal(patched(139, [0xC8])) }
        // 300 objects cannot be addressed with 1-byte references (nor fill the table).
        expectRefused(.corrupt) { _ = try decodeMinimal(patched(122, [0x01, 0x2C])) }
        expectRefused(.corrupt) {
            _ = try decodeMinimal(patched(116, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]))
        }
    }

    @Test func offsetsOutsideTheObjectDataAreRefused() {
        expectRefused(.corrupt, mentioning: "offset 95 of object 12") { _ = try decodeMinimal(patched(107, [0x5F])) }
        expectRefused(.corrupt, mentioning: "offset 3 of object 0") { _ = try decodeMinimal(patched(95, [0x03])) }
    }

    @Test func referencesOutOfRangeAreRefused() {
        expectRefused(.badObjectReference, mentioning: "object 32") { _ = try decodeMinimal(patched(78, [0x20])) }
    }

    @Test func lengthsPastTheObjectDataAreRefused() {
        // "hi" claims 14 characters, running into the offset table.
        expectRefused(.corrupt, mentioning: "claims 14") { _ = try decodeMinimal(patched(92, [0x5E])) }
        // An array whose length nibble says "read an integer" finds a reference instead.
        expectRefused(.corrupt, mentioning: "malformed length") { _ = try decodeMinimal(patched(76, [0xAF])) }
    }

    @Test func invalidTextIsRefused() {
        expectRefused(.invalidUTF8) { _ = try decodeMinimal(patched(93, [0xFF])) }
    }

    // MARK: - The keyed-archive layer

    @Test func wrongArchiverOrVersionIsRefused() throws {
        expectRefused(.badMagic, mentioning: "NSKeyedArchivex") { _ = try decodeMinimal(patched(67, [0x78])) }
        expectRefused(.unsupportedVersion, mentioning: "100001") { _ = try decodeMinimal(patched(72, [0xA1])) }
        expectRefused(.badMagic, mentioning: "NSFancyArchiver") {
            _ = try GraphUnarchiver(
                forReadingKeyedArchive: keyedFixture("python-hostile-wrong-archiver"),
                registry: gridStateRegistry
            )
        }
        expectRefused(.unsupportedVersion, mentioning: "200000") {
            _ = try GraphUnarchiver(
                forReadingKeyedArchive: keyedFixture("python-hostile-wrong-version"),
                registry: gridStateRegistry
            )
        }
        // A plain property list is not a keyed archive.
        expectRefused(.badMagic, mentioning: "no $archiver") {
            _ = try GraphUnarchiver(
                forReadingKeyedArchive: bplist(.dictionary(["a": .integer(1)])),
                registry: gridStateRegistry
            )
        }
        expectRefused(.badMagic, mentioning: "not a dictionary") {
            _ = try GraphUnarchiver(forReadingKeyedArchive: bplist(.array([.integer(1)])), registry: gridStateRegistry)
        }
    }

    @Test func malformedEnvelopesAreRefused() {
        expectRefused(.corrupt, mentioning: "$null") { _ = try decodeMinimal(patched(91, [0x78])) }
        expectRefused(.corrupt, mentioning: "$top") { _ = try decodeMinimal(patched(39, [0x78])) }
        // UID 1 points at "hi"; UID 2 is past the end of $objects.
        expectRefused(.badObjectReference, mentioning: "UID 2") { _ = try decodeMinimal(patched(85, [0x02])) }
    }

    /// An instance's values are UIDs read the short way when at most four bytes wide; a wider
    /// one (here a UID past 2^32, as a hostile archive may write) is read the long way and
    /// refused, at any place among the instance's keys.
    @Test func wideUIDAmongAnInstancesValuesIsRefused() {
        let wide = PlistValue.uid(1 << 32 | 1)
        for fields in [
            [("kEncodeKeyName", wide), ("$class", PlistValue.uid(2))],
            [("$class", PlistValue.uid(2)), ("kEncodeKeyColor", .integer(3)), ("kEncodeKeyName", wide)],
        ] as [[(String, PlistValue)]] {
            expectRefused(.badObjectReference, mentioning: "UID 4294967295 is out of range") {
                _ = try decodeKeyed(
                    Record.self,
                    objects: [.fields(fields), .dictionary(["$classname": .string("UAGridState")])]
                )
            }
        }
    }

    /// The instances after the first of a class are read through its template, their
    /// `$class` stepped over rather than read again, wherever it lies among their keys.
    @Test func instancesReadThroughATemplateKeepTheirValues() throws {
        let records = try decodeKeyed(
            [Record].self,
            objects: [
                .dictionary(["NS.objects": .array([.uid(2), .uid(3)]), "$class": .uid(5)]),
                .fields([
                    ("$class", .uid(4)), ("kEncodeKeyName", .uid(6)), ("kEncodeKeyColor", .integer(1)),
                    ("kEncodeKeyDate", .uid(7)),
                ]),
                .fields([
                    ("kEncodeKeyColor", .integer(2)), ("kEncodeKeyName", .uid(8)), ("$class", .uid(4)),
                    ("kEncodeKeyDate", .uid(7)),
                ]),
                .dictionary(["$classname": .string("UAGridState")]),
                .dictionary(["$classname": .string("NSArray")]),
                .string("first"), .string("today"), .string("second"),
            ]
        )
        #expect(records.map(\.name) == ["first", "second"])
        #expect(records.map(\.color) == [1, 2])
        #expect(records.map(\.date) == ["today", "today"])
    }

    /// An array of `elements` (more than the reader loads ahead at once, and not a multiple
    /// of it) whose slots refer to 13 records, slot k to record k * 7 mod 13 (so records are
    /// met again, backwards and forwards): its entries, and the record each slot refers to.
    func sharingArray(_ elements: [PlistValue]? = nil) -> (objects: [PlistValue], slots: [Int]) {
        let slots = (0..<41).map { $0 * 7 % 13 }
        var objects: [PlistValue] = [
            .dictionary(["NS.objects": .array(elements ?? slots.map { .uid(4 + $0) }), "$class": .uid(2)]),
            .dictionary(["$classname": .string("NSArray")]),
            .dictionary(["$classname": .string("UAGridState")]),
        ]
        for record in 0..<13 {
            objects.append(
                .fields([
                    ("$class", .uid(3)), ("kEncodeKeyName", .uid(17 + record)),
                    ("kEncodeKeyColor", .integer(Int64(record))), ("kEncodeKeyDate", .uid(17 + 13)),
                ])
            )
        }
        objects += (0..<13).map { .string("record \($0)") } + [.string("today")]
        return (objects, slots)
    }

    /// Slots of a long array that share records come back as one instance each, with its
    /// values, wherever the reader loads their entries ahead of reading them (and, with
    /// `recordsAhead`, their records and the values those refer to, as for a large archive).
    @Test(arguments: [false, true]) func longArraysKeepTheirSharing(recordsAhead: Bool) throws {
        let (objects, slots) = sharingArray()
        let records = try decodeKeyed([Record].self, objects: objects, recordsAhead: recordsAhead)
        #expect(records.map(\.name) == slots.map { "record \($0)" })
        #expect(records.map(\.color) == slots)
        for (slot, record) in slots.enumerated() {
            let first = slots.firstIndex(of: record)!
            #expect(records[slot] === records[first])
        }
    }

    /// Damage past the first elements of a long array (read ahead of the elements before it)
    /// is refused when its element is read, as in a short array.
    @Test(arguments: [false, true]) func damageInLongArraysIsRefused(recordsAhead: Bool) {
        let slots = sharingArray().slots
        for damaged in [0, 15, 16, 17, 37, 40] {
            var elements: [PlistValue] = slots.map { .uid(4 + $0) }
            elements[damaged] = .uid(4000)
            expectRefused(.badObjectReference, mentioning: "UID 4000") {
                _ = try decodeKeyed([Record].self, objects: sharingArray(elements).objects, recordsAhead: recordsAhead)
            }
            // A plain value among the records: transcoded as a value, refused as a record.
            elements[damaged] = .integer(7)
            #expect(throws: GraphArchiveError.self) {
                _ = try decodeKeyed([Record].self, objects: sharingArray(elements).objects, recordsAhead: recordsAhead)
            }
        }
    }

    /// Damage inside the records of a long array (a value's UID out of range, a value that
    /// refers to the record itself, a record that is not a dictionary) is refused when the
    /// record is read, whether or not the reader loaded the records ahead.
    @Test(arguments: [false, true]) func damageInLongArraysRecordsIsRefused(recordsAhead: Bool) {
        let (objects, _) = sharingArray()
        for record in [0, 5, 12] {
            // Record k is UID 4 + k, at 3 + k in `objects` (UID 0 is "$null").
            let uid = 4 + record
            let entry = uid - 1
            var damaged = objects
            damaged[entry] = .fields([
                ("$class", .uid(3)), ("kEncodeKeyName", .uid(4000)), ("kEncodeKeyColor", .integer(1)),
                ("kEncodeKeyDate", .uid(30)),
            ])
            expectRefused(.badObjectReference, mentioning: "UID 4000") {
                _ = try decodeKeyed([Record].self, objects: damaged, recordsAhead: recordsAhead)
            }
            damaged[entry] = .fields([
                ("$class", .uid(3)), ("kEncodeKeyName", .uid(uid)), ("kEncodeKeyColor", .integer(1)),
                ("kEncodeKeyDate", .uid(30)),
            ])
            #expect(throws: GraphArchiveError.self) {
                _ = try decodeKeyed([Record].self, objects: damaged, recordsAhead: recordsAhead)
            }
            damaged[entry] = .array([.uid(3), .uid(4000)])
            #expect(throws: GraphArchiveError.self) {
                _ = try decodeKeyed([Record].self, objects: damaged, recordsAhead: recordsAhead)
            }
        }
    }

    /// A keyed archive this package writes, of records sharing values and instances, reads back
    /// the same with the records loaded ahead as without.
    @Test func recordsLoadedAheadReadTheSame() throws {
        let distinct = (0..<300).map { Record(name: "name \($0 % 40)", color: $0 % 7, date: "2026-12-\($0 % 30)") }
        let records = (0..<1_000).map { distinct[($0 * 7919) % distinct.count] }
        let data = try KeyedArchive.archivedData(withRootObject: records)
        var registry = GraphTypeRegistry()
        registry.register(Record.self)
        var options = GraphUnarchiver.Options()
        options.keyedRecordsAheadMinimum = 0
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            fromKeyedArchive: data,
            registry: registry,
            options: options
        )
        #expect(back.map(\.name) == records.map(\.name))
        #expect(back.map(\.color) == records.map(\.color))
        #expect(back.map(\.date) == records.map(\.date))
        for slot in records.indices {
            let first = records.firstIndex { $0 === records[slot] }!
            #expect(back[slot] === back[first])
        }
        #expect(Set(back.map(ObjectIdentifier.init)).count == distinct.count)
    }

    @Test func uidOutOfRangeIsRefused() {
        expectRefused(.badObjectReference, mentioning: "UID 4000") {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                fromKeyedArchive: keyedFixture("python-hostile-uid-out-of-range"),
                registry: gridStateRegistry
            )
        }
    }

    @Test func selfContainingArrayIsRefused() {
        expectRefused(.corrupt, mentioning: "contains itself") {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [String].self,
                fromKeyedArchive: keyedFixture("python-hostile-self-containing-array")
            )
        }
        // A string wrapper whose NS.string is itself.
        expectRefused(.corrupt) {
            _ = try decodeKeyed(
                String.self,
                objects: [.dictionary(["NS.string": .uid(1), "$class": .uid(2)]), stringClass]
            )
        }
        // An array inside a dictionary inside the array.
        expectRefused(.corrupt, mentioning: "contains itself") {
            _ = try decodeKeyed(
                [[String: [String]]].self,
                objects: [
                    .dictionary(["NS.objects": .array([.uid(3)]), "$class": .uid(2)]),
                    .dictionary(["$classname": .string("NSArray")]),
                    .dictionary(["NS.keys": .array([.uid(4)]), "NS.objects": .array([.uid(1)]), "$class": .uid(5)]),
                    .string("key"),
                    .dictionary(["$classname": .string("NSDictionary")]),
                ]
            )
        }
    }

    @Test func sharedArraysCannotExpandWithoutBound() {
        // 2^30 strings if copied inline; refused after work proportional to the file's size.
        expectRefused(.limitExceeded, mentioning: "64 times") {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [String].self,
                fromKeyedArchive: keyedFixture("python-hostile-billion-laughs")
            )
        }
    }

    @Test func deepNestingIsRefused() {
        var objects: [PlistValue] = [.dictionary(["$classname": .string("NSArray")])]
        for level in 0..<600 {
            objects.append(.dictionary(["NS.objects": .array(level == 0 ? [] : [.uid(level + 1)]), "$class": .uid(1)]))
        }
        let data = keyedArchive(top: ["root": .uid(objects.count)], objects: objects)
        expectRefused(.limitExceeded, mentioning: "maximumDepth") {
            let unarchiver = try GraphUnarchiver(forReadingKeyedArchive: data, registry: GraphTypeRegistry())
            _ = unarchiver.containsValue(forKey: "root")
        }
    }

    @Test func unknownClassIsRefused() {
        expectRefused(.unknownType, mentioning: "UAEvilPayload") {
            _ = try GraphUnarchiver(
                forReadingKeyedArchive: keyedFixture("python-hostile-unknown-class"),
                registry: gridStateRegistry
            )
        }
    }

    @Test func wrongFieldTypesAreRefused() {
        expectRefused(.typeMismatch, mentioning: "expected Int, found String") {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [Record].self,
                fromKeyedArchive: keyedFixture("python-hostile-wrong-field-type"),
                registry: gridStateRegistry
            )
        }
        // A date whose NS.time is a string.
        expectRefused(.corrupt, mentioning: "NS.time") {
            _ = try decodeKeyed(
                Date.self,
                objects: [
                    .dictionary(["NS.time": .string("yesterday"), "$class": .uid(2)]),
                    .dictionary(["$classname": .string("NSDate")]),
                ]
            )
        }
    }

    @Test func malformedInstancesAreRefused() {
        expectRefused(.corrupt, mentioning: "neither $class nor $classname") {
            _ = try decodeKeyed(String.self, objects: [.dictionary(["value": .integer(1)])])
        }
        expectRefused(.corrupt, mentioning: "not a class definition") {
            _ = try decodeKeyed(String.self, objects: [.dictionary(["$class": .uid(2)]), .string("NSString")])
        }
        expectRefused(.corrupt, mentioning: "class definition, used where a value belongs") {
            _ = try decodeKeyed(String.self, objects: [stringClass])
        }
        expectRefused(.corrupt, mentioning: "2 keys but 1 values") {
            _ = try decodeKeyed(
                [String: Int].self,
                objects: [
                    .dictionary([
                        "NS.keys": .array([.uid(3), .uid(3)]), "NS.objects": .array([.uid(3)]), "$class": .uid(2),
                    ]),
                    .dictionary(["$classname": .string("NSDictionary")]), .string("k"),
                ]
            )
        }
        expectRefused(.corrupt, mentioning: "bare array") {
            _ = try decodeKeyed([Int].self, objects: [.array([.integer(1)])])
        }
        expectRefused(.corrupt, mentioning: "where a UID or a plain value belongs") {
            _ = try decodeKeyed(
                Record.self,
                objects: [
                    .dictionary(["kEncodeKeyName": .array([]), "$class": .uid(2)]),
                    .dictionary(["$classname": .string("UAGridState")]),
                ]
            )
        }
        expectRefused(.corrupt, mentioning: "twice") {
            _ = try decodeKeyed(
                Record.self,
                objects: [
                    .dictionary(["kEncodeKeyColor": .integer(1), "kEncodeKeyColor": .integer(2), "$class": .uid(2)]),
                    .dictionary(["$classname": .string("UAGridState")]),
                ]
            )
        }
    }

    /// `$classes` that is not an array of names fails every reader, `verify` included, even
    /// where no registry would look past `$classname`.
    @Test(
        arguments: [
            (PlistValue.uid(99), .corrupt, "$classes of $objects[2] is a UID, not an array"),
            (.integer(7), .corrupt, "$classes of $objects[2] is an integer, not an array"),
            (.array([.string("UAGridState"), .uid(99)]), .typeMismatch, "expected a string, found a UID"),
        ] as [(PlistValue, GraphArchiveError.Code, String)]
    )
    func damagedClassesFailsVerify(classes: PlistValue, code: GraphArchiveError.Code, message: String) throws {
        let archive = keyedArchive(
            top: ["root": .uid(1)],
            objects: [
                .dictionary(["kEncodeKeyName": .string("a"), "$class": .uid(2)]),
                .dictionary(["$classname": .string("UAGridState"), "$classes": classes]),
            ]
        )
        try withTemporaryFolder { folder in
            let path = folder + "/damaged.plist"
            try archive.write(to: URL(fileURLWithPath: path))
            expectRefused(code, mentioning: message) { _ = try GraphUnarchiver.verify(anyArchiveFile: path) }
        }
        #expect(throws: GraphArchiveError.self) { _ = try KeyedArchive.archiveInfo(fromKeyedArchive: archive) }
    }

    @Test func propertyListKindsAreNamedWithTheirArticle() {
        expectRefused(.badMagic, mentioning: "the property list holds an array, not a dictionary") {
            _ = try GraphUnarchiver(forReadingKeyedArchive: bplist(.array([])), registry: GraphTypeRegistry())
        }
        expectRefused(.corrupt, mentioning: "keyed archive stores an array where a UID or a plain value belongs") {
            _ = try decodeKeyed(
                Record.self,
                objects: [
                    .dictionary(["kEncodeKeyName": .array([]), "$class": .uid(2)]),
                    .dictionary(["$classname": .string("UAGridState")]),
                ]
            )
        }
    }

    /// A class definition for NSString.
    var stringClass: PlistValue { .dictionary(["$classname": .string("NSString")]) }

    /// Decodes "root" (UID 1) of a keyed archive of `objects` as `type`; with `recordsAhead`, its
    /// reader loads the roots' records ahead however small it is (as it does from 2^20 entries).
    func decodeKeyed<T: GraphValue>(_ type: T.Type, objects: [PlistValue], recordsAhead: Bool = false) throws -> T {
        var options = GraphUnarchiver.Options()
        if recordsAhead { options.keyedRecordsAheadMinimum = 0 }
        return try GraphUnarchiver.unarchivedObject(
            ofType: type,
            fromKeyedArchive: keyedArchive(top: ["root": .uid(1)], objects: objects),
            registry: gridStateRegistry,
            options: options
        )
    }

    // MARK: - Mutations of every fixture

    static let mutatedFixtures = [
        "python-gridstates", "python-lines", "python-values", "python-ring", "foundation-values", "foundation-ring",
    ]

    /// Every byte of the small fixtures, changed two ways, and every truncation: each either
    /// decodes or throws a GraphArchiveError; none crashes or hangs. With `recordsAhead` the
    /// reader also loads the roots' records ahead, as it does for a large archive.
    @Test(arguments: Self.mutatedFixtures, [false, true])
    func mutatedFixturesNeverCrash(fixture: String, recordsAhead: Bool) throws {
        let original = [UInt8](try keyedFixture(fixture))
        var registry = gridStateRegistry
        for type in [BIDFourLines.self, LinesModel.self, FoundationValues.self, RingNode.self] as [any GraphCoding.Type]
        {
            registry.register(type)
        }
        var options = GraphUnarchiver.Options()
        if recordsAhead { options.keyedRecordsAheadMinimum = 0 }
        func attempt(_ bytes: [UInt8]) {
            do {
                let unarchiver = try GraphUnarchiver(
                    forReadingKeyedArchive: Data(bytes),
                    registry: registry,
                    options: options
                )
                _ = try? unarchiver.decode([Record].self, forKey: "root")
            } catch {
                #expect(error is GraphArchiveError, "\(error)")
            }
        }
        for position in original.indices {
            for change in [{ $0 ^ 0xFF }, { $0 &+ 1 }] as [(UInt8) -> UInt8] {
                var bytes = original
                bytes[position] = change(bytes[position])
                attempt(bytes)
            }
            attempt(Array(original.prefix(position)))
        }
    }
}
