// Sources/GraphArchive/Unarchiving/LoadedArchive.swift - header check, checksum, decompression

/// An archive whose header is valid, whose checksum matched and whose payload is ready to scan.
struct LoadedArchive {
    let header: ArchiveHeader
    /// Size of the whole archive as stored (header plus stored payload).
    let archiveBytes: Int
    let payload: ArchiveBytes
    let payloadRange: Range<Int>
    /// The decode's memory budget, charged with what loading committed (the file's bytes, the
    /// decompressed and rebuilt payload); decoding charges on from there.
    var memory: MemoryBudget
    /// For a file read as it is decoded (``load(streaming:options:)``): the rest of it, after
    /// `payloadRange`, which holds the tables and the top section.
    var stream: PayloadWindow? = nil

    /// Bytes of the archive after `payloadRange` not read yet.
    var unreadBytes: Int { stream.map { $0.end - payloadRange.upperBound } ?? 0 }

    /// What a decode that failed with `error` throws: for a file read as it is decoded that
    /// changed since its checksum was verified, `.ioError` saying so (the change, not the
    /// decoder, explains the failure), else `error`.
    func explaining(_ error: any Error) -> any Error {
        stream?.damage() ?? error
    }

    /// Checks `bytes` and returns its uncompressed payload.
    ///
    /// - Parameters:
    ///   - isOwnOutput: `bytes` were just assembled in this process (the keyed-archive
    ///     reader's transcoded payload), so their payload checksum, computed while assembling,
    ///     is not computed again; every other check is made.
    ///   - memory: The budget to charge, when loading is part of a decode that already charged
    ///     some (the keyed-archive reader's); by default a new one from `options`. `bytes`
    ///     themselves are the caller's, already allocated, and are not charged.
    ///   - rebuildingAlongside: The caller reads `stream` as it goes (a `GraphUnarchiver`): a
    ///     large columnar payload is then rebuilt row-wise beside it (``RebuiltPayloadWindow``)
    ///     rather than before this returns.
    /// - Throws: `.badMagic`, `.truncated`, `.trailingGarbage`, `.headerChecksumMismatch`,
    ///   `.checksumMismatch`, `.unsupportedVersion`, `.limitExceeded`, `.corrupt`,
    ///   `.compressionUnavailable`, `.compressionFailed`.
    static func load(
        _ bytes: ArchiveBytes,
        options: GraphUnarchiver.Options,
        isOwnOutput: Bool = false,
        memory: MemoryBudget? = nil,
        rebuildingAlongside: Bool = false
    ) throws(GraphArchiveError) -> LoadedArchive {
        var memory = memory ?? MemoryBudget(options)
        memory.limitToInput(bytes: bytes.count)
        // Files are checked before they are read; bytes handed over in memory obey the same limit.
        guard bytes.count <= options.maximumArchiveBytes else {
            throw GraphArchiveError(
                .limitExceeded,
                "archive of \(bytes.count) bytes exceeds maximumArchiveBytes (\(options.maximumArchiveBytes))"
            )
        }
        var reader = bytes.reader()
        let header = try ArchiveHeader.decode(from: &reader)
        let payloadStart = reader.offset
        let storedRange = payloadStart..<bytes.count
        try checkStoredPayload(header, available: storedRange.count, payloadStart: payloadStart, options: options) {
            isOwnOutput ? header.payloadChecksum : bytes.checksum(storedRange)
        }
        guard header.flags.contains(.zstdPayload) else {
            return LoadedArchive(
                header: header,
                archiveBytes: bytes.count,
                payload: bytes,
                payloadRange: storedRange,
                memory: memory
            )
        }
        let frameStart = bytes.copyBytes(
            payloadStart..<min(payloadStart + PayloadCompression.frameHeaderMaximumSize, bytes.count)
        )
        try chargePayload(header, storedLength: storedRange.count, frameStart: frameStart, to: &memory)
        var structure = PayloadStreamCheck(header: header, options: options)
        let payload = try PayloadCompression.decompress(
            payloadLength: Int(header.payloadLength),
            storedLength: storedRange.count,
            frameStart: frameStart,
            roomBefore: rowsRoom(header, rebuildingAlongside: rebuildingAlongside),
            check: { (produced, isComplete) throws(GraphArchiveError) in
                try structure.check(produced, isComplete: isComplete)
            },
            feed: { (decompress) throws(GraphArchiveError) in
                // All in one piece: zstd then decodes the frame straight into the output in one pass.
                try bytes.withUnsafeBytes(storedRange, decompress)
            }
        )
        return try decompressed(
            payload,
            header: header,
            archiveBytes: bytes.count,
            options: options,
            memory: memory,
            head: structure.head,
            rebuildingAlongside: rebuildingAlongside
        )
    }

