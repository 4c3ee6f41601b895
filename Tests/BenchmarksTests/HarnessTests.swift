// Tests/BenchmarksTests/HarnessTests.swift - the benchmark harness: flags, checks, scaling, every case

import Foundation
import GraphArchive
import GridStore
import Testing

@testable import Benchmarks

@Suite("Benchmark harness")
struct HarnessTests {
    // MARK: - Flags

    @Test func parsesEveryFlag() throws {
        let command = try CommandLineSyntax.parse([
            "--n", "20k", "--shared", "0.5", "--reps", "7", "--only", "gridstate", "nskeyed", "--compress",
            "none,zstd:19", "--budget", "2.5", "--json", "out.json", "--sweep", "--seed", "7", "--heap", "cold",
            "--pretouch", "off", "--baseline", "Benchmarks/baseline.json", "--keyed-input", "inputs", "chain",
        ])
        guard case .run(let settings) = command else {
            Issue.record("expected a run, got \(command)")
            return
        }
        #expect(settings.count == 20_000)
        #expect(settings.sharedFraction == 0.5)
        #expect(settings.repetitions == 7)
        #expect(settings.only == ["gridstate", "nskeyed", "chain"])
        #expect(settings.compressions == [.none, .zstd(level: 19)])
        #expect(settings.peerBudget == 2.5)
        #expect(settings.jsonPath == "out.json")
        #expect(settings.sweep)
        #expect(settings.seed == 7)
        #expect(settings.heap == .cold)
        #expect(!settings.pretouch)
        #expect(settings.baselinePath == "Benchmarks/baseline.json")
        #expect(settings.keyedInputDirectory == "inputs")
        #expect(try CommandLineSyntax.parse(["--markdown", "run.json"]) == .markdown(reportPath: "run.json"))
    }

    @Test func defaultsAreTheTargetSettings() throws {
        guard case .run(let settings) = try CommandLineSyntax.parse([]) else {
            Issue.record("expected a run")
            return
        }
        #expect(settings.count == 1_000_000)
        #expect(settings.sharedFraction == 0.25)
        #expect(settings.compressions == [.none, .zstd])
        #expect(settings.heap == .warm)
        #expect(settings.pretouch)
        #expect(try CommandLineSyntax.parse(["-h"]) == .help)
        #expect(try CommandLineSyntax.parse(["--n", "1_000", "--help"]) == .help)
    }

    @Test(arguments: [
        ["--bogus"], ["--n"], ["--n", "0"], ["--n", "1M0"], ["--n", "99999999999999999999"], ["--shared", "1"],
        ["--shared", "-0.1"], ["--reps", "x"], ["--only"], ["--only", "nope"], ["nope"], ["--compress", "lz4"],
        ["--compress", "zstd:"], ["--budget", "0"], ["--json"], ["--seed", "-1"], ["--heap"], ["--heap", "hot"],
        ["--heap", "--sweep"], ["--pretouch"], ["--pretouch", "yes"], ["--baseline"], ["--baseline", "--sweep"],
        ["--markdown"], ["--keyed-input"], ["--keyed-input", "--sweep"],
    ])
    func rejectsBadFlags(_ arguments: [String]) {
        #expect(throws: UsageError.self) { try CommandLineSyntax.parse(arguments) }
    }

    // MARK: - Figures

    @Test func roundsPeerSizesDownToOneTwoFive() {
        #expect(CaseTimer.roundDown(37_512) == 20_000)
        #expect(CaseTimer.roundDown(99_999) == 50_000)
        #expect(CaseTimer.roundDown(100_000) == 100_000)
        #expect(CaseTimer.roundDown(1_999) == 1_000)
        #expect(CaseTimer.roundDown(7) == 5)
        #expect(CaseTimer.roundDown(0) == 1)
    }

