// Benchmarks/Graphs/GraphWorkload.swift - the cases every graph shape gets: gridstore, peers, floors

import Foundation
import GraphArchive

/// Measures one graph shape: gridstore's encode, decode, save and load at each compression;
/// each peer's encode and decode; and the floors (memcpy, traversal, build, zstd alone).
///
/// Graphs, checked reference archives and the peers' inputs are made once per size and shared
/// by the cases.
final class GraphWorkload<Graph: BenchmarkGraph>: Workload {
    let settings: Settings
    private let inputs = SharedInputs()

    init(settings: Settings) {
        self.settings = settings
    }

    var name: String { Graph.name }
    var recordName: String { Graph.recordName }
    var recordCount: Int { settings.count }

    var summary: String {
        let graph = graph(recordCount)
        return "\(Graph.summary): \(graph.recordCount.grouped) \(recordName)s, \(graph.objectCount.grouped) objects"
    }

    func cases() -> [Case] {
        var cases: [Case] = []
        for compression in settings.compressions {
            cases += gridstoreCases(compression)
        }
        for peer in Graph.peers {
            cases += peerCases(peer)
        }
        for peer in Graph.inapplicablePeers {
            for (subject, operation) in [(peer.encoderName, OperationKind.encode), (peer.decoderName, .decode)] {
                var row = makeCase(subject, peer.group, .peer, operation, "none") { _ in throw Unavailable(peer.reason)
                }
                row.notApplicable = peer.reason
                cases.append(row)
            }
        }
        return cases + floorCases()
    }

    // MARK: - Shared setup

    /// The graph with `count` records, built once.
    func graph(_ count: Int) -> Graph {
        inputs.value("graph/\(count)") {
            Graph(count: count, sharedFraction: settings.sharedFraction, seed: settings.seed)
        }
    }

    /// gridstore's archive of the `count`-record graph, made once and checked by decoding it.
    func archive(_ count: Int, _ compression: ArchiveCompression) throws -> Data {
        try inputs.value("archive/\(count)/\(compression)") {
            let graph = graph(count)
            let data = try GraphArchiver.archivedData(
                withRootObject: graph.root,
                options: .init(compression: compression)
            )
            try verifyArchive(data, of: graph)
            return data
        }
    }

    /// `peer`'s model of the `count`-record graph and its archive of it, checked by decoding it:
    /// made once, shared by the peer's encode and decode rows and their pilot runs.
    private func peerInput<P: Peer>(_ peer: P, _ count: Int) throws -> PeerInput<P.Model> where P.Graph == Graph {
        let (input, seconds) = try inputs.entry("\(peer.encoderName)/\(count)") {
            let graph = graph(count)
            let model = peer.model(of: graph)
            let archive = try peer.encode(model)
            try peer.verify(try peer.decode(archive), against: graph)
            return PeerInput(model: model, archive: archive)
        }
        return PeerInput(model: input.model, archive: input.archive, seconds: seconds)
    }

    private func verifyArchive(_ data: Data, of graph: Graph) throws {
        var decoded: Graph.Root? = try GraphUnarchiver.unarchivedObject(ofType: Graph.Root.self, from: data)
        defer { Graph.dismantle(&decoded) }
        try graph.verify(decoded!)
    }

    /// A trial that times `decode` and checks (then frees) the graph it returns.
    private func decodeTrial(bytes: Int?, graph: Graph, _ decode: @escaping () throws -> Graph.Root) -> Trial {
        var decoded: Graph.Root?
        return Trial(
            bytes: bytes,
            run: { decoded = try decode() },
            check: {
                defer { Graph.dismantle(&decoded) }
                guard let root = decoded else { throw VerificationError("no graph was decoded") }
                try graph.verify(root)
            }
        )
    }

    private func makeCase(
        _ subject: String,
        _ group: String,
        _ role: Role,
        _ operation: OperationKind,
        _ compression: String,
        prepare: @escaping (Int) throws -> Trial
    ) -> Case {
        Case(
            workload: name,
            subject: subject,
            group: group,
            role: role,
            operation: operation,
            compression: compression,
            records: recordCount,
            prepare: prepare
        )
    }

    // MARK: - gridstore

