// Benchmarks/Harness/Case.swift - one timed operation: what it is, how to set it up, how to check it

import Foundation

/// Who performs a measured operation.
enum Role: String, Codable, Sendable {
    /// GraphArchive itself.
    case gridstore
    /// An archiver users would pick instead (NSKeyedArchiver, JSONEncoder, ...).
    case peer
    /// A lower bound no archiver can beat (memcpy, building the graph with no parsing, ...).
    case floor
    /// Another of GraphArchive's own paths that the workload's gridstore rows are held to (the
    /// native archiver beneath the Codable bridge): compared with those rows, not with peers.
    case reference
}

/// What a case times.
enum OperationKind: String, Codable, Sendable, CaseIterable {
    case encode, decode, save, load
    /// Writing an archive as JSON to a sink that drops it: the CLI's `inspect --json` and
    /// `load --json` without the terminal.
    case print
    /// Floors.
    case memcpy, traverse, build, compress, decompress
}

/// A measured operation, set up for one size: `run` is timed, `check` is not.
///
/// `run` keeps its result (in a variable both closures capture); `check` verifies that result
/// against the source graph (counts, values, identity) and releases it, so that a fast wrong
/// result fails the case and the next run does not pay for freeing the previous result.
struct Trial {
    /// Bytes the operation produces or consumes per run, for MB/s (nil: not meaningful).
    var bytes: Int?
    /// Seconds making this trial's inputs took, also when another row made them first and this
    /// one reuses them: a pilot run counts it as part of what measuring at this size costs.
    var inputSeconds = 0.0
    /// The operation already ran once at this size on these inputs while setting up (a peer's
    /// reference archive and its check, or a pilot run): that run is its warm-up.
    var isWarmedUp = false
    /// New memory that run took, run and check together (``FreshPages``); 0 if none ran.
    var freshBytes = 0
    var run: () throws -> Void
    var check: () throws -> Void
}

/// One row of the report before it is measured: who does what, and how to set it up at a size.
struct Case {
    var workload: String
    /// Who performs it, as shown in the table: "gridstore", "NSKeyedArchiver", "memcpy", ...
    var subject: String
    /// The `--only` group it belongs to: "gridstore", "nskeyed", "json", "plist", "floors".
    var group: String
    var role: Role
    var operation: OperationKind
    /// "none", "zstd:3", or "-" where compression does not apply.
    var compression: String
    /// Records the figures are for (the workload's size); slow peers may run at fewer.
    var records: Int
    /// Slow peers may run at a smaller size under the time budget, their times scaled linearly.
    var scalesDown = false
    /// Largest size this case can run at (e.g. recursion depth of a peer), if limited.
    var maximumCount: Int?
    /// A size at which a slow peer's input is made for other rows anyway (the keyed workload's
    /// Foundation archive, which gridstore's rows read): measuring there costs only the runs.
    var sunkInputCount: Int?
    /// How the peak-memory probe runs this case in a child process; nil: not probed.
    var memoryProbe: MemoryProbeSetup?
    /// Shown next to the row: how the subject represents the graph, what it cannot keep.
    var note: String?
    /// Why the subject cannot run this workload at all; the row is reported as "n/a".
    var notApplicable: String?
    /// Builds a trial at `count` records. Throws like the operation would (e.g. zstd missing).
    var prepare: (_ count: Int) throws -> Trial

    /// Identifies the case on the command line of a memory-probe child process.
    var identifier: String { "\(workload)/\(group)/\(subject)/\(operation.rawValue)/\(compression)" }
}

/// One run of a case in a fresh process, for its peak memory.
///
/// Nothing may be decoded or encoded before the measured run: memory freed by a rehearsal
/// would be reused by the run and hide its peak. So the parent, which has the inputs already,
/// writes them to a file, and the child only reads that file or builds the source graph.
struct MemoryProbeSetup {
    /// In the parent: the bytes the child needs (an archive to decode), or empty.
    var input: (_ count: Int) throws -> Data
    /// In the child: sets up from the input file and returns the operation, which returns its
    /// result so that the result stays alive until the peak is read.
    var prepare: (_ count: Int, _ inputPath: String) throws -> () throws -> Any
}

/// A wrong result: the case fails however fast it was.
struct VerificationError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Throws a ``VerificationError`` saying `what` when `condition` does not hold.
func expect(_ condition: Bool, _ what: @autoclosure () -> String) throws {
    if !condition { throw VerificationError(what()) }
}
