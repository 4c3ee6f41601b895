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

/// A finished archive: the 64-byte header and the stored payload in pieces, so a file can be
/// written, and `Data` filled, without first gluing the pieces into one more copy.
struct ArchiveOutput {
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

enum ArchiveAssembler {
    static func assemble(state: inout EncodingState, compression: ArchiveCompression) throws(GraphArchiveError) -> ArchiveOutput {
        state.endObjects()
        var top = ByteWriter()
        swap(&top, &state.out)
        var objects = ByteWriter()
        swap(&objects, &state.parked)
        var objectCount = state.entries.count
        var referenceCount = state.referenceCount

        let everyObjectHasBody = state.bodyOwner.count == state.entries.count
        if !state.inConstructionOrder || !everyObjectHasBody {
            var reordered = try ObjectOrdering.reorder(state: state, top: top, objects: objects)
            swap(&top, &reordered.top)
            swap(&objects, &reordered.objects)
            objectCount = reordered.objectCount
            referenceCount = reordered.referenceCount
        }
        return try assemble(
            tablesOf: state, sections: [OutputChunk(top), OutputChunk(objects)], objectCount: objectCount,
            referenceCount: referenceCount, compression: compression)
    }

    /// Puts the key, type and shape tables of `state` before `sections` (the top-level section,
    /// then the object section) and wraps the payload in a header. Also used by writers that
    /// produce the sections themselves (the Codable bridge).
    static func assemble(
        tablesOf state: borrowing EncodingState, sections: [OutputChunk], objectCount: Int, referenceCount: Int,
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

        let payload = [OutputChunk(tables)] + sections
        var header = ArchiveHeader()
        header.typeCount = UInt32(state.types.count)
        header.objectCount = UInt64(objectCount)
        header.referenceCount = UInt64(referenceCount)
        header.payloadLength = UInt64(payload.reduce(0) { $0 + $1.count })

        let stored: [OutputChunk]
        switch compression {
        case .none:
            stored = payload
        case .zstd(let level):
            stored = [OutputChunk(try PayloadCompression.compress(payload, level: level))]
            header.flags.insert(.zstdPayload)
        }
        var checksum = XXH64()
        for piece in stored { piece.withUnsafeBytes { checksum.update($0) } }
        header.payloadChecksum = checksum.finalize()
        header.storedLength = UInt64(stored.reduce(0) { $0 + $1.count })
        return ArchiveOutput(header: header.encoded(), payload: stored)
    }
}

/// Type table kinds (FORMAT.md §4.2).
enum TypeKind {
    static let object: UInt8 = 0
    static let value: UInt8 = 1
}
