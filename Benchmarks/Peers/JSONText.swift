// Benchmarks/Peers/JSONText.swift - JSON texts compared up to the order of each object's members

import Foundation

/// Compares two JSON texts as `JSONEncoder` writes them (no whitespace) up to the order of each
/// object's members.
///
/// `JSONEncoder` on Linux writes a keyed container's members in the order of a dictionary seeded
/// per instance, so two encodings of one model differ in that order and nothing else. Checking
/// a timed encoding by decoding it cost as much as the encoding itself; when the reference
/// archive (already checked by decoding it) and the new text are the same values with members
/// reordered, the new text decodes to the same model, and this walk over the bytes shows it.
/// Anything else (other values, whitespace, a nested difference this walk cannot pair up)
/// answers false, and the caller then decodes the text and checks it the slow way.
enum JSONText {
    /// Whether `text` holds the same JSON values as `reference`, object members in any order.
    static func isReordering(_ text: Data, of reference: Data) -> Bool {
        guard text.count == reference.count else { return false }
        return text.withUnsafeBytes { text in
            reference.withUnsafeBytes { reference in
                let text = Scanner(text.bindMemory(to: UInt8.self))
                let reference = Scanner(reference.bindMemory(to: UInt8.self))
                guard let end = sameValue(text, 0, reference, 0) else { return false }
                return end == text.bytes.count
            }
        }
    }

    /// Whether the values at `textStart` and `referenceStart` are the same; if so, where the
    /// text's value ends.
    private static func sameValue(_ text: Scanner, _ textStart: Int, _ reference: Scanner, _ referenceStart: Int)
        -> Int?
    {
        guard textStart < text.bytes.count, referenceStart < reference.bytes.count,
            text.bytes[textStart] == reference.bytes[referenceStart]
        else { return nil }
        switch reference.bytes[referenceStart] {
        case UInt8(ascii: "{"):
            return sameObject(text, textStart, reference, referenceStart)
        case UInt8(ascii: "["):
            var textIndex = textStart + 1
            var referenceIndex = referenceStart + 1
            guard textIndex < text.bytes.count, referenceIndex < reference.bytes.count else { return nil }
            if reference.bytes[referenceIndex] == UInt8(ascii: "]") {
                return text.bytes[textIndex] == UInt8(ascii: "]") ? textIndex + 1 : nil
            }
            while true {
                guard let textEnd = sameValue(text, textIndex, reference, referenceIndex),
                    let referenceEnd = reference.endOfValue(at: referenceIndex),
                    textEnd < text.bytes.count, referenceEnd < reference.bytes.count,
                    text.bytes[textEnd] == reference.bytes[referenceEnd]
                else { return nil }
                if reference.bytes[referenceEnd] == UInt8(ascii: "]") { return textEnd + 1 }
                guard reference.bytes[referenceEnd] == UInt8(ascii: ",") else { return nil }
                textIndex = textEnd + 1
                referenceIndex = referenceEnd + 1
            }
        default:
            // A string, number or literal: the same bytes, as many of them.
            guard let end = reference.endOfValue(at: referenceStart), let textEnd = text.endOfValue(at: textStart),
                textEnd - textStart == end - referenceStart,
                text.same(textStart..<textEnd, as: referenceStart..<end, in: reference)
            else { return nil }
            return textEnd
        }
    }

    /// Pairs each member of the reference's object with the text's member of the same key.
    private static func sameObject(_ text: Scanner, _ textStart: Int, _ reference: Scanner, _ referenceStart: Int)
        -> Int?
    {
        guard let textMembers = text.members(at: textStart),
            let referenceMembers = reference.members(at: referenceStart),
            textMembers.members.count == referenceMembers.members.count
        else { return nil }
        var unmatched = textMembers.members
        for member in referenceMembers.members {
            guard let position = unmatched.firstIndex(where: { text.same($0.key, as: member.key, in: reference) }),
                sameValue(text, unmatched[position].value.lowerBound, reference, member.value.lowerBound)
                    == unmatched[position].value.upperBound
            else { return nil }
            unmatched.remove(at: position)
        }
        return textMembers.end
    }

    /// Finds where values end in one JSON text.
    private struct Scanner {
        var bytes: UnsafeBufferPointer<UInt8>

        init(_ bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        /// One member of an object: its key (a string, quotes included) and its value.
        struct Member {
            var key: Range<Int>
            var value: Range<Int>
        }

        /// The members of the object at `start` (a `{`), and the index just past its `}`.
        func members(at start: Int) -> (members: [Member], end: Int)? {
            var members: [Member] = []
            var index = start + 1
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return (members, index + 1) }
            while true {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let keyEnd = endOfValue(at: index),
                    keyEnd < bytes.count, bytes[keyEnd] == UInt8(ascii: ":"), let valueEnd = endOfValue(at: keyEnd + 1),
                    valueEnd < bytes.count
                else { return nil }
                members.append(Member(key: index..<keyEnd, value: (keyEnd + 1)..<valueEnd))
                switch bytes[valueEnd] {
                case UInt8(ascii: "}"): return (members, valueEnd + 1)
                case UInt8(ascii: ","): index = valueEnd + 1
                default: return nil
                }
            }
        }

        /// Whether the bytes at `range` here are those at `other` in `text`.
        func same(_ range: Range<Int>, as other: Range<Int>, in text: Scanner) -> Bool {
            range.count == other.count
                && memcmp(
                    bytes.baseAddress! + range.lowerBound,
                    text.bytes.baseAddress! + other.lowerBound,
                    range.count
                )
                    == 0
        }

        /// The index just past the value that starts at `start`, or nil if there is none.
        func endOfValue(at start: Int) -> Int? {
            guard start < bytes.count else { return nil }
            switch bytes[start] {
            case UInt8(ascii: "\""):
                var index = start + 1
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\\"): index += 2
                    case UInt8(ascii: "\""): return index + 1
                    default: index += 1
                    }
                }
                return nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                // Brackets nest; those inside strings do not count.
                var depth = 0
                var index = start
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard let end = endOfValue(at: index) else { return nil }
                        index = end
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { return index + 1 }
                    default: break
                    }
                    index += 1
                }
                return nil
            default:
                // A number or a literal runs to the next comma or closing bracket.
                var index = start
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") { break }
                    index += 1
                }
                return index == start ? nil : index
            }
        }
    }
}
