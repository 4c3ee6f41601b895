// Benchmarks/Graphs/GridStateGraph.swift - the showcase: the data source's array of grid states

import Foundation
import GraphArchive
import GridStore

/// `count` slots of grid states from ``GridStateGenerator``, a `sharedFraction` of them
/// repeating an earlier record: the same instance sits in several slots and must come back so.
final class GridStateGraph: BenchmarkGraph {
    static let name = "gridstate"
    static let summary = "grid-state array (shared slots keep identity)"
    static let recordName = "slot"
    static var peers: [any Peer<GridStateGraph>] {
        [GridStateKeyedPeer(), GridStateCodablePeer(format: .json), GridStateCodablePeer(format: .binaryPropertyList)]
    }
    static let inapplicablePeers: [InapplicablePeer] = []

    let states: [GridState]
    /// For each slot, the first slot that holds the same record: the identity pattern.
    let firstSlot: [Int32]
    let objectCount: Int

    init(count: Int, sharedFraction: Double, seed: UInt64) {
        states = GridStateGenerator(count: count, sharedFraction: sharedFraction, seed: seed).generate()
        var seen: [ObjectIdentifier: Int32] = [:]
        seen.reserveCapacity(count)
        var firstSlot: [Int32] = []
        firstSlot.reserveCapacity(count)
        for (slot, state) in states.enumerated() {
            let first = seen[ObjectIdentifier(state), default: Int32(slot)]
            seen[ObjectIdentifier(state)] = first
            firstSlot.append(first)
        }
        self.firstSlot = firstSlot
        objectCount = seen.count
    }

    var root: [GridState] { states }
    var recordCount: Int { states.count }

    func verify(_ decoded: [GridState]) throws {
        try verifySlots(decoded.count, record: { decoded[$0] }, identity: { ObjectIdentifier(decoded[$0]) })
    }

    /// Checks `count` decoded slots: the values in every slot and, given `identity`, that
    /// slots share one record exactly where the source's slots do.
    func verifySlots<Record: GridStateFields>(
        _ count: Int,
        record: (Int) -> Record,
        identity: ((Int) -> ObjectIdentifier)?
    ) throws {
        try expect(count == states.count, "\(count) slots decoded, expected \(states.count)")
        var distinct = Set<ObjectIdentifier>()
        if identity != nil { distinct.reserveCapacity(objectCount) }
        for slot in 0..<count {
            let first = Int(firstSlot[slot])
            if let identity, first != slot {
                // A shared slot: the same instance as its first slot, whose values are checked.
                try expect(identity(slot) == identity(first), "slot \(slot) lost its identity with slot \(first)")
                continue
            }
            let decoded = record(slot)
            let source = states[slot]
            try expect(
                decoded.name == source.name && decoded.color == source.color && decoded.date == source.date,
                "slot \(slot) decoded with other values"
            )
            if let identity {
                try expect(distinct.insert(identity(slot)).inserted, "slot \(slot) shares a record it should not")
            }
        }
    }

    func touchEveryField() -> Int {
        var sum = 0
        for state in states {
            sum &+= state.name.utf8.count &+ state.color &+ state.date.utf8.count
        }
        return sum
    }

    /// Distinct records' strings in one UTF-8 buffer (as an archive holds them), their colors,
    /// and which record each slot holds.
    struct Parts {
        var utf8: [UInt8] = []
        var nameEnds: [Int] = []
        var dateEnds: [Int] = []
        var colors: [Int] = []
        var slotRecords: [Int32] = []
    }

    func parts() -> Parts {
        var parts = Parts()
        var recordOfFirstSlot: [Int32: Int32] = [:]
        for (slot, state) in states.enumerated() {
            let first = firstSlot[slot]
            if let record = recordOfFirstSlot[first] {
                parts.slotRecords.append(record)
                continue
            }
            let record = Int32(parts.colors.count)
            recordOfFirstSlot[first] = record
            parts.slotRecords.append(record)
            parts.utf8 += state.name.utf8
            parts.nameEnds.append(parts.utf8.count)
            parts.utf8 += state.date.utf8
            parts.dateEnds.append(parts.utf8.count)
            parts.colors.append(state.color)
        }
        return parts
    }

