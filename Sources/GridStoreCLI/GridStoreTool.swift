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
        }
    }

    // MARK: - Shared by the commands

    /// The archive a command works on: `--file`, else the default location.
    static func archivePath(_ file: String?) -> String {
        file ?? ArchiveLocation.defaultArchivePath()
    }

    /// The data source, pointed at `path`.
    static func dataSource(at path: String, compression: ArchiveCompression = .none) -> GridStateDataSource {
        let store = GridStateDataSource.shared
        store.archivePath = path
        store.compression = compression
        return store
    }

    /// Runs `body`, naming `path` in archive errors that do not name it already.
    @discardableResult
    static func withArchive<Result>(_ path: String, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as GraphArchiveError {
            if error.message.contains(path) { throw ToolError("\(error)") }
            throw ToolError("\(path): \(error)")
        }
    }

    /// Loads the data source from its archive; a missing archive is an error here.
    static func loadExisting(_ store: GridStateDataSource) throws {
        let path = store.archivePath
        let found = try withArchive(path) { try store.load() }
        guard found else {
            throw ToolError("no archive at \(path) (create one with 'gridstore save', or pick one with --file)")
        }
    }
}
