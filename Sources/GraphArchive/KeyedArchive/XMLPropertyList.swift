// Sources/GraphArchive/KeyedArchive/XMLPropertyList.swift - reads an XML property list into the binary form
//
// `NSKeyedArchiver` with `outputFormat = .xml` (and `plutil -convert xml1`) writes keyed archives
// as XML property lists (Apple's PropertyList-1.0 DTD), where a UID is a one-key dictionary
// `<dict><key>CF$UID</key><integer>N</integer></dict>`. Rather than a second keyed reader, the
// XML is parsed once into the binary form ("bplist00"), which every keyed reader then checks and
// reads as usual. The parser follows CoreFoundation's (CFPropertyList.c): the same value syntax
// (integers in decimal or 0x hexadecimal, CF's names for infinities, dates as
// YYYY-MM-DDTHH:MM:SSZ, base64 data with whitespace), UTF-8 input, the five XML entities and
// character references, CDATA sections and comments. It never recurses: containers are kept on
// an explicit stack, bounded by `maximumDepth`.

/// Parses XML property lists into binary property lists.
struct XMLPropertyList: ~Copyable {
    private var reader: ByteReader
    private var writer = BPlistWriter()
    private let options: GraphUnarchiver.Options
    /// Open containers, innermost last.
    private var stack: [Frame] = []
    /// Objects made so far (the binary form's object count is limited like a binary input's).
    private var objectCount = 0

    /// An open `<array>` or `<dict>`.
    private struct Frame {
        var isDictionary: Bool
        /// Where its elements start on the writer's stack.
        var stackPosition: Int
        /// Elements so far (a dictionary's keys and values count one each).
        var count = 0
        /// A dictionary's key read last, waiting for its value.
        var pendingKey: Int?
        /// Whether the dictionary's only key so far is "CF$UID" (not yet written).
        var isUIDCandidate = false
        /// The integer that followed "CF$UID", held until the dictionary is known to be a UID.
        var uidValue: UInt64?
        /// Where the element began, for error messages.
        var offset: Int
    }

    /// Whether `prefix` (the first bytes of a file) starts like an XML property list: an XML
    /// declaration, a document type or a `<plist>` element, after an optional UTF-8 byte order
    /// mark. Checks nothing else.
    static func hasPrefix(_ prefix: some Collection<UInt8>) -> Bool {
        var bytes = Array(prefix.prefix(8))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard bytes.count >= 5 else { return false }
        return ["<?xml", "<!DOC", "<plis"].contains { bytes.starts(with: Array($0.utf8)) }
    }

    /// The binary property list holding what the XML property list `input` reads (from
    /// offset 0 to its end) holds.
    ///
    /// - Throws: `.corrupt` with the line and byte offset for XML that is not a well-formed
    ///   property list, `.limitExceeded` for `maximumDepth`, `maximumObjectCount`,
    ///   `maximumStringLength` or `maximumCollectionCount`.
    static func binary(from input: ByteReader, options: GraphUnarchiver.Options) throws(GraphArchiveError)
        -> ByteWriter
    {
        var parser = XMLPropertyList(reader: input, options: options)
        parser.reader.offset = 0
        let top = try parser.parseDocument()
        var writer = BPlistWriter()
        swap(&writer, &parser.writer)
        return try writer.finish(top: top)
    }

    private init(reader: ByteReader, options: GraphUnarchiver.Options) {
        self.reader = reader
        self.options = options
    }

    // MARK: - Document

