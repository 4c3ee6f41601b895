// Sources/GraphArchive/Errors/ReadableTypeName.swift - type names in error messages as Swift code spells them

/// `type`'s name as Swift source writes it: `[String]`, `Note?`, `[String: [Note]]` rather than
/// `String(describing:)`'s `Array<String>`, `Optional<Note>`, `Dictionary<String, Array<Note>>`.
func readableTypeName(_ type: Any.Type) -> String {
    let described = String(describing: type)
    var parser = TypeNameParser(text: Array(described.unicodeScalars))
    guard let name = parser.parseType(), parser.isAtEnd else { return described }
    return name
}

/// Rewrites the generic spelling of the standard library's containers into their sugar; any
/// other spelling (tuples, functions) makes it give up, and the caller keeps the original.
private struct TypeNameParser {
    let text: [Unicode.Scalar]
    var position = 0

    var isAtEnd: Bool { position == text.count }

    mutating func parseType() -> String? {
        let start = position
        while position < text.count,
            text[position].properties.isAlphabetic || text[position] == "_"
                || text[position] == "." || ("0"..."9").contains(text[position])
        {
            position += 1
        }
        guard position > start else { return nil }
        let name = String(String.UnicodeScalarView(text[start..<position]))
        guard position < text.count, text[position] == "<" else { return name }
        position += 1
        var arguments: [String] = []
        while true {
            guard let argument = parseType() else { return nil }
            arguments.append(argument)
            guard position < text.count else { return nil }
            if text[position] == ">" {
                position += 1
                break
            }
            guard text[position] == ",", position + 1 < text.count, text[position + 1] == " " else { return nil }
            position += 2
        }
        switch (name, arguments.count) {
        case ("Array", 1): return "[\(arguments[0])]"
        case ("Optional", 1): return "\(arguments[0])?"
        case ("Dictionary", 2): return "[\(arguments[0]): \(arguments[1])]"
        default: return "\(name)<\(arguments.joined(separator: ", "))>"
        }
    }
}
