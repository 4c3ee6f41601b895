// Benchmarks/Harness/SizeGrowth.swift - how gridstore's cost grows with N: the sweep and the probe

import Foundation

/// Times gridstore's encode and decode (no compression) at other sizes, and the floors beside
/// them when the floors group runs.
///
/// Without `--sweep`, the grid-state workload at N/10: the probe the linearity target needs,
/// run right after the main grid-state rows so that both see the same machine load. With it,
/// every selected workload at 10k, 100k, 1M and 10M records, each size only if the machine has
/// the memory for it and the growth so far says it will not take too long.
///
/// The floors' growth is the machine's part of gridstore's: a graph of 10M records no longer
/// fits the caches and the TLB, and walking it costs more per record than at 1M whatever reads
/// it. The linearity target judges gridstore's own exponent; the report shows the floor's next
/// to it.
struct SizeGrowth {
    var settings: Settings
    /// Time the floors at each size too.
    var includesFloors: Bool
    static let sweepSizes = [10_000, 100_000, 1_000_000, 10_000_000]
    /// Generous resident bytes per record: graph, decoded graph, archives and tables at once.
    static let bytesPerRecordNeeded = 1_024

    /// The growth probe's cases for `entry`: N/10 for the targets' workload, none for others.
    func probeCases(_ entry: WorkloadEntry) -> [Case] {
        guard entry.name == Targets.workload, settings.count / 10 >= 1_000 else { return [] }
        var sized = settings
        sized.count = settings.count / 10
        return growthCases(entry.make(sized))
    }

    /// gridstore's encode and decode without compression, what the growth figures time, and
    /// the parts of their floors (traversal, memcpy, build from arrays) if asked for.
    /// Only gridstore's first case of each operation: the row the tables call "gridstore" (not
    /// the keyed workload's schema-less read or first read).
    func growthCases(_ workload: any Workload) -> [Case] {
        var timed: [OperationKind] = []
        return workload.cases().filter { candidate in
            switch candidate.role {
            case .gridstore:
                guard candidate.compression == "none", candidate.operation == .encode || candidate.operation == .decode,
                    !timed.contains(candidate.operation)
                else { return false }
                timed.append(candidate.operation)
                return true
            case .floor:
                return includesFloors && Comparisons.floorParts.contains { $0.operation == candidate.operation }
            case .peer, .reference: return false
            }
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

    /// The settings of the sweep point at `size`.
    func pointSettings(at size: Int) -> Settings {
        var sized = settings
        sized.count = size
        sized.repetitions = min(settings.repetitions, 3)
        sized.isSweepPoint = true
        return sized
    }

    private func measure(_ entry: WorkloadEntry, at size: Int, after earlier: [SweepPoint]) -> [SweepPoint] {
        let sized = pointSettings(at: size)
        let operations: [OperationKind] = [.encode, .decode]
        let workload = entry.make(sized)
        let records = workload.recordCount
        func skipped(_ reason: String) -> [SweepPoint] {
            operations.map {
                SweepPoint(
                    workload: entry.name,
                    operation: $0,
                    records: size,
                    status: .skipped,
                    message: reason
                )
            }
        }
        // A workload capped below this size would time its largest size again.
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
        return CaseTimer(settings: sized).measure(growthCases(workload), label: "size \(records.grouped): ")
            .map { result in
                Output.progress("size \(records.grouped): " + TableRenderer.progressLine(result))
                return SweepPoint(result)
            }
    }

    /// The exponent e of time ∝ N^e for each workload and operation, from the smallest size of
    /// at least 100k records (or the smallest there is) to the largest, the main run included;
    /// with the floor's exponent between the same sizes where the floor ran at both.
    static func exponents(_ points: [SweepPoint], reported: [WorkloadReport]) -> [Growth] {
        reported.flatMap { workload in
            let main = workload.results.filter {
                $0.role != .peer && ($0.compression == "none" || $0.role == .floor) && $0.status == .ok
            }.map(SweepPoint.init)
            return exponents(points + main, workload: workload.name)
        }
    }

    static func exponents(_ points: [SweepPoint], workload: String) -> [Growth] {
        let points = points.filter { $0.workload == workload }
        return [OperationKind.encode, .decode].compactMap { operation in
            let sizes = medians(points, parts: [operation])
            guard let last = sizes.last, sizes.count >= 2 else { return nil }
            let first = sizes.first { $0.records >= 100_000 && $0.records < last.records } ?? sizes[0]
            let floor = medians(points, parts: Comparisons.floorParts.filter { $0.of == operation }.map(\.operation))
            let floorFirst = floor.first { $0.records == first.records }
            let floorLast = floor.first { $0.records == last.records }
            return Growth(
                workload: workload,
                operation: operation,
                fromRecords: first.records,
                toRecords: last.records,
                exponent: exponent(from: first, to: last),
                floorExponent: floorFirst.flatMap { from in floorLast.map { exponent(from: from, to: $0) } }
            )
        }
    }

    private static func exponent(from first: (records: Int, seconds: Double), to last: (records: Int, seconds: Double))
        -> Double
    {
        log(last.seconds / first.seconds) / log(Double(last.records) / Double(first.records))
    }

    /// The summed medians of `parts` at each size where every part has one (the first point of
    /// a part at a size counts), smallest size first.
    private static func medians(_ points: [SweepPoint], parts: [OperationKind]) -> [(records: Int, seconds: Double)] {
        var bySize: [Int: [OperationKind: Double]] = [:]
        for point in points where parts.contains(point.operation) {
            if let seconds = point.seconds?.median, bySize[point.records]?[point.operation] == nil {
                bySize[point.records, default: [:]][point.operation] = seconds
            }
        }
        return bySize.compactMap { records, seconds in
            seconds.count == parts.count ? (records, seconds.values.reduce(0, +)) : nil
        }.sorted { $0.records < $1.records }
    }
}

extension Growth {
    /// "e = 1.06 from N = 100,000 to 1,000,000 (the floor's e = 1.02)".
    var summary: String {
        "e = \(Format.decimal(exponent)) from N = \(fromRecords.grouped) to \(toRecords.grouped)"
            + (floorExponent.map { " (the floor's e = \(Format.decimal($0)))" } ?? "")
    }
}
