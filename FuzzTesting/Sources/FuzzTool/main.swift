// FuzzTesting/Sources/FuzzTool/main.swift - seed corpus writer and crash-safe save torture

import Foundation
import FuzzSupport
import GraphArchive

#if canImport(Glibc)
    import Glibc
#endif

let usage = """
    FuzzTool: seed corpus and crash-safety runs for gridstore.
    Usage: FuzzTool seeds CORPUS_DIR
           FuzzTool torture PATH ROUNDS [RECORDS]   kill a saving child with SIGKILL ROUNDS times
           FuzzTool race PATH ROUNDS [WRITERS]      WRITERS processes save PATH at once, ROUNDS times
           FuzzTool decode FILE...                  run the fuzz targets' readers on files, printing what each says
           FuzzTool save-loop PATH RECORDS FIRST    (child) save versions FIRST, FIRST+1, ... forever
           FuzzTool save-once PATH RECORDS VERSION  (child) save one version
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("FuzzTool: error: \(message)\n".utf8))
    exit(1)
}

func integer(_ arguments: [String], _ index: Int, default value: Int? = nil) -> Int {
    if index < arguments.count, let parsed = Int(arguments[index]), parsed >= 0 { return parsed }
    if index >= arguments.count, let value { return value }
    fail("expected a non-negative number as argument \(index)\n\(usage)")
}

/// Starts this executable again with `arguments`.
func spawnSelf(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    process.arguments = arguments
    try process.run()
    return process
}

/// Seconds one save of `records` records takes here, to spread the kills over whole saves.
func timeOneSave(path: String, records: Int) throws -> Double {
    let start = Date()
    try SaveGenerations.save(generation: 0, baseCount: records, to: path)
    return Date().timeIntervalSince(start)
}

/// Kills a child that saves version after version at a random moment, `rounds` times; after
/// each kill the file must be one whole version, and the versions must never go backwards.
func torture(path: String, rounds: Int, records: Int) throws {
    let saveSeconds = try timeOneSave(path: path, records: records)
    var lastVersion = 0
    var changes = 0
    var maximumTemporaries = 0
    for round in 1...rounds {
        let child = try spawnSelf(["save-loop", path, String(records), String(lastVersion + 1)])
        // Up to three saves' time (process start included): kills land before, inside and between saves.
        usleep(UInt32(Double.random(in: 0...(3 * saveSeconds + 0.05)) * 1_000_000))
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        guard child.terminationReason == .uncaughtSignal else {
            fail("round \(round): child ended by itself (status \(child.terminationStatus))")
        }
        let version: Int
        do {
            version = try SaveGenerations.check(path: path, baseCount: records)
        } catch {
            fail("round \(round): \(error)")
        }
        guard version >= lastVersion else {
            fail("round \(round): version went back from \(lastVersion) to \(version)")
        }
        if version != lastVersion { changes += 1 }
        lastVersion = version
        maximumTemporaries = max(maximumTemporaries, SaveGenerations.temporaries(of: path).count)
    }
    // A last, uninterrupted save removes what killed writers left behind.
    try SaveGenerations.save(generation: lastVersion + 1, baseCount: records, to: path)
    let left = SaveGenerations.temporaries(of: path)
    guard left.isEmpty else { fail("temporary files left after a clean save: \(left)") }
    guard try SaveGenerations.check(path: path, baseCount: records) == lastVersion + 1 else { fail("last save lost") }
    print(
        "torture: \(rounds) kills, file always one whole version (\(changes) rounds saw a new one, last \(lastVersion)); "
            + "one save takes \(String(format: "%.3f", saveSeconds)) s; at most \(maximumTemporaries) stale temporaries, "
            + "none after the next save"
    )
}

/// Starts `writers` processes saving different versions to `path` at the same moment.
func race(path: String, rounds: Int, writers: Int, records: Int) throws {
    var winners: [Int: Int] = [:]
    for round in 1...rounds {
        let first = round * 100
        let children = try (0..<writers).map {
            try spawnSelf(["save-once", path, String(records), String(first + $0)])
        }
        for child in children {
            child.waitUntilExit()
            guard child.terminationStatus == 0 else { fail("round \(round): a writer failed") }
        }
        let version: Int
        do {
            version = try SaveGenerations.check(path: path, baseCount: records)
        } catch {
            fail("round \(round): \(error)")
        }
        guard (first..<(first + writers)).contains(version) else {
            fail("round \(round): unexpected version \(version)")
        }
        winners[version - first, default: 0] += 1
        guard SaveGenerations.temporaries(of: path).isEmpty else { fail("round \(round): temporary files left") }
    }
    let tally = winners.sorted { $0.key < $1.key }.map { "writer \($0.key): \($0.value)" }.joined(separator: ", ")
    print("race: \(rounds) rounds of \(writers) writers, always one whole archive; last writer won as: \(tally)")
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "seeds":
        guard arguments.count == 2 else { fail(usage) }
        // Compressed seeds need a zstd build of the engine; without one they are skipped.
        let sets: [(String, ArchiveCompression)] = [("FuzzArchive", .none), ("FuzzCompressed", .zstd(level: 3))]
        for (target, compression) in sets {
            guard let seeds = try? SeedCorpus.archives(compression: compression) else {
                print("seeds: skipped \(target) (\(compression) unavailable in this build)")
                continue
            }
            let folder = URL(fileURLWithPath: arguments[1]).appendingPathComponent(target)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, data) in seeds {
                try data.write(to: folder.appendingPathComponent(name))
            }
            print("seeds: wrote \(seeds.count) archives to \(folder.path)")
        }
    case "decode":
        for path in arguments.dropFirst() {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            let forms: [(String, () -> String)] = [
                ("as is", { FuzzDecoding.describe(bytes) }),
                ("resealed", { FuzzDecoding.describe(FuzzDecoding.resealed(bytes)) }),
                ("as zstd", { FuzzDecoding.describe(FuzzDecoding.asCompressed(bytes)) }),
                ("as keyed", { FuzzDecoding.describeKeyed(bytes) }),
            ]
            for (form, describe) in forms {
                let start = Date()
                let outcome = describe()
                print("\(path) \(form) (\(String(format: "%.3f", Date().timeIntervalSince(start))) s): \(outcome)")
            }
        }
    case "torture":
        try torture(path: arguments[1], rounds: integer(arguments, 2), records: integer(arguments, 3, default: 100_000))
    case "race":
        try race(
            path: arguments[1],
            rounds: integer(arguments, 2),
            writers: integer(arguments, 3, default: 4),
            records: 20_000
        )
    case "save-loop":
        var version = integer(arguments, 3)
        while true {
            try SaveGenerations.save(generation: version, baseCount: integer(arguments, 2), to: arguments[1])
            version += 1
        }
    case "save-once":
        try SaveGenerations.save(generation: integer(arguments, 3), baseCount: integer(arguments, 2), to: arguments[1])
    default:
        print(usage)
        exit(arguments.isEmpty ? 0 : 64)
    }
} catch {
    fail("\(error)")
}