    /// Checks the archive file at `path` and returns its uncompressed payload, with the same
    /// checks and errors as ``load(_:options:)``.
    ///
    /// - Throws: what ``load(_:options:)`` throws, plus `.fileNotFound` and `.ioError`.
    static func load(file path: String, options: GraphUnarchiver.Options) throws(GraphArchiveError) -> LoadedArchive {
        try load(file: ArchiveFile(path: path, maximumBytes: options.maximumArchiveBytes), options: options)
    }

    /// Checks the open archive `file` and returns its uncompressed payload.
    ///
    /// The header is read first, and the file's size checked against its `storedLength` before
    /// any other byte is read: a file cut short or extended (`truncate -s 3G`) fails at once.
    /// An uncompressed archive is then read whole, as it is then used whole. A compressed one
    /// is decompressed from the file through a small buffer, so the whole compressed copy is
    /// never in memory next to the payload: one pass verifies the checksum (no unverified byte
    /// reaches zstd), a second decompresses.
    ///
    /// - Parameter rebuildingAlongside: As for ``load(_:options:isOwnOutput:memory:rebuildingAlongside:)``.
    /// - Throws: what ``load(_:options:)`` throws, plus `.ioError`.
    static func load(
        file: borrowing ArchiveFile,
        options: GraphUnarchiver.Options,
        rebuildingAlongside: Bool = false
    ) throws(GraphArchiveError) -> LoadedArchive {
        var memory = MemoryBudget(options)
        memory.limitToInput(bytes: file.size)
        guard file.size > ArchiveHeader.size else { return try load(file.readAll(), options: options, memory: memory) }
        let headerBytes = try ArchiveBytes(count: ArchiveHeader.size) { (buffer) throws(GraphArchiveError) -> Int in
            try file.read(into: buffer, at: 0)
        }
        var reader = headerBytes.reader()
        let header = try ArchiveHeader.decode(from: &reader)
        try checkStoredLength(header, available: file.size - ArchiveHeader.size, payloadStart: ArchiveHeader.size)
        guard header.flags.contains(.zstdPayload) else {
            try memory.charge(MemoryBudget.chunk(file.size), for: "reading the \(file.size)-byte archive file")
            return try load(file.readAll(), options: options, memory: memory)
        }

        let storedRange = ArchiveHeader.size..<file.size
        var frameStart: [UInt8] = []
        try checkFilePayload(file, header: header, options: options) { (piece) in
            if frameStart.count < PayloadCompression.frameHeaderMaximumSize {
                frameStart.append(
                    contentsOf: piece.prefix(PayloadCompression.frameHeaderMaximumSize - frameStart.count)
                )
            }
        }
        try chargePayload(header, storedLength: storedRange.count, frameStart: frameStart, to: &memory)
        // The second pass hashes again: a file changed in place between the passes is caught.
        var checksum = XXH64()
        var structure = PayloadStreamCheck(header: header, options: options)
        let payload = try PayloadCompression.decompress(
            payloadLength: Int(header.payloadLength),
            storedLength: storedRange.count,
            frameStart: frameStart,
            roomBefore: rowsRoom(header, rebuildingAlongside: rebuildingAlongside),
            check: { (produced, isComplete) throws(GraphArchiveError) in
                try structure.check(produced, isComplete: isComplete)
            },
            feed: { (decompress) throws(GraphArchiveError) in
                try file.forEachPiece(of: storedRange) { (piece) throws(GraphArchiveError) in
                    checksum.update(piece)
                    try decompress(piece)
                }
            }
        )
        guard checksum.finalize() == header.payloadChecksum else {
            throw GraphArchiveError(.ioError, "\(file.path) changed while it was being read")
        }
        return try decompressed(
            payload,
            header: header,
            archiveBytes: file.size,
            options: options,
            memory: memory,
            head: structure.head,
            rebuildingAlongside: rebuildingAlongside
        )
    }