    private func gridstoreCases(_ compression: ArchiveCompression) -> [Case] {
        let options = GraphArchiver.Options(compression: compression)
        let label = compression.description
        let encode = makeCase("gridstore", "gridstore", .gridstore, .encode, label) { count in
            let graph = self.graph(count)
            let reference = try self.archive(count, compression)
            var output: Data?
            return Trial(
                bytes: reference.count,
                isWarmedUp: true,  // making the reference archive was this very call
                run: { output = try GraphArchiver.archivedData(withRootObject: graph.root, options: options) },
                check: {
                    defer { output = nil }
                    guard let bytes = output else { throw VerificationError("no archive was produced") }
                    if bytes != reference { try self.verifyArchive(bytes, of: graph) }
                }
            )
        }
        let decode = makeCase("gridstore", "gridstore", .gridstore, .decode, label) { count in
            let graph = self.graph(count)
            let archive = try self.archive(count, compression)
            var trial = self.decodeTrial(bytes: archive.count, graph: graph) {
                try GraphUnarchiver.unarchivedObject(ofType: Graph.Root.self, from: archive)
            }
            trial.isWarmedUp = true  // checking the reference archive was this very call
            return trial
        }
        let save = makeCase("gridstore", "gridstore", .gridstore, .save, label) { count in
            let graph = self.graph(count)
            let reference = try self.archive(count, compression)
            let path = "\(ScratchDirectory.path)/\(self.name)-\(count)-\(label)-save.gsa"
            return Trial(
                bytes: reference.count,
                run: { try GraphArchiver.archiveRootObject(graph.root, toFile: path, options: options) },
                check: {
                    let written = try Data(contentsOf: URL(fileURLWithPath: path))
                    if written != reference { try self.verifyArchive(written, of: graph) }
                }
            )
        }
        let load = makeCase("gridstore", "gridstore", .gridstore, .load, label) { count in
            let graph = self.graph(count)
            let archive = try self.archive(count, compression)
            let path = "\(ScratchDirectory.path)/\(self.name)-\(count)-\(label)-load.gsa"
            try archive.write(to: URL(fileURLWithPath: path))
            return self.decodeTrial(bytes: archive.count, graph: graph) {
                try GraphUnarchiver.unarchivedObject(ofType: Graph.Root.self, fromFile: path)
            }
        }
        var cases = [encode, decode, save, load]
        // Encode and save build the graph in the child; decode and load get the archive as a file.
        let noInput: (Int) throws -> Data = { _ in Data() }
        let archiveInput: (Int) throws -> Data = { try self.archive($0, compression) }
        cases[0].memoryProbe = MemoryProbeSetup(
            input: noInput,
            prepare: { count, _ in
                let graph = self.graph(count)
                return { try GraphArchiver.archivedData(withRootObject: graph.root, options: options) }
            }
        )
        cases[1].memoryProbe = MemoryProbeSetup(
            input: archiveInput,
            prepare: { _, path in
                let archive = try Data(contentsOf: URL(fileURLWithPath: path))
                return { try GraphUnarchiver.unarchivedObject(ofType: Graph.Root.self, from: archive) }
            }
        )
        cases[2].memoryProbe = MemoryProbeSetup(
            input: noInput,
            prepare: { count, _ in
                let graph = self.graph(count)
                let path = "\(ScratchDirectory.path)/\(self.name)-probe.gsa"
                return { try GraphArchiver.archiveRootObject(graph.root, toFile: path, options: options) }
            }
        )
        cases[3].memoryProbe = MemoryProbeSetup(
            input: archiveInput,
            prepare: { _, path in
                { try GraphUnarchiver.unarchivedObject(ofType: Graph.Root.self, fromFile: path) }
            }
        )
        return cases
    }

    // MARK: - Peers

    private func peerCases<P: Peer>(_ peer: P) -> [Case] where P.Graph == Graph {
        let encode = makeCase(peer.encoderName, peer.group, .peer, .encode, "none") { count in
            let graph = self.graph(count)
            let input = try self.peerInput(peer, count)
            var output: Data?
            return input.trial(
                run: { output = try peer.encode(input.model) },
                check: {
                    defer { output = nil }
                    guard let bytes = output else { throw VerificationError("no archive was produced") }
                    if !peer.isSameArchive(bytes, as: input.archive) {
                        try peer.verify(try peer.decode(bytes), against: graph)
                    }
                }
            )
        }
        let decode = makeCase(peer.decoderName, peer.group, .peer, .decode, "none") { count in
            let graph = self.graph(count)
            let input = try self.peerInput(peer, count)
            var decoded: P.Model?
            return input.trial(
                run: { decoded = try peer.decode(input.archive) },
                check: {
                    defer { decoded = nil }
                    guard let model = decoded else { throw VerificationError("nothing was decoded") }
                    try peer.verify(model, against: graph)
                }
            )
        }
        return [encode, decode].map { original in
            var peerCase = original
            peerCase.scalesDown = true
            peerCase.maximumCount = peer.maximumCount
            peerCase.note = peer.note
            return peerCase
        }
    }

