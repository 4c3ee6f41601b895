// Sources/GridStore/RecordInput/JSONRecordScanner.swift - reads records from JSON arrays and JSON Lines

/// Reads grid-state records from JSON: an array of objects, or one object per line (JSON Lines).
///
/// A small scanner of our own rather than `JSONSerialization`: it reads the bytes once, builds
/// no dictionaries, and knows the line of every record and every mistake, which the error
/// messages need. It accepts exactly RFC 8259 JSON, after a UTF-8 byte order mark if there is
/// one. Values of unknown fields are checked and skipped (iteratively: nesting depth costs no
/// stack), or refused when ``rejectsUnknownFields`` is set.
struct JSONRecordScanner {
    private let bytes: [UInt8]
    private var index = 0
    /// The line `index` is on, 1-based.
    private(set) var line: Int
    /// Whether a field other than name, color, date and id is an error rather than skipped.
    var rejectsUnknownFields = false

    init(_ bytes: [UInt8], firstLine: Int = 1) {
        self.bytes = bytes
        self.line = firstLine
        if bytes.starts(with: byteOrderMark) { index = byteOrderMark.count }
    }

    // MARK: - Documents

    /// Reads `[ {record}, … ]`, handing each record to `each`.
    mutating func readArray(_ each: (RecordFields) throws(RecordProblem) -> Void) throws(RecordProblem) {
        skipWhitespace()
        try expect(UInt8(ascii: "["), "a JSON array of records")
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                skipWhitespace()
                try each(readRecord())
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                } else {
                    try expect(UInt8(ascii: "]"), "',' or ']' after a record")
                    break
                }
            }
        }
        skipWhitespace()
        guard index == bytes.count else { throw problem("unexpected \(describe(peek())) after the array") }
    }

    /// Reads one record per line; blank lines are skipped.
    mutating func readLines(_ each: (RecordFields) throws(RecordProblem) -> Void) throws(RecordProblem) {
        while true {
            skipWhitespace()
            if index == bytes.count { return }
            try each(readRecord())
            skipSpacesOnLine()
            guard index == bytes.count || bytes[index] == UInt8(ascii: "\n") else {
                throw problem("unexpected \(describe(peek())) after the record (JSON Lines holds one record per line)")
            }
        }
    }

    // MARK: - Records

    /// Reads `{ "name": …, "color": …, "date": …, "id": … }`; other fields are skipped.
    mutating func readRecord() throws(RecordProblem) -> RecordFields {
        var fields = RecordFields(line: line, offset: index)
        try expect(UInt8(ascii: "{"), "a record (a JSON object)")
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return fields
        }
        // Bits of the known fields met so far (a repeat is ambiguous); a bit set, not a Set, as
        // this runs once per record. Repeats of ignored fields are ignored like them.
        var seen: UInt8 = 0
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else {
                throw problem("expected a field name in double quotes, found \(describe(peek()))")
            }
            let key = try readString()
            let bit: UInt8 =
                switch key {
                case "name": 1
                case "color": 2
                case "date": 4
                case "id": 8
                default: 0
                }
            if bit == 0 && rejectsUnknownFields {
                throw RecordProblem(
                    line: line,
                    message: "unknown field \"\(key)\" (the fields are name, color, date and id; "
                        + "other fields are refused under --strict)"
                )
            }
            guard seen & bit == 0 else { throw problem("field \"\(key)\" appears twice in one record") }
            seen |= bit
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after the field name")
            skipWhitespace()
            let value = try readValue()
            switch key {
            case "name": fields.name = try value.string(for: key, line: line)
            case "date": fields.date = try value.string(for: key, line: line)
            case "color": fields.color = try value.color(line: line)
            case "id": fields.id = try value.identifier(line: line)
            default: break
            }
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
            } else {
                try expect(UInt8(ascii: "}"), "',' or '}' in the record")
                return fields
            }
        }
    }

    // MARK: - Values

    enum Value {
        case string(String)
        case integer(Int)
        /// A number that is not an integer in `Int`'s range, as written.
        case number(String)
        case bool
        case null
        case container

        func string(for field: String, line: Int) throws(RecordProblem) -> String? {
            switch self {
            case .string(let text): return text
            case .null: return nil
            default: throw RecordProblem(line: line, message: "\(field) must be a string, found \(kind)")
            }
        }

        /// Colors are integers, or strings as `gridstore load` prints them (see `ColorText`).
        func color(line: Int) throws(RecordProblem) -> Int? {
            switch self {
            case .integer(let value): return value
            case .string(let text): return try ColorText.parse(text, line: line)
            case .null: return nil
            case .number(let text) where ColorText.isIntegerText(text):
                throw ColorText.outOfRange(text, line: line)
            case .number(let text):
                throw RecordProblem(line: line, message: "color must be an integer, found \(text)")
            default:
                throw RecordProblem(line: line, message: "color must be an integer or a string, found \(kind)")
            }
        }

        /// Ids are strings or integers; `7` and `"7"` are the same id, and so are an integer
        /// too large for `Int` and its digits in a string.
        func identifier(line: Int) throws(RecordProblem) -> String? {
            switch self {
            case .string(let text): return text
            case .integer(let value): return String(value)
            case .number(let text) where ColorText.isIntegerText(text): return text
            case .null: return nil
            default: throw RecordProblem(line: line, message: "id must be a string or an integer, found \(kind)")
            }
        }

        var kind: String {
            switch self {
            case .string: "a string"
            case .integer, .number: "a number"
            case .bool: "true or false"
            case .null: "null"
            case .container: "an object or array"
            }
        }
    }

    mutating func readValue() throws(RecordProblem) -> Value {
        guard let byte = peek() else { throw problem("expected a value, found the end of the input") }
        switch byte {
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try readNumber()
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try skipContainer()
            return .container
        default:
            throw problem("expected a value, found \(describe(byte))")
        }
    }

    /// Reads a JSON number; integers without fraction or exponent become `.integer` when they fit.
    private mutating func readNumber() throws(RecordProblem) -> Value {
        let start = index
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard let first = peek(), isDigit(first) else { throw problem("invalid number: expected a digit after '-'") }
        var value = 0
        var overflow = false
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) {
                throw problem("invalid number: leading zeros are not allowed in JSON")
            }
        } else {
            while let digit = peek(), isDigit(digit) {
                // Accumulate negatively so Int.min itself fits.
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.subtractingReportingOverflow(Int(digit &- UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                value = next
                index += 1
            }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            try readDigits("after the decimal point")
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            try readDigits("in the exponent")
        }
        if isInteger && !overflow {
            if negative { return .integer(value) }
            let (positive, o3) = (0).subtractingReportingOverflow(value)
            if !o3 { return .integer(positive) }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private mutating func readDigits(_ place: String) throws(RecordProblem) {
        guard let digit = peek(), isDigit(digit) else { throw problem("invalid number: expected a digit \(place)") }
        while let digit = peek(), isDigit(digit) { index += 1 }
    }

    /// Reads a string at the opening quote. The common case, no escapes, is one UTF-8 check.
    mutating func readString() throws(RecordProblem) -> String {
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return try text(bytes[start..<index - 1])
            }
            if byte == UInt8(ascii: "\\") {
                var buffer = Array(bytes[start..<index])
                return try readEscapedString(into: &buffer)
            }
            guard byte >= 0x20 else { throw controlCharacterProblem(byte) }
            index += 1
        }
        throw problem("unterminated string")
    }

    /// Continues a string that contains escapes, from a backslash, appending to `buffer`.
    private mutating func readEscapedString(into buffer: inout [UInt8]) throws(RecordProblem) -> String {
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try text(buffer[...])
            case UInt8(ascii: "\\"):
                try readEscape(into: &buffer)
            case 0..<0x20:
                index -= 1
                throw controlCharacterProblem(byte)
            default:
                buffer.append(byte)
            }
        }
        throw problem("unterminated string")
    }

    private mutating func readEscape(into buffer: inout [UInt8]) throws(RecordProblem) {
        guard let escape = peek() else { throw problem("unterminated string") }
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else {
                    throw problem("invalid string: \\u\(hex(scalar)) is half of a surrogate pair")
                }
                index += 2
                let low = try readHex4()
                guard (0xDC00..<0xE000).contains(low) else {
                    throw problem("invalid string: \\u\(hex(scalar)) is not followed by a low surrogate")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else {
                throw problem("invalid string: \\u\(hex(scalar)) is half of a surrogate pair")
            }
            buffer.append(contentsOf: String(Character(unicode)).utf8)
        default:
            index -= 1
            throw problem("invalid escape \\\(describeRaw(escape)) in a string")
        }
    }

    private mutating func readHex4() throws(RecordProblem) -> UInt32 {
        guard index + 4 <= bytes.count else { throw problem("invalid string: \\u needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw problem("invalid string: \\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Skips an object or array at its opening bracket, checking its syntax, without recursion.
    private mutating func skipContainer() throws(RecordProblem) {
        var closers: [UInt8] = []
        nextValue: while true {
            // Here a value starts.
            skipWhitespace()
            switch peek() {
            case let opener? where opener == UInt8(ascii: "{") || opener == UInt8(ascii: "["):
                // '{' + 2 is '}' and '[' + 2 is ']' in ASCII.
                let closer = opener + 2
                index += 1
                skipWhitespace()
                if peek() == closer {
                    index += 1
                } else {
                    closers.append(closer)
                    if closer == UInt8(ascii: "}") { try skipMemberName() }
                    continue nextValue
                }
            default:
                _ = try readValue()  // a scalar: containers were handled above, so this never recurses
            }
            // Here a value ended: continue or close the containers around it.
            while let closer = closers.last {
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    if closer == UInt8(ascii: "}") { try skipMemberName() }
                    continue nextValue
                }
                try expect(closer, "',' or '\(describeRaw(closer))'")
                closers.removeLast()
            }
            return
        }
    }

    /// Skips `"name" :` inside an object being skipped.
    private mutating func skipMemberName() throws(RecordProblem) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else {
            throw problem("expected a field name in double quotes, found \(describe(peek()))")
        }
        _ = try readString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"), "':' after the field name")
    }

    // MARK: - Bytes

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\n"): line += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"): break
            default: return
            }
            index += 1
        }
    }

    private mutating func skipSpacesOnLine() {
        while index < bytes.count,
            bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t")
                || bytes[index] == UInt8(ascii: "\r")
        {
            index += 1
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(RecordProblem) {
        guard peek() == byte else { throw problem("expected \(what), found \(describe(peek()))") }
        index += 1
    }

    private mutating func expectWord(_ word: StaticString) throws(RecordProblem) {
        let text = word.withUTF8Buffer { Array($0) }
        guard index + text.count <= bytes.count, bytes[index..<index + text.count].elementsEqual(text) else {
            throw problem("expected a value, found \(describe(peek()))")
        }
        index += text.count
    }

    private func text(_ slice: ArraySlice<UInt8>) throws(RecordProblem) -> String {
        guard let string = String(validating: slice, as: UTF8.self) else { throw problem("string is not valid UTF-8") }
        return string
    }

    /// A syntax error where `index` is. At the end of the input it names the line of the last
    /// thing written, not the empty line after the final line break.
    private func problem(_ message: String) -> RecordProblem {
        RecordProblem(line: index < bytes.count ? line : lineOfLastContent(), message: "invalid JSON: \(message)")
    }

    /// The line of the last byte that is not white space (`line` is at the end of the input).
    private func lineOfLastContent() -> Int {
        var trailingBreaks = 0
        var position = bytes.count
        while position > 0 {
            let byte = bytes[position - 1]
            guard
                byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
                    || byte == UInt8(ascii: "\n")
            else { break }
            if byte == UInt8(ascii: "\n") { trailingBreaks += 1 }
            position -= 1
        }
        return line - trailingBreaks
    }

    private func controlCharacterProblem(_ byte: UInt8) -> RecordProblem {
        byte == UInt8(ascii: "\n")
            ? problem("unterminated string (a line break inside a string must be written \\n)")
            : problem("control character U+\(hex(UInt32(byte))) inside a string must be escaped")
    }

    private func describe(_ byte: UInt8?) -> String {
        guard let byte else { return "the end of the input" }
        return "'\(describeRaw(byte))'"
    }

    private func describeRaw(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "\\u\(hex(UInt32(byte)))"
    }

    private func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// The UTF-8 byte order mark, which some editors put at the start of a file.
let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
