// Tests/GraphArchiveTests/Codable/CodableObjectLifetimeTests.swift - decoded objects live exactly as long as their holders

import Foundation
import Testing

@testable import GraphArchive

/// The Codable decoder's object table lets the root array take its references to the objects
/// built as that array's elements (`ObjectSlots.handOver`), and keeps its own reference to
/// every other object. These tests check that every object is released exactly once, whether
/// the decode returns or throws: a leak leaves an object counted alive, an extra release
/// crashes (and AddressSanitizer, which CI runs over every test, reports it). Arrays that user
/// code receives, and may drop while the decode goes on, must not take the table's references.
@Suite("Codable decoded object lifetime")
struct CodableObjectLifetimeTests {
    /// 300 slots over 120 records, each record's friend the next record, in a scattered order.
    static func sharedSlots() -> [LifetimeRecord] {
        let records = (0..<120).map { LifetimeRecord(color: $0) }
        for (index, record) in records.enumerated() { record.friend = records[(index + 1) % 120] }
        records[119].friend = nil
        return (0..<300).map { records[($0 * 7) % 120] }
    }

    static func decoder(counting live: LiveObjects, failingAt color: Int? = nil) -> GraphArchiveDecoder {
        var decoder = GraphArchiveDecoder()
        decoder.userInfo[LiveObjects.key] = live
        if let color { decoder.userInfo[LifetimeRecord.failKey] = color }
        return decoder
    }

    @Test func rootArrayOwnsItsObjects() throws {
        let slots = Self.sharedSlots()
        let data = try GraphArchiveEncoder().encode(slots)
        let live = LiveObjects()
        var back: [LifetimeRecord]? = try Self.decoder(counting: live).decode([LifetimeRecord].self, from: data)
        let decoded = back!
        for slot in 0..<300 {
            #expect(decoded[slot].color == slots[slot].color)
            #expect(decoded[slot].friend?.color == slots[slot].friend?.color)
            if slot + 120 < 300 { #expect(decoded[slot] === decoded[slot + 120]) }
        }
        #expect(Set(decoded.map(ObjectIdentifier.init)).count == 120)
        #expect(live.count == 120)
        _ = consume decoded
        back = nil
        #expect(live.count == 0, "decoded records outlived their array")
    }

    /// Objects built inside another's initializer (here every record's friend comes first in a
    /// reversed array) belong to the table, and are released with it.
    @Test func objectsBuiltInsideElementsAreReleased() throws {
        let slots = Self.sharedSlots()
        let data = try GraphArchiveEncoder().encode(Array(slots.reversed()))
        let live = LiveObjects()
        var back: [LifetimeRecord]? = try Self.decoder(counting: live).decode([LifetimeRecord].self, from: data)
        #expect(back!.map(\.color) == slots.reversed().map(\.color))
        #expect(live.count == 120)
        back = nil
        #expect(live.count == 0, "decoded records outlived their array")
    }

    /// An element's initializer that throws ends the decode: the elements built before it, the
    /// table's objects and the one being built are all released, once.
    @Test func failedRootArrayReleasesEveryObject() throws {
        let data = try GraphArchiveEncoder().encode(Self.sharedSlots())
        for failing in [0, 7, 63, 119] {
            let live = LiveObjects()
            #expect(throws: LifetimeRecord.Failure.self) {
                _ = try Self.decoder(counting: live, failingAt: failing).decode([LifetimeRecord].self, from: data)
            }
            #expect(live.count == 0, "records outlived a failed decode (failing at \(failing))")
        }
    }

    /// A truncated archive throws, however far its decode got; nothing is released twice or kept.
    @Test func truncatedRootArrayReleasesEveryObject() throws {
        let data = try GraphArchiveEncoder().encode(Self.sharedSlots())
        let live = LiveObjects()
        for length in stride(from: data.count - 1, to: 0, by: -max(1, data.count / 40)) {
            _ = try? Self.decoder(counting: live).decode([LifetimeRecord].self, from: data.prefix(length))
            #expect(live.count == 0, "records outlived a decode of \(length) bytes")
        }
    }

    /// An array an initializer decodes is its to drop: a later reference to one of its objects
    /// still finds the object, from a struct or from a class at the root.
    @Test func arraysInitializersReceiveKeepTheirObjectsInTheTable() throws {
        let records = (0..<20).map { LifetimeRecord(color: $0) }
        let data = try GraphArchiveEncoder().encode(DroppedList(list: records, again: records[5]))
        let live = LiveObjects()
        var back: DroppedList? = try Self.decoder(counting: live).decode(DroppedList.self, from: data)
        #expect(back?.again.color == 5)
        #expect(live.count == 1)
        back = nil
        #expect(live.count == 0)

        let ownerData = try GraphArchiveEncoder().encode(DroppedListOwner(list: records, again: records[5]))
        let owner = try Self.decoder(counting: live).decode(DroppedListOwner.self, from: ownerData)
        #expect(owner.again.color == 5)
        #expect(live.count == 2)  // the owner and the record
        _ = consume owner
        #expect(live.count == 0)
    }

