// FuzzTesting/Sources/FuzzSupport/SaveGenerations.swift - archives whose every record names their version

import Foundation
import GraphArchive
import GridStore

/// Numbered versions of one archive for crash-safety runs: version `g` holds records that all
/// carry `g`, in a count that depends on `g`, so a file mixing two versions cannot pass `check`.
public enum SaveGenerations {
    public static func records(generation: Int, baseCount: Int) -> [GridState] {
        let count = baseCount + (generation % 7) * 97
        let shared = GridState(name: "shared-\(generation)", color: generation, date: "2024-01-01")
        return (0..<count).map { index in
            index % 3 == 0 ? shared : GridState(name: "g\(generation)-\(index)", color: generation, date: "2024-01-02")
        }
    }

    /// Saves version `generation` to `path` atomically.
    public static func save(generation: Int, baseCount: Int, to path: String, compression: ArchiveCompression = .none)
        throws
    {
        var options = GraphArchiver.Options()
        options.compression = compression
        try GraphArchiver.archiveRootObject(
            records(generation: generation, baseCount: baseCount),
            toFile: path,
            options: options
        )
    }

    /// The version the archive at `path` holds; throws if it does not verify or is not one whole version.
    public static func check(path: String, baseCount: Int) throws -> Int {
        _ = try GraphUnarchiver.verify(file: path)
        let records = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, fromFile: path)
        guard let generation = records.first?.color else { throw Mismatch(reason: "empty archive") }
        guard records.count == baseCount + (generation % 7) * 97 else {
            throw Mismatch(reason: "version \(generation) with \(records.count) records")
        }
        guard records.allSatisfy({ $0.color == generation }) else {
            throw Mismatch(reason: "records of several versions")
        }
        guard records[0] === records[3] else { throw Mismatch(reason: "shared record not shared") }
        return generation
    }

    public struct Mismatch: Error, CustomStringConvertible {
        public var reason: String
        public var description: String { "archive is not one whole version: \(reason)" }
    }

    /// Temporary files `AtomicFile` left next to `path`.
    public static func temporaries(of path: String) -> [String] {
        let url = URL(fileURLWithPath: path)
        let prefix = "." + url.lastPathComponent + ".tmp-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        return names.filter { $0.hasPrefix(prefix) }
    }
}
