// Sources/GraphArchive/Archiving/ArchiveAssembler.swift - turns finished encoding state into archive bytes

/// One piece of a finished archive, owning its bytes.
final class OutputChunk {
    let writer: ByteWriter

    init(_ writer: consuming ByteWriter) {
        self.writer = writer
    }

    convenience init(_ bytes: [UInt8]) {
        var writer = ByteWriter(reservingCapacity: bytes.count)
        writer.writeBytes(bytes)
        self.init(writer)
    }

    var count: Int { writer.count }

    /// - Warning: Do not escape the pointer.
    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try writer.withUnsafeBytes(body)
    }
}

/// An archive as stored: the 64-byte header and the stored payload in pieces, so a file can be
/// written, and `Data` filled, without first gluing the pieces into one more copy.
struct StoredArchive {
    var header: [UInt8]
    var payload: [OutputChunk]

    var count: Int { payload.reduce(header.count) { $0 + $1.count } }

    func contiguousBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        bytes.append(contentsOf: header)
        for piece in payload { piece.withUnsafeBytes { bytes.append(contentsOf: $0) } }
        return bytes
    }
}

/// A finished archive: its header and its raw payload in pieces, compressed on the way out.
///
/// A compressed archive is compressed when it is first needed: straight into a file by
/// ``write(to:)``, so no whole compressed copy is held, or once into memory by ``stored()``
/// (for `encodedData`), which later writes reuse.
final class ArchiveOutput {
    /// Every field but the stored length and the payload checksum, which depend on compression.
    private let header: ArchiveHeader
    private let payload: [OutputChunk]
    private let compression: ArchiveCompression
    private var compressed: StoredArchive?

    init(header: ArchiveHeader, payload: [OutputChunk], compression: ArchiveCompression) {
        self.header = header
        self.payload = payload
        self.compression = compression
    }

    /// The archive as stored, compressed in memory the first time it is asked for.
    ///
    /// - Throws: `.compressionFailed` or `.compressionUnavailable`.
    func stored() throws(GraphArchiveError) -> StoredArchive {
        guard case .zstd(let level) = compression else {
            return StoredArchive(header: sealedHeader(storedPieces: payload), payload: payload)
        }
        if let compressed { return compressed }
        var frame = ByteWriter()
        try PayloadCompression.compress(payload, level: level) { frame.writeBytes($0) }
        let stored = [OutputChunk(frame)]
        let result = StoredArchive(header: sealedHeader(storedPieces: stored), payload: stored)
        compressed = result
        return result
    }

    /// Writes the archive to `sink`. A compressed payload not yet compressed in memory is
    /// compressed into the sink as it goes, behind a placeholder header that is then overwritten.
    ///
    /// - Throws: `.compressionFailed`, `.compressionUnavailable` or the sink's `.ioError`.
    func write(to sink: inout AtomicFile.Sink) throws(GraphArchiveError) {
        guard case .zstd(let level) = compression, compressed == nil else {
            let stored = try stored()
            try sink.write(stored.header)
            for piece in stored.payload {
                try piece.withUnsafeBytes { (raw) throws(GraphArchiveError) in try sink.write(raw) }
            }
            return
        }
        let start = sink.count
        try sink.write([UInt8](repeating: 0, count: ArchiveHeader.size))
        var checksum = XXH64()
        var storedLength = 0
        try PayloadCompression.compress(payload, level: level) { (piece) throws(GraphArchiveError) in
            checksum.update(piece)
            storedLength += piece.count
            try sink.write(piece)
        }
        try sink.write(
            sealedHeader(storedLength: storedLength, checksum: checksum.finalize()),
            at: start
        )
    }

    private func sealedHeader(storedPieces: [OutputChunk]) -> [UInt8] {
        var checksum = XXH64()
        for piece in storedPieces { piece.withUnsafeBytes { checksum.update($0) } }
        return sealedHeader(
            storedLength: storedPieces.reduce(0) { $0 + $1.count },
            checksum: checksum.finalize()
        )
    }

