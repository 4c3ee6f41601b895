// Benchmarks/Harness/Runner.swift - times the cases, scales slow peers, gathers the report

import Foundation
import GraphArchive

/// Times one case: a warm-up, then the repetitions, each result checked outside the clock.
struct CaseTimer {
    var settings: Settings
    /// Size of the first pilot run that estimates a slow peer's cost, and the least N a peer
    /// is run at.
    static let firstPilotCount = 1_000
    static let minimumCount = 100

    func measure(_ measured: Case) -> CaseResult {
        var result = CaseResult(measured, records: measured.records)
        if let reason = measured.notApplicable {
            result.status = .notApplicable
            result.message = reason
            return result
        }
        do {
            let count = try countToRun(measured)
            let trial = try measured.prepare(count)
            var samples: [Double] = []
            for repetition in 0..<(settings.warmups + settings.repetitions) {
                let elapsed = try time(trial.run)
                try trial.check()
                if repetition >= settings.warmups { samples.append(elapsed) }
            }
            result.record(samples: samples, measuredRecords: count, bytes: trial.bytes)
        } catch {
            (result.status, result.message) = Self.classify(error)
        }
        return result
    }

    /// Unavailable compression is a fact of the build, not a failure.
    static func classify(_ error: any Error) -> (Status, String) {
        if let error = error as? GraphArchiveError, error.code == .compressionUnavailable {
            return (.unavailable, error.message)
        }
        if let error = error as? Unavailable { return (.unavailable, error.description) }
        return (.failed, "\(error)")
    }

    /// N for everything but slow peers. For those: the largest round N whose warm-up and
    /// repetitions fit the budget, extrapolated linearly from pilot runs (each checked) that
    /// grow tenfold while the estimate says N could grow more than tenfold.
    func countToRun(_ measured: Case) throws -> Int {
        let cap = min(measured.records, measured.maximumCount ?? measured.records)
        guard measured.scalesDown else { return cap }
        let runs = Double(settings.warmups + settings.repetitions)
        var pilotCount = min(cap, Self.firstPilotCount)
        while true {
            let pilot = try measured.prepare(pilotCount)
            let seconds = try time {
                try pilot.run()
                try pilot.check()
            }
            let affordable = settings.peerBudget / runs / seconds * Double(pilotCount)
            let count = affordable >= Double(cap) ? cap : max(Self.minimumCount, Self.roundDown(Int(affordable)))
            if pilotCount == cap || count <= pilotCount * 10 { return min(count, cap) }
            pilotCount = min(cap, pilotCount * 10)
        }
    }

    /// The largest 1, 2 or 5 times a power of ten not above `value` (at least 1).
    static func roundDown(_ value: Int) -> Int {
        var power = 1
        while power <= value / 10 { power *= 10 }
        for step in [5, 2, 1] where step * power <= value { return step * power }
        return max(1, power)
    }

    func time(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        return start.duration(to: .now).seconds
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}

/// Runs the selected workloads and puts every figure into a ``Report``.
struct Runner {
    var settings: Settings
    var arguments: [String]

    /// Groups named by `--only`; empty: every group.
    private var groups: Set<String> {
        Set(settings.only).intersection(CommandLineSyntax.groups)
    }

    private func includes(_ group: String) -> Bool {
        groups.isEmpty || groups.contains(group)
    }

    func run() -> Report {
        let start = ContinuousClock.now
        var report = Report(settings: settings, arguments: arguments)
        let timer = CaseTimer(settings: settings)
        for entry in Workloads.selected(by: settings) {
            let workload = entry.make(settings)
            Output.progress("\(workload.name): \(workload.summary)")
            var results: [CaseResult] = []
            var probes: [(index: Int, probed: Case)] = []
            for measured in workload.cases() where includes(measured.group) {
                let result = timer.measure(measured)
                Output.progress(TableRenderer.progressLine(result))
                if measured.memoryProbe != nil && result.status == .ok { probes.append((results.count, measured)) }
                results.append(result)
            }
            if !settings.sweep && includes("gridstore") {
                report.sweep += SizeGrowth(settings: settings).probe(entry)
            }
            if includes("memory") {
                for (index, probed) in probes {
                    do {
                        results[index].memory = try MemoryProbe.measure(probed, settings: settings)
                        Output.progress(TableRenderer.memoryLine(results[index]))
                    } catch {
                        results[index].memoryError = "\(error)"
                        Output.progress("  memory \(probed.identifier): \(error)")
                    }
                }
            }
            report.workloads.append(
                WorkloadReport(
                    name: workload.name, summary: workload.summary, recordName: workload.recordName,
                    records: workload.recordCount, results: results, comparisons: Comparisons.make(results)))
        }
        if settings.sweep && includes("gridstore") {
            report.sweep = SizeGrowth(settings: settings).sweep()
        }
        report.growth = SizeGrowth.exponents(report.sweep, reported: report.workloads)
        report.targets = Targets.judge(report, settings: settings)
        report.failures = report.workloads.flatMap(\.results).count { $0.status == .failed }
            + report.sweep.count { $0.status == .failed }
        report.totalSeconds = start.duration(to: .now).seconds
        return report
    }
}

extension Report {
    init(settings: Settings, arguments: [String]) {
        #if DEBUG
        build = "debug"
        #else
        build = "release"
        #endif
        #if Zstd
        zstdInBuild = true
        #else
        zstdInBuild = false
        #endif
        date = ISO8601DateFormatter().string(from: Date())
        self.arguments = arguments
        machine = MachineFacts.current
        count = settings.count
        sharedFraction = settings.sharedFraction
        repetitions = settings.repetitions
        warmups = settings.warmups
        peerBudgetSeconds = settings.peerBudget
        seed = settings.seed
        compressions = settings.compressions.map(\.description)
    }
}
