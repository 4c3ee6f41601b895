// Tests/GraphArchiveTests/Unarchiving/MemoryBudgetTests.swift - decoding commits only what its memory budget approves

import Foundation
import Testing

@testable import GraphArchive

#if canImport(Glibc)
import Glibc
#endif

/// Decoding options whose memory budget is `bytes`.
private func budget(_ bytes: Int) -> GraphUnarchiver.Options {
    var options = GraphUnarchiver.Options()
    options.maximumMemoryBytes = bytes
    return options
}

/// `count` records with names and dates too long to be stored inside a `String`.
private func longRecords(_ count: Int) -> [Record] {
    (0..<count).map { Record(name: "a record named \($0) at length", color: $0, date: "2024-01-01T00:00:00Z") }
}

/// The error `body` throws, which must be the memory budget's.
private func budgetError(
    _ body: () throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) -> GraphArchiveError? {
    let error = archiveError(body)
    #expect(error?.code == .limitExceeded, sourceLocation: sourceLocation)
    #expect(
        error?.message.hasPrefix("decoding needs more memory than") == true,
        "\(String(describing: error))",
        sourceLocation: sourceLocation
    )
    return error
}

/// A small object of one of two classes: archives of them have two object types, so the
/// decoder keeps each object's class as well as the object.
private final class Cell: GraphCoding {
    let value: Int
    let other: OtherCell
    init(_ value: Int) {
        self.value = value
        other = OtherCell(value)
    }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(value, forKey: "value")
        try archiver.encode(other, forKey: "other")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        value = try unarchiver.decode(Int.self, forKey: "value")
        other = try unarchiver.decode(OtherCell.self, forKey: "other")
    }
}

private final class OtherCell: GraphCoding {
    let value: Int
    init(_ value: Int) { self.value = value }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(value, forKey: "value")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        value = try unarchiver.decode(Int.self, forKey: "value")
    }
}