    /// Builds the slots in order: a record the first time a slot holds it, the same instance
    /// again after. No second array of records: holding one would cost a retain per record and
    /// a release, each a cache miss on a large graph, that a decoder need not pay.
    static func assemble(_ parts: Parts) -> [GridState] {
        var slots: [GridState] = []
        slots.reserveCapacity(parts.slotRecords.count)
        // Records are numbered in the order of their first slot.
        var firstSlotOfRecord: [Int] = []
        firstSlotOfRecord.reserveCapacity(parts.colors.count)
        var start = 0
        for record in parts.slotRecords {
            let record = Int(record)
            guard record == firstSlotOfRecord.count else {
                slots.append(slots[firstSlotOfRecord[record]])
                continue
            }
            let nameEnd = parts.nameEnds[record]
            let dateEnd = parts.dateEnds[record]
            firstSlotOfRecord.append(slots.count)
            slots.append(
                GridState(
                    name: String(decoding: parts.utf8[start..<nameEnd], as: UTF8.self),
                    color: parts.colors[record],
                    date: String(decoding: parts.utf8[nameEnd..<dateEnd], as: UTF8.self)
                )
            )
            start = dateEnd
        }
        return slots
    }
}

/// What the slot check reads, from gridstore's records and from each peer's.
protocol GridStateFields {
    var name: String { get }
    var color: Int { get }
    var date: String { get }
}

extension GridState: GridStateFields {}

// MARK: - NSKeyedArchiver

/// The seed app's model object: `NSObject, NSCoding`, with the app's keys.
final class GridStateObject: NSObject, NSCoding, GridStateFields {
    let name: String
    let color: Int
    let date: String

    init(_ state: GridState) {
        name = state.name
        color = state.color
        date = state.date
    }

    func encode(with coder: NSCoder) {
        coder.encode(name, forKey: GridState.Key.name)
        coder.encode(color, forKey: GridState.Key.color)
        coder.encode(date, forKey: GridState.Key.date)
    }

    init?(coder: NSCoder) {
        guard let name = coder.decodeObject(forKey: GridState.Key.name) as? String,
            let date = coder.decodeObject(forKey: GridState.Key.date) as? String
        else { return nil }
        self.name = name
        self.color = coder.decodeInteger(forKey: GridState.Key.color)
        self.date = date
    }
}

/// The array archived as an `NSArray` of `GridStateObject`s; shared slots keep identity.
struct GridStateKeyedPeer: Peer {
    var encoderName: String { "NSKeyedArchiver" }
    var decoderName: String { "NSKeyedUnarchiver" }
    var group: String { "nskeyed" }
    var note: String? { "identity kept" }

    func model(of graph: GridStateGraph) -> [GridStateObject] {
        var objects: [ObjectIdentifier: GridStateObject] = [:]
        return graph.states.map { state in
            if let object = objects[ObjectIdentifier(state)] { return object }
            let object = GridStateObject(state)
            objects[ObjectIdentifier(state)] = object
            return object
        }
    }

    func encode(_ model: [GridStateObject]) throws -> Data {
        try KeyedArchiving.archive(NSArray(array: model))
    }

    func decode(_ data: Data) throws -> [GridStateObject] {
        try KeyedArchiving.unarchive(data, as: [GridStateObject].self)
    }

    func verify(_ decoded: [GridStateObject], against graph: GridStateGraph) throws {
        try graph.verifySlots(decoded.count, record: { decoded[$0] }, identity: { ObjectIdentifier(decoded[$0]) })
    }
}

// MARK: - Codable

/// A grid state as a Codable value: what JSON and property lists can hold.
struct GridStateRecord: Codable, GridStateFields {
    var name: String
    var color: Int
    var date: String
}

/// The array as `[GridStateRecord]`: Codable has no references, so a shared record is written
/// and read once per slot and comes back as separate values.
struct GridStateCodablePeer: Peer {
    var format: CodableFormat

    var encoderName: String { format.encoderName }
    var decoderName: String { format.decoderName }
    var group: String { format.group }
    var note: String? { "no identity: shared records written once per slot" }

    func model(of graph: GridStateGraph) -> [GridStateRecord] {
        graph.states.map { GridStateRecord(name: $0.name, color: $0.color, date: $0.date) }
    }

    func encode(_ model: [GridStateRecord]) throws -> Data {
        try format.encode(model)
    }

    func decode(_ data: Data) throws -> [GridStateRecord] {
        try format.decode([GridStateRecord].self, from: data)
    }

    func verify(_ decoded: [GridStateRecord], against graph: GridStateGraph) throws {
        try graph.verifySlots(decoded.count, record: { decoded[$0] }, identity: nil)
    }

    func isSameArchive(_ archive: Data, as reference: Data) -> Bool {
        format.isSameArchive(archive, as: reference)
    }
}
