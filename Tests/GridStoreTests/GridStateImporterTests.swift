// Tests/GridStoreTests/GridStateImporterTests.swift - JSON, JSON Lines and CSV input, ids and errors

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
            ("[\n{\"name\":\"a\",\"color\":\"red\",\"date\":\"d\"}]", 2, "color must be an integer, found a string"),
            ("[{\"name\":1,\"color\":1,\"date\":\"d\"}]", 1, "name must be a string"),
            ("[{\"name\":\"a\",\"color\":1.5,\"date\":\"d\"}]", 1, "found 1.5"),
            ("[{\"name\":\"a\",\"color\":99999999999999999999,\"date\":\"d\"}]", 1, "found 99999999999999999999"),
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
            ("name,color,date\na,1,d\nb,blue,d", 3, "color must be an integer, found \"blue\""),
            ("name,color,date\na,1,d\nb,2", 3, "expected 3 fields"),
            ("name,colour,date\na,1,d", 1, "unknown column \"colour\""),
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
                #expect(error.line >= 1 && !error.message.isEmpty)
            }
        }
    }
}
