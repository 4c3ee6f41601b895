// Benchmarks/Harness/MarkdownReport.swift - a report as docs/BENCHMARKS.md shows it (`--markdown PATH`)

import Foundation

/// The results section of docs/BENCHMARKS.md, made from a report `--json` wrote: the run's facts,
/// gridstore's own rows, its other ways of reading and printing, gridstore against each peer and
/// floor, and the targets.
enum MarkdownReport {
    static func render(_ report: Report) -> String {
        var text = facts(report) + "\n"
        text += "\n" + gridstoreRows(report).render()
        let others = otherGridstoreRows(report)
        if !others.rows.isEmpty { text += "\n" + others.render() }
        text += "\n" + comparisons(report).render()
        if !report.sweep.isEmpty { text += "\n" + sweep(report).render() }
        if !report.targets.isEmpty { text += "\n" + targets(report).render() }
        return text
    }

    static func facts(_ report: Report) -> String {
        let measuring = Baseline.measuringArguments(report.arguments)
        let arguments = measuring.isEmpty ? "defaults" : "`\(measuring.joined(separator: " "))`"
        return """
            Run of \(report.date), \(report.build) build\(report.zstdInBuild ? "" : " without zstd"), \
            \(arguments): N = \(report.count.grouped), F = \(report.sharedFraction), \(report.warmups) warm-up + \
            \(report.repetitions) timed rounds, \(report.heap.rawValue) heap\(TableRenderer.pretouchText(report)), on \(report.machine.cpuModel) \
            (\(report.machine.logicalCPUs) logical CPUs, \(Format.bytes(Int(report.machine.memoryBytes))), \
            \(report.machine.operatingSystem)); load average \
            \(TableRenderer.loadText(report.loadAverageAtStart, report.loadAverageAtEnd)). \
            \(report.failures == 0 ? "Every row passed its checks" : "\(report.failures) rows FAILED") in \
            \(Format.seconds(report.totalSeconds)).
            """
    }

    /// gridstore's medians, one line per workload and compression: the four operations, the
    /// archive's size per record and the memory a save needs beyond the graph.
    /// The operations of the table of gridstore's own rows.
    static let mainOperations: [OperationKind] = [.encode, .decode, .save, .load]

    static func gridstoreRows(_ report: Report) -> MarkdownTable {
        let operations = mainOperations
        var table = MarkdownTable(
            header: ["workload", "compression"] + operations.map(\.rawValue) + ["bytes/record", "save: peak − before"],
            rightAligned: Set(2..<8)
        )
        for workload in report.workloads {
            let rows = workload.results.filter {
                workload.results.isMainGridstoreRow($0) && operations.contains($0.operation)
            }
            var compressions: [String] = []
            for row in rows where !compressions.contains(row.compression) { compressions.append(row.compression) }
            for compression in compressions {
                func row(_ operation: OperationKind) -> CaseResult? {
                    rows.first { $0.compression == compression && $0.operation == operation }
                }
                let times = operations.map { operation in
                    row(operation).map {
                        $0.status == .ok ? $0.seconds.map { Format.seconds($0.median) } ?? "-" : $0.status.rawValue
                    }
                        ?? "-"
                }
                table.rows.append(
                    [workload.name, compression] + times + [
                        row(.encode)?.bytesPerRecord.map(Format.decimal) ?? "-",
                        row(.save)?.memory.map { Format.bytes($0.overBaselineBytes) } ?? "-",
                    ]
                )
            }
        }
        return table
    }

