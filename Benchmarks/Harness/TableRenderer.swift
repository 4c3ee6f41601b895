// Benchmarks/Harness/TableRenderer.swift - the report as readable text tables

import Foundation

/// Columns of text, numbers right-aligned.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []
    /// Columns aligned left (text); all others align right (numbers).
    var leftAligned: Set<Int> = [0]

    func render(indent: String = "  ") -> String {
        let widths = header.indices.map { column in
            ([header] + rows).map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return leftAligned.contains(column) ? cell + padding : padding + cell
            }
            return indent + padded.joined(separator: "  ").replacing(/\s+$/, with: "")
        }
        let rule = indent + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}

enum TableRenderer {
    static func render(_ report: Report) -> String {
        var text = ""
        if report.build == "debug" { text += Output.debugWarning + "\n\n" }
        text += """
            gridstore benchmarks, \(report.date), \(report.build) build\(report.zstdInBuild ? "" : " without zstd")
            machine: \(report.machine.cpuModel), \(report.machine.logicalCPUs) logical CPUs, \
            \(Format.bytes(Int(report.machine.memoryBytes))) memory, \(report.machine.operatingSystem), \
            load average \(loadText(report.loadAverageAtStart, report.loadAverageAtEnd))
            N = \(report.count.grouped), F = \(report.sharedFraction), \(report.warmups) warm-up + \
            \(report.repetitions) repetitions (median, min, max), peer budget \(report.peerBudgetSeconds) s per \
            operation, \(report.heap.rawValue) heap\(pretouchText(report)), seed \(report.seed)
            arguments: \(report.arguments.isEmpty ? "(defaults)" : report.arguments.joined(separator: " "))

            """
        for workload in report.workloads {
            text += "\n== \(workload.name): \(workload.summary)\n\n"
            text += results(workload).render()
            if !workload.comparisons.isEmpty {
                text += "\n" + comparisons(workload).render()
            }
            if workload.results.contains(where: { $0.memory != nil || $0.memoryError != nil }) {
                text += "\n" + memory(workload).render()
            }
        }
        if !report.sweep.isEmpty {
            text += "\n== gridstore and its floors at other sizes (no compression)\n\n" + sweep(report).render()
        }
        if !report.targets.isEmpty {
            text +=
                "\n== targets\n\n"
            if report.count != Targets.count || report.sharedFraction != Targets.sharedFraction {
                text +=
                    "  (the targets are set for N = \(Targets.count.grouped), F = \(Targets.sharedFraction); "
                    + "at this run's N and F the verdicts are indicative only)\n\n"
            }
            text += targets(report).render()
        }
        if let baseline = report.baseline {
            text += "\n== against the baseline \(baseline.path): \(runFacts(baseline))\n\n"
            text += against(baseline).render()
        }
        text += "\n\(report.failures == 0 ? "all rows passed their checks" : "\(report.failures) rows FAILED")"
        text += " in \(Format.seconds(report.totalSeconds)); times are per operation on the whole graph.\n"
        if report.build == "debug" { text += "\n" + Output.debugWarning + "\n" }
        return text
    }

    /// When and where the baseline ran, and how loaded the machine was.
    static func runFacts(_ baseline: BaselineComparison) -> String {
        let measuring = Baseline.measuringArguments(baseline.arguments)
        let arguments = measuring.isEmpty ? "defaults" : measuring.joined(separator: " ")
        return "\(baseline.date), \(baseline.machine.cpuModel) (\(baseline.machine.logicalCPUs) logical CPUs), "
            + "load average \(loadText(baseline.loadAverageAtStart, baseline.loadAverageAtEnd)), \(arguments)"
    }

    /// ", new pages pretouched" when the run touched each row's new memory first (`--pretouch`).
    static func pretouchText(_ report: Report) -> String {
        report.pretouch == true ? ", new pages pretouched" : ""
    }