    /// The prolog, the `<plist>` element (or a bare value, which CF also accepts) and what may
    /// follow it; returns the top object.
    private mutating func parseDocument() throws(GraphArchiveError) -> Int {
        let start = reader.copyPrefix(3)
        if start == [0xEF, 0xBB, 0xBF] {
            reader.offset += 3
        } else if start.count >= 2, Set(start.prefix(2)) == [0xFE, 0xFF] {
            throw error("XML property lists are read in UTF-8 only; this one starts with a UTF-16 byte order mark")
        }
        try skipMisc()
        var tag = try readTag()
        var isInPlist = false
        if tag.name == "plist" {
            guard !tag.isClosing else { throw error("</plist> closes nothing") }
            isInPlist = true
            if tag.isEmpty { throw error("<plist/> holds no value") }
            try skipMisc()
            tag = try readTag()
        }
        let top = try parseValue(startingWith: tag)
        try skipMisc()
        if isInPlist {
            let close = try readTag()
            guard close.isClosing && close.name == "plist" else {
                throw error(
                    "expected </plist> after the property list's one value, found <\(close.display)>",
                    at: close.offset
                )
            }
            try skipMisc()
        }
        guard reader.isAtEnd else { throw error("unexpected content after the property list") }
        return top
    }

    /// Skips whitespace, comments, processing instructions (the XML declaration) and a
    /// document type declaration.
    private mutating func skipMisc() throws(GraphArchiveError) {
        while true {
            skipWhitespace()
            guard reader.remaining >= 2, try peek(0) == UInt8(ascii: "<") else { return }
            switch try peek(1) {
            case UInt8(ascii: "?"):
                try skip(past: "?>", what: "processing instruction")
            case UInt8(ascii: "!"):
                if try startsWith("<!--") {
                    try skip(past: "-->", what: "comment")
                } else if try startsWith("<!DOCTYPE") {
                    try skipDocumentType()
                } else {
                    return
                }
            default:
                return
            }
        }
    }