    /// gridstore's rows the first table has no place for (the schema-less read, `inspect --json`
    /// and `load --json`): median, and peak memory over the archive where it was measured.
    static func otherGridstoreRows(_ report: Report) -> MarkdownTable {
        var table = MarkdownTable(
            header: ["workload", "gridstore row", "operation", "compression", "median", "peak − before", "× archive"],
            rightAligned: [4, 5, 6]
        )
        for workload in report.workloads {
            for row in workload.results
            where row.role == .reference
                || row.role == .gridstore
                    && (!workload.results.isMainGridstoreRow(row) || !mainOperations.contains(row.operation))
            {
                let memory = row.memory
                table.rows.append([
                    workload.name, row.subject, row.operation.rawValue, row.compression,
                    row.status == .ok ? row.seconds.map { Format.seconds($0.median) } ?? "-" : row.status.rawValue,
                    memory.map { Format.bytes($0.overBaselineBytes) } ?? "-",
                    memory.flatMap { memory in
                        row.bytes.map { Format.decimal(Double(memory.overBaselineBytes) / Double($0)) }
                    } ?? "-",
                ])
            }
        }
        return table
    }

    /// gridstore's median against each peer's and floor's.
    static func comparisons(_ report: Report) -> MarkdownTable {
        var table = MarkdownTable(
            header: ["workload", "operation", "compression", "gridstore against", "gridstore", "other", "reads"],
            rightAligned: [4, 5]
        )
        for comparison in report.workloads.flatMap(\.comparisons) {
            table.rows.append([
                comparison.workload, comparison.operation.rawValue, comparison.compression, comparison.label,
                Format.seconds(comparison.gridstoreSeconds), Format.seconds(comparison.otherSeconds),
                comparison.reading,
            ])
        }
        return table
    }

    /// The sweep (`--sweep`): time per record of each operation at each size, gridstore's and
    /// its floors' parts, and e of time ∝ N^e for gridstore's (the floor's beside it).
    static func sweep(_ report: Report) -> MarkdownTable {
        var sizes: [Int] = []
        var lines: [(workload: String, operation: OperationKind)] = []
        for point in report.sweep {
            if !sizes.contains(point.records) { sizes.append(point.records) }
            if !lines.contains(where: { $0 == (point.workload, point.operation) }) {
                lines.append((point.workload, point.operation))
            }
        }
        sizes.sort()
        var table = MarkdownTable(
            header: ["workload", "operation"] + sizes.map { "N = \($0.grouped)" } + ["time ∝ N^e"],
            rightAligned: Set(2..<(2 + sizes.count))
        )
        for line in lines {
            let points = report.sweep.filter { $0.workload == line.workload && $0.operation == line.operation }
            let cells = sizes.map { size in
                guard let point = points.first(where: { $0.records == size }) else { return "-" }
                guard point.status == .ok else { return point.status.rawValue }
                return point.nanosecondsPerRecord.map { String(format: "%.1f ns", $0) } ?? "-"
            }
            let growth = report.growth.first { $0.workload == line.workload && $0.operation == line.operation }
            table.rows.append(
                [line.workload, operationName(line.operation)] + cells + [
                    growth.map { growth in
                        String(format: "e = %.2f", growth.exponent)
                            + (growth.floorExponent.map { String(format: " (floor: %.2f)", $0) } ?? "")
                    } ?? ""
                ]
            )
        }
        return table
    }

    /// gridstore's operation, or the floor part that times `operation` ("floor: traversal").
    private static func operationName(_ operation: OperationKind) -> String {
        guard let part = Comparisons.floorParts.first(where: { $0.operation == operation }) else {
            return operation.rawValue
        }
        return "\(part.of.rawValue) floor: \(part.subject)"
    }

    static func targets(_ report: Report) -> MarkdownTable {
        var table = MarkdownTable(header: ["verdict", "target", "measured"])
        for target in report.targets {
            table.rows.append([target.verdict.rawValue, target.target, target.detail])
        }
        return table
    }
}

/// A GitHub-flavoured Markdown table; `|` in cells is escaped.
struct MarkdownTable {
    var header: [String]
    var rows: [[String]] = []
    /// Columns aligned right (numbers); the others align left.
    var rightAligned: Set<Int> = []

    func render() -> String {
        func line(_ cells: [String]) -> String {
            "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
        }
        let rule =
            "|" + header.indices.map { rightAligned.contains($0) ? " ---: " : " --- " }.joined(separator: "|") + "|"
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}