@Suite("Memory budget")
struct MemoryBudgetTests {
    /// The decoder's tables are charged at what they take: 4 bytes an object for the compact
    /// object table, 1 for the class of each when the archive has several classes, and the
    /// bits of the hand-over. 50,000 cells of two classes (100,000 objects) decode within 5 MiB,
    /// which 24 bytes an object (6.8 MB in all) did not; within 3 MiB the objects the header
    /// declares are refused before any is built: their tables and the smallest instance each.
    @Test func objectTablesAreChargedAtWhatTheyTake() throws {
        let data = try GraphArchiver.archivedData(withRootObject: (0..<50_000).map(Cell.init))
        func decode(within bytes: Int) throws -> [Cell] {
            try GraphUnarchiver.unarchivedObject(
                ofType: [Cell].self,
                from: data,
                registry: GraphTypeRegistry([OtherCell.self]),
                options: budget(bytes)
            )
        }
        let cells = try decode(within: 5 << 20)
        #expect(cells.count == 50_000 && cells[49_999].other.value == 49_999)
        let declared =
            DecodedObjects.compactBytes(capacity: 100_000)
            + ObjectClassTable.bytes(capacity: 100_000, types: 2, objectTypes: 2)
            + 100_000 * MemoryBudget.instance(classInstanceSize(OtherCell.self))
        #expect(declared == 405_504 + 100_016 + 3_200_000)
        let error = budgetError { _ = try decode(within: 3 << 20) }
        #expect(
            error?.message
                == "decoding needs more memory than maximumMemoryBytes (3.0 MiB) allows: the 100000 objects the "
                + "header declares needs \(MemoryBudget.describe(declared)) after 592 bytes already committed"
        )
        #expect(error?.offset == 32)
        // An archive of one class keeps no class per object; one of more than 256 types, 4 bytes.
        #expect(ObjectClassTable.bytes(capacity: 100_000, types: 3, objectTypes: 1) == 0)
        #expect(ObjectClassTable.bytes(capacity: 100_000, types: 300, objectTypes: 2) == 405_504)
    }

    /// 10,000 records take about 2.5 MB decoded: a budget of 1 MB stops the decode with a clear
    /// error, one of 64 MB lets it through. Every reader obeys it: from memory, from a file,
    /// through the keyed-archive reader, the Codable bridge and the archive checks.
    @Test func budgetStopsEveryReaderAndAWideOneLetsThemThrough() throws {
        try withTemporaryFolder { folder in
            let records = longRecords(10_000)
            let path = folder + "/records"
            let keyedPath = folder + "/records.plist"
            try GraphArchiver.archiveRootObject(records, toFile: path)
            try KeyedArchive.archiveRootObject(records, toFile: keyedPath)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let codable = try GraphArchiveEncoder().encode(
                records.map { CodableGridState(name: $0.name, color: $0.color, date: $0.date) }
            )
            let readers: [(String, (GraphUnarchiver.Options) throws -> Void)] = [
                (
                    "from data",
                    { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data, options: $0) }
                ),
                (
                    "from file",
                    { _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, fromFile: path, options: $0) }
                ),
                (
                    "keyed file",
                    {
                        _ = try GraphUnarchiver.unarchivedObject(
                            ofType: [Record].self,
                            fromKeyedArchiveFile: keyedPath,
                            options: $0
                        )
                    }
                ),
                (
                    "any file",
                    {
                        _ = try GraphUnarchiver.unarchivedObject(
                            ofType: [Record].self,
                            fromAnyArchiveFile: keyedPath,
                            options: $0
                        )
                    }
                ),
                (
                    "codable",
                    {
                        _ = try GraphArchiveDecoder(options: $0).decode([CodableGridState].self, from: codable)
                    }
                ),
            ]
            for (name, read) in readers {
                do {
                    try read(budget(1 << 20))
                    Issue.record("\(name): decoded within 1 MiB")
                } catch let error as GraphArchiveError {
                    #expect(error.code == .limitExceeded, "\(name)")
                    #expect(error.message.contains("than maximumMemoryBytes (1.0 MiB) allows"), "\(name): \(error)")
                } catch let error as DecodingError {
                    guard case .dataCorrupted(let context) = error,
                        let underlying = context.underlyingError as? GraphArchiveError
                    else {
                        Issue.record("\(name): \(error)")
                        continue
                    }
                    #expect(underlying.code == .limitExceeded, "\(name)")
                }
                try read(budget(64 << 20))
            }
        }
    }

    /// A header that declares more objects than the budget affords (each costs its table entry
    /// and at least an instance) fails before the first object is built.
    @Test func declaredObjectsBeyondTheBudgetFailBeforeAnyIsBuilt() throws {
        let data = try GraphArchiver.archivedData(withRootObject: longRecords(10_000))
        let error = budgetError {
            _ = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: data, options: budget(600_000))
        }
        #expect(error?.message.contains("the 10000 objects the header declares") == true)
        #expect(error?.offset == 32)
    }

    /// Without a chosen limit, a decode commits at most 1024 times its input's size (at least
    /// 256 MiB): a 15 KB archive that describes 40 million records fails at the 256 MiB mark
    /// however much memory the machine has. A chosen limit replaces that allowance.
    @Test func defaultBudgetIsBoundedByTheInputsSize() throws {
        var small = MemoryBudget(GraphUnarchiver.Options())
        small.limitToInput(bytes: 15_000)
        try small.charge(200 << 20, for: "what 15 KB may take")
        let error = archiveError { try small.charge(100 << 20, for: "the objects") }
        #expect(error?.code == .limitExceeded)
        #expect(
            error?.message
                == "decoding needs more memory than the memory budget for an input of 14.6 KiB (1024 times its size, "
                + "at least 256.0 MiB) allows: the objects needs 100.0 MiB after 200.0 MiB already committed"
        )
        var large = MemoryBudget(GraphUnarchiver.Options())
        large.limitToInput(bytes: 1 << 20)
        let fits = large.tryCharge(300 << 20)  // 1 MiB of input may take up to 1 GiB
        let passes = large.tryCharge(800 << 20)
        #expect(fits && !passes)
        var chosen = MemoryBudget(budget(1 << 30))
        chosen.limitToInput(bytes: 15_000)
        let chosenFits = chosen.tryCharge(900 << 20)
        #expect(chosenFits)
        // The first input named counts: a keyed archive's, not the payload it becomes.
        var keyed = MemoryBudget(GraphUnarchiver.Options())
        keyed.limitToInput(bytes: 15_000)
        keyed.limitToInput(bytes: 1 << 30)
        let keyedFits = keyed.tryCharge(300 << 20)
        #expect(!keyedFits)
    }

    /// A compressed payload is charged, whole, before its buffer is allocated.
    @Test(.enabled(if: ArchiveCompression.isZstdAvailable))
    func compressedPayloadIsChargedBeforeItIsDecompressed() throws {
        let data = try GraphArchiver.archivedData(
            withRootObject: longRecords(10_000),
            options: GraphArchiver.Options(compression: .zstd)
        )
        let info = try GraphUnarchiver.archiveInfo(from: data)
        let error = budgetError { _ = try GraphUnarchiver.verify(data, options: budget(info.payloadBytes)) }
        #expect(error?.message.contains("decompressing the \(info.payloadBytes)-byte payload") == true)
    }

    /// Strings and arrays are charged as they are read: 20,000 strings of 30 bytes (1.6 MB of
    /// string storage) in an array (320 KB) fit 2 MB but not 1 MB, which stops at a string.
    @Test func stringsAreChargedAsTheyAreRead() throws {
        let strings = (0..<20_000).map { String(repeating: "x", count: 25) + String(10_000 + $0) }
        let data = try GraphArchiver.archivedData(withRootObject: ["strings": strings])
        let error = budgetError {
            _ = try GraphUnarchiver.unarchivedObject(
                ofType: [String: [String]].self,
                from: data,
                options: budget(1 << 20)
            )
        }
        #expect(error?.message.contains("a string of 30 bytes needs 80 bytes") == true, "\(String(describing: error))")
        #expect(error?.keyPath.first == "root")
        let decoded = try GraphUnarchiver.unarchivedObject(
            ofType: [String: [String]].self,
            from: data,
            options: budget(2 << 20)
        )
        #expect(decoded["strings"] == strings)
    }

    /// The machine's figures: under `RLIMIT_AS` the address space left is one of them, and the
    /// default budget is below it by the reserve.
    @Test(.disabled(if: runsUnderAddressSanitizer, "its shadow memory takes the address space RLIMIT_AS counts"))
    func defaultBudgetIsBelowTheAddressSpaceLeft() async {
        await #expect(processExitsWith: .success) {
            limitAddressSpaceGrowth(to: 512 << 20)
            let available = AvailableMemory.current()
            let left = available.addressSpaceBytes ?? 0
            #expect(left > 480 << 20 && left <= 512 << 20)
            #expect(available.budget() <= left - (96 << 20))
            #expect(available.budget(choosing: 1 << 40) <= left - (96 << 20))
            #expect(available.budget(choosing: 1 << 20) == 1 << 20)
        }
    }

    /// 4,000,000 strings of 16 bytes (68 MB in the archive) take about 350 MB decoded. In a
    /// child whose address space may grow by 256 MiB, that allocation would fail and kill it;
    /// the default budget, derived from that limit, stops the decode with an error instead. The
    /// same child decodes 200,000 of them.
    @Test(.disabled(if: runsUnderAddressSanitizer, "its shadow memory takes the address space RLIMIT_AS counts"))
    func decodeUnderAnAddressSpaceLimitFailsCleanlyInsteadOfCrashing() async throws {
        try await withTemporaryFolderAsync { folder in
            let big = folder + "/big"
            let small = folder + "/small"
            // Written by a child: 4,000,000 strings in this process would leave its heap changed
            // for the tests that measure it.
            await #expect(processExitsWith: .success) { [big = big as String, small = small as String] in
                try GraphArchiver.archiveRootObject(
                    [String](repeating: "sixteen bytes...", count: 4_000_000),
                    toFile: big
                )
                try GraphArchiver.archiveRootObject(
                    [String](repeating: "sixteen bytes...", count: 200_000),
                    toFile: small
                )
            }
            await #expect(processExitsWith: .success) { [big = big as String, small = small as String] in
                limitAddressSpaceGrowth(to: 256 << 20)
                let error = archiveError {
                    _ = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromFile: big)
                }
                #expect(error?.code == .limitExceeded)
                #expect(
                    error?.message.contains("derived from the address space left") == true,
                    "\(String(describing: error))"
                )
                let decoded = try GraphUnarchiver.unarchivedObject(ofType: [String].self, fromFile: small)
                #expect(decoded.count == 200_000)
            }
        }
    }

    @Test func sizesAreDescribedForPeople() {
        #expect(AvailableMemory.describe(800) == "800 bytes")
        #expect(AvailableMemory.describe(1 << 20) == "1.0 MiB")
        #expect(AvailableMemory.describe(3 << 29) == "1.5 GiB")
    }
}
