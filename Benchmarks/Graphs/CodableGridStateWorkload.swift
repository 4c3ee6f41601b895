// Benchmarks/Graphs/CodableGridStateWorkload.swift - issue 8: the Codable bridge against JSON and property lists

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
/// The peers run at the full N, not scaled down under `--budget` as elsewhere in the suite: the
/// issue's targets are ratios at N = 1,000,000 in one run, and scaling a peer up from the
/// 50,000–100,000 records the default budget allows assumes its cost is linear in N, which the
/// verdicts should not rest on. At N = 1,000,000 this workload takes 5–7 minutes here, mostly
/// `PropertyListEncoder`/`Decoder`.
final class CodableGridStateWorkload: Workload {
    static let name = "codable"
    let settings: Settings
    private var graphs: [Int: GridStateGraph] = [:]
    private var models: [Int: [GridStateModel]] = [:]
    private var archives: [Int: Data] = [:]

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
        if let graph = graphs[count] { return graph }
        let graph = GridStateGraph(
            count: count, sharedFraction: settings.sharedFraction, seed: settings.seed)
        graphs[count] = graph
        return graph
    }

    /// The graph as models, one instance per distinct record: every archiver gets this array.
    func model(_ count: Int) -> [GridStateModel] {
        if let model = models[count] { return model }
        var instances: [ObjectIdentifier: GridStateModel] = [:]
        let model = graph(count).states.map { state in
            if let instance = instances[ObjectIdentifier(state)] { return instance }
            let instance = GridStateModel(name: state.name, color: state.color, date: state.date)
            instances[ObjectIdentifier(state)] = instance
            return instance
        }
        models[count] = model
        return model
    }

    /// ``GraphArchiveEncoder``'s archive of the model, made once and checked by decoding it.
    func archive(_ count: Int) throws -> Data {
        if let data = archives[count] { return data }
        let data = try GraphArchiveEncoder().encode(model(count))
        try verifyArchive(data, of: graph(count))
        archives[count] = data
        return data
    }

    private func verifyArchive(_ data: Data, of graph: GridStateGraph) throws {
        try Self.verify(
            try GraphArchiveDecoder().decode([GridStateModel].self, from: data), against: graph)
    }

    /// Counts, every slot's values, and identity: shared slots hold one instance, others not.
    static func verify(_ decoded: [GridStateModel], against graph: GridStateGraph) throws {
        try graph.verifySlots(
            decoded.count, record: { decoded[$0] }, identity: { ObjectIdentifier(decoded[$0]) })
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
            let model = self.model(count)
            let reference = try format.encode(model)
            try Self.verifyPeer(try format.decode([GridStateModel].self, from: reference), against: graph)
            var output: Data?
            return Trial(
                bytes: reference.count,
                run: { output = try format.encode(model) },
                check: {
                    defer { output = nil }
                    guard let bytes = output else { throw VerificationError("no archive was produced") }
                    if bytes != reference {
                        try Self.verifyPeer(
                            try format.decode([GridStateModel].self, from: bytes), against: graph)
                    }
                }
            )
        }
        let decode = makeCase(format.decoderName, format.group, .peer, .decode, note: note) { count in
            let graph = self.graph(count)
            let data = try format.encode(self.model(count))
            var decoded: [GridStateModel]?
            return Trial(
                bytes: data.count,
                run: { decoded = try format.decode([GridStateModel].self, from: data) },
                check: {
                    defer { decoded = nil }
                    guard let models = decoded else { throw VerificationError("nothing was decoded") }
                    try Self.verifyPeer(models, against: graph)
                }
            )
        }
        return [encode, decode]
    }

    /// Counts and every slot's values; no identity, which JSON and property lists cannot keep.
    static func verifyPeer(_ decoded: [GridStateModel], against graph: GridStateGraph) throws {
        try graph.verifySlots(decoded.count, record: { decoded[$0] }, identity: nil)
    }
}
