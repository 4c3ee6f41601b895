// Sources/GraphArchive/Format/ArchiveHeader.swift - the fixed 64-byte file header (FORMAT.md §3)

/// The fixed-size header that starts every archive.
struct ArchiveHeader: Equatable {
    /// "\u{89}GRA\r\n\u{1A}\n": a high byte and line endings catch 7-bit and text-mode damage, as in PNG.
    static let magic: [UInt8] = [0x89, 0x47, 0x52, 0x41, 0x0D, 0x0A, 0x1A, 0x0A]
    static let size = 64
    static let currentMajorVersion: UInt8 = 1
    static let currentMinorVersion: UInt8 = 0

    /// Flags 0...7 are required: a reader that does not know a set one must refuse the file.
    /// Flags 8...15 are optional hints a reader may ignore.
    struct Flags: OptionSet, Equatable {
        let rawValue: UInt16
        /// The payload is one zstd frame (FORMAT.md §3.2).
        static let zstdPayload = Flags(rawValue: 1 << 0)
        /// The object section is stored column by column (FORMAT.md §5.5); only with `zstdPayload`.
        static let columnarObjects = Flags(rawValue: 1 << 1)
        /// The columnar object table comes in blocks, before the tables (FORMAT.md §5.6); only
        /// with `zstdPayload` and `columnarObjects`.
        static let objectBlocks = Flags(rawValue: 1 << 2)
        static let knownRequired: Flags = [.zstdPayload, .columnarObjects, .objectBlocks]
        static let requiredMask: UInt16 = 0x00FF
    }

    var majorVersion: UInt8 = currentMajorVersion
    var minorVersion: UInt8 = currentMinorVersion
    var flags: Flags = []
    /// Number of distinct types in the type table.
    var typeCount: UInt32 = 0
    /// Length of the payload once decompressed.
    var payloadLength: UInt64 = 0
    /// Length of the payload as stored after the header (equal to `payloadLength` when uncompressed).
    var storedLength: UInt64 = 0
    /// Number of objects in the object table.
    var objectCount: UInt64 = 0
    /// Number of object references written anywhere in the archive (each array slot counts).
    var referenceCount: UInt64 = 0
    /// XXH64 (seed 0) of the stored payload bytes.
    var payloadChecksum: UInt64 = 0

    /// The 64 bytes, with the header checksum computed over the first 56.
    func encoded() -> [UInt8] {
        var writer = ByteWriter(reservingCapacity: Self.size)
        writer.writeBytes(Self.magic)
        writer.writeByte(majorVersion)
        writer.writeByte(minorVersion)
        writer.writeLittleEndian(flags.rawValue)
        writer.writeLittleEndian(typeCount)
        writer.writeLittleEndian(payloadLength)
        writer.writeLittleEndian(storedLength)
        writer.writeLittleEndian(objectCount)
        writer.writeLittleEndian(referenceCount)
        writer.writeLittleEndian(payloadChecksum)
        var bytes = writer.take()
        let check = XXH64.hash(bytes)
        var tail = ByteWriter(reservingCapacity: 8)
        tail.writeLittleEndian(check)
        bytes.append(contentsOf: tail.take())
        return bytes
    }