    /// Checks the open archive `file` like ``load(file:options:)``, but reads an uncompressed one
    /// of ``PayloadWindow/minimumSize`` bytes or more only up to the end of its top
    /// section (FORMAT.md §4), leaving the object table to the decoder, which reads it as it
    /// goes and gives back what it has passed (`stream`), so the file is never held whole. As
    /// for a compressed file, a first pass through a small buffer verifies the checksum before
    /// any payload byte is interpreted; the second hashes again, and the decoder reports a
    /// file changed between the passes (``explaining(_:)``).
    ///
    /// - Throws: what ``load(file:options:)`` throws.
    static func load(streaming file: consuming ArchiveFile, options: GraphUnarchiver.Options) throws(GraphArchiveError)
        -> LoadedArchive
    {
        guard file.size >= PayloadWindow.minimumSize else { return try load(file: file, options: options) }
        var memory = MemoryBudget(options)
        memory.limitToInput(bytes: file.size)
        let headerBytes = try ArchiveBytes(count: ArchiveHeader.size) { (buffer) throws(GraphArchiveError) -> Int in
            try file.read(into: buffer, at: 0)
        }
        var reader = headerBytes.reader()
        let header = try ArchiveHeader.decode(from: &reader)
        guard !header.flags.contains(.zstdPayload) else {
            return try load(file: file, options: options, rebuildingAlongside: true)
        }
        try checkFilePayload(file, header: header, options: options)
        let stream = try FilePayloadStream(
            file: file,
            headerBytes: headerBytes,
            expectedChecksum: header.payloadChecksum
        )
        let payloadStart = stream.payloadStart
        // The tables and the top section, read in doubling pieces until they parse.
        var structure = PayloadStreamCheck(header: header, options: options)
        var target = payloadStart + FilePayloadStream.pieceSize
        do {
            while true {
                try stream.load(upTo: target, memory: &memory)
                let isComplete = stream.loadedEnd == stream.end
                try stream.bytes.withUnsafeBytes(payloadStart..<stream.loadedEnd) {
                    (produced) throws(GraphArchiveError) in
                    try structure.check(produced, isComplete: isComplete)
                }
                if structure.tablesEnd != nil || isComplete { break }
                target = payloadStart + 2 * (stream.loadedEnd - payloadStart)
            }
        } catch {
            if let damage = stream.damage() { throw damage }
            // Offsets in the payload, as a whole file's reader reports them: from the file's start.
            var error = error
            error.offset = error.offset.map { $0 + payloadStart }
            throw error
        }
        return LoadedArchive(
            header: header,
            archiveBytes: stream.end,
            payload: stream.bytes,
            payloadRange: payloadStart..<stream.loadedEnd,
            memory: memory,
            stream: stream
        )
    }

