// Sources/GridStoreCLI/CommandParser.swift - the command line as a value, before anything runs

import GraphArchive
import GridStore

/// Most records `save --generate` makes. A save peaks at about 330 bytes of memory per record
/// (measured: 330 MB for 1,000,000), so the cap keeps a typo (an extra zero or three) a clear
/// usage error instead of an exhausted machine.
let maximumGeneratedRecords = 10_000_000

/// The memory one record takes from being made to being saved, by the measurement above: what
/// `save --generate N` checks against the memory budget before it makes any.
let bytesPerSavedRecord = 330

/// One command line: what to do, and how much to say about it.
struct Invocation: Equatable {
    var command: Command
    /// `-q`/`--quiet`: no progress and no informational lines; results, warnings and errors
    /// are still written.
    var quiet = false
}

/// Reads the arguments after the program name into an ``Invocation``; touches nothing else.
///
/// The form is `gridstore [-q] COMMAND [OPTIONS]`. Options are `--name VALUE` or `--name=VALUE`;
/// each may be given once; `-h`/`--help` anywhere before `--` asks for the command's help, and
/// `-q`/`--quiet` may come before the command or among its options.
///
/// - Throws: ``UsageError`` for every mistake, naming it.
func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
    var arguments = arguments[...]
    var quiet = false
    while let first = arguments.first, try OptionReader.isQuiet(first) {
        quiet = true
        arguments = arguments.dropFirst()
    }
    guard let first = arguments.first else {
        throw UsageError("no command given; the commands are \(commandList)")
    }
    let rest = Array(arguments.dropFirst())
    switch first {
    case "-h", "--help", "help":
        guard let topic = rest.first else { return Invocation(command: .help(nil), quiet: quiet) }
        guard rest.count == 1, let name = CommandName(rawValue: topic) else {
            throw UsageError("no help on '\(rest.joined(separator: " "))'; the commands are \(commandList)")
        }
        return Invocation(command: .help(name), quiet: quiet)
    case "--version":
        guard rest.isEmpty else { throw UsageError("unexpected argument '\(rest[0])' after --version") }
        return Invocation(command: .version, quiet: quiet)
    default:
        break
    }
    guard let name = CommandName(rawValue: first) else {
        if first.hasPrefix("-") {
            throw UsageError("unknown option '\(first)'; give a command first: gridstore COMMAND [OPTIONS]")
        }
        throw UsageError("unknown command '\(first)'; the commands are \(commandList)")
    }
    var reader = OptionReader(command: name, arguments: rest)
    if reader.asksForHelp { return Invocation(command: .help(name), quiet: quiet) }
    let command: Command
    switch name {
    case .save: command = .save(try parseSave(&reader))
    case .load: command = .load(try parseLoad(&reader))
    case .verify: command = .verify(try parseVerify(&reader))
    case .session: command = .session(try parseSession(&reader))
    case .convert: command = .convert(try parseConvert(&reader))
    case .inspect: command = .inspect(try parseInspect(&reader))
    }
    return Invocation(command: command, quiet: quiet || reader.quiet)
}

private let commandList = (CommandName.allCases.map(\.rawValue) + ["help"]).joined(separator: ", ")

// MARK: - Commands

private func parseSave(_ reader: inout OptionReader) throws(UsageError) -> SaveOptions {
    var file: String?
    var compression: ArchiveCompression?
    var format: GridStateArchive.Format?
    var append = false
    var count: Int?
    var sharedFraction: Double?
    var seed: UInt64?
    var input: String?
    var strict = false
    var lockTimeout = ArchiveLock.defaultTimeout
    var memoryLimit: Int?
    while let option = try reader.nextOption() {
        switch option.name {
        case "--file": file = try reader.path(option)
        case "--lock-timeout": lockTimeout = try reader.seconds(option)
        case "--memory-limit": memoryLimit = try reader.byteSize(option)
        case "--compress": compression = try reader.compression(option)
        case "--format": format = try reader.format(option)
        case "--append": try reader.flag(option, &append)
        case "--generate": count = try reader.count(option, maximum: maximumGeneratedRecords)
        case "--shared": sharedFraction = try reader.fraction(option)
        case "--seed": seed = try reader.seed(option)
        case "--input": input = try reader.path(option)
        case "--strict": try reader.flag(option, &strict)
        default:
            throw reader.unknown(option)
        }
    }
    let source: RecordSource
    switch (count, input) {
    case (let count?, nil):
        guard !strict else { throw UsageError("--strict goes with --input, not --generate", command: .save) }
        source = .generate(count: count, sharedFraction: sharedFraction ?? 0, seed: seed ?? 1)
    case (nil, let input?):
        guard sharedFraction == nil && seed == nil else {
            throw UsageError("--shared and --seed go with --generate, not --input", command: .save)
        }
        source = .input(path: input)
    case (nil, nil):
        throw UsageError("save needs records: --generate N or --input PATH ('-' for standard input)", command: .save)
    case (_?, _?):
        throw UsageError("--generate and --input cannot be used together", command: .save)
    }
    try checkCompression(compression, for: format, command: .save, formatOption: "--format")
    return SaveOptions(
        file: file,
        compression: compression,
        format: format,
        append: append,
        source: source,
        strict: strict,
        lockTimeout: lockTimeout,
        memoryLimit: memoryLimit
    )
}