    /// "0.52 at the start, 1.10 at the end" (1-minute averages), or "not recorded".
    static func loadText(_ start: [Double]?, _ end: [Double]?) -> String {
        guard let start = start?.first, let end = end?.first else { return "not recorded" }
        return String(format: "%.2f at the start, %.2f at the end", start, end)
    }

    static func against(_ baseline: BaselineComparison) -> TextTable {
        var table = TextTable(
            header: [
                "workload", "subject", "operation", "compression", "now", "baseline", "now/baseline", "reads",
                "bytes now/baseline", "note",
            ],
            leftAligned: [0, 1, 2, 3, 7, 9]
        )
        for row in baseline.rows {
            table.rows.append([
                row.workload, row.subject, row.operation.rawValue, row.compression,
                row.seconds.map(Format.seconds) ?? "-", row.baselineSeconds.map(Format.seconds) ?? "-",
                row.ratio.map(Format.ratio) ?? "-", row.ratio.map(Baseline.reading) ?? "",
                row.bytesRatio.map(Format.ratio) ?? "-", row.note ?? "",
            ])
        }
        return table
    }

    private static func results(_ workload: WorkloadReport) -> TextTable {
        var table = TextTable(
            header: [
                "subject", "operation", "compression", "run at N", "median", "min", "max", "\(workload.recordName)s/s",
                "MB/s", "bytes", "B/\(workload.recordName)", "note",
            ],
            leftAligned: [0, 1, 2, 11]
        )
        for result in workload.results {
            var note = [String]()
            if result.isScaled {
                note.append("scaled ×\(Format.factor(result.scale)) to N = \(result.records.grouped)")
            }
            if result.status != .ok { note.append("\(result.status.rawValue.uppercased()): \(result.message ?? "")") }
            if let extra = result.note { note.append(extra) }
            let seconds = result.seconds
            table.rows.append([
                result.subject, result.operation.rawValue, result.compression,
                result.status == .ok ? result.measuredRecords.grouped : "-",
                seconds.map { Format.seconds($0.median) } ?? "-", seconds.map { Format.seconds($0.min) } ?? "-",
                seconds.map { Format.seconds($0.max) } ?? "-", result.recordsPerSecond.map(Format.rate) ?? "-",
                result.megabytesPerSecond.map { String(format: "%.0f", $0) } ?? "-",
                result.bytes.map(Format.bytes) ?? "-", result.bytesPerRecord.map(Format.decimal) ?? "-",
                note.joined(separator: "; "),
            ])
        }
        return table
    }

    private static func comparisons(_ workload: WorkloadReport) -> TextTable {
        var table = TextTable(
            header: [
                "gridstore against", "operation", "compression", "gridstore", "other", "gridstore/other", "reads",
            ],
            leftAligned: [0, 1, 2, 6]
        )
        for comparison in workload.comparisons {
            table.rows.append([
                comparison.label, comparison.operation.rawValue, comparison.compression,
                Format.seconds(comparison.gridstoreSeconds), Format.seconds(comparison.otherSeconds),
                Format.ratio(comparison.ratio), comparison.reading,
            ])
        }
        return table
    }

