// Benchmarks/Harness/MachineFacts.swift - what machine the figures come from

import Foundation

extension MachineFacts {
    static var current: MachineFacts {
        let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuInfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        return MachineFacts(
            cpuModel: model ?? "unknown",
            logicalCPUs: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: ProcessInfo.processInfo.physicalMemory,
            operatingSystem: release ?? ProcessInfo.processInfo.operatingSystemVersionString
        )
    }

    /// The 1-, 5- and 15-minute load averages of /proc/loadavg.
    static var loadAverages: [Double]? {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ").prefix(3).compactMap { Double($0) }
        return fields.count == 3 ? fields : nil
    }

    /// MemAvailable of /proc/meminfo, in bytes.
    static var availableMemory: Int? { ProcFile.bytes("MemAvailable", in: "/proc/meminfo") }
}

/// Reads the "Name:   1234 kB" lines of /proc/meminfo and /proc/self/status.
enum ProcFile {
    /// The field `name` of the file at `path`, in bytes.
    static func bytes(_ name: String, in path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") })
        else { return nil }
        let fields = line.split { $0 == " " || $0 == "\t" }
        guard fields.count >= 2, let kilobytes = Int(fields[1]) else { return nil }
        return kilobytes * 1024
    }
}
