// Sources/GridStoreCLI/DisplayWidth.swift - how many terminal columns text takes

/// Terminal columns text takes, so tables line up with CJK names and emoji.
///
/// Each character (grapheme cluster) takes the width of its first scalar: 2 for East Asian wide
/// and fullwidth characters and for emoji shown as emoji (by default, or asked for with the
/// variation selector U+FE0F), 0 for combining marks and invisible format characters, 1 for
/// the rest. Combining marks after a base, and the scalars of an emoji sequence after its
/// first, add nothing: terminals draw the whole cluster in the cells of its base. This is what
/// `wcwidth` computes, from the standard library's Unicode properties plus the East Asian
/// wide ranges (the standard library does not expose the East_Asian_Width property).
enum DisplayWidth {
    /// Columns `text` takes; its length when it is ASCII.
    static func of(_ text: String) -> Int {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.utf8.count }
        return text.reduce(0) { $0 + of($1) }
    }

    /// Columns one character takes: 0, 1 or 2.
    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        let properties = first.properties
        if properties.isEmojiPresentation { return 2 }
        if properties.isEmoji && scalars.contains(emojiPresentationSelector) { return 2 }
        return of(first)
    }

    /// Columns one scalar takes on its own: 0, 1 or 2.
    static func of(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control, .lineSeparator, .paragraphSeparator:
            return 0
        default:
            break
        }
        let value = scalar.value
        // Hangul vowels and final consonants that join the syllable before them.
        if (0x1160...0x11FF).contains(value) || (0xD7B0...0xD7FF).contains(value) { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        return isEastAsianWide(value) ? 2 : 1
    }

    /// Text cut to at most `width` columns, with "…" in the last column when anything was cut.
    static func truncate(_ text: String, toWidth width: Int) -> String {
        guard of(text) > width else { return text }
        var result = ""
        var used = 0
        for character in text {
            let columns = of(character)
            if used + columns > width - 1 { break }
            result.append(character)
            used += columns
        }
        return result + "…"
    }

    private static let emojiPresentationSelector: Unicode.Scalar = "\u{FE0F}"

    /// East_Asian_Width W or F, outside the emoji (which `isEmojiPresentation` covers): CJK
    /// ideographs and symbols, kana, Hangul syllables, Yi, Tangut, fullwidth forms.
    private static func isEastAsianWide(_ value: UInt32) -> Bool {
        guard value >= 0x1100 else { return false }
        for range in wideRanges {
            if value < range.lowerBound { return false }
            if value <= range.upperBound { return true }
        }
        return false
    }

    /// Sorted, so the search above stops at the first range past the value.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,  // Hangul Jamo leading consonants
        0x2329...0x232A,  // angle brackets
        0x2E80...0x303E,  // CJK radicals, Kangxi radicals, CJK symbols and punctuation
        0x3041...0x33FF,  // kana, Bopomofo, Hangul compatibility Jamo, enclosed and compatibility CJK
        0x3400...0x4DBF,  // CJK extension A
        0x4E00...0x9FFF,  // CJK unified ideographs
        0xA000...0xA4CF,  // Yi
        0xA960...0xA97F,  // Hangul Jamo extended A
        0xAC00...0xD7A3,  // Hangul syllables
        0xF900...0xFAFF,  // CJK compatibility ideographs
        0xFE10...0xFE19,  // vertical forms
        0xFE30...0xFE6F,  // CJK compatibility forms, small form variants
        0xFF00...0xFF60,  // fullwidth forms
        0xFFE0...0xFFE6,  // fullwidth signs
        0x16FE0...0x16FE4,  // ideographic symbols
        0x17000...0x18CFF,  // Tangut, Khitan
        0x1B000...0x1B2FF,  // kana supplement and extensions, Nüshu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B to F, compatibility supplement
        0x30000...0x3FFFD,  // CJK extensions G and H
    ]
}
