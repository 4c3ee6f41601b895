// Benchmarks/Harness/Targets.swift - the project's speed, size and memory targets, judged on a run's figures

import GraphArchive

/// The targets hold for medians at N = 1,000,000 and F = 0.25 of the grid-state workload; a
/// run at other settings is judged the same way and says so.
enum Targets {
    static let workload = GridStateGraph.name
    static let count = 1_000_000
    static let sharedFraction = 0.25
    /// The exponent of time against N above which cost counts as growing faster than linear.
    static let linearExponentLimit = 1.1

    /// The graph workloads judged against their floors, on memory and on growth; the grid
    /// states' target ids carry no workload name, the others' start with it.
    static let graphWorkloads = [GridStateGraph.name, ChainGraph.name, TreeGraph.name]
    /// Encode within this many times the encode floor, decode within this many the decode floor.
    static let floorLimits: [(OperationKind, Double)] = [(.encode, 3), (.decode, 2)]

    /// Reading an app's keyed archive (100,000 records) this many times faster than NSKeyedUnarchiver.
    static let keyedReadSpeedup = 20.0
    /// Reading it within this many times the decode floor (building the same graph from arrays).
    static let keyedReadFloorLimit = 3.0
    /// Writing a keyed archive this many times faster than NSKeyedArchiver.
    static let keyedWriteSpeedup = 50.0
    /// The Codable bridge within this many times the native path's time on the same graph.
    static let codableNativeLimit = 1.5
    /// Reading the same archive with no model types (``ArchiveGraph``, every object's fields) this
    /// many times faster than NSKeyedUnarchiver.
    static let genericKeyedReadSpeedup = 20.0
    /// `inspect --json` of the N-slot grid-state archive at most this many times `load --json`'s time.
    static let inspectJSONTimeLimit = 2.0
    /// `inspect --json`'s peak memory above what it started with, at most this many times the
    /// archive: the JSON (about four times the archive) is never held.
    static let inspectJSONMemoryLimit = 1.5

    /// The Codable bridge's targets, on the ``CodableGridStateWorkload`` (gridstore at
    /// N, the peers within their budget, scaled): each peer's operation and how many times faster
    /// the bridge must be.
    static let codableWorkload = CodableGridStateWorkload.name
    static let codableSpeedups: [(OperationKind, String, Double)] = [
        (.encode, CodableFormat.json.encoderName, 5), (.decode, CodableFormat.json.decoderName, 5),
        (.encode, CodableFormat.binaryPropertyList.encoderName, 3),
        (.decode, CodableFormat.binaryPropertyList.decoderName, 3),
    ]

    /// Whether a target reads `row`'s median: gridstore's encode and decode without compression
    /// on the graph workloads (against floors, and on the grid states against peers and at N/10
    /// for growth), the grid states' peers, and the uncompressed floors; on the codable and
    /// inspect workloads every row; on the keyed one the reads, the read's floor and both writes.
    static func reads(_ row: Case) -> Bool {
        let isCodec = row.operation == .encode || row.operation == .decode
        switch row.workload {
        case workload, ChainGraph.name, TreeGraph.name:
            return switch row.role {
            case .gridstore: isCodec && row.compression == "none"
            case .peer: row.workload == workload && isCodec && row.group != "plist"
            case .floor: row.compression == "-"
            case .reference: isCodec
            }
        case codableWorkload:
            return true
        case KeyedArchiveWorkload.name:
            return isCodec || row.role == .floor
        case InspectWorkload.name:
            return true
        default:
            return false
        }
    }

    static func judge(_ report: Report, settings: Settings) -> [TargetResult] {
        gridStateTargets(report, settings: settings) + floorTargets(report) + decodeMemoryTargets(report)
            + linearTargets(report) + keyedArchiveTargets(report) + inspectTargets(report) + codableTargets(report)
    }

    /// Decode's and load's peak memory may exceed the graph's own size by this many archives.
    static let decodeMemoryArchives = 1.0

