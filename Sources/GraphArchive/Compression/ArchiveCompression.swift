// Sources/GraphArchive/Compression/ArchiveCompression.swift - the compression choice for writing

/// How an archive's payload is compressed. Readers detect it from the header by themselves.
///
/// ```swift
/// let options = GraphArchiver.Options(compression: try ArchiveCompression(parsing: "zstd:9"))
/// try GraphArchiver.archiveRootObject(states, toFile: path, options: options)
/// ```
public enum ArchiveCompression: Sendable, Hashable, CustomStringConvertible {
    /// Stored as is.
    case none
    /// One zstd frame at `level`: 1 (fastest) to ``zstdLevels``' upper bound (22, smallest);
    /// negative levels are zstd's faster, larger modes; 0 means zstd's default, 3.
    case zstd(level: Int)

    /// zstd at its default level, 3.
    public static let zstd = ArchiveCompression.zstd(level: defaultZstdLevel)

    /// The level of ``zstd``: 3, zstd's own default, a good trade of speed for size.
    public static let defaultZstdLevel = 3

    /// Whether this build can write and read zstd archives. Builds without the `Zstd` package
    /// trait (`swift build --disable-default-traits`, for platforms without libzstd) throw
    /// `.compressionUnavailable` for them.
    public static var isZstdAvailable: Bool { PayloadCompression.isZstdAvailable }

    /// zstd's level range since libzstd 1.3.4 (ZSTD_minCLevel() ... ZSTD_maxCLevel()), used to
    /// check levels in builds that do not link libzstd.
    static let documentedZstdLevels = -131_072...22

    /// The zstd levels the linked libzstd accepts (-131072...22 for libzstd 1.5), or nil in a
    /// build without zstd.
    public static var zstdLevels: ClosedRange<Int>? {
        #if Zstd
        Zstd.levels
        #else
        nil
        #endif
    }

    /// Parses the command-line form: `none`, `zstd` (level 3) or `zstd:LEVEL` (e.g. `zstd:19`,
    /// `zstd:-5`). ``description`` gives the same form back.
    ///
    /// - Throws: `.invalidValue` for any other text, or a level outside ``zstdLevels`` (in a
    ///   build without zstd, outside zstd's documented range). A build without zstd accepts the
    ///   zstd forms; writing with them throws `.compressionUnavailable`.
    public init(parsing text: String) throws(GraphArchiveError) {
        if text == "none" {
            self = .none
            return
        }
        if text == "zstd" {
            self = .zstd
            return
        }
        guard text.hasPrefix("zstd:"), let level = Int(text.dropFirst("zstd:".count)) else {
            throw GraphArchiveError(.invalidValue, "unknown compression \"\(text)\": expected none, zstd or zstd:LEVEL")
        }
        try Self.checkZstdLevel(level)
        self = .zstd(level: level)
    }

    /// Throws `.invalidValue` unless the linked libzstd takes `level` (without zstd: unless
    /// ``documentedZstdLevels`` holds it, so a command line means the same in both builds).
    static func checkZstdLevel(_ level: Int) throws(GraphArchiveError) {
        let levels = zstdLevels ?? documentedZstdLevels
        guard levels.contains(level) else {
            throw GraphArchiveError(
                .invalidValue,
                "zstd level \(level) is out of range \(levels.lowerBound)...\(levels.upperBound)"
            )
        }
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .zstd(let level): "zstd:\(level)"
        }
    }
}
