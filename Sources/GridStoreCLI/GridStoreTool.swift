// Sources/GridStoreCLI/GridStoreTool.swift - runs one command line and turns failures into exit statuses

import Foundation
import GraphArchive
import GridStore

/// The `gridstore` tool: parse, run, report.
enum GridStoreTool {
    /// Exit statuses (sysexits.h for the usage error).
    enum ExitStatus {
        static let success: Int32 = 0
        static let failure: Int32 = 1
        static let usage: Int32 = 64
    }

    /// Runs `gridstore` with `arguments` (without the program name) and returns the exit status.
    /// Every error ends here as a message on standard error: nothing escapes as a crash.
    static func main(_ arguments: [String]) -> Int32 {
        // A reader that closes the pipe early must not kill us with SIGPIPE; writes report EPIPE.
        signal(SIGPIPE, SIG_IGN)
        do {
            try run(parse(arguments))
            return ExitStatus.success
        } catch {
            report(error)
            return exitStatus(for: error)
        }
    }

    /// 64 for a usage error, 0 when our reader closed standard output, 1 for everything else.
    static func exitStatus(for error: any Error) -> Int32 {
        switch error {
        case is UsageError: ExitStatus.usage
        case is OutputClosed: ExitStatus.success
        default: ExitStatus.failure
        }
    }

    /// `gridstore: error: …` on standard error (and where to find help, for usage errors).
    private static func report(_ error: any Error) {
        switch error {
        case let usage as UsageError:
            StandardError.error(usage.message)
            StandardError.write("\(StandardError.programName): \(usage.hint)\n")
        case is OutputClosed:
            break
        default:
            StandardError.error("\(error)")
        }
    }

    static func run(_ invocation: Invocation) throws {
        let console = Console(quiet: invocation.quiet)
        switch invocation.command {
        case .help(let name):
            var output = OutputBuffer()
            output.append(HelpText.text(for: name) + "\n")
            try output.flush()
        case .version:
            var output = OutputBuffer()
            output.append("gridstore \(toolVersion)\n")
            try output.flush()
        case .save(let options): try save(options, console: console)
        case .load(let options): try load(options, console: console)
        case .verify(let options): try verify(options, console: console)
        case .session(let options): try session(options, console: console)
        case .convert(let options): try convert(options, console: console)
        case .inspect(let options): try inspect(options, console: console)
        }
    }

    // MARK: - Shared by the commands

    /// The archive a command works on: `--file`, else the default location. `-` stands for
    /// standard input where the command reads and standard output where it writes.
    static func archivePath(_ file: String?) -> String {
        file ?? ArchiveLocation.defaultArchivePath()
    }

    /// The archive path that means standard input or output.
    static let standardStream = "-"

    /// `path` as messages name it: "standard input" (or "standard output") for `-`.
    static func name(of path: String, writing: Bool = false) -> String {
        guard path == standardStream else { return path }
        return writing ? "standard output" : "standard input"
    }

    /// The data source, pointed at `path`, saving in `form`.
    static func dataSource(
        at path: String,
        form: GridStateArchive.StoredForm = GridStateArchive.StoredForm(format: .gridstore, compression: .none)
    ) -> GridStateDataSource {
        let store = GridStateDataSource.shared
        store.archivePath = path
        store.format = form.format
        store.compression = form.compression
        return store
    }

    /// Runs `body`, naming the archive (`name`) in archive errors that do not name it already.
    @discardableResult
    static func withArchive<Result>(_ name: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as GraphArchiveError {
            var text = "\(error)"
            if error.code == .limitExceeded && error.message.hasPrefix("decoding needs more memory") {
                text += "; --memory-limit SIZE sets the budget"
            }
            if error.message.contains(name) { throw ToolError(text) }
            throw ToolError("\(name): \(text)")
        }
    }

    /// The decoding limits of a command: the defaults, with `--memory-limit` as the memory budget.
    static func decodingOptions(memoryLimit: Int?) -> GraphUnarchiver.Options {
        var options = GraphUnarchiver.Options()
        options.maximumMemoryBytes = memoryLimit
        return options
    }