    /// Decode's and load's peak memory over the graph they build, against the archive's size,
    /// at each compression, on every graph workload: the graph's own size is what building it
    /// from flat arrays takes (the decode floor's memory probe).
    private static func decodeMemoryTargets(_ report: Report) -> [TargetResult] {
        graphReports(report).flatMap { graph in
            report.compressions.flatMap { compression in
                [OperationKind.decode, .load].map { operation in
                    let row = gridstoreRow(graph, operation, compression)
                    var measured: Double?
                    var detail =
                        row.map { $0.memoryError ?? "the memory group was not run" }
                        ?? whyMissing(graph, operation, compression)
                    if row?.memory != nil && graph.graphBytes == nil {
                        detail = "the graph's own size was not measured (the floors were not run)"
                    }
                    if let memory = row?.memory, let archive = row?.bytes, let graphBytes = graph.graphBytes {
                        let overGraph = memory.overBaselineBytes - graphBytes
                        measured = Double(overGraph) / Double(archive)
                        detail =
                            "peak − before = \(Format.bytes(memory.overBaselineBytes)), over the graph's "
                            + "\(Format.bytes(graphBytes)): \(Format.bytes(overGraph)) = "
                            + "\(Format.decimal(measured!)) × archive (\(Format.bytes(archive)))"
                            + (memory.peakReset ? "" : "; peak not reset, includes setup")
                    }
                    return result(
                        idPrefix(graph.name) + "\(operation.rawValue)-memory-\(compression)",
                        "\(graph.name): peak memory while \(operation == .decode ? "decoding" : "loading") "
                            + "(\(compression)) ≤ graph + \(decodeMemoryArchives) × archive",
                        limit: decodeMemoryArchives,
                        measured,
                        detail
                    )
                }
            }
        }
    }

    /// Encode and decode without compression against their floors, on every graph workload.
    private static func floorTargets(_ report: Report) -> [TargetResult] {
        graphReports(report).flatMap { graph in
            floorLimits.map { operation, limit in
                let comparison = graph.comparisons.first {
                    $0.operation == operation && $0.againstRole == .floor && $0.compression == "none"
                }
                return result(
                    idPrefix(graph.name) + "\(operation.rawValue)-vs-floor",
                    "\(graph.name): \(operation.rawValue) within \(Int(limit))x of the \(operation.rawValue) floor",
                    limit: limit,
                    comparison?.ratio,
                    comparison.map { "gridstore/floor = \(Format.ratio($0.ratio)) (\($0.against))" }
                        ?? whyMissing(graph, operation, "none")
                )
            }
        }
    }

    /// Cost linear in N on every workload gridstore ran at two sizes (the grid states' probe at
    /// N/10, or the sweep).
    private static func linearTargets(_ report: Report) -> [TargetResult] {
        let workloads = report.workloads.map(\.name).filter { name in
            name == workload || report.growth.contains { $0.workload == name }
        }
        return workloads.flatMap { name in
            [OperationKind.encode, .decode].map { operation in
                let growth = report.growth.first { $0.workload == name && $0.operation == operation }
                return result(
                    idPrefix(name) + "linear-\(operation.rawValue)",
                    "\(name): \(operation.rawValue) cost linear in N (time ∝ N^e, e ≤ \(linearExponentLimit))",
                    limit: linearExponentLimit,
                    growth?.exponent,
                    growth.map(\.summary) ?? "needs gridstore at two sizes (the growth probe at N/10, or --sweep)"
                )
            }
        }
    }

    /// The graph workloads this run reported.
    private static func graphReports(_ report: Report) -> [WorkloadReport] {
        report.workloads.filter { graphWorkloads.contains($0.name) }
    }

    /// Target ids of the grid states carry no workload name; the others start with theirs.
    private static func idPrefix(_ name: String) -> String {
        name == workload ? "" : "\(name)-"
    }

    /// A target's result; `measured` nil means not measured, and `detail` then says why.
    private static func result(
        _ id: String,
        _ target: String,
        limit: Double,
        atLeast: Bool = false,
        _ measured: Double?,
        _ detail: String
    ) -> TargetResult {
        let verdict: TargetResult.Verdict =
            measured.map { atLeast ? $0 >= limit : $0 <= limit }.map { $0 ? .met : .missed } ?? .notMeasured
        return TargetResult(id: id, target: target, measured: measured, limit: limit, verdict: verdict, detail: detail)
    }

