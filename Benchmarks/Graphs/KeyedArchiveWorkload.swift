// Benchmarks/Graphs/KeyedArchiveWorkload.swift - reading and writing NSKeyedArchiver archives

import Foundation
import GraphArchive
import GridStore

/// The grid-state array as an app keeps it: an `NSKeyedArchiver` archive of an NSArray of
/// `NSObject, NSCoding` records with the seed app's keys. gridstore's keyed reader and writer
/// against NSKeyedUnarchiver and NSKeyedArchiver on the same graph, in the same run.
///
/// The archives gridstore reads are written by Foundation's own NSKeyedArchiver, in this process,
/// once per size: keys in Foundation's order (hash order, not the order `init(from:)` reads
/// them), shared slots as one UID, and the `$classname` a Swift class gets on Linux,
/// "Benchmarks.GridStateObject" (Linux Foundation does not honour `setClassName(_:for:)`), which
/// gridstore maps to GridState with its registry: the `setClass(_:forClassName:)` of the API.
/// NSKeyedArchiver needs over a minute for a million records, so the workload runs at
/// N = 100,000 at most (the size its target is set for); the peers scale down under the time budget like
/// every peer.
///
/// A `--sweep` point times only gridstore's write and main read, at every sweep size up to
/// 10M: its read reads gridstore's own keyed archive of the graph at every size, NSKeyedArchiver's
/// being out of reach above 100,000 (and, keys in another order, not read at the same cost).
final class KeyedArchiveWorkload: Workload {
    static let name = "keyed"
    /// Largest N this workload runs at but in a sweep point: NSKeyedArchiver writes the input in
    /// seconds there. Also the largest N whose own archive gridstore checks with NSKeyedUnarchiver.
    static let maximumCount = 100_000

    /// The class name Foundation writes for the peer model, and resolves when reading.
    static let className = NSStringFromClass(GridStateObject.self)

    /// gridstore writes grid states under ``className``, so NSKeyedUnarchiver decodes them into
    /// ``GridStateObject``s.
    static let writeOptions: KeyedArchive.Options = {
        var options = KeyedArchive.Options()
        options.setClassName(className, for: GridState.self)
        return options
    }()

    /// gridstore reads ``className`` (unqualified, as it tries names) as GridState.
    static let registry: GraphTypeRegistry = {
        var registry = GraphTypeRegistry([GridState.self])
        registry.register(GridState.self, forName: "GridStateObject")
        return registry
    }()

    let settings: Settings
    private let inputs = SharedInputs()

    init(settings: Settings) {
        self.settings = settings
    }

    var name: String { Self.name }
    var recordName: String { "slot" }
    var recordCount: Int { settings.isSweepPoint ? settings.count : min(settings.count, Self.maximumCount) }

    var summary: String {
        let graph = graph(recordCount)
        let capped = settings.count > recordCount ? " (N capped at \(Self.maximumCount.grouped))" : ""
        return "NSKeyedArchiver archive of the grid-state array: \(graph.recordCount.grouped) slots, "
            + "\(graph.objectCount.grouped) objects\(capped)"
    }

    func cases() -> [Case] {
        [
            readCase(), firstReadCase(), genericReadCase(), loadCase(), writeCase(), saveCase(), unarchiverCase(),
            archiverCase(), floorCase(),
        ]
    }

    /// The subject of the schema-less read's row.
    static let genericSubject = "gridstore (schema-less)"

    // MARK: - Shared setup

    /// The `count`-slot grid-state graph, built once.
    func graph(_ count: Int) -> GridStateGraph {
        inputs.value("graph/\(count)") {
            GridStateGraph(count: count, sharedFraction: settings.sharedFraction, seed: settings.seed)
        }
    }

    /// NSKeyedArchiver's archive of the `count`-slot graph, made once and checked by reading it
    /// back with NSKeyedUnarchiver.
    func foundationArchive(_ count: Int) throws -> Data {
        try foundationInput(count).archive
    }

    /// The peer model NSKeyedArchiver archives (an NSArray of `GridStateObject`s) and its
    /// archive, checked with NSKeyedUnarchiver: made once, shared by the peers' rows, their
    /// pilot runs and gridstore's reading rows. With `--keyed-input` the archive is kept in a
    /// file and read from there by later runs.
    private func foundationInput(_ count: Int) throws -> PeerInput<NSArray> {
        let (input, seconds) = try inputs.entry("foundation/\(count)") {
            let graph = graph(count)
            let model = NSArray(array: GridStateKeyedPeer().model(of: graph))
            let kept = try keptArchiveURL(count)
            // Not checked here: every row that reads it checks what it decodes against the graph.
            if let kept, let archive = try? Data(contentsOf: kept) { return PeerInput(model: model, archive: archive) }
            let archive = try KeyedArchiving.archive(model)
            try graph.verifySlots(using: Self.foundationUnarchive(archive))
            try kept.map { try archive.write(to: $0, options: .atomic) }
            return PeerInput(model: model, archive: archive)
        }
        return PeerInput(model: input.model, archive: input.archive, seconds: seconds)
    }