    /// Charges the decompressed payload's buffer, and for a columnar one (FORMAT.md §5.5) the
    /// row-wise copy rebuilt while it is still held, before either is allocated; a claim no
    /// frame of `storedLength` bytes can hold is `corrupt` first, whatever the budget.
    private static func chargePayload(
        _ header: ArchiveHeader,
        storedLength: Int,
        frameStart: [UInt8],
        to memory: inout MemoryBudget
    ) throws(GraphArchiveError) {
        try PayloadCompression.checkClaim(
            payloadLength: Int(header.payloadLength),
            storedLength: storedLength,
            frameStart: frameStart
        )
        let bytes = MemoryBudget.chunk(Int(header.payloadLength))
        let copies = header.flags.contains(.columnarObjects) ? 2 : 1
        try memory.charge(
            bytes * copies,
            for: "decompressing the \(header.payloadLength)-byte payload the header declares",
            offset: 16
        )
        // Every decoder keeps a table entry an object, at least the unarchiver's compact one; a
        // header whose objects cannot fit beside the payload fails here, before a tiny file
        // spends seconds decompressing a huge payload. The decoder charges its tables for real
        // once the payload is read.
        let table = DecodedObjects.compactBytes(capacity: Int(clamping: header.objectCount))
        try memory.charge(table, for: "the \(header.objectCount) objects the header declares", offset: 32)
        memory.release(table)
    }

    /// A decompressed payload made ready to scan: a columnar object section (FORMAT.md §5.5) is
    /// rebuilt row-wise here, the one place every reader (objects, info, verify) passes through.
    ///
    /// - Parameter head: Its tables and top section as the check made while decompressing
    ///   parsed them, so that the rebuild does not walk them again.
    /// - Throws: `.corrupt` and the other errors of ``ColumnarObjects/rows(fromColumnar:header:options:head:)``.
    private static func decompressed(
        _ payload: ArchiveBytes,
        header: ArchiveHeader,
        archiveBytes: Int,
        options: GraphUnarchiver.Options,
        memory: MemoryBudget,
        head: ColumnarObjects.Head?,
        rebuildingAlongside: Bool
    ) throws(GraphArchiveError) -> LoadedArchive {
        var memory = memory
        var rows = payload
        if header.flags.contains(.columnarObjects) && rebuildingAlongside {
            let rebuild = try ColumnarObjects.Rebuild(stored: payload, header: header, options: options, head: head)
            let rowCount = rebuild.rowCount
            if rowCount >= PayloadWindow.minimumSize {
                // Over the payload's own bytes once they are read, in the room `rowsRoom` kept
                // before them: the rows take fresh pages for their lead only (zeroing 38.6 MB
                // of them was most of the rebuilding thread's time for 1M grid states), and
                // the payload and its rows hold about one payload together, however far the
                // rebuild runs ahead of the decoder or behind it. They start on a huge page of
                // their own: one that began before them would stay resident.
                let rows: ArchiveBytes
                if let shared = payload.slice(from: payload.hugePageStart(of: -rebuild.rowsLead), count: rowCount) {
                    rows = shared
                } else {
                    rows = try ArchiveBytes(reservingMapped: rowCount)
                }
                let window = try RebuiltPayloadWindow(
                    rebuilding: rebuild,
                    into: rows,
                    columnarCharge: MemoryBudget.chunk(payload.count)
                )
                return LoadedArchive(
                    header: header,
                    archiveBytes: archiveBytes,
                    payload: window.bytes,
                    payloadRange: 0..<window.loadedEnd,
                    memory: memory,
                    stream: window
                )
            }
        }
        if header.flags.contains(.columnarObjects) {
            rows = try ColumnarObjects.rows(fromColumnar: payload, header: header, options: options, head: head)
            // The columnar copy is freed when this returns; the rebuilt one stays.
            memory.release(MemoryBudget.chunk(payload.count))
        }
        return LoadedArchive(
            header: header,
            archiveBytes: archiveBytes,
            payload: rows,
            payloadRange: 0..<rows.count,
            memory: memory,
            // A large rebuilt payload is given back as the decoder passes it.
            stream: rows.isMapped ? PayloadWindow(bytes: rows, loadedEnd: rows.count) : nil
        )
    }