private func parseLoad(_ reader: inout OptionReader) throws(UsageError) -> LoadOptions {
    var options = LoadOptions()
    while let option = try reader.nextOption() {
        switch option.name {
        case "--file": options.file = try reader.path(option)
        case "--stats": try reader.flag(option, &options.stats)
        case "--json": try reader.flag(option, &options.json)
        case "--limit": options.limit = try reader.count(option, maximum: Int.max)
        case "--memory-limit": options.memoryLimit = try reader.byteSize(option)
        default: throw reader.unknown(option)
        }
    }
    if options.stats && options.limit != nil {
        throw UsageError("--limit applies to printed records, not to --stats", command: .load)
    }
    return options
}

private func parseVerify(_ reader: inout OptionReader) throws(UsageError) -> VerifyOptions {
    var options = VerifyOptions()
    while let option = try reader.nextOption() {
        switch option.name {
        case "--file": options.file = try reader.path(option)
        case "--memory-limit": options.memoryLimit = try reader.byteSize(option)
        default: throw reader.unknown(option)
        }
    }
    return options
}

private func parseSession(_ reader: inout OptionReader) throws(UsageError) -> SessionOptions {
    var options = SessionOptions()
    while let option = try reader.nextOption() {
        switch option.name {
        case "--file": options.file = try reader.path(option)
        case "--compress": options.compression = try reader.compression(option)
        case "--format": options.format = try reader.format(option)
        case "--strict": try reader.flag(option, &options.strict)
        case "--lock-timeout": options.lockTimeout = try reader.seconds(option)
        case "--memory-limit": options.memoryLimit = try reader.byteSize(option)
        default: throw reader.unknown(option)
        }
    }
    try checkCompression(options.compression, for: options.format, command: .session, formatOption: "--format")
    return options
}

private func parseConvert(_ reader: inout OptionReader) throws(UsageError) -> ConvertOptions {
    reader.acceptsOperands = true
    var format: GridStateArchive.Format?
    var compression: ArchiveCompression?
    var lockTimeout = ArchiveLock.defaultTimeout
    var memoryLimit: Int?
    while let option = try reader.nextOption() {
        switch option.name {
        case "--to": format = try reader.format(option)
        case "--memory-limit": memoryLimit = try reader.byteSize(option)
        case "--compress": compression = try reader.compression(option)
        case "--lock-timeout": lockTimeout = try reader.seconds(option)
        default: throw reader.unknown(option)
        }
    }
    guard reader.operands.count == 2 else {
        let given = reader.operands.isEmpty ? "none" : reader.operands.map { "'\($0)'" }.joined(separator: ", ")
        throw UsageError("convert takes two paths, IN and OUT; given: \(given)", command: .convert)
    }
    guard let format else {
        throw UsageError("convert needs --to gridstore or --to keyed-plist", command: .convert)
    }
    for path in reader.operands where path.isEmpty {
        throw UsageError("convert needs paths, not an empty string", command: .convert)
    }
    try checkCompression(compression, for: format, command: .convert, formatOption: "--to")
    return ConvertOptions(
        input: reader.operands[0],
        output: reader.operands[1],
        format: format,
        compression: compression ?? .none,
        lockTimeout: lockTimeout,
        memoryLimit: memoryLimit
    )
}

private func parseInspect(_ reader: inout OptionReader) throws(UsageError) -> InspectOptions {
    reader.acceptsOperands = true
    var options = InspectOptions()
    while let option = try reader.nextOption() {
        switch option.name {
        case "--file": options.file = try reader.path(option)
        case "--json": try reader.flag(option, &options.json)
        case "--summary": try reader.flag(option, &options.summary)
        case "--depth": options.depth = try reader.count(option, maximum: Int.max)
        case "--memory-limit": options.memoryLimit = try reader.byteSize(option)
        default: throw reader.unknown(option)
        }
    }
    if let path = reader.operands.first {
        guard reader.operands.count == 1 else {
            let given = reader.operands.map { "'\($0)'" }.joined(separator: ", ")
            throw UsageError("inspect takes one archive; given: \(given)", command: .inspect)
        }
        guard options.file == nil else {
            throw UsageError("give the archive once: PATH or --file PATH, not both", command: .inspect)
        }
        guard !path.isEmpty else { throw UsageError("inspect needs a path, not an empty string", command: .inspect) }
        options.file = path
    }
    if options.json && options.summary {
        throw UsageError("--json and --summary cannot be used together", command: .inspect)
    }
    if options.depth != nil && (options.json || options.summary) {
        throw UsageError("--depth goes with the tree output, not with --json or --summary", command: .inspect)
    }
    return options
}