    /// Where `--keyed-input` keeps the archive of the `count`-slot graph (its directory made),
    /// named by everything the graph depends on; nil without the option.
    private func keptArchiveURL(_ count: Int) throws -> URL? {
        guard let directory = settings.keyedInputDirectory else { return nil }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return URL(fileURLWithPath: directory)
            .appendingPathComponent("keyed-\(count)-\(settings.sharedFraction)-\(settings.seed).plist")
    }

    /// gridstore's keyed archive of the `count`-slot graph, made once and checked by reading it
    /// back with gridstore (in a sweep point, by the read row) and, up to ``maximumCount`` slots
    /// (NSKeyedUnarchiver takes seconds there, minutes at 10M), with Foundation's
    /// NSKeyedUnarchiver: archives we write must decode in Foundation with the same values and
    /// the same sharing.
    func gridstoreArchive(_ count: Int) throws -> Data {
        try inputs.value("gridstore/\(count)") {
            let graph = graph(count)
            let data = try KeyedArchive.archivedData(
                withRootObject: graph.root,
                options: Self.writeOptions
            )
            // A sweep point's read row checks what it decodes from this archive, at every size.
            if !settings.isSweepPoint { try graph.verify(Self.read(data)) }
            if count <= Self.maximumCount { try graph.verifySlots(using: Self.foundationUnarchive(data)) }
            return data
        }
    }

    /// The archive the main read reads: NSKeyedArchiver's, or in a sweep point gridstore's own
    /// (see the type's comment).
    func readInput(_ count: Int) throws -> Data {
        try settings.isSweepPoint ? gridstoreArchive(count) : foundationArchive(count)
    }

    // MARK: - The calls measured

    /// The root array of keyed archive `data`, read by Foundation's NSKeyedUnarchiver.
    static func foundationUnarchive(_ data: Data) throws -> [GridStateObject] {
        try KeyedArchiving.unarchive(data, as: [GridStateObject].self)
    }