    /// Loads the data source from its archive; a missing archive is an error here.
    static func loadExisting(_ store: GridStateDataSource) throws {
        let path = store.archivePath
        let found = try withArchive(path) { try store.load() }
        guard found else {
            throw ToolError("no archive at \(path) (create one with 'gridstore save', or pick one with --file)")
        }
    }

    /// The archive to read at `path`: the file, or for `-` all of standard input (as much as an
    /// archive may hold), which may be a pipe.
    static func archiveSource(
        _ path: String,
        progress: Progress? = nil,
        options: GraphUnarchiver.Options = GraphUnarchiver.Options()
    ) throws -> GridStateArchive.Source {
        guard path == standardStream else { return .file(path) }
        // An archive is binary: nobody types one (and waiting for it would look like a hang).
        guard isatty(STDIN_FILENO) != 1 else {
            throw ToolError(
                "standard input is a terminal, and an archive is binary: redirect a file into it "
                    + "(--file - < FILE) or pipe one, or give --file PATH"
            )
        }
        // What standard input may take: the archive size limit, and half the memory budget (the
        // buffer grows by doubling), so that reading it can never exhaust memory.
        let limit = min(
            options.maximumArchiveBytes,
            AvailableMemory.current().budget(choosing: options.maximumMemoryBytes) / 2
        )
        let data = try StandardInput.readAll(limit: limit, what: "an archive", progress: progress)
        guard !data.isEmpty else { throw ToolError("standard input is empty: there is no archive to read") }
        return .bytes(data)
    }

    /// Refuses `-` for a command that updates its archive in place: it needs a file.
    static func requireFile(_ path: String, command: CommandName, option: String) throws(UsageError) {
        guard path == standardStream else { return }
        throw UsageError(
            "\(command.rawValue)\(option) loads an archive and saves it again, so it needs a file, not '-' "
                + "(standard input or output); a file named '-' is './-'",
            command: command
        )
    }

    /// Refuses to write an archive, which is binary, to a terminal (as `zstd` and `gzip` do).
    static func checkStandardOutputTakesAnArchive(alternative: String) throws {
        guard isatty(STDOUT_FILENO) == 1 else { return }
        throw ToolError(
            "standard output is a terminal, and an archive is binary: redirect it to a file or a pipe, "
                + "or \(alternative)"
        )
    }

    /// Writes finished archive bytes to standard output, after reading back what they hold as a
    /// reader would (the summary's counts).
    static func writeArchiveToStandardOutput(_ data: Data) throws -> ArchiveInfo {
        let info = try withArchive("standard output") { try GridStateArchive.info(of: .bytes(data)) }
        try OutputBuffer.write(data)
        return info
    }

    /// The form to save an archive in: the flags' when given, else the form `stored` has (the
    /// archive being updated, if there is one), else gridstore without compression. A kept
    /// zstd archive is written at the default level, as archives do not record theirs.
    static func savedForm(
        format: GridStateArchive.Format?,
        compression: ArchiveCompression?,
        keeping stored: GridStateArchive.StoredForm?,
        path: String,
        command: CommandName
    ) throws(UsageError) -> GridStateArchive.StoredForm {
        switch format ?? stored?.format ?? .gridstore {
        case .keyedPlist:
            if let compression, compression != .none {
                throw UsageError(
                    "\(path) is a keyed-plist archive, which is never compressed; add --format gridstore to "
                        + "save it as a gridstore archive with --compress \(compression)",
                    command: command
                )
            }
            return GridStateArchive.StoredForm(format: .keyedPlist, compression: .none)
        case .gridstore:
            let kept = stored?.format == .gridstore ? stored?.compression : nil
            return GridStateArchive.StoredForm(format: .gridstore, compression: compression ?? kept ?? .none)
        }
    }

    /// "compression none" for gridstore archives, "format keyed-plist" for keyed ones.
    static func describe(_ form: GridStateArchive.StoredForm) -> String {
        form.format == .gridstore ? "compression \(form.compression)" : "format \(form.format.rawValue)"
    }
}
