// Tests/GraphArchiveTests/Codable/CodableArrayTests.swift - arrays the bridge writes and reads itself

import Foundation
import Testing

@testable import GraphArchive

@Suite("Codable arrays")
struct CodableArrayTests {
    /// A value whose `encode(to:)` makes its objects on the fly, in arrays that die when it
    /// returns: the encoder keeps such an array while it holds its objects without retaining
    /// them, so no address is freed and taken by a later object, which would come back as the
    /// earlier one.
    struct FreshObjects: Encodable {
        enum CodingKeys: String, CodingKey { case first, second, third }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            for (round, key) in [CodingKeys.first, .second, .third].enumerated() {
                let fresh = (0..<6).map {
                    CodableGridState(name: "\(key.stringValue)-\($0)", color: round * 10 + $0, date: "d")
                }
                try container.encode(fresh, forKey: key)
            }
        }
    }

    struct ThreeLists: Decodable {
        let first: [CodableGridState]
        let second: [CodableGridState]
        let third: [CodableGridState]
    }

    @Test func objectsOfArraysMadeWhileEncodingStayDistinct() throws {
        let data = try GraphArchiveEncoder().encode(FreshObjects())
        #expect(try GraphUnarchiver.verify(data).objectCount == 18)
        let back = try GraphArchiveDecoder().decode(ThreeLists.self, from: data)
        let all = back.first + back.second + back.third
        #expect(Set(all.map(ObjectIdentifier.init)).count == 18)
        #expect(all.map(\.color) == (0..<3).flatMap { round in (0..<6).map { round * 10 + $0 } })
        #expect(back.second.map(\.name) == (0..<6).map { "second-\($0)" })
    }

    /// Arrays of every length around the one from which the encoder keeps an array instead of
    /// retaining its objects, with repeats, inside objects and at the root.
    @Test func sharingSurvivesEveryArrayLength() throws {
        for length in 0..<(EncodingState.arrayKeptAliveMinimum * 2) {
            let states = (0..<length).map { CodableGridState(name: "s\($0)", color: $0, date: "d") }
            let slots = states + states.prefix(2)
            let back = try GraphArchiveDecoder().decode(
                [[CodableGridState]].self,
                from: GraphArchiveEncoder().encode([slots, Array(slots.reversed())])
            )
            #expect(back[0].map(\.color) == slots.map(\.color))
            #expect(back[1].map(\.color) == slots.reversed().map(\.color))
            for (slot, state) in back[0].enumerated() {
                #expect(back[1][slots.count - 1 - slot] === state)
            }
            if length >= 2 {
                #expect(back[0][length] === back[0][0] && back[0][length + 1] === back[0][1])
            }
        }
    }

    @Test func everyTruncationOfAnObjectArrayThrows() throws {
        let states = (0..<20).map { CodableGridState(name: "state \($0)", color: $0, date: "2024") }
        let data = try GraphArchiveEncoder().encode(states + states.prefix(5))
        for length in 0..<data.count {
            #expect(throws: DecodingError.self) {
                _ = try GraphArchiveDecoder().decode([CodableGridState].self, from: data.prefix(length))
            }
        }
    }

    /// A packed reference array claiming more elements than the input holds: an error, whatever
    /// the count, and nothing read past the input.
    @Test func forgedObjectArrayCountsThrow() throws {
        let states = (0..<3).map { CodableGridState(name: "state \($0)", color: $0, date: "2024") }
        let original = [UInt8](try GraphArchiveEncoder().encode(states))
        let tag = try #require(original.lastIndex(of: ValueTag.referenceArray))
        for forgedCount: [UInt8] in [[0x7F], [0x80, 0x08], [0xFF, 0xFF, 0xFF, 0x7F]] {
            var bytes = original
            bytes.replaceSubrange((tag + 1)...(tag + 1), with: forgedCount)
            let forged = try reseal(bytes)
            #expect(throws: DecodingError.self) {
                _ = try GraphArchiveDecoder().decode([CodableGridState].self, from: Data(forged))
            }
        }
    }

    /// An array of a base class holding subclass instances, shared and not, long enough to be
    /// encoded from its elements' addresses: each comes back as its own class, once.
    @Test func arraysOfABaseClassKeepTheirSubclasses() throws {
        let animals: [Animal] = (0..<12).map { index in
            switch index % 3 {
            case 0: Animal(name: "animal \(index)")
            case 1: Dog(name: "dog \(index)", legs: index, tricks: ["sit", "roll \(index)"])
            default: Cat(name: "cat \(index)", lives: index)
            }
        }
        let slots = animals + [animals[1], animals[2], animals[0]]
        let data = try GraphArchiveEncoder().encode(slots)
        var decoder = GraphArchiveDecoder()
        decoder.register(Dog.self)
        decoder.register(Cat.self)
        var back = try decoder.decode([Animal].self, from: data)
        #expect(back.count == slots.count)
        for (decoded, original) in zip(back, slots) {
            #expect(type(of: decoded) == type(of: original) && decoded.name == original.name)
        }
        #expect((back[4] as? Dog)?.tricks == ["sit", "roll 4"] && (back[5] as? Cat)?.lives == 5)
        #expect(back[12] === back[1] && back[13] === back[2] && back[14] === back[0])
        // The decoded array is an ordinary array of its element type.
        back.append(Cat(name: "added", lives: 9))
        back[0] = back[3]
        #expect(back.count == slots.count + 1 && back[0] === back[3] && back.last?.name == "added")
        #expect(back.filter { $0 is Dog }.count == 5)

        // Unregistered, the first subclass instance is a type mismatch at its index.
        #expect {
            _ = try GraphArchiveDecoder().decode([Animal].self, from: data)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["Index 1"]
        }
    }

    /// An object whose field is optional, and one that needs it.
    final class Noted: Codable {
        let note: String?
        init(note: String?) { self.note = note }
    }

    final class NeedsNote: Decodable {
        let note: String
    }

    /// A class that refuses one value, with its container's coding path.
    final class NotSeven: Decodable {
        let note: String

        enum CodingKeys: CodingKey { case note }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            note = try container.decode(String.self, forKey: .note)
            guard note != "7" else {
                throw DecodingError.dataCorruptedError(forKey: .note, in: container, debugDescription: "seven")
            }
        }
    }

    /// Errors of an element deep in an array of objects carry that element's index.
    @Test func errorsInAnObjectArrayNameTheElement() throws {
        let notes = (0..<30).map { Noted(note: $0 == 21 ? nil : "\($0)") }
        let data = try GraphArchiveEncoder().encode(notes)
        let back = try GraphArchiveDecoder().decode([Noted].self, from: data)
        #expect(back.map(\.note) == notes.map(\.note))
        // The archive names the class Noted: each reading class is registered under that name.
        var needsNote = GraphArchiveDecoder()
        needsNote.register(NeedsNote.self, forName: "Noted")
        #expect {
            _ = try needsNote.decode([NeedsNote].self, from: data)
        } throws: { error in
            guard case DecodingError.keyNotFound(let key, let context) = error else { return false }
            return key.stringValue == "note" && context.codingPath.map(\.stringValue) == ["Index 21"]
        }
        var notSeven = GraphArchiveDecoder()
        notSeven.register(NotSeven.self, forName: "Noted")
        #expect {
            _ = try notSeven.decode([NotSeven].self, from: data)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["Index 7", "note"]
        }
    }

    /// A reference past the object table late in a packed array: an error, not a crash.
    @Test func aForgedReferenceLateInAnObjectArrayThrows() throws {
        let states = (0..<40).map { CodableGridState(name: "state \($0)", color: $0, date: "2024") }
        let original = [UInt8](try GraphArchiveEncoder().encode(states))
        let tag = try #require(original.lastIndex(of: ValueTag.referenceArray))
        for position in [20, 39] {
            var bytes = original
            // One byte of count (40), then one byte of delta per element.
            bytes[tag + 2 + position] = 0x7E
            #expect(throws: DecodingError.self) {
                _ = try GraphArchiveDecoder().decode([CodableGridState].self, from: Data(try reseal(bytes)))
            }
        }
    }

    final class NoteList: Codable {
        let notes: [Noted]
        init(notes: [Noted]) { self.notes = notes }
    }

    /// A `NoteList` of 40 notes whose reference `position` steps 62 objects past the one
    /// before it, out of the table of 41 (the list and its notes), and where that reference is.
    static func noteList(forgedAt position: Int) throws -> (archive: Data, offset: Int) {
        let list = NoteList(notes: (0..<40).map { Noted(note: "\($0)") })
        let original = [UInt8](try GraphArchiveEncoder().encode(list))
        // The notes are consecutive objects: count 40, a first reference, then deltas of 1 (ZigZag 2).
        let tag = try #require(
            original.indices.first {
                original[$0...].starts(with: [ValueTag.referenceArray, 40])
                    && original[($0 + 3)...].starts(with: [2, 2])
            }
        )
        // One byte of count, then one byte of delta per element; 0x7E is ZigZag 63.
        let offset = tag + 2 + position
        var bytes = original
        bytes[offset] = 0x7E
        return (Data(try reseal(bytes)), offset)
    }

    final class RefusingNoteList: Decodable {
        let notes: [NotSeven]
    }

    /// References are read a batch at a time, once, by the loop over objects (`[Noted]`) and by
    /// the one over other elements (`[Noted?]`, a wrapper of `Noted`) alike. A bad reference at
    /// the start, middle or end of a batch or of the array fails as when each element read its
    /// own: same message, offset and coding path (its own index); and an element before it that
    /// fails, in its batch or an earlier one, still fails first. (The array is an object's
    /// field: one at the root is checked before anything is built.)
    @Test(arguments: [0, 10, 15, 16, 39])
    func aForgedReferenceFailsAfterTheElementsBeforeIt(position: Int) throws {
        let (forged, offset) = try Self.noteList(forgedAt: position)
        let readings: [(decode: (Data) throws -> Any, refusesSeven: Bool)] = [
            ({ try Self.decodeNoteList($0, as: NoteList.self, notes: Noted.self) }, false),
            ({ try Self.decodeNoteList($0, as: OptionalNoteList.self, notes: Noted.self) }, false),
            ({ try Self.decodeNoteList($0, as: HeldNoteList.self, notes: Noted.self) }, false),
            ({ try Self.decodeNoteList($0, as: RefusingNoteList.self, notes: NotSeven.self) }, true),
            ({ try Self.decodeNoteList($0, as: RefusingOptionalNoteList.self, notes: NotSeven.self) }, true),
        ]
        for reading in readings {
            #expect {
                _ = try reading.decode(forged)
            } throws: { error in
                guard case DecodingError.dataCorrupted(let context) = error else { return false }
                let path = context.codingPath.map(\.stringValue)
                // Element 7 refuses its value: before the bad reference, its error wins.
                if reading.refusesSeven && position > 7 { return path == ["notes", "Index 7", "note"] }
                let message = "reference to object \(62 + position), but the archive has 41"
                let underlying = context.underlyingError as? GraphArchiveError
                return path == ["notes", "Index \(position)"] && context.debugDescription == message
                    && underlying?.code == .badObjectReference && underlying?.message == message
                    && underlying?.offset == offset
            }
        }
    }

    /// A `NoteList` archive decoded with `List` read for the class `NoteList` and `Note` for `Noted`.
    static func decodeNoteList<List: AnyObject & Decodable, Note: AnyObject & Decodable>(
        _ archive: Data,
        as _: List.Type,
        notes _: Note.Type
    ) throws -> List {
        var decoder = GraphArchiveDecoder()
        decoder.register(List.self, forName: "NoteList")
        decoder.register(Note.self, forName: "Noted")
        return try decoder.decode(List.self, from: archive)
    }

    final class OptionalNoteList: Decodable {
        let notes: [Noted?]
    }

    final class HeldNoteList: Decodable {
        let notes: [Held<Noted>]
    }

    final class RefusingOptionalNoteList: Decodable {
        let notes: [NotSeven?]
    }

    /// An object read through a single-value container: a wrapper, not a class.
    struct Held<Object: Decodable & AnyObject>: Decodable {
        let object: Object
        init(from decoder: any Decoder) throws {
            object = try decoder.singleValueContainer().decode(Object.self)
        }
    }

    /// A packed array whose slots share objects, read as `[T?]` and as wrappers of `T` (the loop
    /// for elements that are not classes), around every batch boundary, at the root and in an
    /// object: each slot is the instance of the slots it shared with when encoded.
    @Test(arguments: [1, 15, 16, 17, 33, 100])
    func sharedObjectsReadAsOptionalsOrWrappersStayShared(count: Int) throws {
        let states = (0..<max(1, count * 3 / 4)).map { CodableGridState(name: "s\($0)", color: $0, date: "d") }
        let slots = (0..<count).map { $0 < states.count ? states[$0] : states[($0 * 7) % states.count] }
        let root = try GraphArchiveDecoder().decode([CodableGridState?].self, from: GraphArchiveEncoder().encode(slots))
        var decoder = GraphArchiveDecoder()
        decoder.register(HeldShelf.self, forName: "Shelf")
        let shelf = try decoder.decode(HeldShelf.self, from: GraphArchiveEncoder().encode(Shelf(slots)))
        for decoded in [root.compactMap { $0 }, shelf.states.map(\.object)] {
            #expect(decoded.map(\.color) == slots.map(\.color))
            for slot in slots.indices {
                let first = slots.firstIndex { $0 === slots[slot] }!
                #expect(decoded[slot] === decoded[first], "slot \(slot)")
            }
            #expect(Set(decoded.map(ObjectIdentifier.init)).count == states.count)
        }
    }

    final class Shelf: Encodable {
        let states: [CodableGridState]
        init(_ states: [CodableGridState]) { self.states = states }
    }

    final class HeldShelf: Decodable {
        let states: [Held<CodableGridState>]
    }

    /// A list of objects written as `[T]` (packed references) reads as `[T?]`, at the root and
    /// in a keyed container, with its sharing; a list with nil reads as `[T?]` too.
    @Test func objectsReadAsOptionals() throws {
        struct Lists: Codable {
            let first: [CodableGridState]
            let second: [CodableGridState?]
        }
        struct OptionalLists: Decodable {
            let first: [CodableGridState?]
            let second: [CodableGridState?]
        }
        let states = (0..<4).map { CodableGridState(name: "s\($0)", color: $0, date: "d") }
        let root = try GraphArchiveDecoder().decode(
            [CodableGridState?].self,
            from: GraphArchiveEncoder().encode(states + [states[1]])
        )
        #expect(root.map { $0?.color } == [0, 1, 2, 3, 1])
        #expect(root[4] === root[1])
        let back = try GraphArchiveDecoder().decode(
            OptionalLists.self,
            from: GraphArchiveEncoder().encode(Lists(first: states, second: [states[2], nil]))
        )
        #expect(back.first.map { $0?.color } == [0, 1, 2, 3])
        #expect(back.second.map { $0?.color } == [2, nil])
        #expect(back.second[0] === back.first[2])
    }
}
