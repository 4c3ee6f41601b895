// Tests/BenchmarksTests/BaselineTests.swift - `--baseline`: each row against an earlier run; `--markdown`

import Foundation
import Testing

@testable import Benchmarks

@Suite("Benchmark harness: baseline and Markdown")
struct BaselineTests {
    /// A measured row of workload "w".
    static func row(
        _ subject: String,
        _ operation: OperationKind,
        _ compression: String = "none",
        seconds: Double?,
        records: Int = 1_000,
        bytes: Int? = nil,
        role: Role = .gridstore
    ) -> CaseResult {
        var result = CaseResult(
            Case(
                workload: "w",
                subject: subject,
                group: role == .peer ? "json" : "gridstore",
                role: role,
                operation: operation,
                compression: compression,
                records: records,
                prepare: { _ in throw Unavailable("") }
            ),
            records: records
        )
        if let seconds {
            result.record(samples: [seconds], measuredRecords: records, bytes: bytes)
        } else {
            result.status = .failed
            result.message = "wrong result"
        }
        return result
    }

    static func report(_ results: [CaseResult], load: [Double]? = [0.5, 0.4, 0.3]) -> Report {
        var report = Report(settings: Settings(), arguments: ["--only", "w"])
        report.loadAverageAtStart = load
        report.loadAverageAtEnd = load.map { $0.map { $0 * 2 } }
        report.workloads = [
            WorkloadReport(
                name: "w",
                summary: "a workload",
                recordName: "record",
                records: 1_000,
                results: results,
                comparisons: Comparisons.make(results)
            )
        ]
        return report
    }

