// Benchmarks/Harness/Runner.swift - times the cases, scales slow peers, gathers the report

import Foundation
import GraphArchive

/// Times cases in rounds: every case is set up first, then each round runs every case once
/// (the first round is the warm-up, which a trial whose setup already ran its very call skips:
/// ``Trial/isWarmedUp``), and the quick rows a target reads three times, spread over the round
/// (``roundOrder(quick:others:passes:)``); each result is checked outside the clock.
///
/// Round-robin rather than case after case: on a shared machine the load drifts over minutes,
/// and a ratio (gridstore/floor, gridstore/peer, N against N/10) is only fair if both sides saw
/// the same load; interleaved, they do.
struct CaseTimer {
    var settings: Settings
    /// Size of the first pilot run that estimates a slow peer's cost, and the least N a peer
    /// is run at.
    static let firstPilotCount = 1_000
    static let minimumCount = 100
    /// How far over its budget a slow peer's last pilot may say measuring there would go and
    /// still be measured there.
    static let overrun = 1.25

    func measure(_ measured: Case) -> CaseResult {
        measure([measured])[0]
    }

    func measure(_ cases: [Case], label: String = "") -> [CaseResult] {
        var phases = PhaseTimes()
        return measure(cases, label: label, phases: &phases)
    }

    /// Measures `cases` and adds the wall time of each phase to `phases`.
    func measure(_ cases: [Case], label: String = "", phases: inout PhaseTimes) -> [CaseResult] {
        var results = cases.map { CaseResult($0, records: $0.records) }
        var trials: [(index: Int, trial: Trial, count: Int)] = []
        var clock = PhaseClock()
        for (index, measured) in cases.enumerated() {
            if let reason = measured.notApplicable {
                results[index].status = .notApplicable
                results[index].message = reason
                continue
            }
            let setupStart = ContinuousClock.now
            do {
                let pilotStart = ContinuousClock.now
                let (count, piloted) = try sizeToRun(measured)
                if measured.scalesDown { phases.pilotSeconds += pilotStart.duration(to: .now).seconds }
                trials.append((index, try piloted ?? measured.prepare(count), count))
            } catch {
                (results[index].status, results[index].message) = Self.classify(error)
            }
            results[index].setupSeconds = setupStart.duration(to: .now).seconds
        }
        phases.setupSeconds += clock.lap()
        var samples = [[Double]](repeating: [], count: cases.count)
        /// The longest run of each case so far, its warm-up included (nil: it has not run).
        var longest = [Double?](repeating: nil, count: cases.count)
        /// The new memory each case's last run took (``FreshPages``).
        var freshBytes = [Int](repeating: 0, count: cases.count)
        for (index, trial, _) in trials { freshBytes[index] = trial.freshBytes }
        var extraSeconds = 0.0
        func runOnce(_ index: Int, _ trial: Trial, keepingTime: Bool) {
            do {
                let (elapsed, fresh) = try time(pretouching: freshBytes[index], trial.run)
                freshBytes[index] = fresh
                longest[index] = max(longest[index] ?? 0, elapsed)
                let checkStart = ContinuousClock.now
                defer {
                    let checking = checkStart.duration(to: .now).seconds
                    results[index].checkSeconds = (results[index].checkSeconds ?? 0) + checking
                    phases.checkSeconds += checking
                }
                try trial.check()
                if keepingTime { samples[index].append(elapsed) }
            } catch {
                (results[index].status, results[index].message) = Self.classify(error)
            }
        }
        // Quick cases of gridstore and the floors whose medians a target reads run three times a
        // round: on this VM a memory-bound operation's time varies by up to 2× from one run to
        // the next, and a median of three moved ratios beyond their margins. Their extra runs are
        // spread over the round, between the other cases, not gathered after the last round: the
        // VM's slow and fast stretches last minutes, and samples taken after the peers had
        // finished compared one stretch with another (in one run: GraphArchiveEncoder 548-573 ms in
        // the rounds, 943-1,083 ms in the extra rounds after them; JSONEncoder was not there).
        // The other rows keep `--reps` samples: the peers' (run at a smaller N and scaled, good to
        // ±30% from run to run anyway) and the rows no target reads.
        func isQuickCandidate(_ index: Int) -> Bool {
            cases[index].role != .peer && Targets.reads(cases[index])
        }
        let rounds = settings.warmups + settings.repetitions
        for round in 0..<rounds {
            if cases.count > 1 { Output.progress("  \(label)round \(round + 1) of \(rounds)") }
            let active = trials.filter { results[$0.index].status == .ok }
            if round < settings.warmups {
                // A candidate warms up here even when its setup already ran it: its time says
                // whether it is quick.
                for (index, trial, _) in active where !trial.isWarmedUp || isQuickCandidate(index) {
                    runOnce(index, trial, keepingTime: false)
                }
                continue
            }
            let isQuick = active.map {
                isQuickCandidate($0.index) && (longest[$0.index] ?? .infinity) < Self.quickCaseSeconds
            }
            let order = Self.roundOrder(
                quick: active.indices.filter { isQuick[$0] },
                others: active.indices.filter { !isQuick[$0] },
                passes: Self.quickCasePasses
            )
            for (position, isExtra) in order where results[active[position].index].status == .ok {
                let start = ContinuousClock.now
                runOnce(active[position].index, active[position].trial, keepingTime: true)
                if isExtra { extraSeconds += start.duration(to: .now).seconds }
            }
        }
        let roundsSeconds = clock.lap()
        phases.roundsSeconds += roundsSeconds - extraSeconds
        phases.extraRoundsSeconds += extraSeconds
        for (index, trial, count) in trials where results[index].status == .ok {
            results[index].record(samples: samples[index], measuredRecords: count, bytes: trial.bytes)
        }
        return results
    }

