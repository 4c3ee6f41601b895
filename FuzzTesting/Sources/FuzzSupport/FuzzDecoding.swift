// FuzzTesting/Sources/FuzzSupport/FuzzDecoding.swift - every reader, run on one input

import Foundation
import GridStore

// @testable (the fuzz build passes -enable-testing): resealing needs the checksum and the
// header layout, which the public API rightly hides.
@testable import GraphArchive

public enum FuzzDecoding {
    /// The classes an unarchiver may create while fuzzing.
    public static let registry = GraphTypeRegistry([FuzzNode.self, GridState.self])

    /// Runs every reader over `bytes`: each must return or throw, never trap, hang or allocate
    /// beyond what the input justifies (libFuzzer's -rss_limit_mb and -malloc_limit_mb catch that).
    public static func decodeAll(_ bytes: [UInt8]) {
        let data = Data(bytes)
        _ = try? GraphUnarchiver.archiveInfo(from: data)
        _ = try? GraphUnarchiver.verify(data)
        decodeRoots(try? GraphUnarchiver(forReadingFrom: data, registry: registry))
        decodeInOneCall(data)
        walkGraph(data)
    }

    /// The one-call decode, which takes another road than an unarchiver kept open: with as many
    /// references as objects it hands each object to its first reference, and decodes again
    /// when an object is referenced twice.
    static func decodeInOneCall(_ data: Data) {
        defer { FuzzNode.releaseDecoded() }
        _ = try? GraphUnarchiver.unarchivedObject(ofType: [FuzzNode].self, from: data, registry: registry)
        _ = try? GraphUnarchiver.unarchivedObject(ofType: FuzzNode.self, from: data, registry: registry)
    }

    /// The classes a keyed archive may create: the seed fixtures' class names, mapped to
    /// `FuzzNode` so that their archives are transcoded in full before a key goes missing.
    public static let keyedRegistry: GraphTypeRegistry = {
        var keyed = registry
        for name in ["Node", "FourLines", "BIDFourLines", "main.Node", "main.FourLines", "main.BIDFourLines"] {
            keyed.register(FuzzNode.self, forName: name)
        }
        return keyed
    }()

    /// Runs the NSKeyedArchiver readers over `bytes` (a binary or XML property list, no
    /// checksum), and everything built on the schema-less view.
    public static func decodeAllKeyed(_ bytes: [UInt8]) {
        let data = Data(bytes)
        _ = try? KeyedArchive.archiveInfo(fromKeyedArchive: data)
        decodeRoots(
            try? GraphUnarchiver(forReadingKeyedArchive: data, registry: keyedRegistry, valueTypes: [FuzzValues.self])
        )
        // The any-archive reader with the roots' records loaded ahead, which a keyed archive
        // otherwise gets only from 2^20 entries: both ways on every input.
        decodeRoots(try? GraphUnarchiver(forReadingAnyArchive: data, registry: keyedRegistry, options: recordsAhead))
        walkGraph(data)
    }

    private static let recordsAhead: GraphUnarchiver.Options = {
        var options = GraphUnarchiver.Options()
        options.keyedRecordsAheadMinimum = 0
        return options
    }()

    /// Opens `data` as an ``ArchiveGraph`` (no registry) and runs what is built on it: JSON, the
    /// tree, the summary, both conversions, and the conversions read back. Each must return or
    /// throw, whatever the archive shares or nests.
    static func walkGraph(_ data: Data) {
        guard let graph = try? ArchiveGraph(data: data) else { return }
        _ = try? graph.writeJSON { _ in }
        _ = try? graph.writeTree { _ in }
        _ = try? graph.summary()
        if let native = try? graph.gridstoreArchiveData() {
            _ = try? ArchiveGraph(data: native).keyedArchiveData()
        }
        if let keyed = try? graph.keyedArchiveData() {
            _ = try? ArchiveGraph(data: keyed).gridstoreArchiveData()
        }
    }

