// Tests/GridStoreTests/RecordInput/GridStateImporterTests.swift - JSON, JSON Lines and CSV input, ids and errors

import Testing

@testable import GridStore

/// Imports `text`, detecting its format as the CLI does.
private func importStates(_ text: String, path: String? = nil) throws(RecordInputError) -> [GridState] {
    let bytes = Array(text.utf8)
    var importer = GridStateImporter(source: path ?? "input")
    var states: [GridState] = []
    try importer.read(bytes, format: RecordFormat.detect(path: path, content: bytes), into: &states)
    return states
}

/// Imports `text` of `format` with an importer set up by `configure`; returns the importer too.
private func importStates(
    _ text: String,
    format: RecordFormat,
    configure: (inout GridStateImporter) -> Void = { _ in }
) throws(RecordInputError) -> (states: [GridState], importer: GridStateImporter) {
    var importer = GridStateImporter(source: "input")
    configure(&importer)
    var states: [GridState] = []
    try importer.read(Array(text.utf8), format: format, into: &states)
    return (states, importer)
}

/// The slots' sharing pattern: for each slot, the first slot holding the same instance.
private func sharing(_ states: [GridState]) -> [Int] {
    states.map { state in states.firstIndex { $0 === state }! }
}

@Suite("Record import")
struct GridStateImporterTests {
    @Test func jsonArrayWithIds() throws {
        let states = try importStates(
            """
            [
              {"name": "Sunset", "color": 16746496, "date": "2024-06-01T18:00:00Z", "id": "a"},
              {"name": "Night", "color": 0, "date": "2024-06-02T00:00:00Z", "id": 7, "note": {"x": [1, {"y": null}]}},
              {"id": "a"},
              {"id": "7", "name": "Night"}
            ]
            """
        )
        #expect(states.map(\.name) == ["Sunset", "Night", "Sunset", "Night"])
        #expect(states[0].color == 0xFF8800)
        #expect(sharing(states) == [0, 1, 0, 1])
    }

    @Test func recordsWithoutIdsAreDistinctEvenWhenEqual() throws {
        let states = try importStates(
            #"[{"name":"x","color":1,"date":"d"},{"name":"x","color":1,"date":"d"}]"#
        )
        #expect(sharing(states) == [0, 1])
    }

    @Test func jsonLinesSkipBlankLinesAndKeepIdentity() throws {
        let states = try importStates(
            """
            {"name":"a","color":1,"date":"d1","id":1}

            {"name":"b","color":2,"date":"d2"}\r
            {"id":1}
            """
        )
        #expect(states.map(\.name) == ["a", "b", "a"])
        #expect(sharing(states) == [0, 1, 0])
    }

    @Test func jsonStringEscapesAndUnicode() throws {
        let states = try importStates(
            #"[{"name":"tab\tquote\" slash\/ \u00e9 \ud83d\ude00 日本","color":-5,"date":"line\nbreak"}]"#
        )
        #expect(states[0].name == "tab\tquote\" slash/ é 😀 日本")
        #expect(states[0].date == "line\nbreak")
        #expect(states[0].color == -5)
    }

    @Test func csvWithQuotesCommasLineBreaksAndIds() throws {
        let states = try importStates(
            "\u{FEFF}id,name,color,date\r\n"
                + "a,\"Smith, \"\"Jo\"\"\",255,2024-01-01\r\n"
                + "b,\"two\nlines\",16,2024-01-02\r\n"
                + "a,,,\r\n"
                + ",\"\",0,\"\"\n"
        )
        #expect(states.map(\.name) == ["Smith, \"Jo\"", "two\nlines", "Smith, \"Jo\"", ""])
        #expect(states.map(\.color) == [255, 16, 255, 0])
        #expect(sharing(states) == [0, 1, 0, 3])
    }