    /// A case whose runs all took less than this is run `quickCasePasses` times a round.
    static let quickCaseSeconds = 1.5
    static let quickCasePasses = 3

    /// The order of one timed round, as positions in its list of cases, each marked whether it
    /// is an extra run: every quick case once, then the others in `passes` even parts, with
    /// every quick case again before each part but the first. Each quick case so runs `passes`
    /// times, spread over the round, and its samples see the stretches of machine time the
    /// others' do.
    static func roundOrder(quick: [Int], others: [Int], passes: Int) -> [(position: Int, isExtra: Bool)] {
        var order = quick.map { (position: $0, isExtra: false) }
        let parts = max(1, passes)
        for part in 0..<parts {
            if part > 0 { order += quick.map { (position: $0, isExtra: true) } }
            let bounds = (others.count * part + parts - 1) / parts..<(others.count * (part + 1) + parts - 1) / parts
            order += others[bounds].map { (position: $0, isExtra: false) }
        }
        return order
    }

    /// Unavailable compression is a fact of the build, not a failure.
    static func classify(_ error: any Error) -> (Status, String) {
        if let error = error as? GraphArchiveError, error.code == .compressionUnavailable {
            return (.unavailable, error.message)
        }
        if let error = error as? Unavailable { return (.unavailable, error.description) }
        return (.failed, "\(error)")
    }