    /// Runs the file readers over `bytes` written to `path`: for a compressed archive they take
    /// another road than the in-memory ones (two passes over the file through a small buffer).
    public static func decodeAllFromFile(_ bytes: [UInt8], path: String) {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { return }
        _ = try? GraphUnarchiver.archiveInfo(fromFile: path)
        _ = try? GraphUnarchiver.verify(file: path)
        decodeRoots(try? GraphUnarchiver(contentsOfFile: path, registry: registry))
    }

    /// Decodes the root key as every type the seeds use, and the other top-level keys.
    static func decodeRoots(_ unarchiver: GraphUnarchiver?) {
        defer { FuzzNode.releaseDecoded() }
        guard let unarchiver else { return }
        let key = GraphArchiver.rootKey
        _ = try? unarchiver.decode([FuzzNode].self, forKey: key)
        _ = try? unarchiver.decode(FuzzNode.self, forKey: key)
        _ = try? unarchiver.decode([GridState].self, forKey: key)
        _ = try? unarchiver.decode(FuzzValues.self, forKey: key)
        _ = try? unarchiver.decode([String: FuzzValues?].self, forKey: key)
        _ = try? unarchiver.decodeIfPresent([[Int]].self, forKey: "extra")
        _ = try? unarchiver.decode(String.self, forKey: "title")
    }

    /// What each reader makes of `bytes`, for reproducing a fuzzer finding by hand.
    public static func describe(_ bytes: [UInt8]) -> String {
        let data = Data(bytes)
        func outcome(_ body: () throws -> Void) -> String {
            do {
                try body()
                return "ok"
            } catch {
                return "\(error)"
            }
        }
        let info = outcome { _ = try GraphUnarchiver.archiveInfo(from: data) }
        let verify = outcome { _ = try GraphUnarchiver.verify(data) }
        let open = outcome {
            defer { FuzzNode.releaseDecoded() }
            _ = try GraphUnarchiver(forReadingFrom: data, registry: registry)
        }
        return "archiveInfo: \(info); verify: \(verify); unarchiver: \(open)"
    }

    /// What the keyed readers make of `bytes`.
    public static func describeKeyed(_ bytes: [UInt8]) -> String {
        let data = Data(bytes)
        do {
            defer { FuzzNode.releaseDecoded() }
            _ = try KeyedArchive.archiveInfo(fromKeyedArchive: data)
            _ = try GraphUnarchiver(
                forReadingKeyedArchive: data,
                registry: keyedRegistry,
                valueTypes: [FuzzValues.self]
            )
            return "ok"
        } catch {
            return "\(error)"
        }
    }

    /// `bytes` with both checksums recomputed, so that mutations get past them and reach the
    /// structural checks (a fuzzer cannot forge an XXH64 by chance). Inputs shorter than a
    /// header are returned as they are.
    public static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        let headerSize = ArchiveHeader.size
        guard bytes.count >= headerSize else { return bytes }
        var sealed = bytes
        let payloadChecksum = bytes[headerSize...].withUnsafeBytes { XXH64.hash($0) }
        write(payloadChecksum, at: 48, in: &sealed)
        let headerChecksum = sealed[0..<56].withUnsafeBytes { XXH64.hash($0) }
        write(headerChecksum, at: 56, in: &sealed)
        return sealed
    }

    /// `bytes` made into a zstd-flagged archive: the input's header with the flag set and its
    /// stored length fixed, so the input's payload reaches the decompressor as a stored frame.
    public static func asCompressed(_ bytes: [UInt8]) -> [UInt8] {
        let headerSize = ArchiveHeader.size
        guard bytes.count >= headerSize else { return bytes }
        var archive = bytes
        archive[10] |= UInt8(ArchiveHeader.Flags.zstdPayload.rawValue)
        write(UInt64(bytes.count - headerSize), at: 24, in: &archive)
        return resealed(archive)
    }

    private static func write(_ value: UInt64, at offset: Int, in bytes: inout [UInt8]) {
        for index in 0..<8 {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))
        }
    }
}
