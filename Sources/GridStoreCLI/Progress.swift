// Sources/GridStoreCLI/Progress.swift - a progress line on standard error for long operations

import Foundation
import GraphArchive

/// Shows what a long save or load is doing, on one line of standard error.
///
/// Silent unless standard error is a terminal, and silent for the first second: quick runs and
/// pipes never see it. A small thread redraws the line ten times a second, so phases the
/// engine runs in one call (archiving, loading) still show their elapsed time.
final class Progress: Sendable {
    /// What `done` and `total` count.
    enum Unit {
        /// Records (or other items): shown as "1200/5000 (24%)".
        case items
        /// Bytes of input: shown as "24% of 12.3 MB".
        case bytes
    }

    private struct State {
        var phase = ""
        var done = 0
        var total: Int?
        var unit = Unit.items
        /// Shown after the count, e.g. "(1200 records)" while bytes are counted.
        var detail = ""
        var isVisible = false
        var isFinished = false
    }

    private let state = Locked(State())
    private let start = ContinuousClock.now
    private let isEnabled: Bool

    /// Progress that draws only when `enabled` (by default: when standard error is a terminal).
    init(enabled: Bool = StandardError.isTerminal) {
        isEnabled = enabled
        guard enabled else { return }
        Thread.detachNewThread { [self] in
            while redraw() {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// Starts a phase, e.g. "archiving", with the number of items (or bytes) when known: then
    /// the line shows how far along it is as a percentage.
    func phase(_ phase: String, total: Int? = nil, unit: Unit = .items) {
        guard isEnabled else { return }
        state.withLock { state in
            state.phase = phase
            state.done = 0
            state.total = total
            state.unit = unit
            state.detail = ""
        }
    }

    /// Items (or bytes) done so far in this phase, and what to show after the count.
    func advance(to done: Int, detail: String = "") {
        guard isEnabled else { return }
        state.withLock { state in
            state.done = done
            state.detail = detail
        }
    }

    /// Runs `print`, which writes whole lines to standard error (a warning), with the progress
    /// line cleared first; the line comes back at the next redraw.
    func interrupt(_ print: () -> Void) {
        guard isEnabled else { return print() }
        state.withLock { state in
            if state.isVisible { StandardError.write("\r\u{1B}[K") }
            state.isVisible = false
            print()
        }
    }

    /// Clears the line and stops drawing; call before printing results.
    func finish() {
        guard isEnabled else { return }
        state.withLock { state in
            if state.isVisible { StandardError.write("\r\u{1B}[K") }
            state.isVisible = false
            state.isFinished = true
        }
    }

    /// Draws the line once past the first second; returns false when finished.
    private func redraw() -> Bool {
        let elapsed = ContinuousClock.now - start
        return state.withLock { state in
            guard !state.isFinished else { return false }
            guard elapsed >= .seconds(1) else { return true }
            let line = Self.line(
                phase: state.phase,
                done: state.done,
                total: state.total,
                unit: state.unit,
                detail: state.detail,
                elapsed: elapsed
            )
            StandardError.write("\r\u{1B}[K\(line)")
            state.isVisible = true
            return true
        }
    }
}

extension Progress {
    /// The progress line: "gridstore: generating records 1200/5000 (24%) 1.3s",
    /// "gridstore: importing in.csv 24% of 12.3 MB (1200 records) 1.3s".
    static func line(
        phase: String,
        done: Int,
        total: Int?,
        unit: Unit,
        detail: String,
        elapsed: Duration
    ) -> String {
        var line = "\(StandardError.programName): \(phase)"
        let percent = total.map { $0 > 0 ? min(100, done * 100 / $0) : 100 }
        switch (unit, total, percent) {
        case (.items, let total?, let percent?): line += " \(done)/\(total) (\(percent)%)"
        case (.bytes, let total?, let percent?): line += " \(percent)% of \(byteSize(total))"
        case (.items, _, _) where done > 0: line += " \(done)"
        case (.bytes, _, _) where done > 0: line += " \(byteSize(done))"
        default: break
        }
        if !detail.isEmpty { line += " (\(detail))" }
        return line + String(format: " %.1fs", seconds(elapsed))
    }

    /// "812 bytes", "12.3 MB" (decimal units, as file managers show sizes).
    static func byteSize(_ count: Int) -> String {
        guard count >= 1000 else { return counted(count, "byte") }
        let units = ["kB", "MB", "GB", "TB"]
        var value = Double(count) / 1000
        var unit = 0
        while value >= 999.95 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return String(format: "%.1f", value) + " " + units[unit]
    }
}

/// A duration in seconds, for printing.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
