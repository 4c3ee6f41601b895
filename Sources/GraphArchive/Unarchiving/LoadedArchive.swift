// Sources/GraphArchive/Unarchiving/LoadedArchive.swift - header check, checksum, decompression

/// An archive whose header is valid, whose checksum matched and whose payload is ready to scan.
struct LoadedArchive {
    let header: ArchiveHeader
    /// Size of the whole archive as stored (header plus stored payload).
    let archiveBytes: Int
    let payload: ArchiveBytes
    let payloadRange: Range<Int>

    /// Checks `bytes` and returns its uncompressed payload.
    ///
    /// - Throws: `.badMagic`, `.truncated`, `.trailingGarbage`, `.headerChecksumMismatch`,
    ///   `.checksumMismatch`, `.unsupportedVersion`, `.limitExceeded`, `.compressionUnavailable`,
    ///   `.compressionFailed`.
    static func load(_ bytes: ArchiveBytes, options: GraphUnarchiver.Options) throws(GraphArchiveError) -> LoadedArchive {
        // Files are checked before they are read; bytes handed over in memory obey the same limit.
        guard bytes.count <= options.maximumArchiveBytes else {
            throw GraphArchiveError(
                .limitExceeded, "archive of \(bytes.count) bytes exceeds maximumArchiveBytes (\(options.maximumArchiveBytes))")
        }
        var reader = bytes.reader()
        let header = try ArchiveHeader.decode(from: &reader)
        let payloadStart = reader.offset
        // The header says how long the payload is: less is a cut-off file, more is appended junk.
        guard header.storedLength <= UInt64(reader.remaining) else {
            throw GraphArchiveError(
                .truncated, "archive is truncated: header promises \(header.storedLength) payload bytes, file has \(reader.remaining)",
                offset: bytes.count)
        }
        guard header.storedLength == UInt64(reader.remaining) else {
            throw GraphArchiveError(
                .trailingGarbage, "\(UInt64(reader.remaining) - header.storedLength) unexpected bytes after the archive",
                offset: payloadStart + Int(header.storedLength))
        }
        let storedRange = payloadStart..<bytes.count
        // Checksum before anything else reads the payload: damaged bytes never reach the decoder.
        let checksum = bytes.withUnsafeBytes(storedRange) { XXH64.hash($0) }
        guard checksum == header.payloadChecksum else {
            throw GraphArchiveError(
                .checksumMismatch,
                "archive is damaged: payload checksum is \(hex(checksum)), header expects \(hex(header.payloadChecksum))",
                offset: payloadStart)
        }
        guard header.payloadLength <= UInt64(options.maximumDecompressedBytes) else {
            throw GraphArchiveError(
                .limitExceeded,
                "payload of \(header.payloadLength) bytes exceeds maximumDecompressedBytes (\(options.maximumDecompressedBytes))",
                offset: 16)
        }
        guard header.flags.contains(.zstdPayload) else {
            return LoadedArchive(header: header, archiveBytes: bytes.count, payload: bytes, payloadRange: storedRange)
        }
        let payload = try bytes.withUnsafeBytes(storedRange) { (stored) throws(GraphArchiveError) -> ArchiveBytes in
            try PayloadCompression.decompress(
                stored, payloadLength: Int(header.payloadLength), maximumBytes: options.maximumDecompressedBytes)
        }
        return LoadedArchive(header: header, archiveBytes: bytes.count, payload: payload, payloadRange: 0..<payload.count)
    }
}

func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
}