    /// Address space to reserve before a decompressed payload for the rows rebuilt from it
    /// (`decompressed`): none unless it is columnar and large enough to be rebuilt beside the
    /// decoder. Its head and its longest block are parts of it, so its size bounds their
    /// `ColumnarObjects.Rebuild.rowsLead`, and one huge page more, at whose start `decompressed`
    /// starts the rows.
    private static func rowsRoom(_ header: ArchiveHeader, rebuildingAlongside: Bool) -> Int {
        let length = Int(header.payloadLength)
        guard rebuildingAlongside && header.flags.contains(.columnarObjects) && length >= PayloadWindow.minimumSize
        else { return 0 }
        return length + ColumnCursors.longestPlainCell + ZeroedMemory.hugePageBytes
    }

    /// Exactly `storedLength` bytes follow the header (FORMAT.md §3): less is a cut-off file,
    /// more is appended junk.
    ///
    /// - Throws: `.truncated`, `.trailingGarbage`.
    private static func checkStoredLength(
        _ header: ArchiveHeader,
        available: Int,
        payloadStart: Int
    ) throws(GraphArchiveError) {
        guard header.storedLength <= UInt64(available) else {
            throw GraphArchiveError(
                .truncated,
                "archive is truncated: header promises \(header.storedLength) payload bytes, file has \(available)",
                offset: payloadStart + available
            )
        }
        guard header.storedLength == UInt64(available) else {
            throw GraphArchiveError(
                .trailingGarbage,
                "\(UInt64(available) - header.storedLength) unexpected bytes after the archive",
                offset: payloadStart + Int(header.storedLength)
            )
        }
    }

    /// The checks of FORMAT.md §3 that follow the header, on a file read through a small
    /// buffer (the payload checksum's pass), which also hands each piece to `piece`.
    private static func checkFilePayload(
        _ file: borrowing ArchiveFile,
        header: ArchiveHeader,
        options: GraphUnarchiver.Options,
        piece: (UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws(GraphArchiveError) {
        let storedRange = ArchiveHeader.size..<file.size
        try checkStoredPayload(
            header,
            available: storedRange.count,
            payloadStart: storedRange.lowerBound,
            options: options
        ) {
            () throws(GraphArchiveError) -> UInt64 in
            var checksum = XXH64()
            try file.forEachPiece(of: storedRange) { (bytes) throws(GraphArchiveError) in
                checksum.update(bytes)
                piece(bytes)
            }
            return checksum.finalize()
        }
    }

    /// The checks of FORMAT.md §3 that follow the header, in its order: exactly `storedLength`
    /// bytes follow the header, their checksum matches, and the payload length is within the limit.
    ///
    /// - Parameter checksum: Computes the XXH64 of the stored payload.
    private static func checkStoredPayload(
        _ header: ArchiveHeader,
        available: Int,
        payloadStart: Int,
        options: GraphUnarchiver.Options,
        checksum: () throws(GraphArchiveError) -> UInt64
    ) throws(GraphArchiveError) {
        try checkStoredLength(header, available: available, payloadStart: payloadStart)
        // Checksum before anything else reads the payload: damaged bytes never reach the decoder.
        let actual = try checksum()
        guard actual == header.payloadChecksum else {
            throw GraphArchiveError(
                .checksumMismatch,
                "archive is damaged: payload checksum is \(hex(actual)), header expects \(hex(header.payloadChecksum))",
                offset: payloadStart
            )
        }
        guard header.payloadLength <= UInt64(options.maximumDecompressedBytes) else {
            throw GraphArchiveError(
                .limitExceeded,
                "payload of \(header.payloadLength) bytes exceeds maximumDecompressedBytes (\(options.maximumDecompressedBytes))",
                offset: 16
            )
        }
    }
}

func hex(_ value: UInt64) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
}
