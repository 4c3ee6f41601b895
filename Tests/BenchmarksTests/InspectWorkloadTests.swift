// Tests/BenchmarksTests/InspectWorkloadTests.swift - the inspect workload, the schema-less keyed read and their targets

import Foundation
import GraphArchive
import GridStore
import Testing

@testable import Benchmarks

@Suite("Inspect workload and schema-less reads")
struct InspectWorkloadTests {
    @Test func bothPrintersPrintEveryRecord() throws {
        let path = NSTemporaryDirectory() + "inspect-workload-\(UUID().uuidString).gridstore"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let graph = GridStateGraph(count: 500, sharedFraction: 0.4, seed: 3)
        try GraphArchiver.archiveRootObject(graph.root, toFile: path)
        let inspect = try InspectWorkload.inspectJSON(path)
        #expect(inspect.lines == graph.objectCount + 3)
        let load = try InspectWorkload.loadJSON(path)
        #expect(load.lines == 500)
        #expect(inspect.bytes > 0 && load.bytes > 0)
    }

    @Test func genericReadCheckCatchesLostIdentityAndChangedValues() throws {
        var settings = Settings()
        settings.count = 300
        let keyed = KeyedArchiveWorkload(settings: settings)
        let graph = keyed.graph(300)
        let read = try GenericRead(keyed.foundationArchive(300))
        try read.verify(against: graph)
        // A shared slot pointing at another object fails the check.
        let shared = try #require(graph.firstSlot.indices.first { graph.firstSlot[$0] != Int32($0) })
        var lost = read
        lost.slots[shared] = try #require(read.slots.first { $0 != read.slots[shared] })
        #expect(throws: VerificationError.self) { try lost.verify(against: graph) }
        var changed = read
        let id = read.slots[0]
        changed.objects[id]?.fields[0].value = .string("changed")
        #expect(throws: VerificationError.self) { try changed.verify(against: graph) }
    }

    private func report(inspect: Double?, load: Double?, memory: Int?, generic: Double?) -> Report {
        var report = Report(settings: Settings(), arguments: [])
        func row(_ subject: String, _ seconds: Double?, memory: Int? = nil) -> CaseResult? {
            guard let seconds else { return nil }
            var result = CaseResult(
                Case(
                    workload: InspectWorkload.name,
                    subject: subject,
                    group: "gridstore",
                    role: .gridstore,
                    operation: .print,
                    compression: "none",
                    records: 1_000,
                    prepare: { _ in throw VerificationError("not run") }
                ),
                records: 1_000
            )
            result.record(samples: [seconds], measuredRecords: 1_000, bytes: 1_000_000)
            result.memory = memory.map {
                MemoryFigures(startBytes: 0, baselineBytes: 0, peakBytes: $0, overBaselineBytes: $0, peakReset: true)
            }
            return result
        }
        report.workloads = [
            WorkloadReport(
                name: InspectWorkload.name,
                summary: "",
                recordName: "slot",
                records: 1_000,
                results: [
                    row(InspectWorkload.inspectSubject, inspect, memory: memory),
                    row(InspectWorkload.loadSubject, load),
                ]
                .compactMap { $0 },
                comparisons: []
            ),
            WorkloadReport(
                name: KeyedArchiveWorkload.name,
                summary: "",
                recordName: "slot",
                records: 100_000,
                results: [],
                comparisons: generic.map {
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
                            subject: KeyedArchiveWorkload.genericSubject
                        )
                    ]
                } ?? []
            ),
        ]
        return report
    }

    private func verdict(_ id: String, _ report: Report) -> TargetResult.Verdict? {
        Targets.judge(report, settings: Settings()).first { $0.id == id }?.verdict
    }

    @Test func judgesTheInspectTargets() {
        let met = report(inspect: 1.5, load: 1.0, memory: 1_400_000, generic: 1.0 / 30)
        #expect(verdict("inspect-json-vs-load-json", met) == .met)
        #expect(verdict("inspect-json-memory", met) == .met)
        #expect(verdict("keyed-generic-read-vs-NSKeyedUnarchiver", met) == .met)
        // The typed read's target does not take the schema-less row's figures.
        #expect(verdict("keyed-read-vs-NSKeyedUnarchiver", met) == .notMeasured)
        let missed = report(inspect: 2.5, load: 1.0, memory: 2_000_000, generic: 1.0 / 10)
        #expect(verdict("inspect-json-vs-load-json", missed) == .missed)
        #expect(verdict("inspect-json-memory", missed) == .missed)
        #expect(verdict("keyed-generic-read-vs-NSKeyedUnarchiver", missed) == .missed)
        let absent = report(inspect: 1.0, load: nil, memory: nil, generic: nil)
        #expect(verdict("inspect-json-vs-load-json", absent) == .notMeasured)
        #expect(verdict("inspect-json-memory", absent) == .notMeasured)
    }

    @Test func markdownShowsTheInspectRowsAndTheSchemaLessComparison() {
        let text = MarkdownReport.render(report(inspect: 1.5, load: 1.0, memory: 1_400_000, generic: 1.0 / 30))
        #expect(text.contains("| inspect | inspect --json | print | none | 1.500 s | 1400.0 kB | 1.40 |"))
        #expect(text.contains("| inspect | load --json | print | none | 1.000 s | - | - |"))
        #expect(
            text.contains(
                "| keyed | decode | none | gridstore (schema-less): NSKeyedUnarchiver | 33.33 ms | 1.000 s | 30x faster |"
            )
        )
        // The four operations' table has no line for a workload without them.
        #expect(!text.contains("| inspect | none | - | - | - | - |"))
    }

    /// The codable workload names its one gridstore row per operation after the coder: still
    /// the main row, shown in the first table and compared with no prefix.
    @Test func aWorkloadsFirstGridstoreRowIsItsMainRowWhateverItsSubject() {
        let text = MarkdownReport.render(
            BaselineTests.report([
                BaselineTests.row("GraphArchiveEncoder", .encode, seconds: 0.2, bytes: 40_000),
                BaselineTests.row("JSONEncoder", .encode, seconds: 1, role: .peer),
            ])
        )
        #expect(text.contains("| w | none | 200.00 ms | - | - | - | 40.00 | - |"))
        #expect(text.contains("| w | encode | none | JSONEncoder | 200.00 ms | 1.000 s | 5x faster |"))
        #expect(!text.contains("gridstore row"))
    }
}