    /// The size to run `measured` at, and the trial a pilot already set up there (nil: set it
    /// up now). The workload's N for everything but slow peers, capped at their `maximumCount`.
    ///
    /// A slow peer runs at the largest 1-2-5 round N at which measuring it fits the budget:
    /// setting up its input (the peer's own archive, checked), then the repetitions, each with
    /// its check. Pilot runs, each checked, estimate that cost: the first at 1,000 records, then
    /// twice that, then up to tenfold at a time, never beyond what the pilots so far say fits,
    /// the cost extrapolated with the growth the last two pilots show (time ∝ N^e, e ≥ 1). So a
    /// peer whose cost grows faster than linearly (NSKeyedArchiver on the cycles graph: 1,000 →
    /// 2,000 nodes cost 8 times as much) shows it at small sizes, and so does a decoder whose
    /// input comes from such an encoder. The last pilot's trial, already run once (its warm-up),
    /// is kept when the peer runs at that size.
    func sizeToRun(_ measured: Case) throws -> (count: Int, trial: Trial?) {
        let cap = min(measured.records, measured.maximumCount ?? measured.records)
        guard measured.scalesDown else { return (cap, nil) }
        var pilots: [Pilot] = []
        var trials: [Int: Trial] = [:]
        let budget = Self.budget(for: measured, settings: settings)
        while true {
            let step = Self.nextStep(
                after: pilots,
                cap: cap,
                budget: budget,
                repetitions: settings.repetitions,
                sunkInputCount: measured.sunkInputCount
            )
            switch step {
            case .measure(let count):
                return (count, trials[count])
            case .pilot(let count):
                let start = ContinuousClock.now
                var trial = try measured.prepare(count)
                let setup = max(start.duration(to: .now).seconds, trial.inputSeconds)
                let (once, fresh) = try time {
                    try trial.run()
                    try trial.check()
                }
                trial.isWarmedUp = true
                trial.freshBytes = fresh
                trials[count] = trial
                pilots.append(Pilot(count: count, setup: setup, once: once))
                Output.progress(
                    "  pilot \(measured.workload) \(measured.subject) \(measured.operation.rawValue) at "
                        + "\(count.grouped): setup \(Format.seconds(setup)), a checked run \(Format.seconds(once))"
                )
            }
        }
    }

    /// Seconds `peer`'s row may take: `--budget` for a peer a target reads, a quarter of it for
    /// the others (the property lists on the grid states, the chain's and the cycles' peers,
    /// NSKeyedArchiver writing keyed archives), whose figures only fill the table.
    static func budget(for peer: Case, settings: Settings) -> Double {
        Targets.reads(peer) ? settings.peerBudget : settings.peerBudget / 4
    }

    /// A pilot run of a slow peer: its size, what setting it up cost (its input's making, also
    /// when reused) and one run with its check.
    struct Pilot: Equatable {
        var count: Int
        var setup: Double
        var once: Double
    }

    /// What a slow peer does next: a pilot run, or the measurement.
    enum PilotStep: Equatable {
        case pilot(Int)
        case measure(Int)
    }

    /// The next step after pilots at increasing sizes, for a peer that may run at up to `cap`;
    /// measuring at a pilot's size costs its setup, then `repetitions` checked runs.
    /// `sunkInputCount` is a size whose input other rows make anyway: there only the runs cost.
    static func nextStep(
        after pilots: [Pilot],
        cap: Int,
        budget: Double,
        repetitions: Int,
        sunkInputCount: Int? = nil
    ) -> PilotStep {
        guard let last = pilots.last else { return .pilot(min(cap, firstPilotCount)) }
        func cost(_ pilot: Pilot) -> Double { pilot.setup + Double(repetitions) * pilot.once }
        /// The exponent e of `value` ∝ N^e over the last two pilots, at least 1.
        func growth(_ value: (Pilot) -> Double) -> Double {
            guard pilots.count >= 2 else { return 1 }
            let previous = pilots[pilots.count - 2]
            return max(1, log(value(last) / value(previous)) / log(Double(last.count) / Double(previous.count)))
        }
        // Once two pilots show how a run grows, try the size whose input is made anyway if its
        // runs alone fit.
        if let sunk = sunkInputCount, sunk <= cap, sunk > last.count, pilots.count >= 2,
            Double(repetitions) * last.once * pow(Double(sunk) / Double(last.count), growth(\.once)) <= budget
        {
            return .pilot(sunk)
        }
        let affordable = Double(last.count) * pow(budget / cost(last), 1 / growth(cost))
        let fits = affordable >= Double(cap) ? cap : max(minimumCount, roundDown(Int(affordable)))
        if fits <= last.count || last.count == cap {
            // A pilot a little over the budget is kept: its input is made and it has run once,
            // and a 1-2-5 step back would measure at less than half the size.
            return .measure(cost(last) <= budget * overrun ? last.count : min(fits, cap))
        }
        // One size says nothing of growth: double it first, then up to tenfold at a time.
        return .pilot(min(fits, last.count * (pilots.count == 1 ? 2 : 10)))
    }