    // MARK: - Floors

    /// The payload gridstore compressed in its `compression` archive: the bytes zstd alone
    /// is timed on. (The archive's header is 64 bytes, FORMAT.md §3; the rest is one frame.)
    private func compressedPayload(_ count: Int, _ compression: ArchiveCompression) throws -> [UInt8] {
        let archive = [UInt8](try archive(count, compression))
        // The header's payloadLength (offset 16): the frame itself does not record its size.
        let contentSize = (0..<8).reduce(0) { $0 | Int(archive[16 + $1]) << (8 * $1) }
        return try ZstdFloor.content(ofFrame: Array(archive.dropFirst(64)), contentSize: contentSize)
    }

    private func floorCases() -> [Case] {
        var cases = [
            makeCase("memcpy", "floors", .floor, .memcpy, "-") { count in
                let source = [UInt8](try self.archive(count, .none))
                var destination = [UInt8](repeating: 0, count: source.count)
                return Trial(
                    bytes: source.count,
                    run: { destination.replaceSubrange(0..<source.count, with: source) },
                    check: {
                        try expect(destination == source, "memcpy copied other bytes")
                        // Spoil one byte so that the next run must copy again to pass.
                        if !destination.isEmpty { destination[0] ^= 0xFF }
                    }
                )
            },
            makeCase("traversal", "floors", .floor, .traverse, "-") { count in
                let graph = self.graph(count)
                let expected = graph.touchEveryField()
                var result = 0
                return Trial(
                    bytes: nil,
                    run: { result = graph.touchEveryField() },
                    check: {
                        try expect(result == expected, "traversal read \(result), expected \(expected)")
                        result = 0
                    }
                )
            },
            makeCase("build from arrays", "floors", .floor, .build, "-") { count in
                let graph = self.graph(count)
                let parts = graph.parts()
                return self.decodeTrial(bytes: nil, graph: graph) { Graph.assemble(parts) }
            },
        ]
        // The graph's own size: what building it takes at its peak, which decode and load are
        // held to (``Targets``). The child builds the source graph and its parts, and both stay.
        cases[2].memoryProbe = MemoryProbeSetup(
            input: { _ in Data() },
            prepare: { count, _ in
                let parts = self.graph(count).parts()
                return { Graph.assemble(parts) }
            }
        )
        for compression in settings.compressions {
            guard case .zstd(let level) = compression else { continue }
            let label = compression.description
            cases.append(
                makeCase("zstd alone", "floors", .floor, .compress, label) { count in
                    let payload = try self.compressedPayload(count, compression)
                    let compressor = try ZstdFloor(payloadSize: payload.count, level: level)
                    var size = 0
                    return Trial(
                        bytes: payload.count,
                        run: { size = try compressor.compress(payload) },
                        check: {
                            try expect(
                                try compressor.roundTrip(compressedSize: size) == payload,
                                "zstd changed the payload"
                            )
                        }
                    )
                }
            )
            cases.append(
                makeCase("zstd alone", "floors", .floor, .decompress, label) { count in
                    let payload = try self.compressedPayload(count, compression)
                    let decompressor = try ZstdFloor(payloadSize: payload.count, level: level)
                    let compressed = try decompressor.compressed(payload)
                    return Trial(
                        bytes: payload.count,
                        run: { try decompressor.decompress(compressed) },
                        check: { try expect(decompressor.output == payload, "zstd changed the payload") }
                    )
                }
            )
        }
        return cases
    }
}

/// The harness cannot run a case in this build or setting (not a failure).
struct Unavailable: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Where save and load cases put their files: one folder per process, removed at the end.
enum ScratchDirectory {
    /// The folder, created if missing (again after ``remove()``).
    static var path: String {
        let path = NSTemporaryDirectory() + "gridstore-bench-\(ProcessInfo.processInfo.processIdentifier)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