    /// A value decoded later is handed to user code, which may drop it: an array decoded later
    /// at the top keeps its objects in the table for the requests after it.
    @Test func arraysDecodedLaterKeepTheirObjectsInTheTable() throws {
        let records = (0..<20).map { LifetimeRecord(color: $0) }
        let data = try GraphArchiveEncoder().encode(LaterDroppedList(list: records, again: records[9]))
        let live = LiveObjects()
        var back: LaterDroppedList? = try Self.decoder(counting: live).decode(LaterDroppedList.self, from: data)
        #expect(back?.again?.color == 9)
        #expect(live.count == 1)
        back = nil
        #expect(live.count == 0)
    }

    /// A keyed container a value keeps past the decode only lends its place (a kept one's box
    /// copies nothing that counts): the place, with the decoder and its table, stays as long
    /// as the container is held, and goes at the next decode once it is dropped.
    @Test func aContainerKeptPastTheDecodeKeepsItsDecoderUntilDropped() throws {
        let data = try GraphArchiveEncoder().encode(ContainerKeeper(value: 5))
        weak var built: ContainerKeeper?
        var kept: KeyedDecodingContainer<ContainerKeeper.CodingKeys>?
        do {
            let back = try GraphArchiveDecoder().decode(ContainerKeeper.self, from: data)
            #expect(back.value == 5)
            kept = back.container
            back.container = nil
            built = back
        }
        // The decoder's table holds the object: the decoder lives on for the container.
        #expect(built != nil)
        #expect(throws: DecodingError.self) { _ = try kept?.decode(Int.self, forKey: .value) }
        kept = nil
        // Any later decode lets go of places whose containers nobody holds.
        #expect(try GraphArchiveDecoder().decode(Int.self, from: GraphArchiveEncoder().encode(1)) == 1)
        #expect(built == nil, "a dropped container kept its decoder")
    }
}

/// Keeps the keyed container its initializer reads from.
final class ContainerKeeper: Codable {
    let value: Int
    var container: KeyedDecodingContainer<CodingKeys>?

    enum CodingKeys: String, CodingKey { case value }

    init(value: Int) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(Int.self, forKey: .value)
        self.container = container
    }
}

/// How many `LifetimeRecord`s a decode has alive.
final class LiveObjects: Sendable {
    static let key = CodingUserInfoKey(rawValue: "liveObjects")!
    private let live = Locked(0)

    var count: Int { live.withLock { $0 } }
    func add(_ change: Int) { live.withLock { $0 += change } }
}

/// A record that counts itself in the decoder's `LiveObjects`, and whose initializer throws
/// for the color under `failKey`.
final class LifetimeRecord: Codable {
    static let failKey = CodingUserInfoKey(rawValue: "failingColor")!
    struct Failure: Error {}

    let color: Int
    var friend: LifetimeRecord?
    private let live: LiveObjects?

    init(color: Int) {
        self.color = color
        live = nil
    }

    enum CodingKeys: String, CodingKey { case color, friend }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(color, forKey: .color)
        try container.encode(friend, forKey: .friend)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        color = try container.decode(Int.self, forKey: .color)
        if decoder.userInfo[Self.failKey] as? Int == color { throw Failure() }
        friend = try container.decode(LifetimeRecord?.self, forKey: .friend)
        live = decoder.userInfo[LiveObjects.key] as? LiveObjects
        live?.add(1)
    }

    deinit { live?.add(-1) }
}

/// Decodes an array of records, drops it, then a record the array held.
struct DroppedList: Codable {
    let again: LifetimeRecord
    private let list: [LifetimeRecord]

    init(list: [LifetimeRecord], again: LifetimeRecord) {
        self.list = list
        self.again = again
    }

    enum CodingKeys: String, CodingKey { case list, again }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = try container.decode([LifetimeRecord].self, forKey: .list)
        list = []
        again = try container.decode(LifetimeRecord.self, forKey: .again)
    }
}

/// `DroppedList` as a class, built at the root.
final class DroppedListOwner: Codable {
    let again: LifetimeRecord
    private let list: [LifetimeRecord]
    private let live: LiveObjects?

    init(list: [LifetimeRecord], again: LifetimeRecord) {
        self.list = list
        self.again = again
        live = nil
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: DroppedList.CodingKeys.self)
        try container.encode(list, forKey: .list)
        try container.encode(again, forKey: .again)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DroppedList.CodingKeys.self)
        _ = try container.decode([LifetimeRecord].self, forKey: .list)
        list = []
        again = try container.decode(LifetimeRecord.self, forKey: .again)
        live = decoder.userInfo[LiveObjects.key] as? LiveObjects
        live?.add(1)
    }

    deinit { live?.add(-1) }
}

/// Decodes an array of records later and drops it, then, later still, a record it held.
final class LaterDroppedList: Codable {
    var again: LifetimeRecord?
    private let list: [LifetimeRecord]
    private let kept: LifetimeRecord?

    init(list: [LifetimeRecord], again: LifetimeRecord) {
        self.list = list
        kept = again
    }

    enum CodingKeys: String, CodingKey { case list, again }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeLater(list, forKey: .list)
        try container.encodeLater(kept, forKey: .again)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        list = []
        kept = nil
        try container.decodeLater([LifetimeRecord].self, forKey: .list) { _ in }
        try container.decodeLater(LifetimeRecord?.self, forKey: .again) { [unowned self] in self.again = $0 }
    }
}