    /// The largest 1, 2 or 5 times a power of ten not above `value` (at least 1).
    static func roundDown(_ value: Int) -> Int {
        var power = 1
        while power <= value / 10 { power *= 10 }
        for step in [5, 2, 1] where step * power <= value { return step * power }
        return max(1, power)
    }

    /// Runs `body` on the clock from a settled heap and, with `--pretouch on`, after touching
    /// `freshBytes` of new memory (``FreshPages``); returns its seconds and the new memory it
    /// took (0 when not measured).
    func time(pretouching freshBytes: Int = 0, _ body: () throws -> Void) throws -> (seconds: Double, freshBytes: Int) {
        settings.heap.settle()
        let resident = settings.pretouch ? FreshPages.prepare(freshBytes) : nil
        let start = ContinuousClock.now
        try body()
        let seconds = start.duration(to: .now).seconds
        return (seconds, FreshPages.taken(since: resident))
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}

/// Seconds between successive laps, for the phase times.
struct PhaseClock {
    private var last = ContinuousClock.now

    /// Seconds since the last lap (or since the clock was made).
    mutating func lap() -> Double {
        let now = ContinuousClock.now
        defer { last = now }
        return last.duration(to: now).seconds
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
            var phases = PhaseTimes()
            var clock = PhaseClock()
            let workload = entry.make(settings)
            Output.progress("\(workload.name): \(workload.summary)")
            let cases = workload.cases().filter { includes($0.group) }
            // The growth probe (N/10) runs in the same rounds as the rows at N.
            let growth = SizeGrowth(settings: settings, includesFloors: includes("floors"))
            let probeCases = !settings.sweep && includes("gridstore") ? growth.probeCases(entry) : []
            phases.setupSeconds += clock.lap()
            let measured = timer.measure(cases + probeCases, label: "\(workload.name): ", phases: &phases)
            _ = clock.lap()
            var results = Array(measured.prefix(cases.count))
            report.sweep += measured.dropFirst(cases.count).map(SweepPoint.init)
            for result in measured { Output.progress(TableRenderer.progressLine(result)) }
            let probes = cases.indices.filter { cases[$0].memoryProbe != nil && results[$0].status == .ok }
            if includes("memory") {
                let figures = MemoryProbe.measure(probes.map { cases[$0] }, settings: settings)
                for (index, probed) in zip(probes, figures) {
                    switch probed {
                    case .success(let memory):
                        results[index].memory = memory
                        Output.progress(TableRenderer.memoryLine(results[index]))
                    case .failure(let error):
                        results[index].memoryError = "\(error)"
                        Output.progress("  memory \(cases[index].identifier): \(error)")
                    }
                }
            }
            phases.memorySeconds = clock.lap()
            phases.totalSeconds =
                phases.setupSeconds + phases.roundsSeconds + phases.extraRoundsSeconds + phases.memorySeconds
            Output.progress(TableRenderer.phaseLine(workload.name, phases))
            report.workloads.append(
                WorkloadReport(
                    name: workload.name,
                    summary: workload.summary,
                    recordName: workload.recordName,
                    records: workload.recordCount,
                    results: results,
                    comparisons: Comparisons.make(results),
                    phases: phases
                )
            )
        }
        if settings.sweep && includes("gridstore") {
            report.sweep = SizeGrowth(settings: settings, includesFloors: includes("floors")).sweep()
        }
        report.growth = SizeGrowth.exponents(report.sweep, reported: report.workloads)
        report.targets = Targets.judge(report, settings: settings)
        report.failures =
            report.workloads.flatMap(\.results).count { $0.status == .failed }
            + report.sweep.count { $0.status == .failed }
        report.totalSeconds = start.duration(to: .now).seconds
        report.loadAverageAtEnd = MachineFacts.loadAverages
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
        loadAverageAtStart = MachineFacts.loadAverages
        count = settings.count
        sharedFraction = settings.sharedFraction
        repetitions = settings.repetitions
        warmups = settings.warmups
        peerBudgetSeconds = settings.peerBudget
        heap = settings.heap
        pretouch = settings.pretouch
        seed = settings.seed
        compressions = settings.compressions.map(\.description)
    }
}
