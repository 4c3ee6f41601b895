// Benchmarks/Graphs/CodableGridStateWorkload.swift - the Codable bridge against JSON and property lists

import Foundation
import GraphArchive
import GridStore

/// The grid-state model as users write it when they do not hand-code archiving: a `Codable`
/// class. The same instances sit in several slots, as in the grid-state workload.
final class GridStateModel: Codable, GridStateFields {
    let name: String
    let color: Int
    let date: String

    init(name: String, color: Int, date: String) {
        self.name = name
        self.color = color
        self.date = date
    }
}

/// The grid-state graph (same generator, N, shared fraction and seed as ``GridStateGraph``) as
/// `[GridStateModel]`, archived by ``GraphArchiveEncoder``/``GraphArchiveDecoder`` and by
/// `JSONEncoder`/`JSONDecoder` and `PropertyListEncoder`/`Decoder` (binary), all three on the
/// very same model in the same rounds. gridstore's round trips are checked for identity too;
/// the peers cannot keep it, and write a shared record once per slot.
///
/// The peers scale down under `--budget` like every peer, labelled as such: JSONEncoder's and
/// JSONDecoder's cost per record is the same from 200,000 to 1,000,000 records within the spread
/// of runs at one size, so a peer timed at a smaller N is compared per record.
final class CodableGridStateWorkload: Workload {
    static let name = "codable"
    let settings: Settings
    private let inputs = SharedInputs()

    init(settings: Settings) {
        self.settings = settings
    }

    var name: String { Self.name }
    var recordName: String { GridStateGraph.recordName }
    var recordCount: Int { settings.count }

    var summary: String {
        "grid-state array as a Codable class (GraphArchiveEncoder/Decoder keep shared slots' identity): "
            + "\(recordCount.grouped) slots, \(graph(recordCount).objectCount.grouped) objects"
    }

    func cases() -> [Case] {
        [
            makeCase(Self.bridgeSubject(.encode), "gridstore", .gridstore, .encode, note: "identity kept") {
                count in
                let graph = self.graph(count)
                let model = self.model(count)
                return Self.encodeTrial(reference: try self.archive(count)) {
                    try GraphArchiveEncoder().encode(model)
                } verify: {
                    try self.verifyArchive($0, of: graph)
                }
            },
            makeCase(Self.bridgeSubject(.decode), "gridstore", .gridstore, .decode, note: "identity kept") {
                count in
                let graph = self.graph(count)
                let archive = try self.archive(count)
                return Self.decodeTrial(archive: archive) {
                    try GraphArchiveDecoder().decode([GridStateModel].self, from: archive)
                } verify: {
                    try Self.verify($0, against: graph)
                }
            },
        ] + nativeCases() + peerCases(.json) + peerCases(.binaryPropertyList)
    }

    // MARK: - The native path

    /// The subject of the bridge's `operation` row (encode or decode).
    static func bridgeSubject(_ operation: OperationKind) -> String {
        operation == .encode ? "GraphArchiveEncoder" : "GraphArchiveDecoder"
    }

    /// The subject of the rows that time the native path on the same graph.
    static let nativeSubject = "gridstore (native)"