    /// The root array of keyed archive `data`, read by gridstore.
    static func read(_ data: Data) throws -> [GridState] {
        try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromKeyedArchive: data, registry: registry)
    }

    // MARK: - gridstore

    /// A trial that times `decode` and checks (then frees) the array it returns.
    private func readTrial<Record: GridStateFields & AnyObject>(
        bytes: Int?,
        graph: GridStateGraph,
        _ decode: @escaping () throws -> [Record]
    ) -> Trial {
        var decoded: [Record]?
        return Trial(
            bytes: bytes,
            run: { decoded = try decode() },
            check: {
                defer { decoded = nil }
                guard let records = decoded else { throw VerificationError("nothing was decoded") }
                try graph.verifySlots(using: records)
            }
        )
    }

    /// A trial that times `encode` and checks its output: the reference bytes, or else an
    /// archive `decode` reads back into the graph.
    private func writeTrial<Record: GridStateFields & AnyObject>(
        reference: Data,
        graph: GridStateGraph,
        encode: @escaping () throws -> Data,
        decode: @escaping (Data) throws -> [Record]
    ) -> Trial {
        var output: Data?
        return Trial(
            bytes: reference.count,
            run: { output = try encode() },
            check: {
                defer { output = nil }
                guard let bytes = output else { throw VerificationError("no archive was produced") }
                if bytes != reference { try graph.verifySlots(using: decode(bytes)) }
            }
        )
    }

    /// A row of this workload: gridstore's rows and the peers' have no compression (keyed
    /// archives have none), floors none that applies.
    private func makeCase(
        _ subject: String,
        _ role: Role,
        _ operation: OperationKind,
        prepare: @escaping (Int) throws -> Trial
    ) -> Case {
        let group = [Role.gridstore: "gridstore", .peer: "nskeyed", .floor: "floors"][role]!
        return Case(
            workload: name,
            subject: subject,
            group: group,
            role: role,
            operation: operation,
            compression: role == .floor ? "-" : "none",
            records: recordCount,
            scalesDown: role == .peer,
            // gridstore's reading rows need Foundation's archive at N, the peers' input there.
            sunkInputCount: role == .peer ? recordCount : nil,
            note: role == .peer ? "identity kept" : nil,
            prepare: prepare
        )
    }

    /// Reading Foundation's archive from memory: the figure the keyed read target is about. In a
    /// sweep point, gridstore's own archive (``readInput(_:)``).
    private func readCase() -> Case {
        var read = makeCase("gridstore", .gridstore, .decode) { count in
            let data = try self.readInput(count)
            return self.readTrial(bytes: data.count, graph: self.graph(count)) { try Self.read(data) }
        }
        read.note = settings.isSweepPoint ? "reads gridstore's keyed archive" : "reads NSKeyedArchiver's archive"
        read.memoryProbe = MemoryProbeSetup(
            input: { try self.readInput($0) },
            prepare: { _, path in
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                return { try Self.read(data) }
            }
        )
        return read
    }

    /// The read above as a process's first read of the app's archives: gridstore has not yet
    /// seen the order `GridState` reads its keys in, so its records are stored in Foundation's
    /// order (see `gridstore`'s rows in docs/BENCHMARKS.md).
    private func firstReadCase() -> Case {
        var read = makeCase(Self.firstReadSubject, .gridstore, .decode) { count in
            let data = try self.foundationArchive(count)
            return self.readTrial(bytes: data.count, graph: self.graph(count)) {
                KeyReadOrders.forget(GridState.self)
                return try Self.read(data)
            }
        }
        read.note = "as the process's first read of such archives"
        return read
    }

    /// The subject of the first read's row.
    static let firstReadSubject = "gridstore (first read)"

    /// Reading Foundation's archive with no model types: ``ArchiveGraph`` opens it and every
    /// object is read, fields and values, as `gridstore inspect` and `convert` read archives.
    private func genericReadCase() -> Case {
        var read = makeCase(Self.genericSubject, .gridstore, .decode) { count in
            let data = try self.foundationArchive(count)
            let graph = self.graph(count)
            var result: GenericRead?
            return Trial(
                bytes: data.count,
                run: { result = try GenericRead(data) },
                check: {
                    defer { result = nil }
                    guard let read = result else { throw VerificationError("nothing was read") }
                    try read.verify(against: graph)
                }
            )
        }
        read.note = "ArchiveGraph: every object's fields, no registry"
        read.memoryProbe = MemoryProbeSetup(
            input: { try self.foundationArchive($0) },
            prepare: { _, path in
                let data = try Data(contentsOf: URL(fileURLWithPath: path))
                return { try GenericRead(data) }
            }
        )
        return read
    }

    /// Reading Foundation's archive from a file: `unarchiveObject(withFile:)`.
    private func loadCase() -> Case {
        var load = makeCase("gridstore", .gridstore, .load) { count in
            let data = try self.foundationArchive(count)
            let path = "\(ScratchDirectory.path)/\(self.name)-\(count)-load.plist"
            try data.write(to: URL(fileURLWithPath: path))
            return self.readTrial(bytes: data.count, graph: self.graph(count)) {
                try GraphUnarchiver.unarchivedObject(
                    ofType: [GridState].self,
                    fromKeyedArchiveFile: path,
                    registry: Self.registry
                )
            }
        }
        load.note = "reads NSKeyedArchiver's archive"
        return load
    }

    /// Writing a keyed archive in memory; the reference was checked with NSKeyedUnarchiver.
    private func writeCase() -> Case {
        var write = makeCase("gridstore", .gridstore, .encode) { count in
            let graph = self.graph(count)
            var trial = self.writeTrial(
                reference: try self.gridstoreArchive(count),
                graph: graph,
                encode: {
                    try KeyedArchive.archivedData(
                        withRootObject: graph.root,
                        options: Self.writeOptions
                    )
                },
                decode: Self.read
            )
            trial.isWarmedUp = true  // making the reference archive was this very call
            return trial
        }
        write.note = "NSKeyedUnarchiver reads it"
        write.memoryProbe = MemoryProbeSetup(
            input: { _ in Data() },
            prepare: { count, _ in
                let graph = self.graph(count)
                return {
                    try KeyedArchive.archivedData(
                        withRootObject: graph.root,
                        options: Self.writeOptions
                    )
                }
            }
        )
        return write
    }

    /// Writing a keyed archive to a file: `archiveRootObject(_:toFile:)`.
    private func saveCase() -> Case {
        var save = makeCase("gridstore", .gridstore, .save) { count in
            let graph = self.graph(count)
            let reference = try self.gridstoreArchive(count)
            let path = "\(ScratchDirectory.path)/\(self.name)-\(count)-save.plist"
            return Trial(
                bytes: reference.count,
                run: {
                    try KeyedArchive.archiveRootObject(
                        graph.root,
                        toFile: path,
                        options: Self.writeOptions
                    )
                },
                check: {
                    let written = try Data(contentsOf: URL(fileURLWithPath: path))
                    try FileManager.default.removeItem(atPath: path)
                    if written != reference { try graph.verifySlots(using: Self.read(written)) }
                }
            )
        }
        save.note = "NSKeyedUnarchiver reads it"
        return save
    }

    // MARK: - Peers

    private func unarchiverCase() -> Case {
        makeCase("NSKeyedUnarchiver", .peer, .decode) { count in
            let input = try self.foundationInput(count)
            var trial = self.readTrial(bytes: input.archive.count, graph: self.graph(count)) {
                try Self.foundationUnarchive(input.archive)
            }
            trial.inputSeconds = count == self.recordCount ? 0 : input.seconds
            trial.isWarmedUp = true
            return trial
        }
    }

    private func archiverCase() -> Case {
        makeCase("NSKeyedArchiver", .peer, .encode) { count in
            let graph = self.graph(count)
            let input = try self.foundationInput(count)
            var trial = self.writeTrial(
                reference: input.archive,
                graph: graph,
                encode: { try KeyedArchiving.archive(input.model) },
                decode: Self.foundationUnarchive
            )
            trial.inputSeconds = count == self.recordCount ? 0 : input.seconds
            trial.isWarmedUp = true
            return trial
        }
    }

    // MARK: - Floors

    /// Building the graph from arrays with no parsing: the decode floor of the grid-state
    /// workload, at this workload's N.
    private func floorCase() -> Case {
        makeCase("build from arrays", .floor, .build) { count in
            let graph = self.graph(count)
            let parts = graph.parts()
            return self.readTrial(bytes: nil, graph: graph) { GridStateGraph.assemble(parts) }
        }
    }
}

