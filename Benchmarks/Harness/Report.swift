// Benchmarks/Harness/Report.swift - every figure of a run; also the `--json` document (docs/BENCHMARKS.md)

import Foundation

/// Median, min and max of some timed repetitions, in seconds.
struct Stats: Codable, Sendable {
    var median: Double
    var min: Double
    var max: Double
    var samples: [Double]

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first ?? 0
        max = sorted.last ?? 0
        self.samples = samples
    }

    /// The same figures times `factor` (a peer run at a smaller N, scaled linearly).
    func scaled(by factor: Double) -> Stats {
        Stats(samples.map { $0 * factor })
    }
}

enum Status: String, Codable, Sendable {
    case ok
    /// Threw, or produced a wrong result.
    case failed
    /// Not in this build (zstd before it lands, or without the Zstd trait).
    case unavailable
    /// The subject cannot represent this workload.
    case notApplicable = "n/a"
    /// A sweep size left out: not enough memory, or too slow at the growth seen so far.
    case skipped
}

/// Peak memory of one operation, run once in a child process of its own.
struct MemoryFigures: Codable, Sendable {
    /// Resident bytes of the child before setup.
    var startBytes: Int
    /// Resident bytes after setup (graph, archive), just before the operation.
    var baselineBytes: Int
    /// Peak resident bytes (VmHWM) while the operation ran.
    var peakBytes: Int
    /// `peakBytes - baselineBytes`: what the operation itself needed at its peak.
    var overBaselineBytes: Int
    /// Whether the peak was reset to the baseline before the operation (`/proc/self/clear_refs`);
    /// if not, `peakBytes` also covers setup.
    var peakReset: Bool
}

/// One measured row.
extension Array where Element == CaseResult {
    /// Whether `row` is gridstore's first row for its operation and compression here: the one the
    /// tables call "gridstore". A later one (the keyed workload's schema-less read) is named by
    /// its subject.
    func isMainGridstoreRow(_ row: CaseResult) -> Bool {
        row.role == .gridstore
            && first { $0.role == .gridstore && $0.operation == row.operation && $0.compression == row.compression }?
                .subject == row.subject
    }
}

struct CaseResult: Codable, Sendable {
    var workload: String
    var subject: String
    var group: String
    var role: Role
    var operation: OperationKind
    var compression: String
    var status: Status
    /// The error or the reason for `status`.
    var message: String?
    var note: String?
    /// N the figures are for.
    var records: Int
    /// N actually run; smaller than `records` for a slow peer under the time budget.
    var measuredRecords: Int
    /// `records / measuredRecords`: the factor measured times and sizes were scaled by.
    var scale: Double
    /// Times at `records` (scaled when `scale` is not 1).
    var seconds: Stats?
    /// Times as measured at `measuredRecords`.
    var measuredSeconds: Stats?
    /// Archive (or payload) bytes at `records` (scaled like the times).
    var bytes: Int?
    var bytesPerRecord: Double?
    var recordsPerSecond: Double?
    /// Bytes per second / 10^6, from the median.
    var megabytesPerSecond: Double?
    var memory: MemoryFigures?
    var memoryError: String?
    /// Wall time this row cost the suite outside its timed runs: setting up (pilot runs
    /// included) and checking every run's result.
    var setupSeconds: Double?
    var checkSeconds: Double?

    init(_ measured: Case, records: Int) {
        workload = measured.workload
        subject = measured.subject
        group = measured.group
        role = measured.role
        operation = measured.operation
        compression = measured.compression
        status = .ok
        note = measured.note
        self.records = records
        measuredRecords = records
        scale = 1
    }

    var isScaled: Bool { scale != 1 }

    /// Fills in the figures from samples taken at `measuredRecords`.
    mutating func record(samples: [Double], measuredRecords: Int, bytes: Int?) {
        self.measuredRecords = measuredRecords
        scale = Double(records) / Double(measuredRecords)
        let measured = Stats(samples)
        measuredSeconds = measured
        let seconds = measured.scaled(by: scale)
        self.seconds = seconds
        if let bytes {
            self.bytes = Int((Double(bytes) * scale).rounded())
            bytesPerRecord = Double(bytes) / Double(measuredRecords)
            megabytesPerSecond = Double(bytes) / measured.median / 1e6
        }
        recordsPerSecond = Double(measuredRecords) / measured.median
    }
}

/// gridstore's median against another subject's, for one operation.
struct Comparison: Codable, Sendable {
    var workload: String
    var operation: OperationKind
    var compression: String
    /// The other side: a peer ("NSKeyedArchiver") or a floor ("encode floor (traversal + memcpy)").
    var against: String
    var againstRole: Role
    var gridstoreSeconds: Double
    var otherSeconds: Double
    /// gridstore / other: below 1 gridstore is faster; for floors, how far above the limit.
    var ratio: Double
    /// The other side ran at a smaller N and was scaled.
    var otherScaledFrom: Int?
    /// gridstore's row when it is not the workload's first for the operation and compression
    /// ("gridstore (schema-less)"); nil: the first, which the tables call "gridstore".
    var subject: String?