    @Test func eachRowIsComparedPerRecordWithTheSameRowOfTheBaseline() {
        let baseline = Self.report([
            Self.row("gridstore", .encode, seconds: 0.2, bytes: 40_000),
            Self.row("gridstore", .decode, seconds: 0.4),
            Self.row("gridstore", .encode, "zstd:3", seconds: 0.3),
            Self.row("JSONEncoder", .encode, seconds: 1, records: 500, role: .peer),
            Self.row("gridstore", .load, seconds: nil),
        ])
        let now = Self.report([
            Self.row("gridstore", .encode, seconds: 0.25, bytes: 30_000),
            Self.row("gridstore", .decode, seconds: 0.2),
            Self.row("gridstore", .save, seconds: 0.5),
            Self.row("JSONEncoder", .encode, seconds: 1),
            Self.row("gridstore", .load, seconds: 0.1),
            Self.row("gridstore", .encode, "zstd:3", seconds: nil),
        ])
        let comparison = Baseline.compare(now, with: baseline, path: "base.json")
        #expect(comparison.path == "base.json" && comparison.date == baseline.date)
        #expect(comparison.loadAverageAtStart == [0.5, 0.4, 0.3] && comparison.loadAverageAtEnd == [1, 0.8, 0.6])
        let rows = comparison.rows
        #expect(
            rows.map(\.subject) == ["gridstore", "gridstore", "gridstore", "JSONEncoder", "gridstore", "gridstore"]
        )
        #expect(rows[0].ratio == 1.25 && rows[0].bytesRatio == 0.75 && rows[0].note == nil)
        #expect(rows[1].ratio == 0.5 && rows[1].bytesRatio == nil)
        #expect(rows[2].ratio == nil && rows[2].baselineSeconds == nil && rows[2].note == "not in the baseline")
        // Per record: 1 s for 1,000 now, 1 s for 500 in the baseline.
        #expect(rows[3].ratio == 0.5 && rows[3].note == "per record: N = 1,000 now, 500 in the baseline")
        #expect(rows[4].ratio == nil && rows[4].seconds == 0.1 && rows[4].note == "failed in the baseline")
        #expect(rows[5].ratio == nil && rows[5].baselineSeconds == 0.3 && rows[5].note == "failed now")
    }

    @Test func rowsNoSubjectCanRunAreLeftOut() {
        var notApplicable = Self.row("JSONEncoder", .encode, seconds: nil, role: .peer)
        notApplicable.status = .notApplicable
        let report = Self.report([notApplicable, Self.row("gridstore", .encode, seconds: 1)])
        #expect(Baseline.compare(report, with: report, path: "b").rows.map(\.subject) == ["gridstore"])
    }

    @Test func outputFilesAreNotPartOfWhatARunMeasures() {
        #expect(
            Baseline.measuringArguments(["--json", "a.json", "--n", "1M", "--baseline", "b.json", "gridstate"])
                == ["--n", "1M", "gridstate"]
        )
    }

    @Test func ratiosReadAsSlowerFasterOrSame() {
        #expect(Baseline.reading(1.25) == "1.25x slower")
        #expect(Baseline.reading(0.5) == "2x faster")
        #expect(Baseline.reading(1.004) == "same" && Baseline.reading(0.996) == "same")
        #expect(Baseline.reading(1.01) == "1.01x slower")
    }

    @Test func theReportPrintsTheBaselineSectionAndKeepsItInTheJSON() throws {
        var now = Self.report([Self.row("gridstore", .encode, seconds: 0.25)], load: nil)
        let baseline = Self.report([Self.row("gridstore", .encode, seconds: 0.2)])
        now.baseline = Baseline.compare(now, with: baseline, path: "Benchmarks/baseline.json")
        let text = TableRenderer.render(now)
        #expect(text.contains("== against the baseline Benchmarks/baseline.json: \(baseline.date)"))
        #expect(text.contains("load average 0.50 at the start, 1.00 at the end, --only w"))
        #expect(text.contains("1.25x slower"))
        #expect(text.contains("load average not recorded"))

        let json = try JSONEncoder().encode(now)
        let back = try Baseline.decode(json, what: "the report")
        #expect(back.baseline?.rows == now.baseline?.rows)
        #expect(back.loadAverageAtStart == nil)
    }

    @Test func aBaselineMustBeAReportOfThisSchema() throws {
        func message(_ body: () throws(BaselineError) -> Report) -> String? {
            do {
                _ = try body()
                return nil
            } catch {
                return error.message
            }
        }
        let missing = message { () throws(BaselineError) in try Baseline.load("/nonexistent/base.json") }
        #expect(missing == "cannot read --baseline /nonexistent/base.json: No such file or directory")
        let text = message { () throws(BaselineError) in try Baseline.decode(Data("[1, 2]".utf8), what: "--baseline b")
        }
        #expect(text == "--baseline b is not a report written by --json")

        var report = Self.report([Self.row("gridstore", .encode, seconds: 0.2)])
        report.schemaVersion = 2
        let newer = try JSONEncoder().encode(report)
        #expect(
            message { () throws(BaselineError) in try Baseline.decode(newer, what: "--baseline b") }
                == "--baseline b has schemaVersion 2; this harness reads 1"
        )
        let truncated = Data(try JSONEncoder().encode(Self.report([])).dropLast(20))
        #expect(
            message { () throws(BaselineError) in try Baseline.decode(truncated, what: "--baseline b") }?
                .hasPrefix("--baseline b is not a report") == true
        )
    }

    /// A baseline that cannot be read stops the harness before it measures anything.
    @Test func anUnreadableBaselineFailsBeforeTheRun() {
        var settings = Settings()
        settings.baselinePath = "/nonexistent/base.json"
        settings.only = ["chain"]
        settings.count = 10
        #expect(Harness.main(.run(settings), arguments: []) == 1)
    }

    @Test func markdownShowsGridstoreRowsComparisonsAndTargets() {
        var report = Self.report([
            Self.row("gridstore", .encode, seconds: 0.2, bytes: 40_000),
            Self.row("JSONEncoder", .encode, seconds: 1, role: .peer),
        ])
        report.targets = [
            TargetResult(
                id: "t",
                target: "encode ≥ 4x faster than JSONEncoder",
                measured: 5,
                limit: 4,
                verdict: .met,
                detail: "5x faster | really"
            )
        ]
        let text = MarkdownReport.render(report)
        #expect(text.hasPrefix("Run of \(report.date), "))
        #expect(text.contains("load average 0.50 at the start, 1.00 at the end"))
        #expect(text.contains("| w | none | 200.00 ms | - | - | - | 40.00 | - |"))
        #expect(text.contains("| w | encode | none | JSONEncoder | 200.00 ms | 1.000 s | 5x faster |"))
        #expect(text.contains("| met | encode ≥ 4x faster than JSONEncoder | 5x faster \\| really |"))
        #expect(text.contains("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"))
        #expect(!text.contains("time ∝ N^e"), "no sweep, no sweep table")
    }

    @Test func markdownShowsTheSweepPerRecordWithItsExponents() throws {
        var report = Self.report([Self.row("gridstore", .encode, seconds: 0.2)])
        func point(_ operation: OperationKind, _ records: Int, seconds: Double?) -> SweepPoint {
            SweepPoint(Self.row("gridstore", operation, seconds: seconds, records: records))
        }
        report.sweep = [
            point(.encode, 10_000, seconds: 0.001), point(.encode, 100_000, seconds: 0.011),
            point(.traverse, 10_000, seconds: 0.0005), point(.traverse, 100_000, seconds: 0.005),
        ]
        report.sweep.append(
            SweepPoint(workload: "w", operation: .encode, records: 1_000_000, status: .skipped, message: "memory")
        )
        report.growth = SizeGrowth.exponents(report.sweep, workload: "w")
        let growth = try #require(report.growth.first)
        #expect(growth.fromRecords == 10_000 && growth.toRecords == 100_000)
        let text = MarkdownReport.render(report)
        #expect(text.contains("| workload | operation | N = 10,000 | N = 100,000 | N = 1,000,000 | time ∝ N^e |"))
        #expect(text.contains("| w | encode | 100.0 ns | 110.0 ns | skipped | e = 1.04 |"))
        #expect(text.contains("| w | encode floor: traversal | 50.0 ns | 50.0 ns | - |  |"))
    }
}