    @Test func exportedJSONLinesImportToTheSameRecordsAndIds() throws {
        let original = GridStateGenerator(count: 500, sharedFraction: 0.4, seed: 5).generate()
        original[3].name = "control \u{1} \"quoted\" back\\slash\n"
        var text: [UInt8] = []
        var identity = GridStateIdentity()
        for state in original {
            JSONLinesWriter.appendLine(for: state, id: identity.number(of: state), to: &text)
        }
        let back = try importStates(String(decoding: text, as: UTF8.self))
        #expect(back.map(\.name) == original.map(\.name))
        #expect(back.map(\.color) == original.map(\.color))
        #expect(back.map(\.date) == original.map(\.date))
        #expect(sharing(back) == sharing(original))
    }

    @Test(
        arguments: [
            ("[]", nil, RecordFormat.json), ("  {\"a\":1}", nil, .jsonLines), ("name,color,date", nil, .csv),
            ("[", "x.csv", .csv), ("{}", "x.ndjson", .jsonLines), ("[]", "x.JSONL", .jsonLines),
            ("{}", "x.json", .jsonLines),
        ] as [(String, String?, RecordFormat)]
    )
    func formatDetection(content: String, path: String?, expected: RecordFormat) {
        #expect(RecordFormat.detect(path: path, content: Array(content.utf8)) == expected)
    }

