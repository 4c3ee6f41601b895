// Sources/GridStoreCLI/Command.swift - what one run of `gridstore` was asked to do

import GraphArchive
import GridStore

/// One parsed command line; ``parse(_:)`` makes it, ``GridStoreTool/run(_:)`` carries it out.
enum Command: Equatable {
    /// `--help`, `help [COMMAND]`, `COMMAND --help`: the general help or one command's.
    case help(CommandName?)
    /// `--version`.
    case version
    case save(SaveOptions)
    case load(LoadOptions)
    case verify(VerifyOptions)
    case session(SessionOptions)
    case convert(ConvertOptions)
    case inspect(InspectOptions)
}

/// The verbs, as typed.
enum CommandName: String, CaseIterable {
    case save, load, verify, session, convert, inspect

    /// The `--name` options the command takes, besides `-q`/`--quiet` and `-h`/`--help`
    /// (which every command takes); its help lists each.
    var optionNames: [String] {
        switch self {
        case .save:
            [
                "--file", "--compress", "--format", "--append", "--generate", "--shared", "--seed", "--input",
                "--strict",
                "--lock-timeout", "--memory-limit",
            ]
        case .load: ["--file", "--stats", "--json", "--limit", "--memory-limit"]
        case .verify: ["--file", "--memory-limit"]
        case .session: ["--file", "--compress", "--format", "--strict", "--lock-timeout", "--memory-limit"]
        case .convert: ["--to", "--compress", "--lock-timeout", "--memory-limit"]
        case .inspect: ["--file", "--json", "--summary", "--depth", "--memory-limit"]
        }
    }
}

/// `gridstore save`: fill the data source and save it.
struct SaveOptions: Equatable {
    /// `--file`; `nil` is the default archive location, `-` standard output.
    var file: String?
    /// `--compress`; `nil` when not given: none, or with `--append` the archive's own.
    var compression: ArchiveCompression?
    /// `--format`; `nil` when not given: gridstore, or with `--append` the archive's own.
    var format: GridStateArchive.Format?
    /// `--append`: add to the archive's records instead of replacing them.
    var append = false
    var source: RecordSource
    /// `--strict`: refuse unknown JSON fields and CSV columns instead of skipping them.
    var strict = false
    /// `--lock-timeout`: how long to wait for another process's lock on the archive.
    var lockTimeout = ArchiveLock.defaultTimeout
    /// `--memory-limit`: the memory budget of reading the archive and making the records.
    var memoryLimit: Int?
}

/// Where `save` gets its records.
enum RecordSource: Equatable {
    /// `--generate N [--shared F] [--seed S]`.
    case generate(count: Int, sharedFraction: Double, seed: UInt64)
    /// `--input PATH`, `-` for standard input.
    case input(path: String)
}

/// `gridstore load`: print the records or statistics.
struct LoadOptions: Equatable {
    /// `--file`; `nil` is the default archive location, `-` standard input.
    var file: String?
    var stats = false
    var json = false
    /// `--limit N`: print at most N records.
    var limit: Int?
    /// `--memory-limit`: the memory budget of reading the archive.
    var memoryLimit: Int?
}

/// `gridstore verify`: check an archive completely.
struct VerifyOptions: Equatable {
    /// `--file`; `nil` is the default archive location, `-` standard input.
    var file: String?
    /// `--memory-limit`: the memory budget of reading the archive.
    var memoryLimit: Int?
}

/// `gridstore session`: keep the data source open, adding records from standard input, and
/// save when input ends or the process is told to stop.
struct SessionOptions: Equatable {
    var file: String?
    /// `--compress`; `nil` when not given: the archive's own (none for a new archive).
    var compression: ArchiveCompression?
    /// `--format`; `nil` when not given: the archive's own (gridstore for a new archive).
    var format: GridStateArchive.Format?
    /// `--strict`: refuse records with unknown fields instead of skipping the fields.
    var strict = false
    /// `--lock-timeout`: how long to wait for another process's lock on the archive.
    var lockTimeout = ArchiveLock.defaultTimeout
    /// `--memory-limit`: the memory budget of reading the archive.
    var memoryLimit: Int?
}

/// `gridstore convert IN OUT --to FORMAT`: rewrite an archive (either format) in `FORMAT`.
struct ConvertOptions: Equatable {
    /// IN; `-` is standard input.
    var input: String
    /// OUT; `-` is standard output.
    var output: String
    var format: GridStateArchive.Format
    /// `--compress`, only with `--to gridstore`.
    var compression: ArchiveCompression = .none
    /// `--lock-timeout`: how long to wait for another process's lock on OUT.
    var lockTimeout = ArchiveLock.defaultTimeout
    /// `--memory-limit`: the memory budget of reading IN.
    var memoryLimit: Int?
}

/// `gridstore inspect [PATH | --file PATH | -]`: any archive, printed without its model types.
struct InspectOptions: Equatable {
    /// The archive (a plain argument or `--file`); `-` is standard input, nil the default location.
    var file: String?
    /// `--json`: the whole graph as one JSON document.
    var json = false
    /// `--summary`: objects by class, values by kind, sizes.
    var summary = false
    /// `--depth N`: levels of the tree shown.
    var depth: Int?
    /// `--memory-limit`: the memory budget of reading the archive.
    var memoryLimit: Int?
}
