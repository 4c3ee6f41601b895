// Tests/GraphArchiveTests/KeyedArchive/XMLPropertyListTests.swift - keyed archives as XML property lists

import Foundation
import Testing

@testable import GraphArchive

/// Reads a file of Fixtures/KeyedArchives/swift-corelibs-foundation (archives Apple's Foundation
/// wrote on macOS; see the README there): `NSKeyedUnarchiver-ArrayTest` or `macOS-10.14/NSSet-Numbers`.
func appleFixture(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Data {
    let isArchive = name.hasPrefix("macOS-10.14/")
    let file = isArchive ? String(name.dropFirst("macOS-10.14/".count)) : name
    let folder = "Fixtures/KeyedArchives/swift-corelibs-foundation" + (isArchive ? "/macOS-10.14" : "")
    let url = try #require(
        Bundle.module.url(forResource: file, withExtension: isArchive ? "archive" : "plist", subdirectory: folder),
        "missing fixture \(name)",
        sourceLocation: sourceLocation
    )
    return try Data(contentsOf: url)
}

/// The binary property list the XML property list `xml` becomes.
func binaryPlist(fromXML xml: String, options: GraphUnarchiver.Options = .init()) throws -> Data {
    let bytes = ArchiveBytes(copying: Array(xml.utf8))
    return try withExtendedLifetime(bytes) {
        try XMLPropertyList.binary(from: bytes.reader(), options: options).withUnsafeBytes { Data($0) }
    }
}

/// What Foundation's own property list reader makes of `data`.
func foundationPlist(_ data: Data) throws -> Any {
    try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
}