    /// `GraphArchiver`/`GraphUnarchiver` on the grid states the models were made from, in the
    /// bridge's own rounds: the bridge is held to these rows, not to the grid-state workload's,
    /// which ran minutes earlier on another heap (see *Method* in docs/BENCHMARKS.md).
    private func nativeCases() -> [Case] {
        let note = "GraphArchiver on the same grid states"
        let encode = makeCase(Self.nativeSubject, "gridstore", .reference, .encode, note: note) { count in
            let graph = self.graph(count)
            return Self.encodeTrial(reference: try self.nativeArchive(count)) {
                try GraphArchiver.archivedData(withRootObject: graph.root)
            } verify: {
                try graph.verify(GraphUnarchiver.unarchivedObject(ofType: [GridState].self, from: $0))
            }
        }
        let decode = makeCase(Self.nativeSubject, "gridstore", .reference, .decode, note: note) { count in
            let graph = self.graph(count)
            let archive = try self.nativeArchive(count)
            return Self.decodeTrial(archive: archive) {
                try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, from: archive)
            } verify: {
                try graph.verify($0)
            }
        }
        return [encode, decode]
    }

    /// gridstore's encode of the graph: the bytes are `reference` (made by this very call, so
    /// no warm-up is needed), or else must decode to the graph (`verify`).
    private static func encodeTrial(
        reference: Data,
        _ encode: @escaping () throws -> Data,
        verify: @escaping (Data) throws -> Void
    ) -> Trial {
        var output: Data?
        return Trial(
            bytes: reference.count,
            isWarmedUp: true,
            run: { output = try encode() },
            check: {
                defer { output = nil }
                guard let bytes = output else { throw VerificationError("no archive was produced") }
                if bytes != reference { try verify(bytes) }
            }
        )
    }

    /// gridstore's decode of `archive` (checked by decoding it already, so no warm-up is needed).
    private static func decodeTrial<Decoded>(
        archive: Data,
        _ decode: @escaping () throws -> Decoded,
        verify: @escaping (Decoded) throws -> Void
    ) -> Trial {
        var decoded: Decoded?
        return Trial(
            bytes: archive.count,
            isWarmedUp: true,
            run: { decoded = try decode() },
            check: {
                defer { decoded = nil }
                guard let decoded else { throw VerificationError("nothing was decoded") }
                try verify(decoded)
            }
        )
    }

    /// The native archive of the grid states, made once and checked by decoding it.
    private func nativeArchive(_ count: Int) throws -> Data {
        try inputs.value("native archive/\(count)") {
            let graph = graph(count)
            let data = try GraphArchiver.archivedData(withRootObject: graph.root)
            try graph.verify(GraphUnarchiver.unarchivedObject(ofType: [GridState].self, from: data))
            return data
        }
    }

    // MARK: - Shared setup

    func graph(_ count: Int) -> GridStateGraph {
        inputs.value("graph/\(count)") {
            GridStateGraph(count: count, sharedFraction: settings.sharedFraction, seed: settings.seed)
        }
    }

    /// The graph as models, one instance per distinct record: every archiver gets this array.
    func model(_ count: Int) -> [GridStateModel] {
        inputs.value("model/\(count)") {
            var instances: [ObjectIdentifier: GridStateModel] = [:]
            return graph(count).states.map { state in
                if let instance = instances[ObjectIdentifier(state)] { return instance }
                let instance = GridStateModel(name: state.name, color: state.color, date: state.date)
                instances[ObjectIdentifier(state)] = instance
                return instance
            }
        }
    }

    /// ``GraphArchiveEncoder``'s archive of the model, made once and checked by decoding it.
    func archive(_ count: Int) throws -> Data {
        try inputs.value("archive/\(count)") {
            let data = try GraphArchiveEncoder().encode(model(count))
            try verifyArchive(data, of: graph(count))
            return data
        }
    }

    /// `format`'s archive of the model, checked by decoding it: made once, shared by the
    /// format's encode and decode rows and their pilot runs.
    private func peerInput(_ format: CodableFormat, _ count: Int) throws -> PeerInput<[GridStateModel]> {
        let model = model(count)
        let (archive, seconds) = try inputs.entry("\(format.encoderName)/\(count)") {
            let archive = try format.encode(model)
            try Self.verifyPeer(try format.decode([GridStateModel].self, from: archive), against: graph(count))
            return archive
        }
        return PeerInput(model: model, archive: archive, seconds: seconds)
    }

    private func verifyArchive(_ data: Data, of graph: GridStateGraph) throws {
        try Self.verify(
            try GraphArchiveDecoder().decode([GridStateModel].self, from: data),
            against: graph
        )
    }

    /// Counts, every slot's values, and identity: shared slots hold one instance, others not.
    static func verify(_ decoded: [GridStateModel], against graph: GridStateGraph) throws {
        try graph.verifySlots(
            decoded.count,
            record: { decoded[$0] },
            identity: { ObjectIdentifier(decoded[$0]) }
        )
    }

    private func makeCase(
        _ subject: String,
        _ group: String,
        _ role: Role,
        _ operation: OperationKind,
        note: String,
        prepare: @escaping (Int) throws -> Trial
    ) -> Case {
        var made = Case(
            workload: name,
            subject: subject,
            group: group,
            role: role,
            operation: operation,
            compression: "none",
            records: recordCount,
            prepare: prepare
        )
        made.note = note
        return made
    }

    // MARK: - Peers

    private func peerCases(_ format: CodableFormat) -> [Case] {
        let note = "no identity: shared records written once per slot"
        let encode = makeCase(format.encoderName, format.group, .peer, .encode, note: note) { count in
            let graph = self.graph(count)
            let input = try self.peerInput(format, count)
            var output: Data?
            return input.trial(
                run: { output = try format.encode(input.model) },
                check: {
                    defer { output = nil }
                    guard let bytes = output else { throw VerificationError("no archive was produced") }
                    if !format.isSameArchive(bytes, as: input.archive) {
                        try Self.verifyPeer(try format.decode([GridStateModel].self, from: bytes), against: graph)
                    }
                }
            )
        }
        let decode = makeCase(format.decoderName, format.group, .peer, .decode, note: note) { count in
            let graph = self.graph(count)
            let input = try self.peerInput(format, count)
            var decoded: [GridStateModel]?
            return input.trial(
                run: { decoded = try format.decode([GridStateModel].self, from: input.archive) },
                check: {
                    defer { decoded = nil }
                    guard let models = decoded else { throw VerificationError("nothing was decoded") }
                    try Self.verifyPeer(models, against: graph)
                }
            )
        }
        return [encode, decode].map {
            var peerCase = $0
            peerCase.scalesDown = true
            return peerCase
        }
    }

    /// Counts and every slot's values; no identity, which JSON and property lists cannot keep.
    static func verifyPeer(_ decoded: [GridStateModel], against graph: GridStateGraph) throws {
        try graph.verifySlots(decoded.count, record: { decoded[$0] }, identity: nil)
    }
}
