// Benchmarks/Harness/MemoryProbe.swift - peak memory of one operation, in a child process of its own

import Foundation
import GraphArchive

/// A process's peak resident size only ever grows, so each operation is measured in a fresh
/// child: the harness runs itself with `--probe CASE`; the child sets the case up (see
/// ``MemoryProbeSetup``), gives the heap's free pages back (so that the operation cannot reuse
/// what setup freed without it showing), resets its peak to its current size
/// (`/proc/self/clear_refs`), runs the operation once and prints the figures as one JSON line.
enum MemoryProbe {
    /// Children running at once. A child's peak resident size does not depend on how much CPU
    /// time it gets, so two share this 2-core machine's cores and the probes take half the time.
    static let concurrentChildren = 2

    /// Parent side: runs each of `probed` in a child with the same settings, at most
    /// ``concurrentChildren`` at a time, and reads their figures, in the order of `probed`.
    static func measure(_ probed: [Case], settings: Settings) -> [Result<MemoryFigures?, any Error>] {
        var results = [Result<MemoryFigures?, any Error>](repeating: .success(nil), count: probed.count)
        var running: [(index: Int, child: Child)] = []
        func finishOldest() {
            let (index, child) = running.removeFirst()
            results[index] = Result { try child.figures() }
        }
        for (index, measured) in probed.enumerated() {
            if running.count == concurrentChildren { finishOldest() }
            do {
                if let child = try Child(measured, settings: settings, slot: index) { running.append((index, child)) }
            } catch {
                results[index] = .failure(error)
            }
        }
        while !running.isEmpty { finishOldest() }
        return results
    }

    /// One probe child process, started.
    private struct Child {
        var process = Process()
        var output = Pipe()
        var errors = Pipe()
        var inputPath: String

        /// Writes the input `probed` needs and starts its child; nil if `probed` has no probe.
        init?(_ probed: Case, settings: Settings, slot: Int) throws {
            guard let setup = probed.memoryProbe else { return nil }
            inputPath = ScratchDirectory.path + "/probe-input-\(slot)"
            try setup.input(probed.records).write(to: URL(fileURLWithPath: inputPath))
            process.executableURL = URL(
                fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            )
            process.arguments = [
                "--probe", probed.identifier, "--probe-input", inputPath, "--n", String(settings.count),
                "--shared", String(settings.sharedFraction), "--seed", String(settings.seed),
                "--compress", settings.compressions.map(\.description).joined(separator: ","),
            ]
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Waits for the child and reads the figures it printed.
        func figures() throws -> MemoryFigures {
            defer { try? FileManager.default.removeItem(atPath: inputPath) }
            // Read before waiting: a child that fills a pipe would otherwise wait for us forever.
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            let complaints = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0, let line = printed.split(separator: UInt8(ascii: "\n")).last else {
                let text = String(decoding: complaints.suffix(400), as: UTF8.self)
                throw VerificationError("probe exited with status \(process.terminationStatus): \(text)")
            }
            return try JSONDecoder().decode(MemoryFigures.self, from: Data(line))
        }
    }

    /// Child side: the `--probe` command. Returns the exit status.
    static func runChild(settings: Settings, identifier: String, inputPath: String) -> Int32 {
        do {
            guard let start = residentBytes() else { throw Unavailable("/proc/self/status has no VmRSS") }
            let probed = Workloads.all.lazy
                .filter { identifier.hasPrefix($0.name + "/") }
                .flatMap { $0.make(settings).cases() }
                .first { $0.identifier == identifier }
            guard let probed, let setup = probed.memoryProbe else {
                throw VerificationError("no memory probe for \(identifier)")
            }
            let operation = try setup.prepare(probed.records, inputPath)
            HeapState.giveBackFreePages()
            let baseline = residentBytes() ?? start
            let peakReset = resetPeak()
            let result = try operation()
            guard let peak = peakBytes() else { throw Unavailable("/proc/self/status has no VmHWM") }
            let figures = MemoryFigures(
                startBytes: start,
                baselineBytes: baseline,
                peakBytes: peak,
                overBaselineBytes: peak - baseline,
                peakReset: peakReset
            )
            Output.write(String(decoding: try JSONEncoder().encode(figures), as: UTF8.self) + "\n")
            ScratchDirectory.remove()
            // End with the result alive: freeing a million-object graph only costs time here.
            withExtendedLifetime(result) { exit(0) }
        } catch {
            Output.error("probe \(identifier): \(error)")
            ScratchDirectory.remove()
            return 1
        }
    }

    static func residentBytes() -> Int? { ProcFile.bytes("VmRSS", in: "/proc/self/status") }
    static func peakBytes() -> Int? { ProcFile.bytes("VmHWM", in: "/proc/self/status") }

    /// Sets this process's peak resident size to its current size; false where the kernel
    /// does not allow it (then the peak also covers setup).
    static func resetPeak() -> Bool {
        guard (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil,
            let resident = residentBytes(), let peak = peakBytes()
        else { return false }
        // Pages touched between the two reads may lift the peak a little above the resident size.
        return peak <= resident + (1 << 20)
    }
}
