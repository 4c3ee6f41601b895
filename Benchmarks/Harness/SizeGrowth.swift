// Benchmarks/Harness/SizeGrowth.swift - how gridstore's cost grows with N: the sweep and the probe

import Foundation

/// Times gridstore's encode and decode (no compression) at other sizes.
///
/// Without `--sweep`, only the grid-state workload at N/10 (the probe the linearity target
/// needs, next to the main run at N); with it, every selected workload at 10k, 100k, 1M and
/// 10M records, each size only if the machine has the memory for it.
struct SizeGrowth {
    var settings: Settings
    static let sweepSizes = [10_000, 100_000, 1_000_000, 10_000_000]
    /// Generous resident bytes per record: graph, decoded graph, archives and tables at once.
    static let bytesPerRecordNeeded = 1_024

    func points() -> [SweepPoint] {
        var points: [SweepPoint] = []
        let entries: [WorkloadEntry]
        let sizes: [Int]
        if settings.sweep {
            entries = Workloads.selected(by: settings)
            sizes = Self.sweepSizes
        } else {
            entries = Workloads.selected(by: settings).filter { $0.name == Targets.workload }
            sizes = settings.count / 10 >= 1_000 ? [settings.count / 10] : []
        }
        for entry in entries {
            for size in sizes {
                points += measure(entry, at: size)
            }
        }
        return points
    }

    private func measure(_ entry: WorkloadEntry, at size: Int) -> [SweepPoint] {
        var sized = settings
        sized.count = size
        sized.repetitions = min(settings.repetitions, 3)
        let operations = [OperationKind.encode, .decode]
        let needed = size * Self.bytesPerRecordNeeded  // sizes are at most 10^7: no overflow
        if let available = MachineFacts.availableMemory, available < needed {
            return operations.map {
                SweepPoint(
                    workload: entry.name, operation: $0, records: size, status: .unavailable,
                    message: "needs about \(Format.bytes(needed)), \(Format.bytes(available)) available")
            }
        }
        let workload = entry.make(sized)
        let timer = CaseTimer(settings: sized)
        return workload.cases().filter {
            $0.role == .gridstore && $0.compression == "none" && operations.contains($0.operation)
        }.map { sizedCase in
            let result = timer.measure(sizedCase)
            Output.progress("size \(size.grouped): " + TableRenderer.progressLine(result))
            return SweepPoint(
                workload: entry.name, operation: result.operation, records: size, status: result.status,
                message: result.message, seconds: result.seconds,
                nanosecondsPerRecord: result.seconds.map { $0.median / Double(size) * 1e9 }, bytes: result.bytes)
        }
    }

    /// The exponent e of time ∝ N^e for each workload and operation, from the smallest size of
    /// at least 100k records (or the smallest there is) to the largest, including the main run.
    static func exponents(_ points: [SweepPoint], reported: [WorkloadReport]) -> [Growth] {
        var growth: [Growth] = []
        for workload in reported {
            for operation in [OperationKind.encode, .decode] {
                var sizes: [(records: Int, seconds: Double)] = points.compactMap {
                    guard $0.workload == workload.name, $0.operation == operation, let seconds = $0.seconds else {
                        return nil
                    }
                    return ($0.records, seconds.median)
                }
                if let main = workload.results.first(where: {
                    $0.role == .gridstore && $0.compression == "none" && $0.operation == operation && $0.status == .ok
                }), let seconds = main.seconds, !sizes.contains(where: { $0.records == main.records }) {
                    sizes.append((main.records, seconds.median))
                }
                sizes.sort { $0.records < $1.records }
                guard let last = sizes.last, sizes.count >= 2 else { continue }
                let first = sizes.first { $0.records >= 100_000 && $0.records < last.records } ?? sizes[0]
                growth.append(
                    Growth(
                        workload: workload.name, operation: operation, fromRecords: first.records,
                        toRecords: last.records,
                        exponent: log(last.seconds / first.seconds) / log(Double(last.records) / Double(first.records))))
            }
        }
        return growth
    }
}