    /// Peak memory per operation; decode's and load's also over the graph they build, whose own
    /// size the decode floor's probe measures (encode's and save's "before" holds the graph);
    /// printing builds no graph to keep, so its "× archive" is peak − before over the archive.
    private static func memory(_ workload: WorkloadReport) -> TextTable {
        var table = TextTable(
            header: [
                "peak memory (child process per operation)", "compression", "before", "peak", "peak − before",
                "over the graph", "archive", "× archive",
            ],
            leftAligned: [0, 1]
        )
        let graph = workload.graphBytes
        for result in workload.results where result.memory != nil || result.memoryError != nil {
            let subject =
                result.role == .floor
                ? "\(result.subject): the graph's own size" : "\(result.subject) \(result.operation.rawValue)"
            guard let memory = result.memory else {
                table.rows.append([subject, result.compression, "error: \(result.memoryError ?? "")"])
                continue
            }
            let overGraph: Int? =
                switch result.operation {
                case .decode, .load: graph.map { memory.overBaselineBytes - $0 }
                case .encode, .save: memory.overBaselineBytes
                default: nil
                }
            let overArchive = overGraph ?? (result.operation == .print ? memory.overBaselineBytes : nil)
            table.rows.append([
                subject + (memory.peakReset ? "" : " (peak not reset)"), result.compression,
                Format.bytes(memory.baselineBytes), Format.bytes(memory.peakBytes),
                Format.bytes(memory.overBaselineBytes), overGraph.map(Format.bytes) ?? "-",
                result.bytes.map(Format.bytes) ?? "-",
                overArchive.flatMap { over in result.bytes.map { Format.decimal(Double(over) / Double($0)) } } ?? "-",
            ])
        }
        return table
    }

    private static func sweep(_ report: Report) -> TextTable {
        var table = TextTable(
            header: ["workload", "operation", "N", "median", "ns/record", "bytes", "note"],
            leftAligned: [0, 1, 6]
        )
        for point in report.sweep {
            table.rows.append([
                point.workload, point.operation.rawValue, point.records.grouped,
                point.seconds.map { Format.seconds($0.median) } ?? "-",
                point.nanosecondsPerRecord.map { String(format: "%.1f", $0) } ?? "-",
                point.bytes.map(Format.bytes) ?? "-",
                point.status == .ok ? "" : "\(point.status.rawValue): \(point.message ?? "")",
            ])
        }
        for growth in report.growth {
            table.rows.append([
                growth.workload, growth.operation.rawValue, "", "", "", "",
                "time ∝ N^e: " + growth.summary,
            ])
        }
        return table
    }

    private static func targets(_ report: Report) -> TextTable {
        var table = TextTable(header: ["verdict", "target", "measured"], leftAligned: [0, 1, 2])
        for target in report.targets {
            table.rows.append([target.verdict.rawValue.uppercased(), target.target, target.detail])
        }
        return table
    }

    // MARK: - Progress

    static func progressLine(_ result: CaseResult) -> String {
        let what = "  \(result.workload) \(result.subject) \(result.operation.rawValue) \(result.compression)"
        guard result.status == .ok, let seconds = result.seconds else {
            return "\(what): \(result.status.rawValue) \(result.message ?? "")"
        }
        let scaled = result.isScaled ? " (run at N = \(result.measuredRecords.grouped), scaled)" : ""
        let cost = [("setup", result.setupSeconds), ("checks", result.checkSeconds)].compactMap { name, seconds in
            seconds.map { "\(name) \(Format.seconds($0))" }
        }
        return "\(what): median \(Format.seconds(seconds.median))\(scaled) [\(cost.joined(separator: ", "))]"
    }

    /// Where a workload's wall time went.
    static func phaseLine(_ workload: String, _ phases: PhaseTimes) -> String {
        "\(workload): \(Format.seconds(phases.totalSeconds)) = setup \(Format.seconds(phases.setupSeconds)) "
            + "(pilots \(Format.seconds(phases.pilotSeconds))) + rounds \(Format.seconds(phases.roundsSeconds)) "
            + "+ extra runs \(Format.seconds(phases.extraRoundsSeconds)) + memory \(Format.seconds(phases.memorySeconds)) "
            + "(checks \(Format.seconds(phases.checkSeconds)) of the rounds)"
    }

    static func memoryLine(_ result: CaseResult) -> String {
        guard let memory = result.memory else { return "" }
        return "  memory \(result.workload) \(result.subject) \(result.operation.rawValue) \(result.compression): "
            + "peak \(Format.bytes(memory.peakBytes)), \(Format.bytes(memory.overBaselineBytes)) over before"
    }
}