    /// Parses and checks the header at the start of `reader`, leaving the reader after it.
    ///
    /// - Throws: `.badMagic`, `.truncated`, `.headerChecksumMismatch`, `.unsupportedVersion`.
    static func decode(from reader: inout ByteReader) throws(GraphArchiveError) -> ArchiveHeader {
        let start = reader.offset
        // Magic first, so "not an archive at all" is reported as such rather than as damage.
        let magicLength = min(magic.count, reader.remaining)
        for index in 0..<magicLength {
            if try reader.readByte() != magic[index] {
                throw GraphArchiveError(.badMagic, "not a gridstore archive (bad magic number)", offset: start)
            }
        }
        guard magicLength == magic.count else {
            throw GraphArchiveError(.truncated, "file is too short to be an archive", offset: start)
        }
        reader.offset = start
        guard reader.remaining >= size else {
            throw GraphArchiveError(.truncated, "archive ends inside its 64-byte header", offset: start)
        }
        let check = try reader.readUnsafeBytes(count: 56) { XXH64.hash($0) }
        let stored = try reader.readLittleEndian(UInt64.self)
        guard check == stored else {
            throw GraphArchiveError(
                .headerChecksumMismatch,
                "archive header is damaged (header checksum mismatch)",
                offset: start
            )
        }
        reader.offset = start + magic.count
        var header = ArchiveHeader()
        header.majorVersion = try reader.readByte()
        header.minorVersion = try reader.readByte()
        header.flags = Flags(rawValue: try reader.readLittleEndian(UInt16.self))
        header.typeCount = try reader.readLittleEndian(UInt32.self)
        header.payloadLength = try reader.readLittleEndian(UInt64.self)
        header.storedLength = try reader.readLittleEndian(UInt64.self)
        header.objectCount = try reader.readLittleEndian(UInt64.self)
        header.referenceCount = try reader.readLittleEndian(UInt64.self)
        header.payloadChecksum = try reader.readLittleEndian(UInt64.self)
        _ = try reader.readLittleEndian(UInt64.self)
        guard header.majorVersion == currentMajorVersion else {
            throw GraphArchiveError(
                .unsupportedVersion,
                "archive format version \(header.majorVersion).\(header.minorVersion) is not supported (this reader reads \(currentMajorVersion).x)",
                offset: start + 8
            )
        }
        let unknownRequired = header.flags.rawValue & Flags.requiredMask & ~Flags.knownRequired.rawValue
        guard unknownRequired == 0 else {
            throw GraphArchiveError(
                .unsupportedVersion,
                "archive uses required features this reader does not know (flags 0x\(String(unknownRequired, radix: 16)))",
                offset: start + 10
            )
        }
        if header.flags.contains(.columnarObjects) && !header.flags.contains(.zstdPayload) {
            throw GraphArchiveError(
                .corrupt,
                "columnar object section without a zstd payload (FORMAT.md §3.1)",
                offset: start + 10
            )
        }
        if header.flags.contains(.objectBlocks) && !header.flags.contains([.zstdPayload, .columnarObjects]) {
            throw GraphArchiveError(
                .corrupt,
                "object blocks without a zstd payload and a columnar object table (FORMAT.md §3.1)",
                offset: start + 10
            )
        }
        // Every object record and every counted reference takes at least one payload byte; this
        // also keeps forged counts within `Int` wherever they are converted.
        guard header.objectCount <= header.payloadLength, header.referenceCount <= header.payloadLength else {
            throw GraphArchiveError(
                .corrupt,
                "header claims \(header.objectCount) objects and \(header.referenceCount) references, more than the payload can hold",
                offset: start + 32
            )
        }
        if !header.flags.contains(.zstdPayload) && header.payloadLength != header.storedLength {
            throw GraphArchiveError(
                .corrupt,
                "uncompressed archive has different stored and payload lengths",
                offset: start + 16
            )
        }
        return header
    }
}

extension ArchiveHeader {
    /// The header's object count, checked against the reader's limit and against the bytes
    /// left after the tables (every object record takes at least one byte), so nothing sized by
    /// it can be larger than the input justifies.
    ///
    /// - Throws: `.limitExceeded` (over `maximumObjectCount`), `.corrupt`.
    func checkedObjectCount(bytesLeft: Int, options: GraphUnarchiver.Options) throws(GraphArchiveError) -> Int {
        guard objectCount <= UInt64(options.maximumObjectCount) else {
            throw GraphArchiveError(
                .limitExceeded,
                "archive holds \(objectCount) objects, over maximumObjectCount (\(options.maximumObjectCount))",
                offset: 32
            )
        }
        guard objectCount <= UInt64(bytesLeft) else {
            throw GraphArchiveError(
                .corrupt,
                "header claims \(objectCount) objects, more than the payload can hold",
                offset: 32
            )
        }
        return Int(objectCount)
    }
}
