// Sources/GridStoreCLI/UsageError.swift - a command line that cannot be run (exit status 64)

/// A mistake in the command line: unknown command or option, missing or malformed value,
/// conflicting options. `gridstore` prints it with a pointer to the help and exits with 64
/// (`EX_USAGE`).
struct UsageError: Error, Equatable, CustomStringConvertible {
    var message: String
    /// The command whose help explains the mistake; `nil` for the general help.
    var command: CommandName?

    init(_ message: String, command: CommandName? = nil) {
        self.message = message
        self.command = command
    }

    var description: String { message }

    /// Where to read more, e.g. "see 'gridstore save --help'".
    var hint: String {
        if let command { return "see 'gridstore \(command.rawValue) --help'" }
        return "see 'gridstore --help'"
    }
}
