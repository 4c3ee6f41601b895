// Sources/GridStore/RecordInput/ColorText.swift - a color as people write it, and as `load` prints it

/// Reads a color written as text: a decimal integer (`16711680`, `-1`), `#RRGGBB` (as
/// `gridstore load` prints colors in 0..<2^24) or `0x` and hex digits (`0xFF0000`). Spaces and
/// tabs around it are ignored.
enum ColorText {
    /// The range a color may take: the app's `NSInteger`.
    static let range = Int.min...Int.max

    static func parse(_ text: String, line: Int) throws(RecordProblem) -> Int {
        let trimmed = text.trimmingSpaces
        if trimmed.hasPrefix("#") {
            let digits = trimmed.dropFirst()
            guard digits.count == 6, digits.allSatisfy(isHexDigit), let value = Int(digits, radix: 16) else {
                throw RecordProblem(line: line, message: "color \"\(text)\" is not #RRGGBB (six hex digits)")
            }
            return value
        }
        if trimmed.hasPrefix("0x") || trimmed.hasPrefix("0X") {
            let digits = trimmed.dropFirst(2)
            guard !digits.isEmpty, digits.allSatisfy(isHexDigit) else { throw notAColor(text, line: line) }
            guard let value = Int(digits, radix: 16) else { throw outOfRange(trimmed, line: line) }
            return value
        }
        if let value = Int(trimmed) { return value }
        if isIntegerText(trimmed) { throw outOfRange(trimmed, line: line) }
        throw notAColor(text, line: line)
    }

    /// The error for an integer beyond ``range``, written as `text`.
    static func outOfRange(_ text: String, line: Int) -> RecordProblem {
        RecordProblem(
            line: line,
            message: "color \(text) is out of range (\(range.lowerBound) to \(range.upperBound))"
        )
    }

    /// Whether `text` is digits after an optional sign: an integer, however large.
    static func isIntegerText(_ text: some StringProtocol) -> Bool {
        let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : text[...]
        return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    private static func isHexDigit(_ character: Character) -> Bool {
        character.isASCII && character.isHexDigit
    }

    private static func notAColor(_ text: String, line: Int) -> RecordProblem {
        RecordProblem(line: line, message: "color must be an integer, #RRGGBB or 0xHEX, found \"\(text)\"")
    }
}