/// Keyed archives (binary plists) are never compressed: `--compress` other than `none` with
/// keyed-plist output is a mistake, not something to ignore.
private func checkCompression(
    _ compression: ArchiveCompression?,
    for format: GridStateArchive.Format?,
    command: CommandName,
    formatOption: String
) throws(UsageError) {
    guard format == .keyedPlist, let compression, compression != .none else { return }
    throw UsageError(
        "--compress \(compression) goes with \(formatOption) gridstore; keyed-plist archives are not compressed",
        command: command
    )
}

// MARK: - Options

/// Walks one command's options, checking the shape of each and that none repeats.
struct OptionReader {
    struct Option {
        var name: String
        /// The `VALUE` of `--name=VALUE`.
        var inlineValue: String?
    }

    let command: CommandName
    /// Whether the command takes plain arguments (collected in ``operands``) between its options.
    var acceptsOperands = false
    /// Whether `-q`/`--quiet` came among the options (every command takes it).
    private(set) var quiet = false
    private(set) var operands: [String] = []
    private let arguments: [String]
    private var position = 0
    private var seen: Set<String> = []

    init(command: CommandName, arguments: [String]) {
        self.command = command
        self.arguments = arguments
    }

    /// Whether `-h` or `--help` appears among the options.
    var asksForHelp: Bool {
        arguments.prefix { $0 != "--" }.contains { $0 == "-h" || $0 == "--help" }
    }

    /// The next option; `nil` when none is left. Plain arguments go to ``operands`` where the
    /// command takes them, and are an error otherwise.
    mutating func nextOption() throws(UsageError) -> Option? {
        while position < arguments.count {
            let argument = arguments[position]
            position += 1
            if argument == "--" {
                // `--` ends the options: the rest are plain arguments.
                while position < arguments.count {
                    try operand(arguments[position])
                    position += 1
                }
                return nil
            }
            if try Self.isQuiet(argument) {
                quiet = true
                continue
            }
            guard argument.hasPrefix("--") else {
                if argument.hasPrefix("-") && argument != "-" {
                    throw error("unknown option '\(argument)' for \(command.rawValue)")
                }
                try operand(argument)
                continue
            }
            var option = Option(name: argument)
            if let equals = argument.firstIndex(of: "=") {
                option = Option(
                    name: String(argument[..<equals]),
                    inlineValue: String(argument[argument.index(after: equals)...])
                )
            }
            guard seen.insert(option.name).inserted else { throw error("\(option.name) is given more than once") }
            return option
        }
        return nil
    }

    /// Whether `argument` is `-q` or `--quiet`; `--quiet=VALUE` is a mistake.
    static func isQuiet(_ argument: String) throws(UsageError) -> Bool {
        if argument == "-q" || argument == "--quiet" { return true }
        if argument.hasPrefix("--quiet=") { throw UsageError("--quiet takes no value") }
        return false
    }

    private mutating func operand(_ argument: String) throws(UsageError) {
        guard acceptsOperands else {
            throw error("unexpected argument '\(argument)'; \(command.rawValue) takes only options")
        }
        operands.append(argument)
    }

    /// The option's value: inline, or the next argument unless that is another option.
    mutating func value(_ option: Option) throws(UsageError) -> String {
        if let inline = option.inlineValue { return inline }
        guard position < arguments.count, !arguments[position].hasPrefix("--") else {
            throw error("\(option.name) needs a value")
        }
        position += 1
        return arguments[position - 1]
    }

    /// A file path (`-` included, where the command reads standard input).
    mutating func path(_ option: Option) throws(UsageError) -> String {
        let path = try value(option)
        guard !path.isEmpty else { throw error("\(option.name) needs a path, not an empty string") }
        return path
    }

    /// A switch: sets `flag`; `--name=VALUE` is a mistake.
    func flag(_ option: Option, _ flag: inout Bool) throws(UsageError) {
        guard option.inlineValue == nil else { throw error("\(option.name) takes no value") }
        flag = true
    }