/// `<plist>` around `body`, with the XML declaration and document type Apple writes.
func xmlPlist(_ body: String) -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    \(body)
    </plist>
    """
}

@Suite("Keyed archives: XML property lists")
struct XMLPropertyListTests {
    // MARK: - Apple's XML archives

    @Test func appleXMLArrayArchiveDecodes() throws {
        let data = try appleFixture("NSKeyedUnarchiver-ArrayTest")
        #expect(ArchiveKind.detect(data) == .keyedArchive)
        let strings = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromKeyedArchive: data)
        #expect(strings == ["baa", "baa", "black", "sheep"])
    }

    @Test func appleXMLOrderedSetWithNumberedKeysDecodes() throws {
        // NSOrderedSet as Apple writes it: NS.object.0, NS.object.1… instead of NS.objects.
        let strings = try GraphUnarchiver.unarchivedObject(
            ofType: [String].self,
            fromKeyedArchive: appleFixture("NSKeyedUnarchiver-OrderedSetTest")
        )
        #expect(strings == ["valgeir", "nico", "puzzle"])
    }

    @Test(arguments: ["NSOrderedSet", "NSMutableOrderedSet", "NSSet", "NSMutableSet"])
    func appleSetArchivesDecode(className: String) throws {
        let numbers = try GraphUnarchiver.unarchivedObject(
            ofType: [Int].self,
            fromKeyedArchive: appleFixture("macOS-10.14/\(className)-Numbers")
        )
        #expect(Set(numbers) == [1, 2, 3, 4, 5])
        if className.hasSuffix("OrderedSet") { #expect(numbers == [1, 2, 3, 4, 5]) }
        let empty = try GraphUnarchiver.unarchivedObject(
            ofType: [Int].self,
            fromKeyedArchive: appleFixture("macOS-10.14/\(className)-Empty")
        )
        #expect(empty.isEmpty)
    }

    @Test func appleCountedSetDecodesAsItsDistinctObjects() throws {
        let numbers = try GraphUnarchiver.unarchivedObject(
            ofType: Set<Int>.self,
            fromKeyedArchive: appleFixture("macOS-10.14/NSCountedSet-NumbersAppearingSeveralTimes")
        )
        #expect(numbers == [1, 2, 3, 4, 5])
        #expect(
            try GraphUnarchiver.unarchivedObject(
                ofType: [Int].self,
                fromKeyedArchive: appleFixture("macOS-10.14/NSCountedSet-Empty")
            ).isEmpty
        )
    }

    @Test(arguments: [
        "NSKeyedUnarchiver-ArrayTest", "NSKeyedUnarchiver-ConcreteValueTest", "NSKeyedUnarchiver-EdgeInsetsTest",
        "NSKeyedUnarchiver-NotificationTest", "NSKeyedUnarchiver-OrderedSetTest", "NSKeyedUnarchiver-RangeTest",
        "NSKeyedUnarchiver-RectTest", "NSKeyedUnarchiver-URLTest", "NSKeyedUnarchiver-UUIDTest",
    ])
    func appleXMLBecomesWhatFoundationReads(fixture: String) throws {
        // The binary form holds what Foundation's own reader finds in the XML, UIDs included.
        let xml = try appleFixture(fixture)
        let binary = try binaryPlist(fromXML: String(decoding: xml, as: UTF8.self))
        #expect(binary.starts(with: Data("bplist00".utf8)))
        let expected = try foundationPlist(xml)
        let actual = try foundationPlist(binary)
        #expect(String(describing: canonical(actual)) == String(describing: canonical(expected)))
    }

    @Test func binaryArchiveConvertedToXMLByFoundationReadsTheSame() throws {
        // Foundation writes the binary fixture as XML (CF$UID dictionaries); both decode alike.
        let binary = try appleFixture("NSKeyedUnarchiver-ComplexTest")
        let plist = try foundationPlist(binary)
        let xml = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        #expect(xml.starts(with: Data("<?xml".utf8)))
        #expect(
            String(
                describing: canonical(try foundationPlist(binaryPlist(fromXML: String(decoding: xml, as: UTF8.self))))
            )
                == String(describing: canonical(plist))
        )
    }

    // MARK: - Values

    @Test func everyValueElementParses() throws {
        let binary = try binaryPlist(
            fromXML: xmlPlist(
                """
                <dict>
                    <key>ints</key>
                    <array>
                        <integer>0</integer><integer> -7 </integer><integer>+12</integer><integer>0x1F</integer>
                        <integer>-9223372036854775808</integer><integer>18446744073709551615</integer>
                        <integer>000</integer>
                    </array>
                    <key>reals</key>
                    <array><real>2.5</real><real>-1e3</real><real>nan</real><real>-infinity</real><real>+inf</real></array>
                    <key>bools</key><array><true/><false/><true></true></array>
                    <key>dates</key>
                    <array><date>2001-01-01T00:00:00Z</date><date>1970-01-01T00:00:00Z</date><date>2024-02-29T12:30:05Z</date></array>
                    <key>data</key><data>
                        AAEC
                        /w==
                    </data>
                    <key>text</key><string>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#233; &#x1F30D; <![CDATA[<raw> & ]]><!-- skipped --></string>
                    <key>empty</key><string/>
                    <key>nothing</key><array/>
                    <key>none</key><dict/>
                    <key>unicode key é</key><string>世界</string>
                </dict>
                """
            )
        )
        let plist = try #require(try foundationPlist(binary) as? [String: Any])
        #expect(
            plist["ints"] as? [NSNumber] == [0, -7, 12, 31, NSNumber(value: Int64.min), NSNumber(value: UInt64.max), 0]
        )
        let reals = try #require(plist["reals"] as? [Double])
        #expect(
            reals[0] == 2.5 && reals[1] == -1000 && reals[2].isNaN && reals[3] == -.infinity && reals[4] == .infinity
        )
        #expect(plist["bools"] as? [Bool] == [true, false, true])
        let dates = try #require(plist["dates"] as? [Date])
        #expect(dates.map(\.timeIntervalSinceReferenceDate) == [0, -978_307_200, 730_902_605])
        #expect(plist["data"] as? Data == Data([0, 1, 2, 255]))
        #expect(plist["text"] as? String == "a <b> & \"c\" 'd' é 🌍 <raw> & ")
        #expect(plist["empty"] as? String == "")
        #expect((plist["nothing"] as? [Any])?.isEmpty == true)
        #expect((plist["none"] as? [String: Any])?.isEmpty == true)
        #expect(plist["unicode key é"] as? String == "世界")
    }

    @Test func uidDictionariesBecomeUIDsAndOnlyThose() throws {
        let binary = try binaryPlist(
            fromXML: xmlPlist(
                """
                <array>
                    <dict><key>CF$UID</key><integer>7</integer></dict>
                    <dict><key>CF$UID</key><integer>7</integer><key>other</key><string>x</string></dict>
                    <dict><key>CF$UID</key><string>7</string></dict>
                    <dict><key>other</key><integer>1</integer><key>CF$UID</key><integer>7</integer></dict>
                </array>
                """
            )
        )
        try withPlist(binary) { plist in
            let array = try plist.object(plist.top)
            let elements = try (0..<4).map { try plist.object(plist.reference(in: array, at: $0)) }
            #expect(elements[0].type == BPlistMarker.uid && plist.uid(elements[0]) == 7)
            #expect(elements[1].type == BPlistMarker.dictionary && elements[1].count == 2)
            #expect(elements[2].type == BPlistMarker.dictionary && elements[2].count == 1)
            #expect(elements[3].type == BPlistMarker.dictionary && elements[3].count == 2)
        }
    }

    @Test func xmlKeyedArchiveOfEveryTopFormReads() throws {
        // Plain values in $top, custom keys, and $0 from a keyless encode, as CF writes them.
        let xml = xmlPlist(
            """
            <dict>
                <key>$archiver</key><string>NSKeyedArchiver</string>
                <key>$version</key><integer>100000</integer>
                <key>$top</key>
                <dict>
                    <key>$0</key><dict><key>CF$UID</key><integer>1</integer></dict>
                    <key>count</key><integer>3</integer>
                    <key>State</key><dict><key>CF$UID</key><integer>2</integer></dict>
                </dict>
                <key>$objects</key>
                <array><string>$null</string><string>first</string><string>second</string></array>
            </dict>
            """
        )
        let unarchiver = try GraphUnarchiver(forReadingKeyedArchive: Data(xml.utf8), registry: GraphTypeRegistry())
        #expect(try unarchiver.decode(String.self, forKey: "$0") == "first")
        #expect(try unarchiver.decode(Int.self, forKey: "count") == 3)
        #expect(try unarchiver.decode(String.self, forKey: "State") == "second")
    }

    // MARK: - Damage

    @Test(arguments: [
        ("<plist><dict><key>a</key></dict></plist>", "has no value"),
        ("<plist><dict><string>a</string></dict></plist>", "without a <key>"),
        ("<plist><array><integer>1</integer></plist>", "closes nothing"),
        ("<plist><array>", "ends early"),
        ("<plist><integer>12x</integer></plist>", "not a 64-bit integer"),
        ("<plist><integer>18446744073709551616</integer></plist>", "not a 64-bit integer"),
        ("<plist><integer>-9223372036854775809</integer></plist>", "not a 64-bit integer"),
        ("<plist><real>1.5.5</real></plist>", "not a number"),
        ("<plist><real>0x1p3</real></plist>", "not a number"),
        ("<plist><date>2001-13-01T00:00:00Z</date></plist>", "YYYY-MM-DD"),
        ("<plist><data>AA$=</data></plist>", "base64"),
        ("<plist><string>a &bogus; b</string></plist>", "unknown entity"),
        ("<plist><string>a <b/> c</string></plist>", "only text"),
        ("<plist><string>a</string><string>b</string></plist>", "</plist>"),
        ("<plist><widget/></plist>", "not a property list element"),
        ("<plist><dict><key>CF$UID</key><integer>-1</integer></dict></plist>", "CF$UID"),
        ("<plist><dict><key>CF$UID</key><integer>4294967296</integer></dict></plist>", "out of range"),
        ("<plist><string>a</string></plist> trailing", "after the property list"),
        ("<!-- never closed <plist/>", "not closed"),
        ("<plist/>", "holds no value"),
    ])
    func malformedXMLIsRefusedWithTheLine(xml: String, mentioning text: String) {
        expectRefused(.corrupt, mentioning: text) { _ = try binaryPlist(fromXML: xml) }
        expectRefused(.corrupt, mentioning: "XML property list, line 1") { _ = try binaryPlist(fromXML: xml) }
    }

    /// A UID as large as CF allows costs the conversion its few bytes, not a table reaching it.
    @Test func largeUIDsConvertWithoutATableReachingThem() throws {
        let uid = { (value: Int) in "<dict><key>CF$UID</key><integer>\(value)</integer></dict>" }
        let data = try binaryPlist(
            fromXML: "<plist><array>\(uid(4_294_967_295))\(uid(4_294_967_295))\(uid(7))</array></plist>"
        )
        #expect(data.count < 200)
        let array = try #require(try foundationPlist(data) as? [Any])
        #expect(array.count == 3)
    }

    @Test func errorsNameTheLine() {
        expectRefused(.corrupt, mentioning: "line 3") {
            _ = try binaryPlist(fromXML: "<plist>\n<array>\n<integer>x</integer>\n</array>\n</plist>")
        }
    }

    @Test func utf16XMLIsRefusedClearly() {
        var bytes: [UInt8] = [0xFE, 0xFF]
        for unit in "<plist/>".utf16 { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        expectRefused(.corrupt, mentioning: "UTF-8 only") {
            let input = ArchiveBytes(copying: bytes)
            _ = try withExtendedLifetime(input) { try XMLPropertyList.binary(from: input.reader(), options: .init()) }
        }
    }

    @Test func limitsApplyToXML() {
        var options = GraphUnarchiver.Options()
        options.maximumDepth = 8
        let deep =
            "<plist>" + String(repeating: "<array>", count: 9) + String(repeating: "</array>", count: 9) + "</plist>"
        expectRefused(.limitExceeded, mentioning: "maximumDepth") {
            _ = try binaryPlist(fromXML: deep, options: options)
        }
        options = GraphUnarchiver.Options()
        options.maximumObjectCount = 10
        let many = "<plist><array>" + String(repeating: "<true/>", count: 20) + "</array></plist>"
        expectRefused(.limitExceeded, mentioning: "maximumObjectCount") {
            _ = try binaryPlist(fromXML: many, options: options)
        }
        options = GraphUnarchiver.Options()
        options.maximumStringLength = 4
        expectRefused(.limitExceeded, mentioning: "maximumStringLength") {
            _ = try binaryPlist(fromXML: "<plist><string>longer</string></plist>", options: options)
        }
    }

    @Test func everyTruncationOfAnAppleXMLArchiveIsRefused() throws {
        let xml = [UInt8](try appleFixture("NSKeyedUnarchiver-URLTest"))
        for length in stride(from: 0, to: xml.count - 10, by: 7) {
            #expect(throws: GraphArchiveError.self) {
                _ = try GraphUnarchiver(forReadingKeyedArchive: Data(xml.prefix(length)), registry: GraphTypeRegistry())
            }
        }
    }

    @Test func mutatedXMLArchivesAreReadOrRefusedNeverCrash() throws {
        // Byte changes spread over Linux Foundation's XML archive of many classes, through the
        // typed reader and the schema-less graph with everything built on it.
        let original = [UInt8](try keyedFixture("foundation-classes-xml"))
        for position in stride(from: 0, to: original.count, by: 29) {
            for change in [{ $0 ^ 0x20 }, { _ in UInt8(ascii: "<") }] as [(UInt8) -> UInt8] {
                var bytes = original
                bytes[position] = change(bytes[position])
                for input in [bytes, Array(original.prefix(position))] {
                    do {
                        let graph = try ArchiveGraph(data: Data(input))
                        _ = try graph.jsonData()
                        _ = try ArchiveGraph(data: graph.gridstoreArchiveData()).keyedArchiveData()
                    } catch {
                        #expect(error is GraphArchiveError, "\(error)")
                    }
                }
            }
        }
    }

    @Test func errorsFoundAfterParsingCarryNoBinaryOffset() throws {
        // A UID out of range is found in the binary form, whose offsets the caller never sees.
        let xml = xmlPlist(
            """
            <dict>
                <key>$archiver</key><string>NSKeyedArchiver</string>
                <key>$version</key><integer>100000</integer>
                <key>$top</key><dict><key>root</key><dict><key>CF$UID</key><integer>9</integer></dict></dict>
                <key>$objects</key><array><string>$null</string></array>
            </dict>
            """
        )
        #expect {
            _ = try GraphUnarchiver.unarchivedObject(ofType: String.self, fromKeyedArchive: Data(xml.utf8))
        } throws: { error in
            guard let error = error as? GraphArchiveError else { return false }
            return error.code == .badObjectReference && error.offset == nil
        }
    }
}

/// Runs `body` with the scanned binary property list `data`.
func withPlist(_ data: Data, _ body: (BPlist) throws -> Void) throws {
    let bytes = ArchiveBytes(copying: data)
    try withExtendedLifetime(bytes) {
        try body(BPlist.scan(bytes.reader(), maximumObjectCount: 1 << 20))
    }
}

/// `value` with dictionaries as sorted pairs, so two readings print alike.
func canonical(_ value: Any) -> Any {
    switch value {
    case let dictionary as [String: Any]:
        return dictionary.keys.sorted().map { ($0, canonical(dictionary[$0]!)) }
    case let array as [Any]:
        return array.map(canonical)
    case let data as Data:
        return "data " + data.map { String($0, radix: 16) }.joined(separator: " ")
    default:
        // Foundation's UID class prints its address: compare its stored value instead.
        if let uid = foundationUIDValue(value) { return "UID \(uid)" }
        return value
    }
}

/// The value of Foundation's UID object (`_NSKeyedArchiverUID`, which property lists hold for
/// `CF$UID`), read through its stored `value`; nil for anything else.
func foundationUIDValue(_ value: Any) -> Int? {
    guard String(describing: type(of: value)).contains("UID") else { return nil }
    return Mirror(reflecting: value).children.first { $0.label == "value" }.flatMap { Int("\($0.value)") }
}
