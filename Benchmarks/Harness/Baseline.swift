// Benchmarks/Harness/Baseline.swift - this run's rows against an earlier run's JSON (`--baseline PATH`)

import Foundation
import GridStore

/// One row of this run next to the same row (workload, subject, operation, compression) of the
/// baseline.
struct BaselineRow: Codable, Sendable, Equatable {
    var workload: String
    var subject: String
    var operation: OperationKind
    var compression: String
    /// This run's median, in seconds, for `records` records.
    var seconds: Double?
    var records: Int
    /// The baseline's median, in seconds, for `baselineRecords` records.
    var baselineSeconds: Double?
    var baselineRecords: Int?
    /// Time per record now / time per record in the baseline: above 1, slower than the baseline.
    var ratio: Double?
    /// Archive bytes per record now / in the baseline, for rows that produce an archive.
    var bytesRatio: Double?
    /// Why a figure is missing, or that the two runs were at different N.
    var note: String?
}

/// This run against a baseline: what `--baseline PATH` prints and `--json` keeps.
struct BaselineComparison: Codable, Sendable {
    var path: String
    /// The baseline run's start time, machine and load, for judging how comparable it is.
    var date: String
    var arguments: [String]
    var machine: MachineFacts
    var loadAverageAtStart: [Double]?
    var loadAverageAtEnd: [Double]?
    var rows: [BaselineRow]
}

/// A baseline that cannot be used.
struct BaselineError: Error, Equatable {
    var message: String
}

enum Baseline {
    /// Reads a report that `--json` wrote, for `flag` (named in errors).
    static func load(_ path: String, flag: String = "--baseline") throws(BaselineError) -> Report {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw BaselineError(message: "cannot read \(flag) \(path): \(FileErrorReason.reason(of: error))")
        }
        return try decode(data, what: "\(flag) \(path)")
    }

    /// The report in `data`; `what` names it in errors.
    static func decode(_ data: Data, what: String) throws(BaselineError) -> Report {
        struct Version: Decodable { var schemaVersion: Int }
        guard let version = try? JSONDecoder().decode(Version.self, from: data) else {
            throw BaselineError(message: "\(what) is not a report written by --json")
        }
        guard version.schemaVersion == Report.currentSchemaVersion else {
            throw BaselineError(
                message: "\(what) has schemaVersion \(version.schemaVersion); this harness reads "
                    + "\(Report.currentSchemaVersion)"
            )
        }
        do {
            return try JSONDecoder().decode(Report.self, from: data)
        } catch {
            throw BaselineError(message: "\(what) is not a report written by --json: \(error)")
        }
    }

    /// Every row of `report`'s workloads, in the run's order, with the baseline's figures for the
    /// same row. Times are compared per record, so a run at another N still reads sensibly (the
    /// row says so: per-record cost is not constant in N).
    static func compare(_ report: Report, with baseline: Report, path: String) -> BaselineComparison {
        var earlier: [String: CaseResult] = [:]
        for result in baseline.workloads.flatMap(\.results) where earlier[key(result)] == nil {
            earlier[key(result)] = result
        }
        var rows: [BaselineRow] = []
        // A row the subject cannot run (Codable peers on a graph of references) has no figures.
        for result in report.workloads.flatMap(\.results) where result.status != .notApplicable {
            var row = BaselineRow(
                workload: result.workload,
                subject: result.subject,
                operation: result.operation,
                compression: result.compression,
                seconds: result.status == .ok ? result.seconds?.median : nil,
                records: result.records
            )
            guard let old = earlier[key(result)] else {
                row.note = "not in the baseline"
                rows.append(row)
                continue
            }
            row.baselineSeconds = old.status == .ok ? old.seconds?.median : nil
            row.baselineRecords = old.records
            if let now = row.seconds, let then = row.baselineSeconds, then > 0 {
                row.ratio = (now / Double(result.records)) / (then / Double(old.records))
            }
            if let now = result.bytesPerRecord, let then = old.bytesPerRecord, then > 0 {
                row.bytesRatio = now / then
            }
            if result.status != .ok {
                row.note = "\(result.status.rawValue) now"
            } else if old.status != .ok {
                row.note = "\(old.status.rawValue) in the baseline"
            } else if old.records != result.records {
                row.note = "per record: N = \(result.records.grouped) now, \(old.records.grouped) in the baseline"
            }
            rows.append(row)
        }
        return BaselineComparison(
            path: path,
            date: baseline.date,
            arguments: baseline.arguments,
            machine: baseline.machine,
            loadAverageAtStart: baseline.loadAverageAtStart,
            loadAverageAtEnd: baseline.loadAverageAtEnd,
            rows: rows
        )
    }

    /// `arguments` without the flags that name output and comparison files, which do not change
    /// what a run measures: the arguments that describe its figures.
    static func measuringArguments(_ arguments: [String]) -> [String] {
        var kept: [String] = []
        var skipNext = false
        for argument in arguments {
            if skipNext {
                skipNext = false
            } else if argument == "--json" || argument == "--baseline" {
                skipNext = true
            } else {
                kept.append(argument)
            }
        }
        return kept
    }

    private static func key(_ result: CaseResult) -> String {
        "\(result.workload)\u{0}\(result.subject)\u{0}\(result.operation.rawValue)\u{0}\(result.compression)"
    }

    /// How `ratio` reads: "1.25x slower", "1.25x faster", or "same" to three significant digits.
    static func reading(_ ratio: Double) -> String {
        if abs(ratio - 1) < 0.005 { return "same" }
        return ratio > 1 ? "\(Format.times(ratio)) slower" : "\(Format.times(1 / ratio)) faster"
    }
}