    /// The other side as the tables name it: "NSKeyedUnarchiver (scaled from 20,000)", after
    /// gridstore's row where that is not "gridstore".
    var label: String {
        (subject.map { "\($0): " } ?? "") + against + (otherScaledFrom.map { " (scaled from \($0.grouped))" } ?? "")
    }

    /// How the ratio reads: "26.2x faster", "1.5x slower", "5.66x the floor".
    var reading: String {
        againstRole == .floor
            ? "\(Format.times(ratio)) the floor"
            : ratio <= 1 ? "\(Format.times(1 / ratio)) faster" : "\(Format.times(ratio)) slower"
    }
}

/// One target of the project, judged on this run.
struct TargetResult: Codable, Sendable {
    enum Verdict: String, Codable, Sendable {
        case met, missed
        case notMeasured = "not measured"
    }
    var id: String
    var target: String
    var measured: Double?
    var limit: Double
    var verdict: Verdict
    /// The measured figure in words, or why it was not measured.
    var detail: String
}

/// gridstore's time for one operation at one N (the sweep, or the growth probe at N/10).
struct SweepPoint: Codable, Sendable {
    var workload: String
    var operation: OperationKind
    var records: Int
    var status: Status
    var message: String?
    var seconds: Stats?
    var nanosecondsPerRecord: Double?
    var bytes: Int?
}

extension SweepPoint {
    init(_ result: CaseResult) {
        self.init(
            workload: result.workload,
            operation: result.operation,
            records: result.records,
            status: result.status,
            message: result.message,
            seconds: result.seconds,
            nanosecondsPerRecord: result.seconds.map { $0.median / Double(result.records) * 1e9 },
            bytes: result.bytes
        )
    }
}

/// How time grows with N: time ∝ N^exponent between two sizes (1 = linear).
struct Growth: Codable, Sendable {
    var workload: String
    var operation: OperationKind
    var fromRecords: Int
    var toRecords: Int
    var exponent: Double
    /// The floor's exponent between the same sizes, where the floor ran at both.
    var floorExponent: Double?
}

struct WorkloadReport: Codable, Sendable {
    var name: String
    var summary: String
    var recordName: String
    var records: Int
    var results: [CaseResult]
    var comparisons: [Comparison]
    /// Where the workload's wall time went.
    var phases: PhaseTimes?
}

extension WorkloadReport {
    /// The graph's own size: the peak memory of building it from flat arrays (the decode
    /// floor's memory probe), if that ran.
    var graphBytes: Int? {
        results.first { $0.role == .floor && $0.operation == .build && $0.status == .ok }?.memory?.overBaselineBytes
    }
}

/// Wall time of one workload by phase, in seconds: what makes the suite long.
struct PhaseTimes: Codable, Sendable {
    /// Building graphs, reference archives and peer inputs, and the peers' pilot runs.
    var setupSeconds = 0.0
    /// The part of `setupSeconds` spent in pilot runs.
    var pilotSeconds = 0.0
    /// The warm-up and the `--reps` rounds, but for the quick rows' extra runs.
    var roundsSeconds = 0.0
    /// The quick rows' extra runs (two a round, spread within the rounds).
    var extraRoundsSeconds = 0.0
    /// The part of the rounds spent checking results (outside the clock of each run).
    var checkSeconds = 0.0
    /// Memory-probe child processes.
    var memorySeconds = 0.0
    var totalSeconds = 0.0
}

struct MachineFacts: Codable, Sendable {
    var cpuModel: String
    var logicalCPUs: Int
    var memoryBytes: UInt64
    var operatingSystem: String
}

/// The whole run: what `--json PATH` writes.
struct Report: Codable, Sendable {
    /// The version of this document's schema (docs/BENCHMARKS.md); a change that older readers
    /// would misread raises it.
    static let currentSchemaVersion = 1
    var schemaVersion = currentSchemaVersion
    /// ISO-8601 UTC start time.
    var date: String
    var arguments: [String]
    /// "release" or "debug" (debug figures are meaningless).
    var build: String
    var zstdInBuild: Bool
    var machine: MachineFacts
    /// The 1-, 5- and 15-minute load averages (/proc/loadavg) when the run started and ended: how
    /// busy the machine was, which its figures depend on.
    var loadAverageAtStart: [Double]?
    var loadAverageAtEnd: [Double]?
    var count: Int
    var sharedFraction: Double
    var repetitions: Int
    var warmups: Int
    var peerBudgetSeconds: Double
    /// The heap every timed run started from (`--heap`).
    var heap: HeapState
    /// Whether each timed run was preceded by touching the new memory its row takes
    /// (`--pretouch`); nil in reports written before the flag existed.
    var pretouch: Bool?
    var seed: UInt64
    var compressions: [String]
    var workloads: [WorkloadReport] = []
    var sweep: [SweepPoint] = []
    var growth: [Growth] = []
    var targets: [TargetResult] = []
    /// Rows that failed (an error or a wrong result); the exit status is 1 if any did.
    var failures: Int = 0
    /// This run's rows against `--baseline PATH`.
    var baseline: BaselineComparison?
    var totalSeconds: Double = 0
}
