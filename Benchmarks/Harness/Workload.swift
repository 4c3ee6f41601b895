// Benchmarks/Harness/Workload.swift - what the suite measures, and the list of workloads

/// A thing the suite measures: a graph shape, or later an API such as the Codable bridge.
///
/// A workload only lists its cases; the runner times them, scales slow peers, probes memory
/// and reports. Graph-shaped workloads get their cases from ``GraphWorkload``; a workload of
/// another kind (reading a keyed archive, say) conforms directly and builds its ``Case``s.
protocol Workload: AnyObject {
    var name: String { get }
    /// One line for the report: what the graph is, at which size.
    var summary: String { get }
    /// What one record is ("slot", "link", "node"): records/s counts these.
    var recordName: String { get }
    /// Records at this run's N.
    var recordCount: Int { get }
    func cases() -> [Case]
}

/// A workload's name and how to make it for some settings.
struct WorkloadEntry: Sendable {
    var name: String
    var make: @Sendable (Settings) -> any Workload

    static func graph<Graph: BenchmarkGraph>(_: Graph.Type) -> WorkloadEntry {
        WorkloadEntry(name: Graph.name) { GraphWorkload<Graph>(settings: $0) }
    }
}

/// Every workload, in report order. A new workload is one file plus one line here.
enum Workloads {
    static let all: [WorkloadEntry] = [
        .graph(GridStateGraph.self),
        .graph(ChainGraph.self),
        .graph(TreeGraph.self),
        .keyedArchive,
        WorkloadEntry(name: InspectWorkload.name) { InspectWorkload(settings: $0) },
        WorkloadEntry(name: CodableGridStateWorkload.name) { CodableGridStateWorkload(settings: $0) },
    ]

    static var names: [String] { all.map(\.name) }

    /// The workloads `settings.only` selects (all when it names none).
    static func selected(by settings: Settings) -> [WorkloadEntry] {
        let named = all.filter { settings.only.contains($0.name) }
        return named.isEmpty ? all : named
    }
}