/// What the schema-less read of a grid-state keyed archive holds: the root's object ids and
/// every object with its fields.
struct GenericRead {
    var slots: [Int] = []
    /// By id (the ids of a keyed archive are `$objects` indexes, below their count).
    var objects: [ArchiveObject?] = []

    /// Opens `data` as an ``ArchiveGraph`` and reads the root and every object.
    init(_ data: Data) throws {
        let graph = try ArchiveGraph(data: data)
        guard case .array(let elements) = try graph.topLevelValue(forKey: GraphArchiver.rootKey) else {
            throw VerificationError("the root is not an array")
        }
        slots = elements.map { element in
            guard case .object(let id) = element else { return -1 }
            return id
        }
        objects = Array(repeating: nil, count: (graph.objectIDs.last ?? -1) + 1)
        try graph.forEachObject { objects[$0.id] = $0 }
    }

    /// Checks every slot's values against `graph`, and that slots share an object exactly
    /// where the graph's do.
    func verify(against graph: GridStateGraph) throws {
        struct Fields: GridStateFields {
            var name: String
            var color: Int
            var date: String
        }
        /// One instance per object id, for identity.
        final class Box {}
        var boxes: [Int: Box] = [:]
        var records: [Fields] = []
        records.reserveCapacity(slots.count)
        for id in slots {
            guard id >= 0 && id < objects.count, let object = objects[id],
                case .string(let name) = object["kEncodeKeyName"],
                case .integer(let color) = object["kEncodeKeyColor"], case .string(let date) = object["kEncodeKeyDate"]
            else { throw VerificationError("slot object #\(id) is missing or lacks a grid state's fields") }
            records.append(Fields(name: name, color: Int(color), date: date))
            if boxes[id] == nil { boxes[id] = Box() }
        }
        try graph.verifySlots(
            records.count,
            record: { records[$0] },
            identity: { ObjectIdentifier(boxes[slots[$0]]!) }
        )
    }
}

extension GridStateGraph {
    /// Checks decoded `records` slot by slot: values, and sharing exactly where the source shares.
    func verifySlots<Record: GridStateFields & AnyObject>(using records: [Record]) throws {
        try verifySlots(
            records.count,
            record: { records[$0] },
            identity: { ObjectIdentifier(records[$0]) }
        )
    }
}

extension WorkloadEntry {
    static let keyedArchive = WorkloadEntry(name: KeyedArchiveWorkload.name) {
        KeyedArchiveWorkload(settings: $0)
    }
}