    @Test func quickCasesRunThreeTimesARoundBetweenTheOthers() {
        func order(_ quick: [Int], _ others: [Int]) -> [String] {
            CaseTimer.roundOrder(quick: quick, others: others, passes: 3).map {
                "\($0.position)\($0.isExtra ? "+" : "")"
            }
        }
        #expect(
            order([0, 1], [2, 3, 4, 5, 6, 7]) == ["0", "1", "2", "3", "0+", "1+", "4", "5", "0+", "1+", "6", "7"]
        )
        #expect(order([0], [1, 2]) == ["0", "1", "0+", "2", "0+"])
        #expect(order([0], [1, 2, 3, 4]) == ["0", "1", "2", "0+", "3", "0+", "4"])
        #expect(order([1], []) == ["1", "1+", "1+"])
        #expect(order([], [0, 1]) == ["0", "1"])
    }

    /// The runs of a grid-state gridstore row a target reads (quick), a peer's and a row no
    /// target reads, in the order the timer makes them.
    @Test func quickRowsAreSampledAmongThePeersNotAfterThem() {
        final class Log: @unchecked Sendable { var runs: [String] = [] }
        let log = Log()
        func row(_ subject: String, _ role: Role, _ compression: String) -> Case {
            Case(
                workload: Targets.workload,
                subject: subject,
                group: role == .peer ? "json" : "gridstore",
                role: role,
                operation: .encode,
                compression: compression,
                records: 10
            ) { _ in Trial(bytes: nil, run: { log.runs.append(subject) }, check: {}) }
        }
        var settings = Settings()
        settings.repetitions = 2
        let results = CaseTimer(settings: settings).measure([
            row("quick", .gridstore, "none"), row("peer", .peer, "none"), row("zstd", .gridstore, "zstd:3"),
        ])
        let round = ["quick", "peer", "quick", "zstd", "quick"]
        #expect(log.runs == ["quick", "peer", "zstd"] + round + round)
        #expect(results.map { $0.seconds?.samples.count } == [6, 2, 2])
    }

    @Test func pilotsGrowTwofoldThenTenfoldWithinTheBudget() {
        // Each pilot as its size and what measuring there would cost (all of it setup here).
        func pilots(_ costs: [(count: Int, cost: Double)]) -> [CaseTimer.Pilot] {
            costs.map { CaseTimer.Pilot(count: $0.count, setup: $0.cost, once: 0) }
        }
        let step = { (costs: [(count: Int, cost: Double)]) in
            CaseTimer.nextStep(after: pilots(costs), cap: 1_000_000, budget: 8, repetitions: 3)
        }
        #expect(step([]) == .pilot(1_000))
        #expect(CaseTimer.nextStep(after: [], cap: 500, budget: 8, repetitions: 3) == .pilot(500))
        // One pilot says nothing of growth: the next is twice as large.
        #expect(step([(1_000, 0.1)]) == .pilot(2_000))
        // Linear growth: tenfold, short of the 50,000 that fit.
        #expect(step([(1_000, 0.1), (2_000, 0.2)]) == .pilot(20_000))
        #expect(step([(1_000, 0.1), (2_000, 0.2), (20_000, 2)]) == .pilot(50_000))
        #expect(step([(2_000, 0.2), (20_000, 2), (50_000, 5)]) == .measure(50_000))
        // 8 times the cost for twice the size (time ∝ N^3): 5,000 would take 62 s, not 20 s.
        #expect(step([(1_000, 0.5), (2_000, 4)]) == .measure(2_000))
        // A pilot over the budget sends the peer back to a size that fits, unless it is over by
        // less than a quarter: then its input is made, and it stays.
        #expect(step([(2_000, 1), (5_000, 20)]) == .measure(2_000))
        #expect(step([(20_000, 0.9), (200_000, 2.9), (500_000, 8.6)]) == .measure(500_000))
        #expect(step([(20_000, 0.9), (200_000, 2.9), (500_000, 10.1)]) == .measure(200_000))
        // Never below the least size, never above the cap.
        #expect(step([(1_000, 1_000)]) == .measure(CaseTimer.minimumCount))
        #expect(
            CaseTimer.nextStep(after: pilots([(100_000, 1)]), cap: 100_000, budget: 8, repetitions: 3)
                == .measure(100_000)
        )
    }

    @Test func pilotsTryTheSizeWhoseInputIsMadeAnyway() {
        let small = [
            CaseTimer.Pilot(count: 1_000, setup: 0.05, once: 0.016),
            CaseTimer.Pilot(count: 2_000, setup: 0.1, once: 0.033),
        ]
        func step(_ pilots: [CaseTimer.Pilot], sunk: Int?) -> CaseTimer.PilotStep {
            CaseTimer.nextStep(after: pilots, cap: 100_000, budget: 8, repetitions: 3, sunkInputCount: sunk)
        }
        // Three runs at 100,000 would take about 6 s: the input there is made anyway, so try it.
        #expect(step(small, sunk: 100_000) == .pilot(100_000))
        #expect(step(small + [.init(count: 100_000, setup: 0.01, once: 2)], sunk: 100_000) == .measure(100_000))
        // Too slow there: the usual steps, from what the pilots cost.
        #expect(step(small + [.init(count: 100_000, setup: 0.01, once: 4)], sunk: 100_000) == .measure(50_000))
        #expect(step(small, sunk: nil) == .pilot(20_000))
        let slow = [small[0], CaseTimer.Pilot(count: 2_000, setup: 0.1, once: 0.24)]
        #expect(step(slow, sunk: 100_000) != .pilot(100_000))
        // One pilot says nothing of how runs grow.
        #expect(step([small[0]], sunk: 100_000) == .pilot(2_000))
    }

    @Test func pilotsCountWhatTheInputCostEvenWhenShared() throws {
        var settings = Settings()
        settings.peerBudget = 8
        var prepared: [Int] = []
        // A peer a target reads (the grid states' NSKeyedUnarchiver), so the whole budget is its.
        var row = Case(
            workload: GridStateGraph.name,
            subject: "NSKeyedUnarchiver",
            group: "nskeyed",
            role: .peer,
            operation: .decode,
            compression: "none",
            records: 1_000_000
        ) { count in
            prepared.append(count)
            // An input made by an encoder whose cost grows as N^3 (made earlier: reused now).
            let seconds = 0.5 * pow(Double(count) / 1_000, 3)
            return Trial(bytes: nil, inputSeconds: seconds, run: {}, check: {})
        }
        row.scalesDown = true
        #expect(CaseTimer.budget(for: row, settings: settings) == 8)
        var table = row
        table.group = "plist"
        #expect(CaseTimer.budget(for: table, settings: settings) == 2, "no target reads the plist peers")
        let (count, trial) = try CaseTimer(settings: settings).sizeToRun(row)
        #expect(count == 2_000)
        #expect(prepared == [1_000, 2_000], "the pilot at 2,000 is kept, not set up again")
        #expect(trial?.isWarmedUp == true)
    }

    @Test func sharedInputsAreMadeOnceAndKeepTheirCost() {
        let inputs = SharedInputs()
        var made = 0
        let first = inputs.entry("a") {
            made += 1
            return [1, 2, 3]
        }
        let second = inputs.entry("a") {
            made += 1
            return [4]
        }
        #expect(made == 1 && first.value == second.value && first.seconds == second.seconds)
        #expect(inputs.value("b") { "other" } == "other")
    }

    @Test func peerRowsShareOneCheckedInput() throws {
        var settings = Settings()
        settings.count = 300
        let workload = GraphWorkload<GridStateGraph>(settings: settings)
        let rows = workload.cases().filter { $0.group == "json" }
        let trials = try rows.map { try $0.prepare(200) }
        #expect(rows.map(\.operation) == [.encode, .decode])
        #expect(trials.allSatisfy { $0.isWarmedUp })
        #expect(trials[0].inputSeconds > 0 && trials[0].inputSeconds == trials[1].inputSeconds)
        for trial in trials {
            try trial.run()
            try trial.check()
        }
    }

    @Test func jsonTextsMatchUpToTheOrderOfMembers() throws {
        func same(_ text: String, _ reference: String) -> Bool {
            JSONText.isReordering(Data(text.utf8), of: Data(reference.utf8))
        }
        #expect(same(#"[{"k":"a,\"}","l":1}]"#, #"[{"l":1,"k":"a,\"}"}]"#))
        #expect(same(#"{"a":{"x":1,"y":[2]},"b":[]}"#, #"{"b":[],"a":{"y":[2],"x":1}}"#))
        #expect(!same("[1,2]", "[2,1]"), "arrays keep their order")
        #expect(!same(#"{"a":1,"b":22}"#, #"{"b":2,"a":12}"#), "same bytes, other values")
        #expect(!same(#"{"a":1,"b":2}"#, #"{"a":1,"c":2}"#))
        #expect(!same(#"{"a":1, "b":2}"#, #"{"b":2,"a":1}"#), "no whitespace where the reference has none")
        #expect(!same(#"[{"a":1}"#, #"[{"a":1}"#), "a truncated text is no match")

        // JSONEncoder itself: its encodings of one model differ in member order only.
        let model = CodableGridStateWorkload(settings: Settings()).model(50)
        let reference = try CodableFormat.json.encode(model)
        for _ in 0..<8 {
            #expect(CodableFormat.json.isSameArchive(try CodableFormat.json.encode(model), as: reference))
        }
        var changed = model
        changed[7] = GridStateModel(name: model[7].name, color: model[7].color ^ 1, date: model[7].date)
        #expect(!CodableFormat.json.isSameArchive(try CodableFormat.json.encode(changed), as: reference))
    }

    @Test func statsTakeTheMedian() {
        let odd = Stats([3, 1, 2])
        #expect(odd.median == 2 && odd.min == 1 && odd.max == 3)
        #expect(Stats([4, 1, 3, 2]).median == 2.5)
        #expect(Stats([1, 2]).scaled(by: 10).median == 15)
    }

    @Test func scaledRowsReportFiguresForTheFullSize() {
        let row = Case(
            workload: "w",
            subject: "peer",
            group: "json",
            role: .peer,
            operation: .encode,
            compression: "none",
            records: 1_000
        ) { _ in throw Unavailable("not run") }
        var result = CaseResult(row, records: 1_000)
        result.record(samples: [0.5, 1, 2], measuredRecords: 100, bytes: 400)
        #expect(result.scale == 10)
        #expect(result.seconds?.median == 10)
        #expect(result.measuredSeconds?.median == 1)
        #expect(result.bytes == 4_000)
        #expect(result.bytesPerRecord == 4)
        #expect(result.recordsPerSecond == 100)
    }

    @Test func formatsNumbers() {
        #expect(1_234_567.grouped == "1,234,567")
        #expect((-1_000).grouped == "-1,000")
        #expect(12.grouped == "12")
        #expect(Format.seconds(0.012_34) == "12.34 ms")
        #expect(Format.times(312.4) == "312x")
        #expect(Format.times(19.57) == "19.6x")
        #expect(Format.times(21) == "21x")
        #expect(Format.times(2.434) == "2.43x")
        #expect(Format.factor(1_000) == "1,000")
        #expect(Format.factor(2.5) == "2.5")
    }

    // MARK: - Checks catch wrong results

    @Test func gridStateCheckCatchesLostIdentityAndChangedValues() throws {
        let graph = GridStateGraph(count: 200, sharedFraction: 0.5, seed: 3)
        let archive = try GraphArchiver.archivedData(withRootObject: graph.states)
        let decoded = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, from: archive)
        try graph.verify(decoded)

        let unshared = graph.states.map { GridState(name: $0.name, color: $0.color, date: $0.date) }
        #expect(throws: VerificationError.self) { try graph.verify(unshared) }

        decoded[150].color ^= 1
        #expect(throws: VerificationError.self) { try graph.verify(decoded) }
        #expect(throws: VerificationError.self) { try graph.verify(Array(decoded.dropLast())) }
    }

    @Test func codablePeerCheckComparesEverySlot() throws {
        let graph = GridStateGraph(count: 50, sharedFraction: 0.5, seed: 3)
        let peer = GridStateCodablePeer(format: .json)
        var records = try peer.decode(try peer.encode(peer.model(of: graph)))
        try peer.verify(records, against: graph)
        records[49].name += "!"
        #expect(throws: VerificationError.self) { try peer.verify(records, against: graph) }
    }

    @Test func codableWorkloadCheckCatchesLostIdentityAndChangedValues() throws {
        var settings = Settings()
        settings.count = 200
        settings.sharedFraction = 0.5
        let workload = CodableGridStateWorkload(settings: settings)
        let graph = workload.graph(200)
        let decoded = try GraphArchiveDecoder().decode([GridStateModel].self, from: workload.archive(200))
        try CodableGridStateWorkload.verify(decoded, against: graph)

        // A JSON round trip has the values but not the sharing: fine for a peer, not for gridstore.
        let flattened = try CodableFormat.json.decode(
            [GridStateModel].self,
            from: CodableFormat.json.encode(workload.model(200))
        )
        try CodableGridStateWorkload.verifyPeer(flattened, against: graph)
        #expect(throws: VerificationError.self) { try CodableGridStateWorkload.verify(flattened, against: graph) }

        var changed = decoded
        changed[7] = GridStateModel(name: decoded[7].name, color: decoded[7].color ^ 1, date: decoded[7].date)
        #expect(throws: VerificationError.self) { try CodableGridStateWorkload.verifyPeer(changed, against: graph) }
    }

    @Test func codableTargetsAreJudgedOnTheCodableWorkload() {
        var settings = Settings()
        settings.only = [CodableGridStateWorkload.name]
        var report = Report(settings: settings, arguments: [])
        func comparison(_ operation: OperationKind, _ peer: String, speedup: Double) -> Comparison {
            Comparison(
                workload: CodableGridStateWorkload.name,
                operation: operation,
                compression: "none",
                against: peer,
                againstRole: .peer,
                gridstoreSeconds: 1,
                otherSeconds: speedup,
                ratio: 1 / speedup
            )
        }
        report.workloads = [
            WorkloadReport(
                name: CodableGridStateWorkload.name,
                summary: "",
                recordName: "slot",
                records: 10,
                results: [],
                comparisons: [
                    comparison(.encode, "JSONEncoder", speedup: 6), comparison(.decode, "JSONDecoder", speedup: 4),
                    comparison(.encode, "PropertyListEncoder (binary)", speedup: 3),
                ]
            )
        ]
        let verdicts = Dictionary(
            uniqueKeysWithValues: Targets.judge(report, settings: settings).map { ($0.id, $0.verdict) }
        )
        #expect(verdicts["codable-encode-vs-JSONEncoder"] == .met)
        #expect(verdicts["codable-decode-vs-JSONDecoder"] == .missed)
        #expect(verdicts["codable-encode-vs-PropertyListEncoder (binary)"] == .met)
        #expect(verdicts["codable-decode-vs-PropertyListDecoder (binary)"] == .notMeasured)
        #expect(verdicts["codable-encode-vs-native"] == .notMeasured, "the workload's native rows did not run")
        #expect(verdicts.count == 6, "no grid-state targets without the grid-state workload")
    }

    @Test func everyGraphShapeIsJudgedAgainstItsFloorsAndTheBridgeAgainstTheNativePath() {
        let settings = Settings()
        var report = Report(settings: settings, arguments: [])
        func workload(_ name: String, _ results: [CaseResult], _ comparisons: [Comparison] = []) -> WorkloadReport {
            WorkloadReport(
                name: name,
                summary: "",
                recordName: "r",
                records: 10,
                results: results,
                comparisons: comparisons
            )
        }
        func floor(_ name: String, _ operation: OperationKind, ratio: Double) -> Comparison {
            Comparison(
                workload: name,
                operation: operation,
                compression: "none",
                against: "floor",
                againstRole: .floor,
                gridstoreSeconds: ratio,
                otherSeconds: 1,
                ratio: ratio
            )
        }
        let codableRows = [
            measuredRow(
                CodableGridStateWorkload.name,
                "gridstore",
                .gridstore,
                .encode,
                "none",
                seconds: 1.4,
                bytes: 1
            ),
            measuredRow(CodableGridStateWorkload.name, "gridstore", .gridstore, .decode, "none", seconds: 3, bytes: 1),
            measuredRow(
                CodableGridStateWorkload.name,
                CodableGridStateWorkload.nativeSubject,
                .reference,
                .encode,
                "none",
                seconds: 1,
                bytes: 1
            ),
            measuredRow(
                CodableGridStateWorkload.name,
                CodableGridStateWorkload.nativeSubject,
                .reference,
                .decode,
                "none",
                seconds: 1,
                bytes: 1
            ),
            measuredRow(CodableGridStateWorkload.name, "JSONEncoder", .peer, .encode, "none", seconds: 10, bytes: 1),
        ]
        let codableComparisons = Comparisons.make(codableRows)
        #expect(
            codableComparisons.map { "\($0.subject ?? "gridstore") \($0.operation.rawValue) against \($0.against)" }
                == [
                    "gridstore encode against JSONEncoder",
                    "gridstore encode against \(CodableGridStateWorkload.nativeSubject)",
                    "gridstore decode against \(CodableGridStateWorkload.nativeSubject)",
                ],
            "the native rows are what the bridge is held to, not rows compared with the peers"
        )
        report.workloads = [
            workload(
                GridStateGraph.name,
                [
                    // Not what the bridge is held to: the codable workload times the native path itself.
                    measuredRow(GridStateGraph.name, "gridstore", .gridstore, .encode, "none", seconds: 0.1, bytes: 1),
                    measuredRow(GridStateGraph.name, "gridstore", .gridstore, .decode, "none", seconds: 0.1, bytes: 1),
                ]
            ),
            workload(
                ChainGraph.name,
                [],
                [floor(ChainGraph.name, .encode, ratio: 2.9), floor(ChainGraph.name, .decode, ratio: 5)]
            ),
            workload(TreeGraph.name, [], [floor(TreeGraph.name, .decode, ratio: 1.5)]),
            workload(CodableGridStateWorkload.name, codableRows, codableComparisons),
        ]
        let targets = Dictionary(uniqueKeysWithValues: Targets.judge(report, settings: settings).map { ($0.id, $0) })
        #expect(targets["chain-encode-vs-floor"]?.verdict == .met)
        #expect(targets["chain-decode-vs-floor"]?.verdict == .missed)
        #expect(targets["cycles-encode-vs-floor"]?.verdict == .notMeasured)
        #expect(targets["cycles-decode-vs-floor"]?.verdict == .met)
        #expect(targets["chain-decode-memory-none"] != nil && targets["cycles-load-memory-none"] != nil)
        #expect(targets["codable-encode-vs-native"]?.measured == 1.4)
        #expect(targets["codable-encode-vs-native"]?.verdict == .met)
        #expect(targets["codable-decode-vs-native"]?.verdict == .missed)
    }

    @Test func compressedRowsAreJudgedAgainstTheirFloorsWithZstdAlone() {
        let settings = Settings()
        var report = Report(settings: settings, arguments: [])
        let results = [
            measuredRow(GridStateGraph.name, "gridstore", .gridstore, .encode, "zstd:3", seconds: 1.05, bytes: 1),
            measuredRow(GridStateGraph.name, "gridstore", .gridstore, .decode, "zstd:3", seconds: 1.3, bytes: 1),
            measuredRow(GridStateGraph.name, "traversal", .floor, .traverse, "-", seconds: 0.25, bytes: nil),
            measuredRow(GridStateGraph.name, "memcpy", .floor, .memcpy, "-", seconds: 0.25, bytes: nil),
            measuredRow(GridStateGraph.name, "build from arrays", .floor, .build, "-", seconds: 0.5, bytes: nil),
            measuredRow(GridStateGraph.name, "zstd alone", .floor, .compress, "zstd:3", seconds: 0.5, bytes: 1),
            measuredRow(GridStateGraph.name, "zstd alone", .floor, .decompress, "zstd:3", seconds: 0.5, bytes: 1),
        ]
        report.workloads = [
            WorkloadReport(
                name: GridStateGraph.name,
                summary: "",
                recordName: "slot",
                records: 10,
                results: results,
                comparisons: Comparisons.make(results)
            )
        ]
        let targets = Dictionary(uniqueKeysWithValues: Targets.judge(report, settings: settings).map { ($0.id, $0) })
        #expect(targets["encode-vs-floor-zstd:3"]?.measured == 1.05)
        #expect(targets["encode-vs-floor-zstd:3"]?.verdict == .met)
        #expect(targets["decode-vs-floor-zstd:3"]?.measured == 1.3)
        #expect(targets["decode-vs-floor-zstd:3"]?.verdict == .missed)
    }

    @Test func decodeMemoryIsJudgedOverTheGraphsOwnSize() {
        let settings = Settings()
        var report = Report(settings: settings, arguments: [])
        func row(_ subject: String, _ role: Role, _ operation: OperationKind, _ compression: String, over: Int)
            -> CaseResult
        {
            var result = measuredRow(
                GridStateGraph.name,
                subject,
                role,
                operation,
                compression,
                seconds: 1,
                bytes: role == .floor ? nil : 100
            )
            result.memory = MemoryFigures(
                startBytes: 0,
                baselineBytes: 0,
                peakBytes: over,
                overBaselineBytes: over,
                peakReset: true
            )
            return result
        }
        report.workloads = [
            WorkloadReport(
                name: GridStateGraph.name,
                summary: "",
                recordName: "slot",
                records: 10,
                results: [
                    row("build from arrays", .floor, .build, "-", over: 1_000),
                    row("gridstore", .gridstore, .decode, "none", over: 1_100),
                    row("gridstore", .gridstore, .load, "none", over: 1_101),
                ],
                comparisons: []
            )
        ]
        let targets = Dictionary(uniqueKeysWithValues: Targets.judge(report, settings: settings).map { ($0.id, $0) })
        #expect(targets["decode-memory-none"]?.verdict == .met)
        #expect(targets["decode-memory-none"]?.measured == 1)
        #expect(targets["load-memory-none"]?.verdict == .missed)
        #expect(targets["decode-memory-zstd:3"]?.verdict == .notMeasured)
        // Without the graph's own size there is nothing to judge against.
        report.workloads[0].results.removeFirst()
        let unmeasured = Targets.judge(report, settings: settings).first { $0.id == "decode-memory-none" }
        #expect(unmeasured?.verdict == .notMeasured)
    }

    @Test func chainCheckCatchesWrongValuesAndLengths() throws {
        let graph = ChainGraph(count: 100, sharedFraction: 0, seed: 1)
        try graph.verify(graph.root)
        var wrong: ChainLink? = ChainGraph.assemble(graph.values.dropLast() + [graph.values.last! + 1])
        #expect(throws: VerificationError.self) { try graph.verify(wrong!) }
        ChainGraph.dismantle(&wrong)
        var short: ChainLink? = ChainGraph.assemble(Array(graph.values.dropLast()))
        #expect(throws: VerificationError.self) { try graph.verify(short!) }
        ChainGraph.dismantle(&short)
    }

    @Test func treeCheckCatchesWrongBackLinks() throws {
        let graph = TreeGraph(count: 100, sharedFraction: 0, seed: 1)
        let decoded = try GraphUnarchiver.unarchivedObject(
            ofType: TreeNode.self,
            from: GraphArchiver.archivedData(withRootObject: graph.root)
        )
        try graph.verify(decoded)
        let copy = TreeGraph.assemble(graph.parts())
        try graph.verify(copy)
        let child = copy.children[3]
        child.next = child
        #expect(throws: VerificationError.self) { try graph.verify(copy) }
        child.next = copy.children[4]
        child.parent = copy.children[4]
        #expect(throws: VerificationError.self) { try graph.verify(copy) }
    }

    @Test func checkWithoutARunFails() throws {
        var settings = Settings()
        settings.count = 100
        let workload = GraphWorkload<GridStateGraph>(settings: settings)
        let encode = try #require(workload.cases().first { $0.subject == "gridstore" && $0.operation == .encode })
        let trial = try encode.prepare(100)
        try trial.run()
        try trial.check()
        // check() verifies the last run's output; with no run since, there is none to pass.
        #expect(throws: VerificationError.self) { try trial.check() }
    }

    // MARK: - Every case at a small size

    /// Serialized: the cases share this process's scratch folder, removed at the end of each.
    @Test(.serialized, arguments: Workloads.names)
    func everyCasePassesItsChecks(_ name: String) throws {
        var settings = Settings()
        settings.count = 120
        settings.repetitions = 1
        settings.peerBudget = 0.5
        let entry = try #require(Workloads.all.first { $0.name == name })
        let timer = CaseTimer(settings: settings)
        let cases = entry.make(settings).cases()
        #expect(Set(cases.map(\.identifier)).count == cases.count, "case identifiers must be unique for --probe")
        let results = timer.measure(cases)
        #expect(results.map(\.subject) == cases.map(\.subject))
        for (measured, result) in zip(cases, results) {
            #expect(result.status != .failed, "\(measured.identifier): \(result.message ?? "")")
            if result.status == .ok {
                #expect(result.seconds != nil && result.measuredRecords <= measured.records)
                // At this size every case is quick: 1 repetition, plus 2 extra rounds for
                // gridstore's and the floors' rows a target reads.
                let samples = measured.role != .peer && Targets.reads(measured) ? 3 : 1
                #expect(result.seconds?.samples.count == samples, "\(measured.identifier)")
            }
        }
        ScratchDirectory.remove()
    }

    @Test func comparisonsPutGridstoreAgainstPeersAndFloors() {
        func row(_ subject: String, _ role: Role, _ operation: OperationKind, _ compression: String, _ seconds: Double)
            -> CaseResult
        {
            measuredRow("w", subject, role, operation, compression, seconds: seconds, bytes: nil)
        }
        let comparisons = Comparisons.make([
            row("gridstore", .gridstore, .encode, "none", 1), row("JSONEncoder", .peer, .encode, "none", 20),
            row("traversal", .floor, .traverse, "-", 0.25), row("memcpy", .floor, .memcpy, "-", 0.25),
        ])
        #expect(comparisons.count == 2)
        #expect(comparisons.first { $0.against == "JSONEncoder" }?.ratio == 0.05)
        #expect(comparisons.first { $0.againstRole == .floor }?.ratio == 2)
    }
}

