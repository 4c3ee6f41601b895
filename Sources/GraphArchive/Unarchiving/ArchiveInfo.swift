// Sources/GraphArchive/Unarchiving/ArchiveInfo.swift - what an archive holds, without building it

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Facts about an archive, read from its header and tables without creating any object.
public struct ArchiveInfo: Sendable, Hashable {
    /// "major.minor".
    public var formatVersion: String
    /// How the payload is stored.
    public var compression: ArchiveCompression?
    /// `compression` as text: "none" or "zstd" (the level is not recorded in the archive).
    public var compressionName: String
    /// Whether the payload is stored compressed.
    public var isCompressed: Bool
    /// Size of the archive (header plus stored payload).
    public var archiveBytes: Int
    /// Size of the payload as stored after the 64-byte header: the compressed size of a
    /// compressed archive, ``payloadBytes`` otherwise.
    public var storedPayloadBytes: Int
    /// Size of the payload once decompressed.
    public var payloadBytes: Int
    /// Distinct objects in the object table.
    public var objectCount: Int
    /// Object references written in the archive, each array slot counted.
    public var referenceCount: Int
    /// References beyond the first to each object: `referenceCount - objectCount`, at least 0.
    public var sharedReferenceCount: Int { max(0, referenceCount - objectCount) }
    /// Archived names of the types present.
    public var typeNames: [String]
    /// The top-level keys.
    public var topLevelKeys: [String]
    /// Number of elements of the array or dictionary under the root key, if it is one.
    public var rootElementCount: Int?
    /// Always true for an `ArchiveInfo` you hold: the checksum is verified before anything is read.
    public var checksumVerified: Bool

    init(header: ArchiveHeader, tables: ArchiveTables, archiveBytes: Int) {
        formatVersion = "\(header.majorVersion).\(header.minorVersion)"
        let zstd = header.flags.contains(.zstdPayload)
        compression = zstd ? nil : ArchiveCompression.none
        compressionName = zstd ? "zstd" : "none"
        isCompressed = zstd
        self.archiveBytes = archiveBytes
        storedPayloadBytes = Int(header.storedLength)
        payloadBytes = Int(header.payloadLength)
        objectCount = Int(header.objectCount)
        referenceCount = Int(header.referenceCount)
        typeNames = tables.typeNames
        topLevelKeys = []
        rootElementCount = nil
        checksumVerified = true
    }
}

extension GraphUnarchiver {
    /// Reads what archive `data` holds: header, tables and top-level entries, after verifying the
    /// checksum. Creates no object and needs no registry.
    public static func archiveInfo(from data: Data, options: Options = Options()) throws -> ArchiveInfo {
        try archiveInfo(loaded: LoadedArchive.load(ArchiveBytes(copying: data), options: options), options: options)
    }

    /// Reads what the archive at `path` holds; see ``archiveInfo(from:options:)-(Data,_)``.
    public static func archiveInfo(fromFile path: String, options: Options = Options()) throws -> ArchiveInfo {
        try archiveInfo(loaded: LoadedArchive.load(file: path, options: options), options: options)
    }

    static func archiveInfo(loaded: LoadedArchive, options: Options) throws(GraphArchiveError) -> ArchiveInfo {
        var reader = loaded.payload.reader(loaded.payloadRange)
        var memory = loaded.memory
        let tables = try ArchiveTables.parse(&reader, header: loaded.header, options: options, memory: &memory)
        var info = ArchiveInfo(header: loaded.header, tables: tables, archiveBytes: loaded.archiveBytes)
        let scanner = ValueScanner(
            shapeValueCounts: tables.shapeKeyCount,
            objectCount: Int(loaded.header.objectCount),
            maximumDepth: options.maximumDepth
        )
        for _ in 0..<tables.topCount {
            let key = try tables.readTopKey(&reader)
            info.topLevelKeys.append(key)
            if key == GraphArchiver.rootKey {
                var peek = reader
                let tag = try peek.readByte()
                if tag == ValueTag.array || tag == ValueTag.referenceArray || tag == ValueTag.dictionary {
                    info.rootElementCount = try peek.readCount()
                }
            }
            try scanner.skipValue(&reader)
        }
        return info
    }

    /// Checks every byte of archive `data` against the format: header, checksum, tables, every
    /// value of every object and every reference, without creating objects or needing a
    /// registry. Returns what ``archiveInfo(from:options:)-(Data,_)`` returns.
    ///
    /// - Throws: the first problem found, with its byte offset.
    public static func verify(_ data: Data, options: Options = Options()) throws -> ArchiveInfo {
        try verify(loaded: LoadedArchive.load(ArchiveBytes(copying: data), options: options), options: options)
    }

    /// Checks the archive at `path`; see ``verify(_:options:)-(Data,_)``.
    public static func verify(file path: String, options: Options = Options()) throws -> ArchiveInfo {
        try verify(loaded: LoadedArchive.load(file: path, options: options), options: options)
    }

    /// Loads (and decompresses) once for both the info and the full check.
    static func verify(loaded: LoadedArchive, options: Options) throws(GraphArchiveError) -> ArchiveInfo {
        let info = try archiveInfo(loaded: loaded, options: options)
        var reader = loaded.payload.reader(loaded.payloadRange)
        var memory = loaded.memory
        let tables = try ArchiveTables.parse(&reader, header: loaded.header, options: options, memory: &memory)
        let objectCount = Int(loaded.header.objectCount)
        guard objectCount <= reader.remaining else {
            throw GraphArchiveError(
                .corrupt,
                "header claims \(objectCount) objects, more than the payload can hold",
                offset: 32
            )
        }
        let scanner = ValueScanner(
            shapeValueCounts: tables.shapeKeyCount,
            objectCount: objectCount,
            maximumDepth: options.maximumDepth
        )
        var references = 0
        for _ in 0..<tables.topCount {
            _ = try reader.readCount()
            try scanner.skipValue(&reader, countingReferencesInto: &references)
        }
        for index in 0..<objectCount {
            let offset = reader.offset
            let shape = try scanner.readShape(&reader)
            guard tables.typeIsObject[tables.shapeType[shape]] else {
                throw GraphArchiveError(.corrupt, "object #\(index) is recorded with a value type", offset: offset)
            }
            for _ in 0..<tables.shapeKeyCount[shape] {
                try scanner.skipValue(&reader, countingReferencesInto: &references)
            }
        }
        guard reader.isAtEnd else {
            throw GraphArchiveError(.trailingGarbage, "unexpected bytes after the last object", offset: reader.offset)
        }
        guard UInt64(references) == loaded.header.referenceCount else {
            throw GraphArchiveError(
                .corrupt,
                "header's referenceCount is \(loaded.header.referenceCount), but the archive holds \(references) object references",
                offset: 40
            )
        }
        return info
    }
}
