// Benchmarks/Harness/Command.swift - the command line: flags into settings, no outside parser

import Foundation
import GraphArchive

/// What the harness was asked to do.
enum Command: Equatable, Sendable {
    case help
    case run(Settings)
    /// Print the report `--json` wrote at this path as docs/BENCHMARKS.md's results section.
    case markdown(reportPath: String)
    /// Internal: run one case once in this (child) process and print its peak memory.
    case probe(Settings, caseIdentifier: String, inputPath: String)
}

/// Everything a run depends on.
struct Settings: Equatable, Sendable {
    /// Records per graph: grid-state slots, chain links, tree nodes.
    var count = 1_000_000
    /// Share of grid-state slots that repeat an earlier record.
    var sharedFraction = 0.25
    var repetitions = 3
    var warmups = 1
    /// Workload names and case groups to run; empty: all of them.
    var only: [String] = []
    var compressions: [ArchiveCompression] = [.none, .zstd]
    /// Also run gridstore at N = 10k, 100k, 1M, 10M to show how cost grows.
    var sweep = false
    var jsonPath: String?
    /// A report `--json` wrote earlier, to print each row against.
    var baselinePath: String?
    /// Wall seconds a slow peer's row may take (making its input at the size it runs, then the
    /// repetitions, each checked; a quarter of it for peers no target reads); above it the peer runs
    /// at a smaller N and its times are scaled linearly.
    var peerBudget = 8.0
    var seed: UInt64 = 1
    /// The heap every timed run starts from.
    var heap = HeapState.warm
    /// Touch as much new memory as a row's last run took before each of its timed runs (``FreshPages``).
    var pretouch = true
    /// Where the keyed workload keeps NSKeyedArchiver's archives between runs, if anywhere.
    var keyedInputDirectory: String?
    /// The workload is made for a `--sweep` point, which times only gridstore's main rows: it
    /// may run past a cap its other rows need (the keyed workload's, set by NSKeyedArchiver).
    var isSweepPoint = false
}

struct UsageError: Error, Equatable {
    var message: String
}

enum CommandLineSyntax {
    static let groups = ["gridstore", "nskeyed", "json", "plist", "floors", "memory"]

    static let help = """
        Benchmarks: gridstore against NSKeyedArchiver, JSON and property lists, and against floors.

        Usage: swift run -c release Benchmarks [options] [NAME...]

        Options:
          --n N              records per graph (slots, links, nodes); 20000, 20k, 1M (default 1M)
          --shared F         share of grid-state slots that repeat a record, 0 <= F < 1 (default 0.25)
          --reps R           timed repetitions after one warm-up; medians, min and max (default 3;
                             gridstore's and the floors' rows a target reads get 2 x R more
                             when all their runs take under 1.5 s)
          --only NAME...     run only these workloads and/or groups (same as positional NAMEs)
                               workloads: \(Workloads.names.joined(separator: ", "))
                               groups:    \(groups.joined(separator: ", "))
          --compress LIST    gridstore compressions, comma-separated: none, zstd, zstd:LEVEL
                             (default none,zstd = zstd level 3)
          --budget SECONDS   wall time a slow peer's row may take (making its input, then the
                             repetitions, each checked) before it runs at a smaller N, scaled
                             linearly; a quarter of it for peers no target reads (default 8)
          --heap STATE       the heap every timed run starts from: warm (freed memory kept by the
                             process, as in one that keeps coding graphs) or cold (given back to
                             the system first, as a process's first decode finds it) (default warm)
          --pretouch on|off  before each timed run, map, touch and unmap as much new memory as
                             the row's last run took, so that a run's new pages cost what the
                             kernel charges, not what a VM host adds for memory it took back
                             (default on)
          --sweep            also time gridstore and its floors at N = 10k, 100k, 1M, 10M
                     (memory allowing)
          --json PATH        write every figure to PATH (schema: docs/BENCHMARKS.md)
          --baseline PATH    print each row against the same row of a report --json wrote
                             (Benchmarks/baseline.json: the figures docs/BENCHMARKS.md shows)
          --markdown PATH    run nothing; print the report --json wrote at PATH as the results
                             section of docs/BENCHMARKS.md
          --seed S           generator seed (default 1)
          --keyed-input DIR  keep the keyed workload's NSKeyedArchiver archive in DIR, one file
                             per N, F and seed, and read it from there on later runs rather
                             than archiving again: a quicker start, and the same input for runs
                             compared (Foundation's key order varies from archive to archive)
          -h, --help         show this help

        Exit status: 0 all cases passed their checks, 1 a case failed, 64 bad usage.
        """

