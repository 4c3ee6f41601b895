// Sources/GridStoreCLI/Progress.swift - a progress line on standard error for long operations

import Foundation
import Synchronization

/// Shows what a long save or load is doing, on one line of standard error.
///
/// Silent unless standard error is a terminal, and silent for the first second: quick runs and
/// pipes never see it. A small thread redraws the line ten times a second, so phases the
/// engine runs in one call (archiving, loading) still show their elapsed time.
final class Progress: Sendable {
    private struct State {
        var phase = ""
        var done = 0
        var total: Int?
        var isVisible = false
        var isFinished = false
    }

    private let state = Mutex(State())
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

    /// Starts a phase, e.g. "archiving", with the number of items when known.
    func phase(_ phase: String, total: Int? = nil) {
        guard isEnabled else { return }
        state.withLock { state in
            state.phase = phase
            state.done = 0
            state.total = total
        }
    }

    /// Items done so far in this phase.
    func advance(to done: Int) {
        guard isEnabled else { return }
        state.withLock { $0.done = done }
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
            var line = "\(StandardError.programName): \(state.phase)"
            if let total = state.total, total > 0 {
                line += " \(state.done)/\(total) (\(state.done * 100 / total)%)"
            } else if state.done > 0 {
                line += " \(state.done)"
            }
            line += String(format: " %.1fs", seconds(elapsed))
            StandardError.write("\r\u{1B}[K\(line)")
            state.isVisible = true
            return true
        }
    }
}

/// A duration in seconds, for printing.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
