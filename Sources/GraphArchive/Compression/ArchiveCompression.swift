// Sources/GraphArchive/Compression/ArchiveCompression.swift - the compression choice for writing

/// How an archive's payload is compressed. Readers detect it from the header by themselves.
public enum ArchiveCompression: Sendable, Hashable, CustomStringConvertible {
    /// Stored as is.
    case none
    /// One zstd frame at `level` (negative levels are zstd's fast modes).
    case zstd(level: Int)

    /// zstd at its default level, 3.
    public static let zstd = ArchiveCompression.zstd(level: 3)

    public var description: String {
        switch self {
        case .none: "none"
        case .zstd(let level): "zstd:\(level)"
        }
    }
}
