// Benchmarks/Graphs/InspectWorkload.swift - `inspect --json` against `load --json` of one grid-state archive

import Foundation
import GraphArchive
import GridStore

/// The N-slot grid-state archive (uncompressed) printed as JSON two ways, each to a sink that
/// drops the bytes (the CLI's output without the terminal): `load --json` decodes the records
/// through `GridState` and prints one JSON line per slot, `inspect --json` opens the archive as
/// an ``ArchiveGraph`` with no model types and prints the whole graph. The target: inspect
/// within twice load's time, and, in a child process, its peak memory within 1.5 times the
/// archive (the JSON, about four times the archive, is written out as it is made).
final class InspectWorkload: Workload {
    static let name = "inspect"
    static let inspectSubject = "inspect --json"
    static let loadSubject = "load --json"
    /// Bytes handed to the sink at once, as the CLI's output buffer flushes.
    static let chunkSize = 1 << 16

    let settings: Settings
    private let inputs = SharedInputs()

    init(settings: Settings) {
        self.settings = settings
    }

    var name: String { Self.name }
    var recordName: String { "slot" }
    var recordCount: Int { settings.count }

    var summary: String {
        "inspect --json and load --json of the \(recordCount.grouped)-slot grid-state archive, output dropped"
    }

    func cases() -> [Case] {
        [inspectCase(), loadCase()]
    }

    // MARK: - Inputs

    /// The `count`-slot grid-state graph, built once.
    private func graph(_ count: Int) -> GridStateGraph {
        inputs.value("graph/\(count)") {
            GridStateGraph(count: count, sharedFraction: settings.sharedFraction, seed: settings.seed)
        }
    }

    /// The graph's uncompressed archive, written once to the scratch folder.
    private func archivePath(_ count: Int) throws -> String {
        try inputs.value("archive/\(count)") {
            let path = "\(ScratchDirectory.path)/\(name)-\(count).gridstore"
            try GraphArchiver.archiveRootObject(graph(count).root, toFile: path)
            return path
        }
    }

    // MARK: - The calls measured

    /// What a printing run wrote: bytes and lines.
    struct Printed {
        var bytes = 0
        var lines = 0

        mutating func consume(_ chunk: [UInt8]) {
            bytes += chunk.count
            for byte in chunk where byte == UInt8(ascii: "\n") { lines += 1 }
        }
    }

    /// `gridstore inspect --json PATH`: the archive opened with no model types, the whole graph
    /// written as JSON.
    static func inspectJSON(_ path: String) throws -> Printed {
        var printed = Printed()
        try ArchiveGraph(contentsOfFile: path).writeJSON(chunkSize: chunkSize) { printed.consume($0) }
        return printed
    }

    /// `gridstore load --json --file PATH`: the records decoded, one JSON line per slot with the
    /// id of its record.
    static func loadJSON(_ path: String) throws -> Printed {
        var printed = Printed()
        let states = try GridStateArchive.readStates(fromFile: path)
        var identity = GridStateIdentity()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(chunkSize + 256)
        for state in states {
            JSONLinesWriter.appendLine(for: state, id: identity.number(of: state), to: &buffer)
            if buffer.count >= chunkSize {
                printed.consume(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        printed.consume(buffer)
        return printed
    }

    // MARK: - Rows

    private func makeCase(_ subject: String, prepare: @escaping (Int) throws -> Trial) -> Case {
        Case(
            workload: name,
            subject: subject,
            group: "gridstore",
            role: .gridstore,
            operation: .print,
            compression: "none",
            records: recordCount,
            prepare: prepare
        )
    }

    private func inspectCase() -> Case {
        var inspect = makeCase(Self.inspectSubject) { count in
            let path = try self.archivePath(count)
            let objects = self.graph(count).objectCount
            var printed: Printed?
            return Trial(
                bytes: try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int,
                run: { printed = try Self.inspectJSON(path) },
                check: {
                    defer { printed = nil }
                    // A line per object, and the top level's, the objects' opening and the end.
                    try expect(
                        printed?.lines == objects + 3,
                        "printed \(printed?.lines ?? 0) lines for \(objects) objects"
                    )
                }
            )
        }
        inspect.note = "ArchiveGraph.writeJSON, no model types"
        inspect.memoryProbe = MemoryProbeSetup(
            input: { try Data(contentsOf: URL(fileURLWithPath: self.archivePath($0))) },
            prepare: { _, path in { try Self.inspectJSON(path) } }
        )
        return inspect
    }

    private func loadCase() -> Case {
        var load = makeCase(Self.loadSubject) { count in
            let path = try self.archivePath(count)
            var printed: Printed?
            return Trial(
                bytes: try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int,
                run: { printed = try Self.loadJSON(path) },
                check: {
                    defer { printed = nil }
                    try expect(printed?.lines == count, "printed \(printed?.lines ?? 0) lines for \(count) slots")
                }
            )
        }
        load.note = "GridState decode, a JSON line per slot"
        load.memoryProbe = MemoryProbeSetup(
            input: { try Data(contentsOf: URL(fileURLWithPath: self.archivePath($0))) },
            prepare: { _, path in { try Self.loadJSON(path) } }
        )
        return load
    }
}
