// Tests/BenchmarksTests/KeyedArchiveWorkloadTests.swift - the keyed-archive workload and its target

import Foundation
import GraphArchive
import GridStore
import Testing

@testable import Benchmarks

@Suite("Keyed-archive workload")
struct KeyedArchiveWorkloadTests {
    private func workload(count: Int) -> KeyedArchiveWorkload {
        var settings = Settings()
        settings.count = count
        return KeyedArchiveWorkload(settings: settings)
    }

    @Test func runsAtMostTheTargetSize() {
        #expect(workload(count: 1_000_000).recordCount == KeyedArchiveWorkload.maximumCount)
        #expect(workload(count: 1_000_000).summary.contains("capped"))
        #expect(workload(count: 2_000).recordCount == 2_000)
        #expect(!workload(count: 2_000).summary.contains("capped"))
    }

    @Test func theSweepTimesOnlyTheMainReadAndTheWrite() {
        let keyed = workload(count: 2_000)
        let timed = SizeGrowth(settings: Settings(), includesFloors: true).growthCases(keyed)
        let gridstore = timed.filter { $0.role == .gridstore }
        // Several reads are gridstore rows (first read, schema-less): only the first is swept.
        #expect(keyed.cases().filter { $0.role == .gridstore && $0.operation == .decode }.count > 1)
        #expect(gridstore.map(\.operation).sorted { $0.rawValue < $1.rawValue } == [.decode, .encode])
        #expect(gridstore.allSatisfy { $0.subject == "gridstore" && $0.compression == "none" })
        #expect(timed.contains { $0.role == .floor && $0.operation == .build })
    }

    @Test func theSweepRunsTheWriteAndTheMainReadAtEverySize() {
        let growth = SizeGrowth(settings: Settings(), includesFloors: true)
        #expect(SizeGrowth.sweepSizes.contains(1_000_000) && SizeGrowth.sweepSizes.contains(10_000_000))
        for size in SizeGrowth.sweepSizes {
            // Made, not run: the cases only say the size they run at.
            let point = KeyedArchiveWorkload(settings: growth.pointSettings(at: size))
            #expect(point.recordCount == size)
            let timed = growth.growthCases(point)
            let operations = timed.filter { $0.role == .gridstore }.map(\.operation)
            #expect(operations.sorted { $0.rawValue < $1.rawValue } == [.decode, .encode])
            #expect(timed.allSatisfy { $0.records == size })
        }
        // The run itself stays at the size its targets are set for.
        #expect(workload(count: 10_000_000).recordCount == KeyedArchiveWorkload.maximumCount)
    }

    @Test func theSweepReadsGridstoresOwnArchiveAtEverySize() throws {
        let growth = SizeGrowth(settings: Settings(), includesFloors: false)
        let point = KeyedArchiveWorkload(settings: growth.pointSettings(at: 300))
        let archive = try point.gridstoreArchive(300)
        #expect(try point.readInput(300) == archive)
        let read = try #require(growth.growthCases(point).first { $0.operation == .decode })
        #expect(read.note == "reads gridstore's keyed archive")
        let trial = try read.prepare(300)
        #expect(trial.bytes == archive.count)
        try trial.run()
        try trial.check()
        // The run's read, the one its targets judge, reads NSKeyedArchiver's archive.
        let run = workload(count: 300)
        #expect(try run.readInput(300) == run.foundationArchive(300))
        #expect(try run.readInput(300) != archive)
    }

    @Test func readsFoundationsArchiveWithItsSharing() throws {
        let keyed = workload(count: 300)
        let graph = keyed.graph(300)
        let data = try keyed.foundationArchive(300)
        // Foundation's own output: a binary plist with the module-qualified class name.
        #expect(ArchiveKind.detect(data) == .keyedArchive)
        #expect(data.range(of: Data(KeyedArchiveWorkload.className.utf8)) != nil)
        let states = try KeyedArchiveWorkload.read(data)
        try graph.verify(states)
        // A lost shared slot fails the check.
        let shared = try #require(graph.firstSlot.indices.first { graph.firstSlot[$0] != Int32($0) })
        var copy = states
        let first = states[Int(graph.firstSlot[shared])]
        copy[shared] = GridState(name: first.name, color: first.color, date: first.date)
        #expect(throws: VerificationError.self) { try graph.verify(copy) }
    }

    @Test func foundationReadsWhatGridstoreWrites() throws {
        let keyed = workload(count: 300)
        let graph = keyed.graph(300)
        let objects = try KeyedArchiveWorkload.foundationUnarchive(keyed.gridstoreArchive(300))
        try graph.verifySlots(using: objects)
    }

    @Test func judgesTheReadTarget() {
        func report(ratio: Double?) -> Report {
            var report = Report(settings: Settings(), arguments: [])
            let comparisons = ratio.map {
                [
                    Comparison(
                        workload: KeyedArchiveWorkload.name,
                        operation: .decode,
                        compression: "none",
                        against: "NSKeyedUnarchiver",
                        againstRole: .peer,
                        gridstoreSeconds: $0,
                        otherSeconds: 1,
                        ratio: $0,
                        otherScaledFrom: 20_000
                    )
                ]
            }
            report.workloads = [
                WorkloadReport(
                    name: KeyedArchiveWorkload.name,
                    summary: "",
                    recordName: "slot",
                    records: 100_000,
                    results: [],
                    comparisons: comparisons ?? []
                )
            ]
            return report
        }
        func keyedTarget(_ ratio: Double?) -> TargetResult? {
            Targets.judge(report(ratio: ratio), settings: Settings()).first {
                $0.id == "keyed-read-vs-NSKeyedUnarchiver"
            }
        }
        #expect(keyedTarget(1.0 / 25)?.verdict == .met)
        #expect(keyedTarget(1.0 / 25)?.measured.map { abs($0 - 25) < 1e-9 } == true)
        #expect(keyedTarget(1.0 / 15)?.verdict == .missed)
        #expect(keyedTarget(nil)?.verdict == .notMeasured)
        // No keyed workload in the run: no keyed target.
        var none = report(ratio: nil)
        none.workloads = []
        #expect(Targets.judge(none, settings: Settings()).isEmpty)
    }
}