    /// The Codable bridge's speed targets, judged on the codable workload's figures: against
    /// the native path on the same graph in the same rounds (its `nativeSubject` rows), and
    /// against its peers.
    private static func codableTargets(_ report: Report) -> [TargetResult] {
        guard let codable = report.workloads.first(where: { $0.name == codableWorkload }) else { return [] }
        let againstNative = [OperationKind.encode, .decode].map { codableAgainstNative(codable, $0) }
        return againstNative
            + codableSpeedups.map { operation, peer, speedup in
                let comparison = codable.comparisons.first {
                    $0.operation == operation && $0.against == peer && $0.subject == nil
                }
                let measured = comparison.map { 1 / $0.ratio }
                let detail = comparison.map { comparison in
                    "\(Format.times(1 / comparison.ratio)) faster (gridstore/\(peer) = \(Format.ratio(comparison.ratio)))"
                }
                return TargetResult(
                    id: "codable-\(operation.rawValue)-vs-\(peer)",
                    target: "codable: \(operation.rawValue) ≥ \(Int(speedup))x faster than \(peer)",
                    measured: measured,
                    limit: speedup,
                    verdict: measured.map { $0 >= speedup ? .met : .missed } ?? .notMeasured,
                    detail: detail ?? whyMissing(codable, operation, "none", subject: peer)
                )
            }
    }

    /// The keyed workload's read targets: typed and schema-less.
    private static func keyedArchiveTargets(_ report: Report) -> [TargetResult] {
        guard let keyed = report.workloads.first(where: { $0.name == KeyedArchiveWorkload.name }) else { return [] }
        let peer = "NSKeyedUnarchiver"
        func target(subject: String?, id: String, text: String, speedup: Double) -> TargetResult {
            let comparison = keyed.comparisons.first {
                $0.operation == .decode && $0.against == peer && $0.subject == subject
            }
            let measured = comparison.map { 1 / $0.ratio }
            let detail = comparison.map { comparison in
                let scaled = comparison.otherScaledFrom.map { ", \(peer) scaled from N = \($0.grouped)" } ?? ""
                return "\(Format.times(1 / comparison.ratio)) faster at N = \(keyed.records.grouped) "
                    + "(\(subject ?? "gridstore")/\(peer) = \(Format.ratio(comparison.ratio))\(scaled))"
            }
            return TargetResult(
                id: id,
                target: text,
                measured: measured,
                limit: speedup,
                verdict: measured.map { $0 >= speedup ? .met : .missed } ?? .notMeasured,
                detail: detail ?? whyMissing(keyed, .decode, "none", subject: subject ?? peer)
            )
        }
        let floor = keyed.comparisons.first { $0.operation == .decode && $0.againstRole == .floor && $0.subject == nil }
        let writer = "NSKeyedArchiver"
        let write = keyed.comparisons.first { $0.operation == .encode && $0.against == writer && $0.subject == nil }
        return [
            result(
                "keyed-read-vs-floor",
                "read a keyed archive within \(Int(keyedReadFloorLimit))x of the decode floor",
                limit: keyedReadFloorLimit,
                floor?.ratio,
                floor.map { "gridstore/floor = \(Format.ratio($0.ratio)) (\($0.against))" }
                    ?? whyMissing(keyed, .decode, "none")
            ),
            result(
                "keyed-write-vs-\(writer)",
                "write a keyed archive ≥ \(Int(keyedWriteSpeedup))x faster than \(writer)",
                limit: keyedWriteSpeedup,
                atLeast: true,
                write.map { 1 / $0.ratio },
                write.map { comparison in
                    let scaled = comparison.otherScaledFrom.map { ", \(writer) scaled from N = \($0.grouped)" } ?? ""
                    return "\(Format.times(1 / comparison.ratio)) faster at N = \(keyed.records.grouped) "
                        + "(gridstore/\(writer) = \(Format.ratio(comparison.ratio))\(scaled))"
                } ?? whyMissing(keyed, .encode, "none", subject: writer)
            ),
            target(
                subject: nil,
                id: "keyed-read-vs-\(peer)",
                text: "read a keyed archive ≥ \(Int(keyedReadSpeedup))x faster than \(peer)",
                speedup: keyedReadSpeedup
            ),
            target(
                subject: KeyedArchiveWorkload.genericSubject,
                id: "keyed-generic-read-vs-\(peer)",
                text: "read a keyed archive with no model types ≥ \(Int(genericKeyedReadSpeedup))x faster than \(peer)",
                speedup: genericKeyedReadSpeedup
            ),
        ]
    }

