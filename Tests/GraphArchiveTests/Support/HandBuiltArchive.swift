// Tests/GraphArchiveTests/Support/HandBuiltArchive.swift - archives written byte by byte for hostile-input tests

import Foundation
import Testing

@testable import GraphArchive

/// An archive assembled from a payload written field by field, with a header whose fields can be
/// forged one at a time. Both checksums are recomputed, so a test reaches the structural check it
/// aims at instead of stopping at the checksum.
struct HandBuiltArchive {
    var payload: [UInt8]
    var header = ArchiveHeader()
    /// Forged lengths; by default both are the payload's length.
    var payloadLength: UInt64?
    var storedLength: UInt64?

    init(_ payload: [UInt8], typeCount: UInt32, objectCount: UInt64, referenceCount: UInt64 = 0) {
        self.payload = payload
        header.typeCount = typeCount
        header.objectCount = objectCount
        header.referenceCount = referenceCount
    }

    var bytes: [UInt8] {
        var header = self.header
        header.payloadLength = payloadLength ?? UInt64(payload.count)
        header.storedLength = storedLength ?? UInt64(payload.count)
        header.payloadChecksum = XXH64.hash(payload)
        return header.encoded() + payload
    }

    var data: Data { Data(bytes) }
}

// MARK: - Payload pieces

/// An unsigned LEB128 varint (FORMAT.md §2.2).
func varint(_ value: UInt64) -> [UInt8] {
    var value = value
    var bytes: [UInt8] = []
    while value >= 0x80 {
        bytes.append(UInt8(value & 0x7F) | 0x80)
        value >>= 7
    }
    return bytes + [UInt8(value)]
}

/// A table name: varint length, then UTF-8.
func name(_ text: String) -> [UInt8] {
    varint(UInt64(text.utf8.count)) + Array(text.utf8)
}

/// A short string value: tag 0x80 + length, then UTF-8.
func shortString(_ text: String) -> [UInt8] {
    [ValueTag.shortStringBase + UInt8(text.utf8.count)] + Array(text.utf8)
}

/// Builders of small valid archives that the corrupt-input tests change one field at a time.
enum HandBuilt {
    /// The tables of a `[Record]` archive: keys, one object type "Record", one shape.
    static func recordTables(typeName: String = "Record") -> [UInt8] {
        // key table
        varint(4) + name("root") + name("kEncodeKeyName") + name("kEncodeKeyColor") + name("kEncodeKeyDate")
            + varint(1) + [TypeKind.object] + name(typeName)  // type table: one object type
            + varint(1) + varint(0) + varint(3) + varint(1) + varint(2) + varint(3)  // shape 0: type 0, keys 1 2 3
    }

    /// One Record body: shape 0, then name, color, date.
    static func recordBody(_ text: String = "a", color: UInt8 = 1) -> [UInt8] {
        varint(0) + shortString(text) + [ValueTag.smallIntegerBase + color] + shortString("d")
    }

    /// `[a, a]`: one Record referenced twice from a packed reference array.
    static func sharedRecords(
        typeName: String = "Record",
        root: [UInt8]? = nil,
        objects: [UInt8]? = nil,
        objectCount: UInt64 = 1,
        referenceCount: UInt64 = 2
    ) -> HandBuiltArchive {
        let payload =
            recordTables(typeName: typeName)
            + varint(1)  // one top-level value
            + varint(0)  // its key: "root"
            + (root ?? [ValueTag.referenceArray, 2, 2, 0])  // 2 references, ZigZag deltas +1 (object 0), 0 (object 0)
            + (objects ?? recordBody())  // object 0
        return HandBuiltArchive(payload, typeCount: 1, objectCount: objectCount, referenceCount: referenceCount)
    }

    /// A top-level value under key "root" in an archive without types or objects.
    static func topValue(_ value: [UInt8]) -> HandBuiltArchive {
        let payload =
            varint(1) + name("root")  // key table: "root"
            + varint(0)  // no types
            + varint(0)  // no shapes
            + varint(1) + varint(0)  // one top-level value, key 0
            + value
        return HandBuiltArchive(payload, typeCount: 0, objectCount: 0)
    }
}

/// Runs `body`, which must throw a `GraphArchiveError` with `code` (and, if given, a message
/// containing `mentioning`), and returns it.
@discardableResult
func expectArchiveError(
    _ code: GraphArchiveError.Code,
    mentioning: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) -> GraphArchiveError? {
    do {
        try body()
        Issue.record("expected a \(code) error, but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as GraphArchiveError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        if let mentioning {
            #expect(error.message.contains(mentioning), "\(error.message)", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected GraphArchiveError.\(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
