// Benchmarks/Harness/SizeGrowth.swift - how gridstore's cost grows with N: the sweep and the probe

import Foundation

/// Times gridstore's encode and decode (no compression) at other sizes.
///
/// Without `--sweep`, the grid-state workload at N/10: the probe the linearity target needs,
/// run right after the main grid-state rows so that both see the same machine load. With it,
/// every selected workload at 10k, 100k, 1M and 10M records, each size only if the machine has
/// the memory for it and the growth so far says it will not take too long.
struct SizeGrowth {
    var settings: Settings
    static let sweepSizes = [10_000, 100_000, 1_000_000, 10_000_000]
    /// Generous resident bytes per record: graph, decoded graph, archives and tables at once.
    static let bytesPerRecordNeeded = 1_024

    /// The growth probe's cases for `entry`: N/10 for the targets' workload, none for others.
    func probeCases(_ entry: WorkloadEntry) -> [Case] {
        guard entry.name == Targets.workload, settings.count / 10 >= 1_000 else { return [] }
        var sized = settings
        sized.count = settings.count / 10
        return Self.gridstoreCases(entry.make(sized))
    }

    /// gridstore's encode and decode without compression: what the growth figures time.
    static func gridstoreCases(_ workload: any Workload) -> [Case] {
        workload.cases().filter {
            $0.role == .gridstore && $0.compression == "none" && ($0.operation == .encode || $0.operation == .decode)
        }
    }

    /// The `--sweep` sizes for every selected workload.
    func sweep() -> [SweepPoint] {
        var points: [SweepPoint] = []
        for entry in Workloads.selected(by: settings) {
            for size in Self.sweepSizes {
                points += measure(entry, at: size, after: points.filter { $0.workload == entry.name })
            }
        }
        return points
    }

    /// Longest a sweep point may be expected to take (warm-up and repetitions of one operation).
    static let pointBudget = 120.0

    private func measure(_ entry: WorkloadEntry, at size: Int, after earlier: [SweepPoint]) -> [SweepPoint] {
        var sized = settings
        sized.count = size
        sized.repetitions = min(settings.repetitions, 3)
        let operations: [OperationKind] = [.encode, .decode]
        let workload = entry.make(sized)
        let records = workload.recordCount
        func skipped(_ reason: String) -> [SweepPoint] {
            operations.map {
                SweepPoint(
                    workload: entry.name,
                    operation: $0,
                    records: records,
                    status: .skipped,
                    message: reason
                )
            }
        }
        // A workload capped below this size (the keyed one) would time its largest size again.
        if earlier.contains(where: { $0.records == records }) {
            return skipped("this workload runs at \(records.grouped) records at most")
        }
        let needed = records * Self.bytesPerRecordNeeded  // at most 10^7 records: no overflow
        if let available = MachineFacts.availableMemory, available < needed {
            return skipped("needs about \(Format.bytes(needed)), \(Format.bytes(available)) available")
        }
        // Skip a size the growth seen so far says would take too long (a quadratic shape at 10M).
        let runs = Double(sized.warmups + sized.repetitions)
        let growth = Self.exponents(earlier, workload: entry.name)
        let expected = operations.compactMap { operation -> Double? in
            guard let last = earlier.last(where: { $0.operation == operation && $0.seconds != nil }),
                let seconds = last.seconds?.median
            else { return nil }
            let exponent = max(1, growth.first { $0.operation == operation }?.exponent ?? 1)
            return seconds * pow(Double(records) / Double(last.records), exponent) * runs
        }.max()
        if let expected, expected > Self.pointBudget {
            return skipped("would take about \(Format.seconds(expected)) at the growth seen so far")
        }
        return CaseTimer(settings: sized).measure(Self.gridstoreCases(workload), label: "size \(records.grouped): ")
            .map { result in
                Output.progress("size \(records.grouped): " + TableRenderer.progressLine(result))
                return SweepPoint(result)
            }
    }

    /// The exponent e of time ∝ N^e for each workload and operation, from the smallest size of
    /// at least 100k records (or the smallest there is) to the largest, the main run included.
    static func exponents(_ points: [SweepPoint], reported: [WorkloadReport]) -> [Growth] {
        reported.flatMap { workload in
            let main = workload.results.filter { $0.role == .gridstore && $0.compression == "none" && $0.status == .ok }
                .map(SweepPoint.init)
            return exponents(points + main, workload: workload.name)
        }
    }

    static func exponents(_ points: [SweepPoint], workload: String) -> [Growth] {
        [OperationKind.encode, .decode].compactMap { operation in
            var sizes: [(records: Int, seconds: Double)] = []
            for point in points where point.workload == workload && point.operation == operation {
                if let seconds = point.seconds?.median, !sizes.contains(where: { $0.records == point.records }) {
                    sizes.append((point.records, seconds))
                }
            }
            sizes.sort { $0.records < $1.records }
            guard let last = sizes.last, sizes.count >= 2 else { return nil }
            let first = sizes.first { $0.records >= 100_000 && $0.records < last.records } ?? sizes[0]
            return Growth(
                workload: workload,
                operation: operation,
                fromRecords: first.records,
                toRecords: last.records,
                exponent: log(last.seconds / first.seconds) / log(Double(last.records) / Double(first.records))
            )
        }
    }
}