/// `--pretouch`: the new memory a run takes, and the touch before the next run.
@Suite("Benchmark harness: new pages")
struct FreshPagesTests {
    /// The touch gives its memory back, and the need measured afterwards is what the run
    /// itself mapped. In a process of its own, whose resident size no test beside it moves.
    @Test func touchGivesMemoryBackAndTheRunsNewMemoryIsMeasured() async {
        await #expect(processExitsWith: .success) {
            let megabyte = 1 << 20
            guard let before = MemoryProbe.residentBytes(), let start = FreshPages.prepare(256 * megabyte) else {
                exit(0)  // no /proc/self/clear_refs here: nothing is touched or measured
            }
            #expect(start < before + 16 * megabyte, "the touched memory stayed: \(before) → \(start) bytes")
            let run = [UInt8](repeating: 1, count: 64 * megabyte)
            let taken = FreshPages.taken(since: start)
            #expect(taken >= 64 * megabyte && taken < 96 * megabyte, "\(taken) bytes for a 64 MiB run")
            withExtendedLifetime(run) { exit(0) }
        }
    }
}

/// The heap states of `--heap`. Serialized: they set glibc's thresholds for the whole process,
/// and one test's `cold` would give back the memory another expects kept.
@Suite("Benchmark harness: the heap", .serialized)
struct HeapStateTests {
    /// A warm heap keeps what was freed, a cold one gives it back to the system before a timed
    /// run: touching that much memory again then takes a page fault per 4 KiB page. (Without
    /// `warm`'s thresholds glibc gives it back too, as soon as the settling block is freed.)
    ///
    /// On a thread of its own, which glibc gives an arena of its own (as the harness's thread
    /// has): in an arena shared with tests running beside it, their allocations took over some
    /// of the given-back pages. Faults are counted for that thread alone, in a process of its
    /// own: in the test process, once glibc's arenas were all taken, the thread shared one with
    /// tests running beside it and the count moved with them. Not under AddressSanitizer, whose
    /// own allocator ignores the thresholds.
    @Test func warmHeapKeepsFreedMemoryAndColdGivesItBack() async {
        await #expect(processExitsWith: .success) {
            guard !runsUnderAddressSanitizer else { exit(0) }
            try Self.expectWarmKeepsAndColdGivesBack()
        }
    }

    private static func expectWarmKeepsAndColdGivesBack() throws {
        let (afterWarm, afterCold) = try Self.onThreadOfItsOwn { () throws -> (Int, Int) in
            try HeapState.warm.prepare()
            // 48-byte requests, 64-byte blocks: 32 MB, 7,800 pages.
            let blocks = UnsafeMutableBufferPointer<UnsafeMutableRawPointer?>.allocate(capacity: 500_000)
            defer { blocks.deallocate() }
            blocks.initialize(repeating: nil)
            func faultsWhileFillingTheHeap() -> Int {
                var usage = rusage()
                getrusage(Self.thisThread, &usage)
                let before = usage.ru_minflt
                for index in blocks.indices {
                    blocks[index] = malloc(48)
                    blocks[index]?.storeBytes(of: index, as: Int.self)
                }
                getrusage(Self.thisThread, &usage)
                for block in blocks { free(block) }
                return usage.ru_minflt - before
            }
            _ = faultsWhileFillingTheHeap()
            HeapState.warm.settle()
            let afterWarm = faultsWhileFillingTheHeap()
            try HeapState.cold.prepare()
            HeapState.cold.settle()
            return (afterWarm, faultsWhileFillingTheHeap())
        }
        #expect(afterWarm < 1_000, "the freed pages were given back: \(afterWarm) faults")
        #expect(afterCold > 4_000, "the freed pages were kept: \(afterCold) faults")
    }

    /// A thread started after `prepare` allocates from glibc's main arena, the heap below the
    /// program break, where the thresholds hold; not from an arena of its own, mapped
    /// elsewhere, whose wholly free 64 MiB pieces glibc unmaps whatever they say (see
    /// `HeapState.prepare`). In a process of its own: glibc fixes how many arenas it makes the
    /// first time a thread needs one, which this test process did long ago.
    @Test func threadsStartedAfterPrepareShareTheMainArena() async {
        await #expect(processExitsWith: .success) {
            guard !runsUnderAddressSanitizer else { exit(0) }
            try HeapState.warm.prepare()
            let (block, programBreak) = try Self.onThreadOfItsOwn { () throws -> (Int, Int) in
                let block = malloc(64)
                defer { free(block) }
                return (Int(bitPattern: block), Int(bitPattern: sbrk(0)))
            }
            exit(block != 0 && block < programBreak ? 0 : 1)
        }
    }

    /// `RUSAGE_THREAD`, a GNU extension the Glibc module leaves out.
    private static let thisThread: Int32 = 1

    /// Runs `body` on a new thread and waits for it.
    private static func onThreadOfItsOwn(_ body: @escaping () throws -> (Int, Int)) throws -> (Int, Int) {
        final class Outcome: @unchecked Sendable {  // written by the thread before it signals
            var result: Result<(Int, Int), any Error>?
            let body: () throws -> (Int, Int)
            init(_ body: @escaping () throws -> (Int, Int)) { self.body = body }
        }
        let outcome = Outcome(body)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            outcome.result = Result { try outcome.body() }
            finished.signal()
        }
        thread.start()
        finished.wait()
        return try outcome.result!.get()
    }
}

/// A row measured once at N = 10 in `seconds`, for the judging and comparing code to read.
private func measuredRow(
    _ workload: String,
    _ subject: String,
    _ role: Role,
    _ operation: OperationKind,
    _ compression: String,
    seconds: Double,
    bytes: Int?
) -> CaseResult {
    var result = CaseResult(
        Case(
            workload: workload,
            subject: subject,
            group: "g",
            role: role,
            operation: operation,
            compression: compression,
            records: 10,
            prepare: { _ in throw Unavailable("") }
        ),
        records: 10
    )
    result.record(samples: [seconds], measuredRecords: 10, bytes: bytes)
    return result
}
