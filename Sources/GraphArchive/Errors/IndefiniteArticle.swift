// Sources/GraphArchive/Errors/IndefiniteArticle.swift - "a" or "an" before a word in a message

/// `noun` after the indefinite article it is said with: "an array", "an integer", "a UID",
/// "an NSArray", "a UInt8", "an Int". Messages that name a kind or a type they only know at run
/// time build the article here.
func withIndefiniteArticle(_ noun: String) -> String {
    "\(startsWithVowelSound(noun) ? "an" : "a") \(noun)"
}

private func startsWithVowelSound(_ noun: String) -> Bool {
    var characters = noun.makeIterator()
    guard let first = characters.next() else { return false }
    let second = characters.next()
    // An initialism is said letter by letter: "an NSArray", "an SQL table", "a UID".
    if first.isUppercase, second?.isUppercase == true {
        return "AEFHILMNORSX".contains(first)
    }
    switch first.lowercased() {
    case "a", "e", "i", "o":
        return true
    case "u":
        // "a unit", "a user", "a usable", but "an unknown", "an unkeyed", "an UnsafePointer".
        let lowered = noun.lowercased()
        return !["uni", "use", "usa", "usu", "uti", "ura", "uri"].contains { lowered.hasPrefix($0) }
    default:
        return false
    }
}
