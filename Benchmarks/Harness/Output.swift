// Benchmarks/Harness/Output.swift - unbuffered output and number formatting

import Foundation

/// Writes straight to the file descriptors: progress must show while a long suite runs, and a
/// crash in a peer must not swallow buffered lines.
enum Output {
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Progress goes to stderr, so `> results.txt` keeps only the report.
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static func error(_ message: String) {
        progress("Benchmarks: error: \(message)")
    }

    static let debugWarning = """
        **************************************************************************
        ** WARNING: Benchmarks was built in DEBUG: its figures are meaningless. **
        ** Measure with: swift run -c release Benchmarks                        **
        **************************************************************************
        """
}

/// Numbers as the table shows them. Sizes are decimal: 1 MB = 10^6 bytes.
enum Format {
    static func seconds(_ value: Double) -> String {
        switch value {
        case ..<1e-3: String(format: "%.1f µs", value * 1e6)
        case ..<1: String(format: "%.2f ms", value * 1e3)
        default: String(format: "%.3f s", value)
        }
    }

    static func bytes(_ value: Int) -> String {
        let amount = Double(value)
        switch amount.magnitude {
        case ..<1e4: return "\(value) B"
        case ..<1e7: return String(format: "%.1f kB", amount / 1e3)
        case ..<1e10: return String(format: "%.1f MB", amount / 1e6)
        default: return String(format: "%.2f GB", amount / 1e9)
        }
    }

    /// Records per second: "8.31 M/s".
    static func rate(_ value: Double) -> String {
        switch value {
        case ..<1e3: String(format: "%.0f /s", value)
        case ..<1e6: String(format: "%.1f k/s", value / 1e3)
        default: String(format: "%.2f M/s", value / 1e6)
        }
    }

    /// Three significant digits: 0.00312, 2.41, 312.
    static func ratio(_ value: Double) -> String {
        String(format: "%.3g", value)
    }

    /// A scale factor: "1,000" when whole, else three significant digits.
    static func factor(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? Int(value).grouped : ratio(value)
    }

    /// "312x", "19.6x", "2.43x": three significant digits below 100, so that a ratio just
    /// under a target's limit (19.57 against 20) does not print as the limit itself.
    static func times(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0fx", value) : String(format: "%.3gx", value)
    }

    static func decimal(_ value: Double) -> String {
        String(format: "%.2f", value)
    }
}

extension Int {
    /// "1,000,000".
    var grouped: String {
        let digits = String(magnitude)
        var result = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return self < 0 ? "-" + result : result
    }
}
