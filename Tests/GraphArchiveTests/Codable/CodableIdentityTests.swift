// Tests/GraphArchiveTests/Codable/CodableIdentityTests.swift - shared instances, cycles, subclasses, the keyed protocol

import Foundation
import Testing

@testable import GraphArchive

@Suite("Codable identity")
struct CodableIdentityTests {
    @Test func gridStateSlotsKeepTheirSharing() throws {
        // The showcase: 1,000 slots, a quarter of them repeating earlier records.
        var random = SystemRandomNumberGenerator()
        var states: [CodableGridState] = (0..<750).map {
            CodableGridState(name: "state \($0)", color: $0 * 31, date: "2024-05-0\($0 % 9 + 1)")
        }
        for _ in 0..<250 { states.append(states[Int.random(in: 0..<750, using: &random)]) }
        states.shuffle(using: &random)
        let data = try GraphArchiveEncoder().encode(states)
        let info = try GraphUnarchiver.verify(data)
        #expect(info.objectCount == 750)
        #expect(info.referenceCount == 1000)
        let back = try GraphArchiveDecoder().decode([CodableGridState].self, from: data)
        #expect(back.map(\.name) == states.map(\.name))
        #expect(back.map(\.color) == states.map(\.color))
        // Slot i and j hold one instance after decoding exactly when they did before.
        var firstSlot: [ObjectIdentifier: Int] = [:]
        for (slot, state) in states.enumerated() {
            if let first = firstSlot[ObjectIdentifier(state)] {
                #expect(back[slot] === back[first])
            } else {
                firstSlot[ObjectIdentifier(state)] = slot
            }
        }
        #expect(Set(back.map(ObjectIdentifier.init)).count == 750)
    }

    @Test func oneInstanceFromEveryKindOfPlace() throws {
        let shared = CodableGridState(name: "shared", color: 1, date: "d")
        let twin = CodableGridState(name: "shared", color: 1, date: "d")  // equal, but another instance
        let holder = Holder(child: shared)
        let value = Places(
            direct: shared,
            optional: shared,
            list: [twin, shared],
            nested: [[shared]],
            byName: ["k": shared],
            inStruct: Wrapper(state: shared),
            holder: holder,
            twin: twin,
            holderAgain: holder
        )
        let back = try GraphArchiveDecoder().decode(Places.self, from: GraphArchiveEncoder().encode(value))
        let one = back.direct
        #expect(back.optional === one)
        #expect(back.list[1] === one && back.nested[0][0] === one && back.byName["k"] === one)
        #expect(back.inStruct.state === one && back.holder.child === one)
        #expect(back.holderAgain === back.holder)
        #expect(back.twin === back.list[0] && back.twin !== one)
    }

    @Test func valuesStayValues() throws {
        let point = Point(x: 1, y: 2)
        let data = try GraphArchiveEncoder().encode([point, point])
        #expect(try GraphUnarchiver.archiveInfo(from: data).objectCount == 0)
        var back = try GraphArchiveDecoder().decode([Point].self, from: data)
        back[0].x = 10
        #expect(back[1].x == 1)
    }

    @Test func deepAcyclicChainsWithinTheDepthLimit() throws {
        var head: Chain? = nil
        for value in 0..<100 { head = Chain(value: value, next: head) }
        let back = try GraphArchiveDecoder().decode(Chain.self, from: GraphArchiveEncoder().encode(head!))
        var count = 0
        var walk: Chain? = back
        while let link = walk {
            count += 1
            walk = link.next
        }
        #expect(count == 100)
        #expect(back.value == 99)
    }

