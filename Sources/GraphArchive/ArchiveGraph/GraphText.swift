// Sources/GraphArchive/ArchiveGraph/GraphText.swift - values as text: JSON strings, base64, dates, big integers

/// The text forms the JSON and tree outputs share, appended to byte buffers.
enum GraphText {
    /// Appends `string` as a JSON string: quoted, with `"`, `\` and control characters
    /// escaped (`\n`, `\u001B`…), everything else as its UTF-8.
    static func appendJSONString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            // Most strings need no escape: copy them whole.
            if !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                output.append(contentsOf: bytes)
                return
            }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case ..<0x20: appendUnicodeEscape(byte, to: &output)
                default: output.append(byte)
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// `\u00XX`.
    private static func appendUnicodeEscape(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(contentsOf: Array("\\u00".utf8))
        output.append(hexDigits[Int(byte >> 4)])
        output.append(hexDigits[Int(byte & 0x0F)])
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `bytes` in base64 (RFC 4648, with padding).
    static func appendBase64(_ bytes: [UInt8], to output: inout [UInt8]) {
        let alphabet = base64Alphabet
        var index = 0
        while index + 3 <= bytes.count {
            let word = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int(word >> UInt32(shift) & 0x3F)]) }
            index += 3
        }
        let rest = bytes.count - index
        guard rest > 0 else { return }
        let word = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
        output.append(alphabet[Int(word >> 18 & 0x3F)])
        output.append(alphabet[Int(word >> 12 & 0x3F)])
        output.append(rest == 2 ? alphabet[Int(word >> 6 & 0x3F)] : UInt8(ascii: "="))
        output.append(UInt8(ascii: "="))
    }

    private static let base64Alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// A date (seconds since 2001-01-01) as ISO 8601 UTC, `2013-09-04T15:06:40.5Z`: whole
    /// seconds, then up to six fractional digits where there are any; nil outside years
    /// 1…9999 or for NaN.
    static func iso8601(_ seconds: Double) -> String? {
        // 2001-01-01 is 978,307,200 s after 1970; years 1…9999 lie within ±3.2e11 s of it.
        guard seconds.isFinite, abs(seconds) < 3.2e11 else { return nil }
        let microseconds = (seconds * 1_000_000).rounded()
        let whole = Int((microseconds / 1_000_000).rounded(.down))
        var fraction = Int(microseconds - Double(whole) * 1_000_000)
        let unix = whole + 978_307_200
        var days = unix / 86_400
        var secondOfDay = unix % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        // Civil date from days since 1970-01-01 (proleptic Gregorian).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        guard (1...9999).contains(year) else { return nil }
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        var text = "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))T"
        text += "\(padded(secondOfDay / 3_600, 2)):\(padded(secondOfDay / 60 % 60, 2)):\(padded(secondOfDay % 60, 2))"
        if fraction > 0 {
            var digits = 6
            while fraction % 10 == 0 {
                fraction /= 10
                digits -= 1
            }
            text += "." + padded(fraction, digits)
        }
        return text + "Z"
    }

    /// A 128-bit two's complement number in decimal.
    static func decimal(high: Int64, low: UInt64) -> String {
        String(Int128(high) << 64 | Int128(low))
    }

    /// A number for people and JSON: Swift's shortest round-tripping form, which JSON reads.
    static func decimal(_ value: Double) -> String {
        value.description
    }
}