    /// Skips `<!DOCTYPE …>`, including an internal subset in brackets.
    private mutating func skipDocumentType() throws(GraphArchiveError) {
        let start = reader.offset
        var depth = 0
        var quote: UInt8?
        while !reader.isAtEnd {
            let byte = try reader.readByte()
            if let open = quote {
                if byte == open { quote = nil }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"): quote = byte
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ">") where depth <= 0: return
            default: break
            }
        }
        throw error("the document type declaration is not closed", at: start)
    }

    // MARK: - Values

    /// Parses the value that starts with `tag` (already read), and everything inside it.
    private mutating func parseValue(startingWith first: Tag) throws(GraphArchiveError) -> Int {
        var tag = first
        while true {
            if let top = try step(tag) { return top }
            try skipMisc()
            tag = try readTag()
        }
    }

    /// Handles one tag; returns the top object once the outermost value is complete.
    private mutating func step(_ tag: Tag) throws(GraphArchiveError) -> Int? {
        if let frame = stack.last, frame.isUIDCandidate {
            // `<key>CF$UID</key>` opened this dictionary: an integer and then its end make it a
            // UID (nothing written yet); anything else makes "CF$UID" an ordinary key.
            if frame.uidValue == nil && tag.name == "integer" && !tag.isClosing {
                let text = try text(of: tag)
                guard let value = Self.integer(text), !value.isNegative else {
                    throw error("CF$UID is not a valid non-negative <integer>: \"\(text)\"", at: tag.offset)
                }
                stack[stack.count - 1].uidValue = value.magnitude
                return nil
            }
            if !(frame.uidValue != nil && tag.isClosing && tag.name == "dict") { try flushUIDCandidate() }
        }
        let object: Int
        if tag.isClosing {
            guard let frame = stack.last, tag.name == (frame.isDictionary ? "dict" : "array") else {
                throw error("</\(tag.name)> closes nothing open", at: tag.offset)
            }
            object = try close(stack.removeLast())
        } else if tag.name == "array" || tag.name == "dict" {
            try checkValuePosition(tag)
            guard stack.count < options.maximumDepth else {
                throw GraphArchiveError(
                    .limitExceeded,
                    "XML property list nests deeper than maximumDepth (\(options.maximumDepth))",
                    offset: tag.offset
                )
            }
            stack.append(
                Frame(isDictionary: tag.name == "dict", stackPosition: writer.stackPosition, offset: tag.offset)
            )
            guard tag.isEmpty else { return nil }
            object = try close(stack.removeLast())
        } else if tag.name == "key" {
            guard let frame = stack.last, frame.isDictionary, frame.pendingKey == nil else {
                throw error("<key> outside a dictionary, or two keys in a row", at: tag.offset)
            }
            let key = try text(of: tag)
            if frame.count == 0 && key == "CF$UID" {
                stack[stack.count - 1].isUIDCandidate = true
            } else {
                try noteObject()
                stack[stack.count - 1].pendingKey = writer.string(key)
            }
            return nil
        } else {
            try checkValuePosition(tag)
            object = try scalar(tag)
        }
        guard !stack.isEmpty else { return object }
        try add(object)
        return nil
    }

    /// A value inside a dictionary needs its key first.
    private func checkValuePosition(_ tag: Tag) throws(GraphArchiveError) {
        if let frame = stack.last, frame.isDictionary, frame.pendingKey == nil {
            throw error("a dictionary value without a <key> before it", at: tag.offset)
        }
    }

    /// Adds `object` to the innermost container.
    private mutating func add(_ object: Int) throws(GraphArchiveError) {
        var frame = stack[stack.count - 1]
        if frame.isDictionary {
            guard let key = frame.pendingKey else {
                throw error("a dictionary value without a <key> before it", at: frame.offset)
            }
            writer.push(key)
            writer.push(object)
            frame.pendingKey = nil
        } else {
            writer.push(object)
        }
        frame.count += 1
        guard frame.count <= options.maximumCollectionCount else {
            throw GraphArchiveError(
                .limitExceeded,
                "XML property list container of more than maximumCollectionCount (\(options.maximumCollectionCount)) elements",
                offset: frame.offset
            )
        }
        stack[stack.count - 1] = frame
    }

    /// Writes a held "CF$UID" key (and its integer, if read) as an ordinary entry: the
    /// dictionary turned out to be no UID.
    private mutating func flushUIDCandidate() throws(GraphArchiveError) {
        guard let frame = stack.last, frame.isUIDCandidate else { return }
        stack[stack.count - 1].isUIDCandidate = false
        try noteObject()
        let key = writer.string("CF$UID")
        guard let value = frame.uidValue else {
            stack[stack.count - 1].pendingKey = key
            return
        }
        stack[stack.count - 1].uidValue = nil
        try noteObject()
        writer.push(key)
        writer.push(writer.unsigned(value))
        stack[stack.count - 1].count += 1
    }

    private mutating func close(_ frame: Frame) throws(GraphArchiveError) -> Int {
        try noteObject()
        if frame.isDictionary {
            if frame.isUIDCandidate, let value = frame.uidValue {
                // CF reads the UID as a 32-bit number.
                guard value <= UInt64(UInt32.max) else {
                    throw error("CF$UID \(value) is out of range", at: frame.offset)
                }
                return writer.uid(Int(value))
            }
            guard frame.pendingKey == nil else {
                throw error("a dictionary ends with a <key> that has no value", at: frame.offset)
            }
            return writer.closeDictionary(from: frame.stackPosition)
        }
        return writer.closeArray(from: frame.stackPosition)
    }

    /// A scalar element: string, integer, real, true, false, date or data.
    private mutating func scalar(_ tag: Tag) throws(GraphArchiveError) -> Int {
        try noteObject()
        switch tag.name {
        case "string":
            return writer.string(try text(of: tag))
        case "integer":
            let text = try text(of: tag)
            guard let value = Self.integer(text) else {
                throw error("<integer> \"\(text)\" is not a 64-bit integer", at: tag.offset)
            }
            // A negative magnitude is at most 2^63 (checked by `integer`).
            return value.isNegative
                ? writer.integer(Int64(truncatingIfNeeded: 0 &- value.magnitude)) : writer.unsigned(value.magnitude)
        case "real":
            let text = try text(of: tag)
            guard let value = Self.real(text) else { throw error("<real> \"\(text)\" is not a number", at: tag.offset) }
            return writer.double(value)
        case "true", "false":
            if !tag.isEmpty {
                let close = try readTag()
                guard close.isClosing && close.name == tag.name else {
                    throw error("<\(tag.name)> must be empty", at: tag.offset)
                }
            }
            return writer.bool(tag.name == "true")
        case "date":
            let text = try text(of: tag)
            guard let seconds = Self.date(text) else {
                throw error("<date> \"\(text)\" is not YYYY-MM-DDTHH:MM:SSZ", at: tag.offset)
            }
            return writer.date(seconds)
        case "data":
            guard let data = Self.base64(Array(try text(of: tag).utf8)) else {
                throw error("<data> is not valid base64", at: tag.offset)
            }
            return writer.data(data)
        default:
            throw error("<\(tag.display)> is not a property list element", at: tag.offset)
        }
    }

    private mutating func noteObject() throws(GraphArchiveError) {
        objectCount += 1
        guard objectCount <= options.maximumObjectCount else {
            throw GraphArchiveError(
                .limitExceeded,
                "XML property list holds more than maximumObjectCount (\(options.maximumObjectCount)) objects",
                offset: reader.offset
            )
        }
    }

    // MARK: - Tags and text

    private struct Tag {
        var name: String
        var isClosing: Bool
        /// `<name/>`.
        var isEmpty: Bool
        var offset: Int

        var display: String { (isClosing ? "/" : "") + name + (isEmpty ? "/" : "") }
    }

    /// Reads the next tag; the reader must be at its `<`.
    private mutating func readTag() throws(GraphArchiveError) -> Tag {
        let start = reader.offset
        guard !reader.isAtEnd else { throw error("the property list ends early: an element is not closed") }
        guard try reader.readByte() == UInt8(ascii: "<") else {
            throw error("expected an element, found text", at: start)
        }
        var isClosing = false
        if !reader.isAtEnd, try peek(0) == UInt8(ascii: "/") {
            isClosing = true
            reader.offset += 1
        }
        var name: [UInt8] = []
        while !reader.isAtEnd {
            let byte = try peek(0)
            guard Self.isNameByte(byte) else { break }
            name.append(byte)
            reader.offset += 1
            guard name.count <= 64 else { throw error("an element name is too long", at: start) }
        }
        guard !name.isEmpty else { throw error("expected an element name", at: start) }
        // Attributes (plist's version) are skipped, quoted values included.
        var quote: UInt8?
        var last: UInt8 = 0
        while true {
            guard !reader.isAtEnd else { throw error("an element's tag is not closed", at: start) }
            let byte = try reader.readByte()
            if let open = quote {
                if byte == open { quote = nil }
                continue
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                break
            } else if byte == UInt8(ascii: "<") {
                throw error("an element's tag is not closed", at: start)
            }
            if !Self.isWhitespace(byte) { last = byte }
        }
        let isEmpty = last == UInt8(ascii: "/")
        if isClosing && isEmpty { throw error("a closing tag cannot be empty", at: start) }
        return Tag(name: String(decoding: name, as: UTF8.self), isClosing: isClosing, isEmpty: isEmpty, offset: start)
    }

    /// The text of element `tag` (entities and CDATA resolved, comments dropped), up to and
    /// including its closing tag.
    private mutating func text(of tag: Tag) throws(GraphArchiveError) -> String {
        if tag.isEmpty { return "" }
        var bytes: [UInt8] = []
        while true {
            guard !reader.isAtEnd else { throw error("<\(tag.name)> is not closed", at: tag.offset) }
            let byte = try reader.readByte()
            switch byte {
            case UInt8(ascii: "<"):
                reader.offset -= 1
                if try startsWith("<![CDATA[") {
                    reader.offset += 9
                    let start = reader.offset
                    try skip(past: "]]>", what: "CDATA section")
                    var copy = reader
                    copy.offset = start
                    bytes.append(contentsOf: try copy.readBytes(count: reader.offset - 3 - start))
                } else if try startsWith("<!--") {
                    try skip(past: "-->", what: "comment")
                } else {
                    let close = try readTag()
                    guard close.isClosing && close.name == tag.name else {
                        throw error(
                            "<\(tag.name)> holds an element (<\(close.display)>); only text is allowed",
                            at: close.offset
                        )
                    }
                    guard let text = String(validating: bytes, as: UTF8.self) else {
                        throw GraphArchiveError(.invalidUTF8, "<\(tag.name)> is not valid UTF-8", offset: tag.offset)
                    }
                    return text
                }
            case UInt8(ascii: "&"):
                try appendEntity(to: &bytes)
            default:
                bytes.append(byte)
            }
            guard bytes.count <= options.maximumStringLength else {
                throw GraphArchiveError(
                    .limitExceeded,
                    "XML property list text longer than maximumStringLength (\(options.maximumStringLength))",
                    offset: tag.offset
                )
            }
        }
    }

    /// Reads an entity or character reference (the `&` is read) and appends its UTF-8.
    private mutating func appendEntity(to bytes: inout [UInt8]) throws(GraphArchiveError) {
        let start = reader.offset - 1
        var name: [UInt8] = []
        while true {
            guard !reader.isAtEnd, name.count < 12 else { throw error("an entity is not terminated by ';'", at: start) }
            let byte = try reader.readByte()
            if byte == UInt8(ascii: ";") { break }
            name.append(byte)
        }
        let text = String(decoding: name, as: UTF8.self)
        switch text {
        case "lt": bytes.append(UInt8(ascii: "<"))
        case "gt": bytes.append(UInt8(ascii: ">"))
        case "amp": bytes.append(UInt8(ascii: "&"))
        case "quot": bytes.append(UInt8(ascii: "\""))
        case "apos": bytes.append(UInt8(ascii: "'"))
        default:
            var code: UInt32?
            if text.hasPrefix("#x") || text.hasPrefix("#X") {
                code = UInt32(text.dropFirst(2), radix: 16)
            } else if text.hasPrefix("#") {
                code = UInt32(text.dropFirst(), radix: 10)
            }
            guard let code, code != 0, let scalar = Unicode.Scalar(code) else {
                throw error("unknown entity &\(text);", at: start)
            }
            bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
        }
    }

    // MARK: - Reading helpers

    private func peek(_ distance: Int) throws(GraphArchiveError) -> UInt8 {
        var copy = reader
        try copy.skip(distance)
        return try copy.peekByte()
    }

    private func startsWith(_ text: String) throws(GraphArchiveError) -> Bool {
        let bytes = Array(text.utf8)
        guard reader.remaining >= bytes.count else { return false }
        var copy = reader
        for byte in bytes where try copy.readByte() != byte { return false }
        return true
    }

    /// Moves past the next occurrence of `terminator`.
    private mutating func skip(past terminator: String, what: String) throws(GraphArchiveError) {
        let start = reader.offset
        let bytes = Array(terminator.utf8)
        var matched = 0
        while !reader.isAtEnd {
            let byte = try reader.readByte()
            if byte == bytes[matched] {
                matched += 1
                if matched == bytes.count { return }
            } else {
                matched = byte == bytes[0] ? 1 : 0
            }
        }
        throw error("a \(what) is not closed", at: start)
    }

    private mutating func skipWhitespace() {
        while !reader.isAtEnd, let byte = try? reader.peekByte(), Self.isWhitespace(byte) { reader.offset += 1 }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
    }

    /// A `.corrupt` error naming the line of `offset` (the reader's position by default).
    private func error(_ message: String, at offset: Int? = nil) -> GraphArchiveError {
        let position = offset ?? reader.offset
        var copy = reader
        copy.offset = 0
        var line = 1
        while copy.offset < min(position, copy.end), let byte = try? copy.readByte() {
            if byte == 0x0A { line += 1 }
        }
        return GraphArchiveError(.corrupt, "XML property list, line \(line): \(message)", offset: position)
    }

    // MARK: - Values from text

    /// An `<integer>`'s text as CF reads it: optional whitespace and sign, decimal or 0x
    /// hexadecimal digits; magnitude up to UInt64.max, or Int64.min's when negative.
    static func integer(_ text: String) -> (isNegative: Bool, magnitude: UInt64)? {
        var digits = Substring(text.trimmingWhitespace())
        var isNegative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            isNegative = sign == "-"
            digits = Substring(String(digits.dropFirst()).trimmingWhitespace())
        }
        var radix = 10
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            radix = 16
            digits = digits.dropFirst(2)
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII }), let magnitude = UInt64(digits, radix: radix) else {
            return nil
        }
        if isNegative && magnitude > UInt64(Int64.max) + 1 { return nil }
        return (isNegative && magnitude != 0, magnitude)
    }

    /// A `<real>`'s text: a decimal number, or CF's names for NaN and the infinities.
    static func real(_ text: String) -> Double? {
        let trimmed = text.trimmingWhitespace()
        switch trimmed.lowercased() {
        case "nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default:
            // Decimal only: no hexadecimal floats and no other spelling Double(_:) would take.
            guard !trimmed.isEmpty,
                trimmed.utf8.allSatisfy({ byte in
                    (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".")
                        || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "-")
                        || byte == UInt8(ascii: "+")
                })
            else { return nil }
            return Double(trimmed)
        }
    }

    /// A `<date>`'s text, `[-]YYYY-MM-DDTHH:MM:SSZ` (UTC), as seconds since 2001-01-01.
    static func date(_ text: String) -> Double? {
        var bytes = Array(text.trimmingWhitespace().utf8)
        var isNegativeYear = false
        if bytes.first == UInt8(ascii: "-") {
            isNegativeYear = true
            bytes.removeFirst()
        }
        // YYYY-MM-DDTHH:MM:SSZ: at least one year digit, then fixed fields.
        guard bytes.count >= 17, bytes.count <= 26, bytes.last == UInt8(ascii: "Z") else { return nil }
        let tail = Array(bytes.suffix(16))
        let yearDigits = bytes.prefix(bytes.count - 16)
        guard tail[0] == UInt8(ascii: "-"), tail[3] == UInt8(ascii: "-"), tail[6] == UInt8(ascii: "T"),
            tail[9] == UInt8(ascii: ":"), tail[12] == UInt8(ascii: ":")
        else { return nil }
        func number(_ digits: some Collection<UInt8>) -> Int? {
            guard !digits.isEmpty else { return nil }
            var value = 0
            for digit in digits {
                guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(digit - UInt8(ascii: "0"))
            }
            return value
        }
        guard var year = number(yearDigits), let month = number(tail[1...2]), let day = number(tail[4...5]),
            let hour = number(tail[7...8]), let minute = number(tail[10...11]), let second = number(tail[13...14]),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        if isNegativeYear { year = -year }
        // Days from the civil date (proleptic Gregorian), then seconds from 2001-01-01.
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let daysSince1970 = era * 146_097 + dayOfEra - 719_468
        let referenceDays = 11_323  // 1970-01-01 to 2001-01-01
        return Double((daysSince1970 - referenceDays) * 86_400 + hour * 3_600 + minute * 60 + second)
    }

    /// Base64 with whitespace anywhere and optional padding, as CF reads `<data>`.
    static func base64(_ text: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count / 4 * 3)
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
            let value: UInt32
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(byte - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(byte - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(byte - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            case 0x20, 0x09, 0x0A, 0x0D:
                continue
            default:
                return nil
            }
            // Nothing but whitespace and padding may follow padding.
            guard padding == 0 else { return nil }
            accumulator = accumulator << 6 | value
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        guard padding <= 2 else { return nil }
        return output
    }
}

extension ByteReader {
    /// Up to `count` bytes from the current offset, without moving.
    fileprivate func copyPrefix(_ count: Int) -> [UInt8] {
        var copy = self
        var bytes: [UInt8] = []
        while bytes.count < count, let byte = try? copy.readByte() { bytes.append(byte) }
        return bytes
    }
}

extension String {
    /// The string without leading and trailing ASCII whitespace.
    fileprivate func trimmingWhitespace() -> String {
        let bytes = Array(utf8)
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