    @Test func chainsDeeperThanTheLimitAreAnErrorNotACrash() throws {
        // Each object met is encoded where it is met, so a chain nests one level per link.
        var long: Chain? = nil
        for value in 0..<2_000 { long = Chain(value: value, next: long) }
        #expect {
            _ = try GraphArchiveEncoder().encode(long!)
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return (context.underlyingError as? GraphArchiveError)?.code == .invalidValue
                && context.codingPath.count > 500
        }
        dismantle(long)
        // Decoding recurses the same way; a lower limit turns the archive away.
        var head: Chain? = nil
        for value in 0..<300 { head = Chain(value: value, next: head) }
        let data = try GraphArchiveEncoder().encode(head!)
        var strict = GraphUnarchiver.Options()
        strict.maximumDepth = 100
        #expect {
            _ = try GraphArchiveDecoder(options: strict).decode(Chain.self, from: data)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return (context.underlyingError as? GraphArchiveError)?.code == .limitExceeded
        }
        let back = try GraphArchiveDecoder().decode(Chain.self, from: data)
        #expect(back.value == 299)
        dismantle(head)
        dismantle(back)
    }

    @Test func selfReferenceIsAClearEncodingError() throws {
        let node = CyclicNode(label: "a")
        node.next = node
        #expect {
            _ = try GraphArchiveEncoder().encode(node)
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["next"] && context.debugDescription.contains("cycle")
        }
        node.next = nil
    }

    @Test func longerCycleNamesBothPaths() throws {
        let nodes = (0..<3).map { CyclicNode(label: "\($0)") }
        for index in nodes.indices { nodes[index].next = nodes[(index + 1) % 3] }
        #expect {
            _ = try GraphArchiveEncoder().encode(Ring(start: nodes[0]))
        } throws: { error in
            guard case EncodingError.invalidValue(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["start", "next", "next", "next"]
                && context.debugDescription.contains("already being encoded at start")
        }
        for node in nodes { node.next = nil }
    }

    @Test func subclassWhereABaseClassIsExpected() throws {
        let pet = Pet(animal: Dog(name: "Rex", legs: 3, tricks: ["roll"]))
        let data = try GraphArchiveEncoder().encode(pet)
        // Not told about Dog: a clear error naming the class, not a silently sliced Animal.
        #expect {
            _ = try GraphArchiveDecoder().decode(Pet.self, from: data)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.codingPath.map(\.stringValue) == ["animal"] && context.debugDescription.contains("Dog")
        }
        // Registered: the subclass comes back, with its own fields.
        var decoder = GraphArchiveDecoder()
        decoder.register(Dog.self)
        let back = try decoder.decode(Pet.self, from: data)
        let dog = try #require(back.animal as? Dog)
        #expect(dog.name == "Rex" && dog.legs == 3 && dog.tricks == ["roll"])
    }

    @Test func subclassSharedBetweenBaseAndSubclassTypedReferences() throws {
        let dog = Dog(name: "Rex", legs: 4, tricks: [])
        let data = try GraphArchiveEncoder().encode(Kennel(dog: dog, animal: dog))
        var decoder = GraphArchiveDecoder()
        decoder.register(Dog.self)
        let back = try decoder.decode(Kennel.self, from: data)
        #expect(back.animal === back.dog)
        // The other way around: the first reference asks for the subclass.
        let reversed = try decoder.decode(KennelReversed.self, from: data)
        #expect(reversed.animal === reversed.dog)
    }

    @Test func registeredNameReadsRenamedClasses() throws {
        let data = try GraphArchiveEncoder().encode([CodableGridState(name: "old", color: 1, date: "d")])
        #expect(throws: DecodingError.self) { _ = try GraphArchiveDecoder().decode([Renamed].self, from: data) }
        var decoder = GraphArchiveDecoder()
        decoder.register(Renamed.self, forName: "CodableGridState")
        #expect(try decoder.decode([Renamed].self, from: data)[0].name == "old")
    }

    @Test func keyedProtocolArchivesDecodeAsCodable() throws {
        // The engine's `Record` has the Codable grid state's keys; the registry maps the name.
        let shared = Record(name: "a", color: 1, date: "2024")
        let data = try GraphArchiver.archivedData(withRootObject: [
            shared, Record(name: "b", color: 2, date: "2025"), shared,
        ])
        var decoder = GraphArchiveDecoder()
        decoder.register(CodableGridState.self, forName: "Record")
        let back = try decoder.decode([CodableGridState].self, from: data)
        #expect(back.map(\.name) == ["a", "b", "a"])
        #expect(back[0] === back[2])
    }

    @Test func codableArchivesDecodeWithTheKeyedProtocol() throws {
        let shared = CodableGridState(name: "a", color: 1, date: "2024")
        let data = try GraphArchiveEncoder().encode([shared, shared])
        var registry = GraphTypeRegistry()
        registry.register(Record.self, forName: "CodableGridState")
        let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data, registry: registry)
        #expect(back.map(\.color) == [1, 1])
        #expect(back[0] === back[1])
    }

    @Test func engineCyclesAreADecodingErrorNotARecursion() throws {
        let ring = Node(1)
        ring.next = ring
        let data = try GraphArchiver.archivedData(withRootObject: ring)
        #expect {
            _ = try GraphArchiveDecoder().decode(KeyedInterop.Node.self, from: data)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return (context.underlyingError as? GraphArchiveError)?.code == .unresolvedCycle
        }
        ring.next = nil
    }
}

// MARK: - Models

final class Holder: Codable {
    var child: CodableGridState
    init(child: CodableGridState) { self.child = child }
}

struct Wrapper: Codable {
    var state: CodableGridState
}

struct Places: Codable {
    var direct: CodableGridState
    var optional: CodableGridState?
    var list: [CodableGridState]
    var nested: [[CodableGridState]]
    var byName: [String: CodableGridState]
    var inStruct: Wrapper
    var holder: Holder
    var twin: CodableGridState
    var holderAgain: Holder
}

final class Chain: Codable {
    let value: Int
    let next: Chain?
    init(value: Int, next: Chain?) {
        self.value = value
        self.next = next
    }
}

/// Releases a chain one link at a time: a recursive deinit of thousands of links would be deep.
func dismantle(_ head: Chain?) {
    var links: [Chain] = []
    var walk = head
    while let link = walk {
        links.append(link)
        walk = link.next
    }
    walk = nil
    while !links.isEmpty { links.removeLast() }
}

final class CyclicNode: Codable {
    var label: String
    var next: CyclicNode?
    init(label: String) { self.label = label }
}

struct Ring: Codable {
    var start: CyclicNode
}

struct Pet: Codable {
    var animal: Animal
}

struct Kennel: Codable {
    var dog: Dog
    var animal: Animal
}

struct KennelReversed: Codable {
    var animal: Animal
    var dog: Dog

    enum CodingKeys: CodingKey { case dog, animal }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        animal = try container.decode(Animal.self, forKey: .animal)
        dog = try container.decode(Dog.self, forKey: .dog)
    }
}

final class Renamed: Codable {
    var name: String
    enum CodingKeys: String, CodingKey { case name = "kEncodeKeyName" }
}

/// The Codable view of the keyed-protocol test `Node`: same archived name and keys.
enum KeyedInterop {
    final class Node: Decodable {
        var label: Int
        var next: Node?
    }
}
