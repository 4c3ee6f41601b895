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
/// The peers scale down under `--budget` like every peer, labelled as such. Until the
/// suite-duration work the JSON peers ran at the full N, since scaling had seemed to flatter
/// JSONDecoder (decode against it scaled from 100,000: 3.7x; at equal N, minutes apart: 5.9x, on
/// a loaded machine); back-to-back runs at a load under 1 then measured the same cost per record
/// at 200,000, 500,000 and 1,000,000 records within the spread of runs at one size (JSONDecoder
/// 3.5, 3.1 and 3.2–4.6 µs, JSONEncoder 5.8, 4.2 and 4.3–4.6 µs), and the full N took 40 s of a
/// five-minute suite.
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
            makeCase("GraphArchiveEncoder", "gridstore", .gridstore, .encode, note: "identity kept") {
                count in
                let graph = self.graph(count)
                let model = self.model(count)
                let reference = try self.archive(count)
                var output: Data?
                return Trial(
                    bytes: reference.count,
                    isWarmedUp: true,  // making the reference archive was this very call
                    run: { output = try GraphArchiveEncoder().encode(model) },
                    check: {
                        defer { output = nil }
                        guard let bytes = output else { throw VerificationError("no archive was produced") }
                        if bytes != reference { try self.verifyArchive(bytes, of: graph) }
                    }
                )
            },
            makeCase("GraphArchiveDecoder", "gridstore", .gridstore, .decode, note: "identity kept") {
                count in
                let graph = self.graph(count)
                let archive = try self.archive(count)
                var decoded: [GridStateModel]?
                return Trial(
                    bytes: archive.count,
                    isWarmedUp: true,  // checking the reference archive was this very call
                    run: { decoded = try GraphArchiveDecoder().decode([GridStateModel].self, from: archive) },
                    check: {
                        defer { decoded = nil }
                        guard let models = decoded else { throw VerificationError("nothing was decoded") }
                        try Self.verify(models, against: graph)
                    }
                )
            },
        ] + peerCases(.json) + peerCases(.binaryPropertyList)
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