    /// Each bad input fails with the line of the mistake and a message that names it.
    @Test(
        arguments: [
            ("[\n{\"name\":\"a\",\"color\":1,\"date\":\"d\"},\n{\"name\":\"b\",\"date\":\"d\"}\n]", 3, "no \"color\""),
            (
                "[\n{\"name\":\"a\",\"color\":\"red\",\"date\":\"d\"}]", 2,
                "color must be an integer, #RRGGBB or 0xHEX, found \"red\""
            ),
            ("[{\"name\":1,\"color\":1,\"date\":\"d\"}]", 1, "name must be a string"),
            ("[{\"name\":\"a\",\"color\":1.5,\"date\":\"d\"}]", 1, "found 1.5"),
            (
                "[{\"name\":\"a\",\"color\":99999999999999999999,\"date\":\"d\"}]", 1,
                "color 99999999999999999999 is out of range"
            ),
            ("[\n{\"name\":\"a\",\"color\":1,\"date\":\"d\"},\n]", 3, "expected a record"),
            ("[\n{\"name\":\"a\",\n\"color\":1 \"date\":\"d\"}]", 3, "expected ',' or '}'"),
            ("[{\"name\":\"a\",\"color\":1,\"date\":\"d\"}", 1, "found the end of the input"),
            ("[{\"name\":\"a\nb\",\"color\":1,\"date\":\"d\"}]", 1, "unterminated string"),
            ("[{\"name\":\"a\",\"name\":\"b\",\"color\":1,\"date\":\"d\"}]", 1, "appears twice"),
            ("[{\"name\":\"a\",\"color\":01,\"date\":\"d\"}]", 1, "leading zeros"),
            ("[{\"name\":\"\\x\",\"color\":1,\"date\":\"d\"}]", 1, "invalid escape"),
            ("[{\"name\":\"\\ud800\",\"color\":1,\"date\":\"d\"}]", 1, "surrogate"),
            ("[{\"name\":\"a\",\"color\":1,\"date\":\"d\",\"x\":[1,2}]", 1, "expected ',' or ']'"),
            ("[{\"name\":\"a\",\"color\":1,\"date\":\"d\"}] x", 1, "after the array"),
            (
                "{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n{\"name\":\"b\",\"color\":2,\"date\":\"d\"} {}", 2,
                "one record per line"
            ),
            ("{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n\n\nnot json", 4, "expected a record"),
            ("{\"id\":1,\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n{\"id\":1,\"name\":\"b\"}", 2, "line 1 gave \"a\""),
            ("{\"id\":true,\"name\":\"a\",\"color\":1,\"date\":\"d\"}", 1, "id must be a string or an integer"),
            ("{\"id\":\"z\"}", 1, "the first record with id \"z\" needs"),
            ("name,color,date\na,1,d\nb,blue,d", 3, "color must be an integer, #RRGGBB or 0xHEX, found \"blue\""),
            ("name,color,date\na,1,d\nb,2", 3, "expected 3 fields"),
            (
                "name,colour,date\na,1,d", 1,
                "no \"color\" column (the header must name the columns name,color,date and optionally id; it has \"colour\")"
            ),
            ("name,date\na,d", 1, "no \"color\" column"),
            ("name,color,date,name\n", 1, "appears twice"),
            ("name,color,date\n\"a\"x,1,d", 2, "after the closing quote"),
            ("name,color,date\n\"open,1,d\nmore", 2, "never closed"),
            ("name,color,date\n,1,d", 2, "no \"name\""),
        ] as [(String, Int, String)]
    )
    func malformedInputNamesTheLine(text: String, line: Int, fragment: String) {
        #expect {
            try importStates(text)
        } throws: { error in
            guard let error = error as? RecordInputError else { return false }
            return error.line == line && error.message.contains(fragment)
                && error.description.hasPrefix("input, line \(line): ")
        }
    }

    @Test func invalidUTF8IsAnError() {
        var bytes = Array("[{\"name\":\"".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("\",\"color\":1,\"date\":\"d\"}]".utf8)
        var importer = GridStateImporter(source: "input")
        var states: [GridState] = []
        #expect(throws: RecordInputError(source: "input", line: 1, message: "invalid JSON: string is not valid UTF-8"))
        {
            try importer.read(bytes, format: .json, into: &states)
        }
    }

    @Test func deeplyNestedUnknownFieldsNeedNoStack() throws {
        let nested = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        let states = try importStates(#"[{"name":"a","color":1,"date":"d","deep":"# + nested + "}]")
        #expect(states.count == 1)
    }

    @Test func jsonLinesFromASessionShareIdsAcrossLines() throws {
        var importer = GridStateImporter(source: "standard input")
        var states: [GridState] = []
        #expect(
            try importer.readJSONLine(#"{"name":"a","color":1,"date":"d","id":"k"}"#, lineNumber: 1, into: &states) == 1
        )
        #expect(try importer.readJSONLine("   ", lineNumber: 2, into: &states) == 0)
        #expect(try importer.readJSONLine(#"{"id":"k"}"#, lineNumber: 3, into: &states) == 1)
        #expect(states[0] === states[1])
        #expect(throws: RecordInputError.self) {
            try importer.readJSONLine(#"{"id":"k","color":2}"#, lineNumber: 4, into: &states)
        }
    }

    /// Seeded random damage to valid inputs: every result is records or a `RecordInputError`,
    /// never a trap or another error.
    @Test func damagedInputsFailCleanly() {
        let samples = [
            #"[{"name":"Sunset \u00e9","color":16746496,"date":"2024-06-01","id":"s","x":[1,{"y":null}]},{"id":"s"}]"#,
            "{\"name\":\"a\",\"color\":-1,\"date\":\"d\",\"id\":7}\n{\"id\":7}\n{\"name\":\"b\",\"color\":2e3,\"date\":\"d\"}",
            "id,name,color,date\r\ns,\"Smith, \"\"Jo\"\"\",255,2024\r\n,\"two\nlines\",1,d\r\ns,,,\r\n",
        ].map { Array($0.utf8) }
        var random = SplitMix64(seed: 42)
        for round in 0..<3000 {
            var bytes = samples[round % samples.count]
            for _ in 0...(random.next() % 4) where !bytes.isEmpty {
                let position = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 4 {
                case 0: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.remove(at: position)
                case 2:
                    let structural = Array(#"{}[]",:\ "#.utf8)
                    bytes.insert(structural[Int(random.next() % UInt64(structural.count))], at: position)
                default: bytes.removeSubrange(position...)
                }
            }
            var importer = GridStateImporter(source: "fuzz")
            var states: [GridState] = []
            do {
                try importer.read(bytes, format: RecordFormat.detect(path: nil, content: bytes), into: &states)
            } catch {
                #expect(error.line >= 0 && !error.message.isEmpty)
            }
        }
    }

    // MARK: - Byte order marks, extra columns, colors, ranges, empty input, end of input

    @Test(
        arguments: [
            ("\u{FEFF}[{\"name\":\"a\",\"color\":1,\"date\":\"d\"}]", RecordFormat.json),
            ("\u{FEFF}{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n", .jsonLines),
            ("\u{FEFF}name,color,date\na,1,d\n", .csv),
        ] as [(String, RecordFormat)]
    )
    func aByteOrderMarkIsSkippedInEveryFormat(text: String, format: RecordFormat) throws {
        #expect(RecordFormat.detect(path: nil, content: Array(text.utf8)) == format)
        let states = try importStates(text, format: format).states
        #expect(states.map(\.name) == ["a"])
    }

    @Test func aByteOrderMarkStartingASessionsFirstLineIsSkipped() throws {
        var importer = GridStateImporter(source: "standard input")
        var states: [GridState] = []
        #expect(
            try importer.readJSONLine(
                "\u{FEFF}{\"name\":\"a\",\"color\":1,\"date\":\"d\"}",
                lineNumber: 1,
                into: &states
            )
                == 1
        )
    }

    @Test func csvExtraColumnsAreSkippedWithOneWarningNamingThem() throws {
        let (states, importer) = try importStates(
            "name,notes,color,date,\na,first,1,d,x\nb,second,2,d,y\n",
            format: .csv
        )
        #expect(states.map(\.name) == ["a", "b"])
        #expect(states.map(\.color) == [1, 2])
        #expect(
            importer.warnings == [
                RecordInputError(source: "input", line: 1, message: "ignoring unknown columns \"notes\", \"\"")
            ]
        )
    }

    @Test func strictRefusesCSVExtraColumnsAndUnknownJSONFields() {
        #expect {
            try importStates("name,color,date,notes\na,1,d,x\n", format: .csv) { $0.rejectsUnknownFields = true }
        } throws: { error in
            let error = error as? RecordInputError
            return error?.line == 1 && error?.message.hasPrefix("unknown column \"notes\"") == true
                && error?.message.contains("--strict") == true
        }
        #expect {
            try importStates(#"[{"name":"a","color":1,"date":"d"},{"name":"b","note":2}]"#, format: .json) {
                $0.rejectsUnknownFields = true
            }
        } throws: { error in
            (error as? RecordInputError)?.message.hasPrefix("unknown field \"note\"") == true
        }
    }

    @Test func unknownJSONFieldsAreSkippedWithoutWarnings() throws {
        let (states, importer) = try importStates(#"{"name":"a","color":1,"date":"d","note":[1]}"#, format: .jsonLines)
        #expect(states.count == 1)
        #expect(importer.warnings.isEmpty)
    }

    @Test(
        arguments: [
            ("#FF0000", 0xFF0000), ("#ff8800", 0xFF8800), ("#000000", 0), ("0xFF0000", 0xFF0000), ("0XfF", 255),
            ("16711680", 0xFF0000), (" 42 ", 42), ("-1", -1), ("+7", 7),
            ("0x7FFFFFFFFFFFFFFF", Int.max), ("-9223372036854775808", Int.min),
        ] as [(String, Int)]
    )
    func colorsAreReadAsLoadPrintsThem(text: String, color: Int) throws {
        let csv = try importStates("name,color,date\na,\(text),d\n", format: .csv).states
        #expect(csv.map(\.color) == [color])
        let json = try importStates(#"[{"name":"a","color":"\#(text)","date":"d"}]"#, format: .json).states
        #expect(json.map(\.color) == [color])
    }

    @Test(
        arguments: [
            ("#FFF", "color \"#FFF\" is not #RRGGBB (six hex digits)"),
            ("#-12345", "is not #RRGGBB"),
            ("#GGGGGG", "is not #RRGGBB"),
            ("0x", "color must be an integer, #RRGGBB or 0xHEX, found \"0x\""),
            ("red", "color must be an integer, #RRGGBB or 0xHEX, found \"red\""),
            ("1.5", "found \"1.5\""),
        ] as [(String, String)]
    )
    func colorTextThatIsNoColorIsRefused(text: String, fragment: String) {
        #expect {
            try importStates("name,color,date\na,\(text),d\n", format: .csv)
        } throws: { error in
            (error as? RecordInputError)?.message.contains(fragment) == true
        }
    }

    @Test(
        arguments: [
            ("name,color,date\na,99999999999999999999,d\n", RecordFormat.csv, "99999999999999999999"),
            ("name,color,date\na,-9223372036854775809,d\n", .csv, "-9223372036854775809"),
            ("name,color,date\na,0x10000000000000000,d\n", .csv, "0x10000000000000000"),
            (#"[{"name":"a","color":99999999999999999999,"date":"d"}]"#, .json, "99999999999999999999"),
            (#"{"name":"a","color":-9223372036854775809,"date":"d"}"#, .jsonLines, "-9223372036854775809"),
            (##"[{"name":"a","color":"#FFFFFFFFFFFFFFFFF","date":"d"}]"##, .json, nil),
        ] as [(String, RecordFormat, String?)]
    )
    func outOfRangeNumbersSayOutOfRangeWithTheRange(text: String, format: RecordFormat, number: String?) {
        #expect {
            try importStates(text, format: format)
        } throws: { error in
            guard let message = (error as? RecordInputError)?.message else { return false }
            // Seventeen hex digits after '#' are not #RRGGBB at all.
            guard let number else { return message.contains("is not #RRGGBB") }
            return message == "color \(number) is out of range (-9223372036854775808 to 9223372036854775807)"
        }
    }

    @Test func nonIntegerColorsAreStillNotIntegers() {
        #expect {
            try importStates(#"[{"name":"a","color":1.5,"date":"d"}]"#, format: .json)
        } throws: { error in
            (error as? RecordInputError)?.message == "color must be an integer, found 1.5"
        }
    }

    @Test func anIdTooLargeForIntIsTheSameIdAsItsDigits() throws {
        let states = try importStates(
            #"[{"name":"a","color":1,"date":"d","id":123456789012345678901234},{"id":"123456789012345678901234"}]"#,
            format: .json
        ).states
        #expect(states.count == 2)
        #expect(states[0] === states[1])
    }

    @Test(arguments: ["", "   ", " \n\t\r\n", "\u{FEFF}", "\u{FEFF}\n\n"])
    func emptyOrWhiteSpaceInputSaysSoInsteadOfNamingAColumnOrLine(text: String) {
        for format in RecordFormat.allCases {
            #expect {
                try importStates(text, format: format)
            } throws: { error in
                guard let error = error as? RecordInputError else { return false }
                let expected =
                    text.isEmpty ? "the input is empty: no records" : "the input is only white space: no records"
                return error.line == 0 && error.message == expected && error.description == "input: \(expected)"
            }
        }
    }

    @Test func anEmptyArrayOrAHeaderAloneIsZeroRecords() throws {
        #expect(try importStates("[]", format: .json).states.isEmpty)
        #expect(try importStates("name,color,date\n", format: .csv).states.isEmpty)
    }

    @Test(
        arguments: [
            ("[{\"name\":\"a\",\"color\":1,\"date\":\"d\"},\n", RecordFormat.json, 1),
            ("[{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n\n\n", .json, 1),
            ("[\n{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n", .json, 2),
            ("{\"name\":\"a\",\"color\":1\n", .jsonLines, 1),
            ("{\"name\":\"a\",\"color\":1,\"date\":\"d\"}\n{\"name\":\n  \r\n", .jsonLines, 2),
            ("[{\"name\":\"unterminated\n", .json, 1),
        ] as [(String, RecordFormat, Int)]
    )
    func errorsAtTheEndOfInputNameTheLastLineWritten(text: String, format: RecordFormat, line: Int) {
        #expect {
            try importStates(text, format: format)
        } throws: { error in
            (error as? RecordInputError)?.line == line
        }
    }
}