    /// A whole number in 0...maximum.
    mutating func count(_ option: Option, maximum: Int) throws(UsageError) -> Int {
        let text = try value(option)
        guard let count = Int(text), count >= 0, count <= maximum else {
            let range = maximum == Int.max ? "a whole number of 0 or more" : "a whole number from 0 to \(maximum)"
            throw error("\(option.name) takes \(range), not '\(text)'")
        }
        return count
    }

    /// A duration in seconds, 0 to one day, decimals allowed (`0`, `2.5`, `30`).
    mutating func seconds(_ option: Option) throws(UsageError) -> Duration {
        let text = try value(option)
        guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else {
            throw error("\(option.name) takes seconds from 0 to 86400 (e.g. 0, 2.5, 30), not '\(text)'")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// A size in bytes: a whole or decimal number with an optional binary unit, `K`, `M`, `G` or
    /// `T` (powers of 1024; `KB`, `KiB`, any case), e.g. `512M`, `2G`, `1.5G`, `1000000`.
    mutating func byteSize(_ option: Option) throws(UsageError) -> Int {
        let text = try value(option)
        guard let bytes = parseByteSize(text), bytes > 0 else {
            throw error(
                "\(option.name) takes a size such as 512M, 2G or 1000000 (bytes; K, M, G, T are powers of 1024), not '\(text)'"
            )
        }
        return bytes
    }

    /// A fraction in [0, 1).
    mutating func fraction(_ option: Option) throws(UsageError) -> Double {
        let text = try value(option)
        guard let fraction = Double(text), fraction >= 0, fraction < 1 else {
            throw error("\(option.name) takes a fraction of at least 0 and below 1 (e.g. 0.25), not '\(text)'")
        }
        return fraction
    }

    mutating func seed(_ option: Option) throws(UsageError) -> UInt64 {
        let text = try value(option)
        guard let seed = UInt64(text) else {
            throw error("\(option.name) takes a whole number from 0 to \(UInt64.max), not '\(text)'")
        }
        return seed
    }

    /// `none`, `zstd` or `zstd:LEVEL`.
    mutating func compression(_ option: Option) throws(UsageError) -> ArchiveCompression {
        let text = try value(option)
        do {
            return try ArchiveCompression(parsing: text)
        } catch {
            let levels = ArchiveCompression.zstdLevels.map { " (LEVEL \($0.lowerBound) to \($0.upperBound))" } ?? ""
            throw self.error("\(option.name) takes none, zstd or zstd:LEVEL\(levels), not '\(text)'")
        }
    }

    /// `gridstore` or `keyed-plist`.
    mutating func format(_ option: Option) throws(UsageError) -> GridStateArchive.Format {
        let text = try value(option)
        guard let format = GridStateArchive.Format(rawValue: text) else {
            let names = GridStateArchive.Format.allCases.map(\.rawValue).joined(separator: " or ")
            throw error("\(option.name) takes \(names), not '\(text)'")
        }
        return format
    }

    /// The error for an option this command does not have, suggesting a close one.
    func unknown(_ option: Option) -> UsageError {
        let close = command.optionNames.min { editDistance($0, option.name) < editDistance($1, option.name) }
        var message = "unknown option '\(option.name)' for \(command.rawValue)"
        if let close, editDistance(close, option.name) <= 2 { message += "; did you mean '\(close)'?" }
        return error(message)
    }

    private func error(_ message: String) -> UsageError {
        UsageError(message, command: command)
    }
}

/// Levenshtein distance, for "did you mean" (option names are short).
func editDistance(_ first: String, _ second: String) -> Int {
    let first = Array(first)
    let second = Array(second)
    var previous = Array(0...second.count)
    for (i, a) in first.enumerated() {
        var current = [i + 1]
        for (j, b) in second.enumerated() {
            current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a == b ? 0 : 1)))
        }
        previous = current
    }
    return previous[second.count]
}

/// `text` as a number of bytes: digits, an optional fraction, an optional unit (K, M, G, T as
/// powers of 1024, optionally followed by B or iB, any case); nil if it is not one or overflows.
func parseByteSize(_ text: String) -> Int? {
    let units: [(String, Double)] = [("t", 0x1p40), ("g", 0x1p30), ("m", 0x1p20), ("k", 0x1p10), ("", 1)]
    var number = text.lowercased()
    for suffix in ["ib", "b"] where number.hasSuffix(suffix) && number.count > suffix.count {
        number.removeLast(suffix.count)
        break
    }
    guard let (unit, scale) = units.first(where: { !$0.0.isEmpty && number.hasSuffix($0.0) }) ?? units.last else {
        return nil
    }
    number.removeLast(unit.count)
    guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
        let value = Double(number), value.isFinite
    else { return nil }
    let bytes = (value * scale).rounded()
    guard bytes < 0x1p62 else { return nil }
    return Int(bytes)
}