    /// `inspect --json` against `load --json` of the same archive, and its memory.
    private static func inspectTargets(_ report: Report) -> [TargetResult] {
        guard let inspect = report.workloads.first(where: { $0.name == InspectWorkload.name }) else { return [] }
        func row(_ subject: String) -> CaseResult? {
            inspect.results.first { $0.subject == subject && $0.status == .ok }
        }
        let json = row(InspectWorkload.inspectSubject)
        let load = row(InspectWorkload.loadSubject)
        var time = TargetResult(
            id: "inspect-json-vs-load-json",
            target: "inspect --json within \(Format.decimal(inspectJSONTimeLimit))x the time of load --json",
            measured: nil,
            limit: inspectJSONTimeLimit,
            verdict: .notMeasured,
            detail: "needs both rows of the inspect workload"
        )
        if let jsonSeconds = json?.seconds?.median, let loadSeconds = load?.seconds?.median {
            let ratio = jsonSeconds / loadSeconds
            time.measured = ratio
            time.verdict = ratio <= inspectJSONTimeLimit ? .met : .missed
            time.detail =
                "inspect --json \(Format.seconds(jsonSeconds)), load --json \(Format.seconds(loadSeconds)) "
                + "at N = \(inspect.records.grouped) (ratio \(Format.ratio(ratio)))"
        }
        var memory = TargetResult(
            id: "inspect-json-memory",
            target:
                "inspect --json peak memory ≤ \(Format.decimal(inspectJSONMemoryLimit)) × archive (output streamed)",
            measured: nil,
            limit: inspectJSONMemoryLimit,
            verdict: .notMeasured,
            detail: json.map { $0.memoryError ?? "the memory group was not run" }
                ?? "the inspect --json row did not pass"
        )
        if let figures = json?.memory, let archive = json?.bytes {
            let measured = Double(figures.overBaselineBytes) / Double(archive)
            memory.measured = measured
            memory.verdict = measured <= inspectJSONMemoryLimit ? .met : .missed
            memory.detail =
                "peak − before = \(Format.bytes(figures.overBaselineBytes)) = \(Format.decimal(measured)) × archive "
                + "(\(Format.bytes(archive)))" + (figures.peakReset ? "" : "; peak not reset, includes setup")
        }
        return [time, memory]
    }

