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
}
