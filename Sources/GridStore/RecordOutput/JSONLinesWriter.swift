// Sources/GridStore/RecordOutput/JSONLinesWriter.swift - grid states as JSON Lines

/// Writes grid states as JSON Lines, one `{"name":…,"color":…,"date":…,"id":…}` per line, in
/// the form ``GridStateImporter`` reads back with identity kept.
public enum JSONLinesWriter {
    /// Appends one record's line, newline included, to `output`.
    public static func appendLine(for state: GridState, id: Int, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"name":"#.utf8)
        appendString(state.name, to: &output)
        output.append(contentsOf: #","color":"#.utf8)
        output.append(contentsOf: String(state.color).utf8)
        output.append(contentsOf: #","date":"#.utf8)
        appendString(state.date, to: &output)
        output.append(contentsOf: #","id":"#.utf8)
        output.append(contentsOf: String(id).utf8)
        output.append(contentsOf: "}\n".utf8)
    }

    /// Appends `text` as a JSON string literal: quotes, backslashes and control characters
    /// escaped, everything else as UTF-8.
    public static func appendString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
