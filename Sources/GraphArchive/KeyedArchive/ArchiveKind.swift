// Sources/GraphArchive/KeyedArchive/ArchiveKind.swift - telling archive formats apart by their first bytes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The archive formats GraphArchive reads, told apart by their first eight bytes.
public enum ArchiveKind: String, Sendable, Hashable, CaseIterable {
    /// A gridstore archive (FORMAT.md §3 magic).
    case gridstore
    /// A property list, as `NSKeyedArchiver` writes: binary ("bplist00") or XML (an XML
    /// declaration, document type or `<plist>` first); whether it really is a keyed archive is
    /// checked when it is opened.
    case keyedArchive
    /// Neither.
    case unknown

    /// The format `data` starts like. Reads only the first eight bytes; checks nothing else.
    public static func detect(_ data: Data) -> ArchiveKind {
        detect(prefix: data.prefix(8))
    }

    /// The format `bytes` start like; see ``detect(_:)-(Data)``.
    public static func detect(_ bytes: [UInt8]) -> ArchiveKind {
        detect(prefix: bytes.prefix(8))
    }

    static func detect(_ bytes: ArchiveBytes) -> ArchiveKind {
        detect(prefix: bytes.copyBytes(0..<min(8, bytes.count)))
    }

    private static func detect(prefix: some Collection<UInt8>) -> ArchiveKind {
        if prefix.elementsEqual(ArchiveHeader.magic) { return .gridstore }
        if BPlist.hasMagic(prefix) || XMLPropertyList.hasPrefix(prefix) { return .keyedArchive }
        return .unknown
    }
}
