// Benchmarks/Harness/Harness.swift - from arguments to exit status

import Foundation

enum Harness {
    /// The command line `arguments` (without the program name), parsed, with glibc's heap set
    /// up for a run; nil after reporting a usage error (exit status `usageError`).
    ///
    /// Called on the process's first thread, before the suite's thread exists: that thread
    /// must find the heap state in place when it first allocates (see `HeapState.prepare`).
    static func command(_ arguments: [String]) -> Command? {
        let command: Command
        do {
            command = try CommandLineSyntax.parse(arguments)
        } catch {
            Output.error("\(error.message)\nUsage: swift run -c release Benchmarks [options] [NAME...] (see --help)")
            return nil
        }
        if case .run(let settings) = command {
            do {
                try settings.heap.prepare()
            } catch {
                Output.error(error.message)
                return nil
            }
        }
        return command
    }

    /// The exit status of a bad command line.
    static let usageError: Int32 = 64

    /// Runs `command`; returns the exit status.
    static func main(_ command: Command, arguments: [String]) -> Int32 {
        switch command {
        case .help:
            Output.write(CommandLineSyntax.help + "\n")
            return 0
        case .markdown(let path):
            do {
                Output.write(MarkdownReport.render(try Baseline.load(path, flag: "--markdown")))
                return 0
            } catch {
                Output.error(error.message)
                return 1
            }
        case .probe(let settings, let identifier, let inputPath):
            return MemoryProbe.runChild(settings: settings, identifier: identifier, inputPath: inputPath)
        case .run(let settings):
            // Find out now, not after minutes of measuring, that the baseline cannot be read or
            // the JSON cannot be written (in that order: the two may be the same file).
            var baseline: Report?
            if let path = settings.baselinePath {
                do {
                    baseline = try Baseline.load(path)
                } catch {
                    Output.error(error.message)
                    return 1
                }
            }
            if let path = settings.jsonPath, !FileManager.default.createFile(atPath: path, contents: Data()) {
                Output.error("cannot write --json \(path)")
                return 1
            }
            if let available = MachineFacts.availableMemory {
                let (needed, overflow) = settings.count.multipliedReportingOverflow(by: SizeGrowth.bytesPerRecordNeeded)
                guard !overflow && needed <= available else {
                    Output.error(
                        "--n \(settings.count.grouped) needs about \(overflow ? "too much" : Format.bytes(needed)) of "
                            + "memory; \(Format.bytes(available)) is available"
                    )
                    return 1
                }
            }
            var report = Runner(settings: settings, arguments: arguments).run()
            if let baseline, let path = settings.baselinePath {
                report.baseline = Baseline.compare(report, with: baseline, path: path)
            }
            ScratchDirectory.remove()
            Output.write(TableRenderer.render(report))
            if let path = settings.jsonPath {
                do {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                    try encoder.encode(report).write(to: URL(fileURLWithPath: path), options: .atomic)
                } catch {
                    Output.error("cannot write --json \(path): \(error)")
                    return 1
                }
            }
            return report.failures == 0 ? 0 : 1
        }
    }
}