    private static func gridStateTargets(_ report: Report, settings: Settings) -> [TargetResult] {
        guard let grid = report.workloads.first(where: { $0.name == workload }) else { return [] }
        var targets: [TargetResult] = []
        func add(
            _ id: String,
            _ target: String,
            limit: Double,
            atLeast: Bool = false,
            _ measured: Double?,
            _ detail: String
        ) {
            targets.append(result(id, target, limit: limit, atLeast: atLeast, measured, detail))
        }
        for (operation, peer, speedup) in [
            (OperationKind.encode, "NSKeyedArchiver", 300.0), (.encode, "JSONEncoder", 20),
            (.decode, "NSKeyedUnarchiver", 100), (.decode, "JSONDecoder", 10),
        ] {
            let comparison = grid.comparisons.first { $0.operation == operation && $0.against == peer }
            let detail = comparison.map { comparison in
                let scaled = comparison.otherScaledFrom.map { ", \(peer) scaled from N = \($0.grouped)" } ?? ""
                return
                    "\(Format.times(1 / comparison.ratio)) faster (gridstore/\(peer) = \(Format.ratio(comparison.ratio))\(scaled))"
            }
            add(
                "\(operation.rawValue)-vs-\(peer)",
                "\(operation.rawValue) ≥ \(Int(speedup))x faster than \(peer)",
                limit: speedup,
                atLeast: true,
                comparison.map { 1 / $0.ratio },
                detail ?? whyMissing(grid, operation, "none", subject: peer)
            )
        }
        // Compressed: zstd's own time is part of the floor, and gridstore compresses on a thread
        // beside the encoder, so it can beat a floor of one thread.
        for compression in settings.compressions where compression != .none {
            for (operation, limit) in [(OperationKind.encode, 1.1), (.decode, 1.2)] {
                let label = compression.description
                let comparison = grid.comparisons.first {
                    $0.operation == operation && $0.againstRole == .floor && $0.compression == label
                }
                add(
                    "\(operation.rawValue)-vs-floor-\(label)",
                    "\(operation.rawValue) (\(label)) within \(limit)x of its floor, zstd alone on one thread included",
                    limit: limit,
                    comparison?.ratio,
                    comparison.map { "gridstore/floor = \(Format.ratio($0.ratio)) (\($0.against))" }
                        ?? whyMissing(grid, operation, label)
                )
            }
        }
        for (compression, limit) in [("none", 40.0), ("zstd:3", 15)] {
            let row = gridstoreRow(grid, .encode, compression)
            add(
                "bytes-per-slot-\(compression)",
                "≤ \(Int(limit)) bytes per slot, compression \(compression)",
                limit: limit,
                row?.bytesPerRecord,
                row.map { "\(Format.decimal($0.bytesPerRecord ?? 0)) bytes per slot (\(Format.bytes($0.bytes ?? 0)))" }
                    ?? whyMissing(grid, .encode, compression)
            )
        }
        for compression in settings.compressions.map(\.description) {
            let row = gridstoreRow(grid, .save, compression)
            var measured: Double?
            var detail =
                row.map { $0.memoryError ?? "the memory group was not run" } ?? whyMissing(grid, .save, compression)
            if let memory = row?.memory, let archive = row?.bytes {
                measured = Double(memory.overBaselineBytes) / Double(archive)
                detail =
                    "peak − graph = \(Format.bytes(memory.overBaselineBytes)) = \(Format.decimal(measured!)) × archive "
                    + "(\(Format.bytes(archive)))" + (memory.peakReset ? "" : "; peak not reset, includes setup")
            }
            add(
                "save-memory-\(compression)",
                "peak memory while saving (\(compression)) ≤ graph + 1.5 × archive",
                limit: 1.5,
                measured,
                detail
            )
        }
        return targets
    }

    private static func gridstoreRow(_ grid: WorkloadReport, _ operation: OperationKind, _ compression: String)
        -> CaseResult?
    {
        grid.results.first {
            $0.role == .gridstore && $0.status == .ok && $0.operation == operation && $0.compression == compression
        }
    }

    /// The bridge's `operation` against the native path's, both rows of the codable workload.
    private static func codableAgainstNative(_ codable: WorkloadReport, _ operation: OperationKind) -> TargetResult {
        let nativeSubject = CodableGridStateWorkload.nativeSubject
        let ratio = codable.comparisons.first {
            $0.operation == operation && $0.compression == "none" && $0.againstRole == .reference
                && $0.against == nativeSubject && $0.subject == nil
        }?.ratio
        let bridgeMissing = gridstoreRow(codable, operation, "none") == nil
        let detail: String =
            ratio.map { "bridge/native = \(Format.ratio($0)) (\(nativeSubject) \(operation.rawValue), same rounds)" }
            ?? whyMissing(
                codable,
                operation,
                "none",
                subject: bridgeMissing ? CodableGridStateWorkload.bridgeSubject(operation) : nativeSubject
            )
        return result(
            "codable-\(operation.rawValue)-vs-native",
            "codable: \(operation.rawValue) within \(codableNativeLimit)x of the native path on the same graph",
            limit: codableNativeLimit,
            ratio,
            detail
        )
    }

    /// Why a figure is missing: the row was not run, is unavailable, or failed.
    private static func whyMissing(
        _ grid: WorkloadReport,
        _ operation: OperationKind,
        _ compression: String,
        subject: String = "gridstore"
    ) -> String {
        let row = grid.results.first {
            ($0.subject == subject || $0.subject == "gridstore") && $0.operation == operation
                && $0.compression == compression && $0.status != .ok
        }
        return row.map { "\($0.subject) \($0.status.rawValue): \($0.message ?? "")" } ?? "not run"
    }
}
