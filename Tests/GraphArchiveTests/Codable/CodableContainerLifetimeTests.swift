// Tests/GraphArchiveTests/Codable/CodableContainerLifetimeTests.swift - keyed containers of every origin, kept or dropped

import Foundation
import Testing

@testable import GraphArchive

/// Keyed decoding containers of every origin: from `container(keyedBy:)`, nested containers,
/// super decoders' containers and those past the decoder's cache of containers. These tests
/// check that each reads its own value while the decode runs, refuses to read once its value is
/// decoded, and keeps its decoder alive exactly as long as something holds it (a freed place
/// would crash, which AddressSanitizer reports). They also check that an object whose
/// initializer threw is built again, not taken for one being built, when met again.
@Suite("Codable keyed container lifetime")
struct CodableContainerLifetimeTests {
    /// Decodes `root`'s archive with a collector, checks that every container kept refuses to
    /// read, and drops them. Returns how many were kept, whether the decoded root (which the
    /// decoder's table holds) was alive while they were, and whether it was released after.
    static func decodeKeeping<T: Codable & AnyObject>(_ root: T) throws -> (kept: Int, alive: Bool, released: Bool) {
        let data = try GraphArchiveEncoder().encode(root)
        let collector = ContainerCollector()
        var decoder = GraphArchiveDecoder()
        decoder.userInfo[ContainerCollector.key] = collector
        weak var built: T?
        do {
            built = try decoder.decode(T.self, from: data)
        }
        // The decoder's table holds the root: the decoder lives on for the containers.
        let alive = built != nil
        let kept = collector.containers.count
        for read in collector.containers {
            #expect(throws: DecodingError.self) { try read() }
        }
        collector.containers.removeAll()
        // Any later decode lets go of places whose containers nobody holds.
        #expect(try GraphArchiveDecoder().decode(Int.self, from: GraphArchiveEncoder().encode(1)) == 1)
        return (kept, alive, built == nil)
    }

    @Test func nestedAndSuperContainersKeptPastTheDecode() throws {
        let (kept, alive, released) = try Self.decodeKeeping(NestedContainerKeeper(value: 7))
        #expect(kept == 3)
        #expect(alive)
        #expect(released, "a dropped container kept its decoder")
    }

    @Test func containersPastTheCacheCapacityKeptPastTheDecode() throws {
        // Every level's container is alive while the levels below it decode: 40 at once.
        let depth = 40
        #expect(depth > CodableKeyedContainerCache.capacity)
        let (kept, alive, released) = try Self.decodeKeeping(ContainerChainHolder(depth: depth))
        #expect(kept == depth)
        #expect(alive)
        #expect(released, "a dropped container kept its decoder")
    }

    @Test func manyContainersPastTheCacheCapacityEachReadTheirOwnValue() throws {
        // 50 chains 30 deep: 700 containers past the capacity, most dropped as decoding goes on.
        let chains = (0..<50).map { ContainerChain(depth: 30, start: $0 * 100) }
        let back = try GraphArchiveDecoder().decode([ContainerChain].self, from: GraphArchiveEncoder().encode(chains))
        #expect(back == chains)
    }

    @Test func anObjectWhoseInitializerThrewIsBuiltAgainWhenReferencedAgain() throws {
        // The first reference fails (caught with `try?`); the second builds the same object.
        let shared = Flaky(value: 3)
        let data = try GraphArchiveEncoder().encode(FlakyPair(first: shared, second: shared))
        var decoder = GraphArchiveDecoder()
        decoder.userInfo[Flaky.failures] = FlakyFailures(1)
        let back = try decoder.decode(FlakyPair.self, from: data)
        #expect(back.first == nil)
        #expect(back.second?.value == 3)
    }
}

/// The containers a decode kept, each as a read that should now throw.
final class ContainerCollector: @unchecked Sendable {
    static let key = CodingUserInfoKey(rawValue: "containerCollector")!
    var containers: [() throws -> Void] = []

    static func keep<Key: CodingKey>(_ container: KeyedDecodingContainer<Key>, _ key: Key, in decoder: any Decoder) {
        guard let collector = decoder.userInfo[Self.key] as? ContainerCollector else { return }
        collector.containers.append { _ = try container.decode(Int.self, forKey: key) }
    }
}

/// Keeps a container of each other origin: nested under a key, nested in an unkeyed
/// container, and from a super decoder.
final class NestedContainerKeeper: Codable {
    let value: Int

    init(value: Int) { self.value = value }

    enum CodingKeys: String, CodingKey { case value, nested, list, parent }
    enum InnerKeys: String, CodingKey { case inner }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        var nested = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
        try nested.encode(value + 1, forKey: .inner)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        var element = list.nestedContainer(keyedBy: InnerKeys.self)
        try element.encode(value + 2, forKey: .inner)
        var parent = container.superEncoder(forKey: .parent).container(keyedBy: InnerKeys.self)
        try parent.encode(value + 3, forKey: .inner)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        let nested = try container.nestedContainer(keyedBy: InnerKeys.self, forKey: .nested)
        var list = try container.nestedUnkeyedContainer(forKey: .list)
        let element = try list.nestedContainer(keyedBy: InnerKeys.self)
        let parent = try container.superDecoder(forKey: .parent).container(keyedBy: InnerKeys.self)
        // Each reads its own value, whichever order they are read in.
        #expect(try parent.decode(Int.self, forKey: .inner) == value + 3)
        #expect(try nested.decode(Int.self, forKey: .inner) == value + 1)
        #expect(try element.decode(Int.self, forKey: .inner) == value + 2)
        for kept in [nested, element, parent] { ContainerCollector.keep(kept, .inner, in: decoder) }
    }
}

/// A chain of values, each level's container open while the levels below it decode.
struct ContainerChain: Codable, Equatable {
    let value: Int
    let next: [ContainerChain]

    init(depth: Int, start: Int = 0) {
        value = start + depth
        next = depth > 1 ? [ContainerChain(depth: depth - 1, start: start)] : []
    }

    enum CodingKeys: String, CodingKey { case value, next }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
        try container.encode(next, forKey: .next)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        next = try container.decode([ContainerChain].self, forKey: .next)
        // Read again after the levels below: the container still reads its own record.
        #expect(try container.decode(Int.self, forKey: .value) == value)
        ContainerCollector.keep(container, .value, in: decoder)
    }
}

/// An object holding a `ContainerChain` chain.
final class ContainerChainHolder: Codable {
    let chain: ContainerChain

    init(depth: Int) { chain = ContainerChain(depth: depth) }
}

/// How many builds of `Flaky` objects are left to fail.
final class FlakyFailures: @unchecked Sendable {
    var left: Int
    init(_ left: Int) { self.left = left }
}

/// An object whose initializer fails while the decoder's `FlakyFailures` has failures left.
final class Flaky: Codable {
    static let failures = CodingUserInfoKey(rawValue: "flakyFailures")!
    struct Failure: Error {}
    let value: Int

    init(value: Int) { self.value = value }

    enum CodingKeys: String, CodingKey { case value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        if let failures = decoder.userInfo[Self.failures] as? FlakyFailures, failures.left > 0 {
            failures.left -= 1
            throw Failure()
        }
    }
}

/// Two references to one `Flaky` object, the first allowed to fail.
final class FlakyPair: Codable {
    let first: Flaky?
    let second: Flaky?

    init(first: Flaky, second: Flaky) {
        self.first = first
        self.second = second
    }

    enum CodingKeys: String, CodingKey { case first, second }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        first = try? container.decode(Flaky.self, forKey: .first)
        second = try container.decode(Flaky.self, forKey: .second)
    }
}
