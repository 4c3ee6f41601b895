// Tests/GraphArchiveTests/Codable/CodableBodyPlacementTests.swift - where object bodies go while others are written

import Foundation
import Testing

@testable import GraphArchive

/// An object body interrupts whatever is being written (a parent body, a nested container, a
/// super encoder) and must reach the object section whole, in completion order, leaving the
/// interrupted bytes as they were. These archives were written before the encoder changed how
/// it places bodies; the bytes must not change.
@Suite("Codable object body placement")
struct CodableBodyPlacementTests {
    @Test func bodiesMetInsideBodiesNestedContainersAndSuperEncoders() throws {
        let shared = CodableGridState(name: "shared", color: 7, date: "d")
        let holder = PlacedHolder(shared: shared)
        let data = try GraphArchiveEncoder().encode([holder, holder])
        #expect(data.map { String(format: "%02x", $0) }.joined() == Self.expected)
        let back = try GraphArchiveDecoder().decode([PlacedHolder].self, from: data)
        #expect(back.count == 2 && back[0] === back[1])
        let decoded = back[0]
        #expect(decoded.inner.name == "inner" && decoded.leaves.map(\.color) == [2, 7, 300] && decoded.base.color == 4)
        #expect(decoded.leaves[1] === decoded.shared)
        let chain = decoded.chain
        #expect(chain.value == 1 && chain.next?.value == 2 && chain.next?.next?.value == 3)
        #expect(chain.next?.next?.next == nil)
    }

    static let expected =
        "894752410d0a1a0a01000000040000000b010000000000000b0100000000000009000000000000000b00000000000000"
        + "ebe270fd3a97f19530ef2bf85b0c8af50d04726f6f7405696e6e6572066c656176657305737570657204686561640563"
        + "6861696e0576616c7565046e6578740e6b456e636f64654b65794e616d650f6b456e636f64654b6579436f6c6f720e6b"
        + "456e636f64654b65794461746506736861726564047461696c04000c506c61636564486f6c646572010a436f64696e67"
        + "4b6579730005436861696e0010436f6461626c654772696453746174650502010602020607030308090a010101000701"
        + "020304050b0c01000a021200004301420800014108010281614281640286736861726564478164028162112c01800285"
        + "696e6e6572418164028462617365448164040c0308060a030802020807846865616408020804847461696c"
}

/// Hands out its nested containers and super encoder first, writes to itself in between, and
/// meets new objects in each of them.
final class PlacedHolder: Codable {
    let inner: CodableGridState
    let leaves: [CodableGridState]
    let base: CodableGridState
    let chain: Chain
    let shared: CodableGridState

    init(shared: CodableGridState) {
        inner = CodableGridState(name: "inner", color: 1, date: "d")
        leaves = [
            CodableGridState(name: "a", color: 2, date: "d"), shared, CodableGridState(name: "b", color: 300, date: ""),
        ]
        base = CodableGridState(name: "base", color: 4, date: "d")
        chain = Chain(value: 1, next: Chain(value: 2, next: Chain(value: 3, next: nil)))
        self.shared = shared
    }

    enum CodingKeys: String, CodingKey { case head, inner, leaves, chain, shared, tail }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        var nested = container.nestedContainer(keyedBy: CodingKeys.self, forKey: .inner)
        var list = container.nestedUnkeyedContainer(forKey: .leaves)
        let superEncoder = container.superEncoder()
        try container.encode("head", forKey: .head)
        try container.encode(chain, forKey: .chain)
        for leaf in leaves { try list.encode(leaf) }
        try nested.encode(inner, forKey: .inner)
        var single = superEncoder.singleValueContainer()
        try single.encode(base)
        try container.encode(shared, forKey: .shared)
        try container.encode("tail", forKey: .tail)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        chain = try container.decode(Chain.self, forKey: .chain)
        inner = try container.nestedContainer(keyedBy: CodingKeys.self, forKey: .inner)
            .decode(CodableGridState.self, forKey: .inner)
        var list = try container.nestedUnkeyedContainer(forKey: .leaves)
        var leaves: [CodableGridState] = []
        while !list.isAtEnd { leaves.append(try list.decode(CodableGridState.self)) }
        self.leaves = leaves
        base = try container.superDecoder().singleValueContainer().decode(CodableGridState.self)
        shared = try container.decode(CodableGridState.self, forKey: .shared)
    }
}