    private func sealedHeader(storedLength: Int, checksum: UInt64) -> [UInt8] {
        var header = header
        header.storedLength = UInt64(storedLength)
        header.payloadChecksum = checksum
        return header.encoded()
    }
}

enum ArchiveAssembler {
    static func assemble(state: inout EncodingState, compression: ArchiveCompression)
        throws(GraphArchiveError) -> ArchiveOutput
    {
        // Refuse a compression this build cannot write before doing any work; compressing
        // itself waits for the output's destination (see `ArchiveOutput`).
        try PayloadCompression.validate(compression)
        state.endObjects()
        var top = ByteWriter()
        swap(&top, &state.out)
        var objects = ByteWriter()
        swap(&objects, &state.parked)
        var objectCount = state.identity.count
        var referenceCount = state.referenceCount

        let everyObjectHasBody = state.bodyCount == objectCount
        if !state.inConstructionOrder || !everyObjectHasBody {
            var reordered = try ObjectOrdering.reorder(state: state, top: top, objects: objects)
            swap(&top, &reordered.top)
            swap(&objects, &reordered.objects)
            objectCount = reordered.objectCount
            referenceCount = reordered.referenceCount
        }
        // The objects are numbered: let go of the table (and of the objects it holds) before
        // the output is compressed or written, which is when an encode holds the most.
        state.identity = IdentityTable()
        state.keptAlive = []
        return try assemble(
            tablesOf: state,
            sections: [OutputChunk(top), OutputChunk(objects)],
            objectCount: objectCount,
            referenceCount: referenceCount,
            compression: compression
        )
    }

    /// Puts the key, type and shape tables of `state` before `sections` (the top-level section,
    /// then the object section) and wraps the payload in a header. Also used by writers that
    /// produce the sections themselves (the KeyedArchive transcoder, the Codable bridge).
    static func assemble(
        tablesOf state: borrowing EncodingState,
        sections: [OutputChunk],
        objectCount: Int,
        referenceCount: Int,
        compression: ArchiveCompression
    ) throws(GraphArchiveError) -> ArchiveOutput {
        // FORMAT.md §4: key table, type table, shape table, top section, object section.
        var tables = ByteWriter(reservingCapacity: 256)
        tables.writeVarint(state.keys.count)
        for key in state.keys {
            tables.writeVarint(key.utf8.count)
            tables.writeUTF8(key)
        }
        tables.writeVarint(state.types.count)
        for type in state.types {
            tables.writeByte(type.isObject ? TypeKind.object : TypeKind.value)
            tables.writeVarint(type.name.utf8.count)
            tables.writeUTF8(type.name)
        }
        tables.writeVarint(state.shapes.count)
        for shape in state.shapes {
            tables.writeVarint(shape.typeID)
            tables.writeVarint(shape.keyIDs.count)
            for key in shape.keyIDs { tables.writeVarint(key) }
        }
        tables.writeVarint(state.topCount)

        var header = ArchiveHeader()
        header.typeCount = UInt32(state.types.count)
        header.objectCount = UInt64(objectCount)
        header.referenceCount = UInt64(referenceCount)
        let payload: [OutputChunk]
        if case .zstd = compression {
            // Compressed payloads store their objects column by column (FORMAT.md §5.5): like
            // values side by side compress better. Uncompressed ones stay row-wise, so readers
            // decode them straight from the file's bytes.
            header.flags.insert([.zstdPayload, .columnarObjects])
            let columnar = try ColumnarObjects.columnar(
                sections: sections,
                topCount: state.topCount,
                objectCount: objectCount,
                shapeValueCounts: state.shapes.map(\.keyIDs.count)
            )
            payload = [OutputChunk(tables)] + columnar
        } else {
            payload = [OutputChunk(tables)] + sections
        }
        header.payloadLength = UInt64(payload.reduce(0) { $0 + $1.count })
        return ArchiveOutput(header: header, payload: payload, compression: compression)
    }
}

/// Type table kinds (FORMAT.md §4.2).
enum TypeKind {
    static let object: UInt8 = 0
    static let value: UInt8 = 1
}