    /// Reads the arguments (without the program name).
    static func parse(_ arguments: [String]) throws(UsageError) -> Command {
        var settings = Settings()
        var probe: String?
        var markdown: String?
        var probeInput = ""
        var index = 0
        func value(of flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                throw UsageError(message: "\(flag) needs a value")
            }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "-h", "--help":
                return .help
            case "--n":
                settings.count = try count(try value(of: argument), flag: argument, minimum: 1)
            case "--shared":
                let text = try value(of: argument)
                guard let fraction = Double(text), fraction >= 0, fraction < 1 else {
                    throw UsageError(message: "--shared needs a fraction in [0, 1), not \"\(text)\"")
                }
                settings.sharedFraction = fraction
            case "--reps":
                settings.repetitions = try count(try value(of: argument), flag: argument, minimum: 1)
            case "--budget":
                let text = try value(of: argument)
                guard let seconds = Double(text), seconds > 0, seconds.isFinite else {
                    throw UsageError(message: "--budget needs a positive number of seconds, not \"\(text)\"")
                }
                settings.peerBudget = seconds
            case "--compress":
                settings.compressions = try compressions(try value(of: argument))
            case "--heap":
                let text = try value(of: argument)
                guard let state = HeapState(rawValue: text) else {
                    throw UsageError(message: "--heap needs warm or cold, not \"\(text)\"")
                }
                settings.heap = state
            case "--pretouch":
                let text = try value(of: argument)
                guard text == "on" || text == "off" else {
                    throw UsageError(message: "--pretouch needs on or off, not \"\(text)\"")
                }
                settings.pretouch = text == "on"
            case "--sweep":
                settings.sweep = true
            case "--json":
                settings.jsonPath = try value(of: argument)
            case "--baseline":
                settings.baselinePath = try value(of: argument)
            case "--markdown":
                markdown = try value(of: argument)
            case "--seed":
                let text = try value(of: argument)
                guard let seed = UInt64(text) else { throw UsageError(message: "--seed needs an unsigned integer") }
                settings.seed = seed
            case "--keyed-input":
                settings.keyedInputDirectory = try value(of: argument)
            case "--only":
                let start = index + 1
                while index + 1 < arguments.count, !arguments[index + 1].hasPrefix("-") {
                    index += 1
                    settings.only.append(arguments[index])
                }
                guard index >= start else { throw UsageError(message: "--only needs at least one name") }
            case "--probe":
                probe = try value(of: argument)
            case "--probe-input":
                probeInput = try value(of: argument)
            default:
                guard !argument.hasPrefix("-") else {
                    throw UsageError(message: "unknown option \(argument) (see --help)")
                }
                settings.only.append(argument)
            }
            index += 1
        }
        let known = Set(Workloads.names + groups)
        if let unknown = settings.only.first(where: { !known.contains($0) }) {
            throw UsageError(
                message: "unknown name \"\(unknown)\"; workloads: \(Workloads.names.joined(separator: ", ")); "
                    + "groups: \(groups.joined(separator: ", "))"
            )
        }
        if let probe { return .probe(settings, caseIdentifier: probe, inputPath: probeInput) }
        if let markdown { return .markdown(reportPath: markdown) }
        return .run(settings)
    }

    /// A positive count, with `_` separators and k/M suffixes allowed: 20000, 20_000, 20k, 1M.
    static func count(_ text: String, flag: String, minimum: Int) throws(UsageError) -> Int {
        var digits = text.replacingOccurrences(of: "_", with: "")
        var multiplier = 1
        if digits.hasSuffix("k") || digits.hasSuffix("K") {
            multiplier = 1_000
            digits.removeLast()
        } else if digits.hasSuffix("M") || digits.hasSuffix("m") {
            multiplier = 1_000_000
            digits.removeLast()
        }
        guard let base = Int(digits), case (let value, let overflow) = base.multipliedReportingOverflow(by: multiplier),
            !overflow, value >= minimum
        else {
            throw UsageError(message: "\(flag) needs a whole number of at least \(minimum), not \"\(text)\"")
        }
        return value
    }

    /// "none,zstd,zstd:19" into compressions, without repeats, as the engine parses each one.
    static func compressions(_ list: String) throws(UsageError) -> [ArchiveCompression] {
        var result: [ArchiveCompression] = []
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            let compression: ArchiveCompression
            do {
                compression = try ArchiveCompression(parsing: String(item))
            } catch {
                throw UsageError(message: "--compress: \(error.message)")
            }
            if !result.contains(compression) { result.append(compression) }
        }
        return result
    }
}
