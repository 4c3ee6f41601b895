// Tests/GraphArchiveTests/Internals/OutputBufferTests.swift - the encoder's output buffer and identity table

import Foundation
import Testing

@testable import GraphArchive

/// The one-call forms hand their output buffer to the `Data` they return, joining the archive's
/// pieces inside the largest one; the identity table is sized ahead of a reference array.
@Suite("Output buffer")
struct OutputBufferTests {
    /// Root arrays whose largest piece is the object section (distinct records), the top section
    /// (many slots, two records), or neither (empty).
    static func roots() -> [(label: String, slots: [Record])] {
        let distinct = (0..<3000).map { Record(name: "record \($0)", color: $0, date: "2026-11-30T17:00:00Z") }
        let two = [Record(name: "a", color: 1, date: "d"), Record(name: "b", color: 2, date: "e")]
        return [
            ("distinct records", distinct),
            ("two records in 50,000 slots", (0..<50_000).map { two[$0 % 2] }),
            ("one record", [two[0]]),
            ("empty", []),
        ]
    }

    #if Zstd
    static let compressions: [ArchiveCompression] = [.none, .zstd(level: 3)]
    #else
    static let compressions: [ArchiveCompression] = [.none]
    #endif

    /// Strings of every small length and just past it (stored in the string's two words up to
    /// 15 bytes), ASCII and not, written one after another with bytes between: each writes its
    /// UTF-8, nothing more.
    @Test func utf8OfEverySmallLength() {
        var strings: [String] = []
        for length in 0...18 {
            strings.append(String(repeating: "a", count: length))
            strings.append(String(repeating: "é", count: length / 2) + String(repeating: "z", count: length % 2))
        }
        strings.append(String("a long string made small by slicing it".suffix(9)))
        strings.append("日本語のテキスト")
        var writer = ByteWriter(reservingCapacity: 1)
        var expected: [UInt8] = []
        for string in strings {
            writer.writeUTF8(string)
            writer.writeByte(0xFF)
            expected += Array(string.utf8) + [0xFF]
        }
        #expect(writer.bytes == expected)

        // With its tag in front, in one write when the string is small (15 bytes at most).
        var tagged = ByteWriter(reservingCapacity: 1)
        var expectedTagged: [UInt8] = []
        for string in strings {
            let length = string.utf8.count
            #expect(tagged.writeSmallString(string, tagBase: 0x80) == (length <= 15), "\(string)")
            expectedTagged += length <= 15 ? [0x80 | UInt8(length)] + Array(string.utf8) : []
            tagged.writeTag(0x2A, littleEndian: UInt64(length) << 8 | 0xEE, width: 2)
            expectedTagged += [0x2A, 0xEE, UInt8(length)]
        }
        #expect(tagged.bytes == expectedTagged)
    }

    @Test(arguments: compressions)
    func oneCallDataIsTheTwoStepArchive(compression: ArchiveCompression) throws {
        let options = GraphArchiver.Options(compression: compression)
        for (label, slots) in Self.roots() {
            let oneCall = try GraphArchiver.archivedData(withRootObject: slots, options: options)
            let archiver = GraphArchiver(options: options)
            try archiver.encode(slots, forKey: GraphArchiver.rootKey)
            try archiver.finishEncoding()
            #expect(try archiver.encodedData == oneCall, "\(label)")
            #expect(try archiver.encodedData == oneCall, "\(label): a second read")

            let back = try GraphUnarchiver.unarchivedObject(ofType: [Record].self, from: oneCall)
            #expect(back.map(\.name) == slots.map(\.name), "\(label)")
            if slots.count > 2 { #expect(back[0] === back[2] || slots[0] !== slots[2], "\(label)") }
        }
    }

    @Test func codableEncoderOutputDecodes() throws {
        let names = (0..<5000).map { "name \($0)" }
        let data = try GraphArchiveEncoder().encode(names)
        #expect(try GraphArchiveDecoder().decode([String].self, from: data) == names)
    }

    /// Tagged varints at each length's bounds (one to ten bytes; two and three are stored in
    /// one word), each followed by a byte: LEB128 of the value after its tag, nothing more.
    @Test func taggedVarintsAtEveryLengthAreLEB128() {
        var values: [UInt64] = [0, 1, 0x7F, 0x80, 0x81, 0x3FFF, 0x4000, 0x4001, 0x1F_FFFF, 0x20_0000, 0x0FFF_FFFF]
        values += [1 << 35, UInt64(Int.max), UInt64.max, 0x1234, 0x12_3456]
        var writer = ByteWriter()
        var expected: [UInt8] = []
        for (position, value) in values.enumerated() {
            let tag = UInt8(truncatingIfNeeded: position)
            writer.writeTag(tag, varint: value)
            writer.writeByte(0xEE)
            expected.append(tag)
            var rest = value
            while rest >= 0x80 {
                expected.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            expected += [UInt8(rest), 0xEE]
        }
        #expect(writer.bytes == expected)
    }

    @Test func insertingMovesWhatFollowsUp() {
        var writer = ByteWriter()
        writer.writeBytes([1, 2, 3, 4] as [UInt8])
        ([9, 8] as [UInt8]).withUnsafeBytes { writer.insert($0, at: 0) }
        ([7] as [UInt8]).withUnsafeBytes { writer.insert($0, at: 3) }
        ([6, 5] as [UInt8]).withUnsafeBytes { writer.insert($0, at: writer.count) }
        [UInt8]().withUnsafeBytes { writer.insert($0, at: 1) }
        #expect(writer.bytes == [9, 8, 1, 7, 2, 3, 4, 6, 5])
        #expect(writer.takeData() == Data([9, 8, 1, 7, 2, 3, 4, 6, 5]))
    }

    /// Runs copied from a reader (short ones a word at a time, where the words stay within the
    /// reader's bytes) come out exactly, at every length and up to the reader's last byte, with
    /// what is written after them; a run past the reader's end is refused, not read.
    @Test func copyingFromAReaderKeepsExactlyTheRun() throws {
        let source = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        let bytes = ArchiveBytes(copying: source)
        let reader = bytes.reader()
        for count in 0...45 {
            for start in [0, 3, source.count - count - 9, source.count - count] where start >= 0 {
                var writer = ByteWriter()
                writer.writeByte(0xEE)
                try reader.copyBytes(from: start, count: count, into: &writer)
                writer.writeByte(0xFF)
                #expect(writer.bytes == [0xEE] + source[start..<(start + count)] + [0xFF], "\(count) at \(start)")
            }
        }
        var writer = ByteWriter()
        for (start, count) in [(source.count - 3, 4), (-1, 2), (0, source.count + 1), (5, -1)] {
            let error = expectArchiveError(.truncated) {
                try reader.copyBytes(from: start, count: count, into: &writer)
            }
            #expect(error?.offset == start, "\(count) at \(start)")
        }
        #expect(writer.count == 0)
    }

    /// A buffer past `largeThreshold` (advised onto huge pages) keeps every byte through its
    /// growth, an insertion at its front, and the hand-over.
    @Test func largeBufferKeepsItsBytes() {
        var writer = ByteWriter()
        let count = ByteWriter.largeThreshold * 3
        for index in 0..<count { writer.writeByte(UInt8(truncatingIfNeeded: index &* 31)) }
        ([0xAA, 0xBB] as [UInt8]).withUnsafeBytes { writer.insert($0, at: 0) }
        let data = writer.takeData()
        #expect(data.count == count + 2)
        #expect(data.prefix(2) == Data([0xAA, 0xBB]))
        let mismatch = data.dropFirst(2).enumerated().first { $0.element != UInt8(truncatingIfNeeded: $0.offset &* 31) }
        #expect(mismatch == nil)
    }

    /// A buffer growing past `largeCapacity` moves into a mapping of its own and keeps every
    /// byte through the move and the hand-over, which gives the spare pages back; a buffer of
    /// `largeCapacity` dropped without being handed over is freed.
    @Test func mappedBufferGrowsAndHandsOverItsBytes() {
        var writer = ByteWriter(reservingCapacity: ByteWriter.largeCapacity)
        let chunk = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }
        let chunks = ByteWriter.largeCapacity / chunk.count + 2
        for index in 0..<chunks {
            chunk.withUnsafeBytes { writer.writeBytes($0) }
            writer.writeByte(UInt8(truncatingIfNeeded: index))
        }
        let data = writer.takeData()
        #expect(data.count == chunks * (chunk.count + 1))
        #expect(data.withUnsafeBytes { Self.mismatches(in: $0, chunk: chunk, chunks: chunks) } == 0)

        var dropped = ByteWriter()
        chunk.withUnsafeBytes { dropped.writeBytes($0) }
        chunk.withUnsafeBytes { dropped.writeBytes($0) }
        #expect(dropped.count == 2 * chunk.count)
    }

    /// A buffer that moved into a mapping of its own has its pages made resident ahead of the
    /// writer on another thread, which stops before the buffer grows, is handed over or is
    /// dropped; a heap block has none. Writes of every size keep their bytes meanwhile.
    @Test func mappedBufferIsPopulatedAheadOfTheWriter() {
        var writer = ByteWriter(reservingCapacity: ByteWriter.largeCapacity)
        let chunk = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ $0 >> 9) }
        chunk.withUnsafeBytes { writer.writeBytes($0) }
        let populatesHeapBlock = writer.isPopulating
        #expect(!populatesHeapBlock)
        let chunks = ByteWriter.largeCapacity / chunk.count + 2
        for index in 1..<chunks {
            chunk.withUnsafeBytes { writer.writeBytes($0) }
            writer.writeByte(UInt8(truncatingIfNeeded: index))
            // Byte-sized writes too, across the populator's report points.
            if index == chunks - 1 { break }
            writer.truncate(to: writer.count - 1)
            writer.writeByte(UInt8(truncatingIfNeeded: index))
        }
        let populatesMapping = writer.isPopulating
        #expect(populatesMapping)
        let stepped = writer.count
        for index in 0..<(3 * ByteWriter.populationStep / 2) { writer.writeByte(UInt8(truncatingIfNeeded: index)) }
        #expect(writer.count == stepped + 3 * ByteWriter.populationStep / 2)
        let taken = writer.takeBuffer()
        #expect(taken.mappedBytes >= taken.count)
        let tail = UnsafeRawBufferPointer(start: taken.bytes + stepped, count: taken.count - stepped)
        #expect(tail.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset) })
        let head = UnsafeRawBufferPointer(start: taken.bytes, count: chunk.count)
        #expect(head.elementsEqual(chunk))
        ZeroedMemory.unmap(taken.bytes, byteCount: taken.mappedBytes)

        // Dropped while its populator runs.
        var dropped = ByteWriter(reservingMapped: ByteWriter.largeCapacity + 4096)
        let populatesReserved = dropped.isPopulating
        #expect(populatesReserved)
        chunk.withUnsafeBytes { dropped.writeBytes($0) }
        _ = consume dropped
    }

    /// Places in `bytes`, written as `chunks` times `chunk` followed by its number's low byte,
    /// that hold something else.
    static func mismatches(in bytes: UnsafeRawBufferPointer, chunk: [UInt8], chunks: Int) -> Int {
        var mismatches = 0
        chunk.withUnsafeBytes { chunk in
            for index in 0..<chunks {
                let start = bytes.baseAddress! + index * (chunk.count + 1)
                if memcmp(start, chunk.baseAddress!, chunk.count) != 0 { mismatches += 1 }
                if start.load(fromByteOffset: chunk.count, as: UInt8.self) != UInt8(truncatingIfNeeded: index) {
                    mismatches += 1
                }
            }
        }
        return mismatches
    }

    /// A buffer reserved past `largeCapacity` with `reservingMapped` is a mapping from the
    /// start, and keeps every byte when written past its reservation (remapped, not copied into
    /// a heap block); a smaller one is an ordinary heap block.
    @Test func bufferReservedMappedOutgrowsItsReservation() {
        let reserved = ByteWriter.largeCapacity + 4096
        var writer = ByteWriter(reservingMapped: reserved)
        let chunk = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 10) }
        let chunks = reserved / chunk.count + 3
        for index in 0..<chunks {
            chunk.withUnsafeBytes { writer.writeBytes($0) }
            writer.writeByte(UInt8(truncatingIfNeeded: index))
        }
        #expect(writer.count > reserved)
        #expect(writer.withUnsafeBytes { Self.mismatches(in: $0, chunk: chunk, chunks: chunks) } == 0)
        let taken = writer.takeBuffer()
        #expect(taken.count == chunks * (chunk.count + 1))
        #expect(taken.mappedBytes >= taken.count)
        ZeroedMemory.unmap(taken.bytes, byteCount: taken.mappedBytes)

        var small = ByteWriter(reservingMapped: 1 << 16)
        small.writeBytes([1, 2, 3])
        let smallTaken = small.takeBuffer()
        #expect(smallTaken.mappedBytes == 0 && smallTaken.count == 3)
        free(smallTaken.bytes)
    }

    #if os(Linux)
    /// Page advice leaves a mapping whole, so it keeps growing by remapping: a heap block
    /// moved into a mapping, then grown twice, keeps its bytes, and the mapping can be
    /// remapped after each step. Sizes that are not whole huge pages, where advice on part of
    /// the mapping would split it and every later remap would fail.
    @Test func adviceKeepsAMappingRemappable() throws {
        let heapBytes = 3 << 19
        let heap = try #require(malloc(heapBytes))
        for index in 0..<heapBytes {
            heap.storeBytes(of: UInt8(truncatingIfNeeded: index &* 13), toByteOffset: index, as: UInt8.self)
        }
        var (memory, size) = (heap, heapBytes)
        var isMapping = false
        for newSize in [(3 << 20) + 4096, 7 << 20, (13 << 20) + 8192] {
            memory = try #require(
                ZeroedMemory.growMapping(memory, byteCount: size, isMapping: isMapping, keeping: heapBytes, to: newSize)
            )
            (size, isMapping) = (newSize, true)
            let kept = (0..<heapBytes).allSatisfy {
                memory.load(fromByteOffset: $0, as: UInt8.self) == UInt8(truncatingIfNeeded: $0 &* 13)
            }
            #expect(kept, "\(newSize) bytes")
            // One mapping, advised onto base pages whole (VmFlags "nh"), not huge ones ("hg").
            let region = try #require(Self.mappedRegion(containing: memory))
            #expect(region.range.lowerBound <= UInt(bitPattern: memory))
            #expect(region.range.upperBound >= UInt(bitPattern: memory) + UInt(newSize))
            if Self.hasHugePages {
                #expect(region.flags.contains("nh") && !region.flags.contains("hg"), "\(region.flags)")
            }
        }
        let block = memory.assumingMemoryBound(to: UInt8.self)
        let remapped = try #require(
            ZeroedMemory.extend(block, count: size, to: size + (5 << 20)),
            "a remap after advice"
        )
        size += 5 << 20
        let trimmed = ZeroedMemory.trimMapping(
            UnsafeMutableRawPointer(remapped),
            byteCount: size,
            keeping: heapBytes + 1
        )
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        #expect(trimmed == (heapBytes + 1 + page - 1) / page * page)
        #expect(remapped[heapBytes - 1] == UInt8(truncatingIfNeeded: (heapBytes - 1) &* 13))
        ZeroedMemory.unmap(UnsafeMutableRawPointer(remapped), byteCount: trimmed)
    }

    /// Whether the kernel has transparent huge pages, without which advice on them fails.
    static let hasHugePages = FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled")

    /// A table looked up at random keeps its huge-page advice, through a growth by remapping.
    @Test(.enabled(if: hasHugePages)) func tableIsAdvisedOntoHugePages() throws {
        let count = ZeroedMemory.hugePageBytes / 8
        let table = ZeroedMemory.allocateTable(UInt64.self, count: count)
        let grown = try #require(ZeroedMemory.extend(table, count: count, to: count * 2))
        defer { ZeroedMemory.deallocate(grown, count: count * 2) }
        let region = try #require(Self.mappedRegion(containing: grown))
        #expect(region.flags.contains("hg") && !region.flags.contains("nh"), "\(region.flags)")
    }

    /// The mapping of this process that holds `address`, and its `VmFlags` (proc(5)), from
    /// /proc/self/smaps (read to its end: its size reads as 0).
    static func mappedRegion(containing address: UnsafeRawPointer) -> (range: Range<UInt>, flags: [Substring])? {
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps"),
            let bytes = try? file.readToEnd()
        else { return nil }
        let smaps = String(decoding: bytes, as: UTF8.self)
        let target = UInt(bitPattern: address)
        var current: Range<UInt>?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let first = fields.first, first.contains("-"), !first.hasSuffix(":") {
                let bounds = first.split(separator: "-").compactMap { UInt($0, radix: 16) }
                current = bounds.count == 2 && bounds[0] <= target && target < bounds[1] ? bounds[0]..<bounds[1] : nil
            } else if let range = current, fields.first == "VmFlags:" {
                return (range, Array(fields.dropFirst()))
            }
        }
        return nil
    }
    #endif

    @Test func tableSizedForReferencesKeepsEveryIndex() {
        var table = IdentityTable()
        let objects = (0..<20_000).map { Record(name: "", color: $0, date: "") }
        table.reserve(forReferences: objects.count / 2)
        for (index, object) in objects.enumerated() {
            #expect(table.indexOrInsert(object, next: UInt32(index)).inserted)
            // Fewer references than keys already in: nothing to do.
            if index == 15_000 { table.reserve(forReferences: 10) }
        }
        for (index, object) in objects.enumerated().reversed() {
            let found = table.indexOrInsert(object, next: 99_999)
            #expect(!found.inserted && found.index == UInt32(index))
        }
        #expect(table.count == objects.count)
    }

    /// The mapping a table switches to when addresses cluster: every object found again, in
    /// tables small and large, across growths (from 16 slots to 65,536).
    @Test func scrambledTableKeepsEveryIndex() {
        var table = IdentityTable(minimumCapacity: 8, scrambled: true)
        let objects = (0..<20_000).map { Record(name: "", color: $0, date: "") }
        for (index, object) in objects.enumerated() {
            #expect(table.indexOrInsert(object, next: UInt32(index)).inserted)
            if index == 100 || index == 19_999 {
                for (earlier, object) in objects.prefix(index + 1).enumerated() {
                    let found = table.indexOrInsert(object, next: 99_999)
                    #expect(!found.inserted && found.index == UInt32(earlier))
                }
            }
        }
        #expect(table.count == objects.count)
    }

    /// Inserts `addresses` (no objects behind them) numbered from the table's count, and finds
    /// each again; returns whether all were new and found with their numbers.
    private static func insertAndFind(_ addresses: [UInt], into table: inout IdentityTable) -> Bool {
        let first = table.count
        var kept = true
        for (offset, address) in addresses.enumerated() {
            kept = kept && table.indexOrInsert(heldAddress: address, next: UInt32(first + offset)).inserted
        }
        for (offset, address) in addresses.enumerated() {
            let found = table.indexOrInsert(heldAddress: address, next: 0)
            kept = kept && !found.inserted && found.index == UInt32(first + offset)
        }
        return kept
    }

    /// The table's mapping, read outside `#expect` (which copies what it reads).
    private static func inAddressOrder(_ table: borrowing IdentityTable) -> Bool { table.mapsInAddressOrder }

    /// `count` addresses `spacing` bytes apart from `start`, as objects allocated one after
    /// another (`spacing` 48) or sitting in blocks that alias in the address-order mapping.
    private static func addresses(from start: UInt, count: Int, spacing: UInt) -> [UInt] {
        (0..<UInt(count)).map { start + $0 * spacing }
    }

    /// A table scrambled by a few objects that alias (a model's first objects, made at
    /// different times) returns to address order once it grows and finds that the objects
    /// met since follow one another, and stays there; every object keeps its number.
    @Test func tableReturnsToAddressOrderOnceKeysFit() {
        var table = IdentityTable()
        let aliasing = Self.addresses(from: 1 << 36, count: 56, spacing: UInt(table.slotCount) * 16)
        let aliasingFound = Self.insertAndFind(aliasing, into: &table)
        let scrambledByThem = !Self.inAddressOrder(table)
        let following = Self.addresses(from: 1 << 37, count: 50_000, spacing: 48)
        let followingFound = Self.insertAndFind(following, into: &table)
        let inOrderAgain = Self.inAddressOrder(table)
        #expect(aliasingFound && scrambledByThem && followingFound && inOrderAgain)
    }

    /// A graph whose addresses alias at every table size keeps the table scrambled through
    /// every growth, without growing it beyond its keys' needs.
    @Test func tableOfAddressesAliasingAtEverySizeStaysScrambled() {
        var table = IdentityTable()
        let aliasing = Self.addresses(from: 1 << 32, count: 20_000, spacing: 1 << 30)
        let found = Self.insertAndFind(aliasing, into: &table)
        let scrambled = !Self.inAddressOrder(table)
        let slots = table.slotCount
        #expect(found && scrambled)
        #expect(slots <= 65_536)
    }

    /// A table that leaves address order a second time stays scrambled, even where the keys
    /// would fit address order again: it does not move every key twice at each growth.
    @Test func tableLeavingAddressOrderTwiceStaysScrambled() {
        var table = IdentityTable()
        let firstAliasing = Self.addresses(from: 1 << 36, count: 56, spacing: UInt(table.slotCount) * 16)
        let firstFound = Self.insertAndFind(firstAliasing, into: &table)
        let followingFound = Self.insertAndFind(Self.addresses(from: 1 << 37, count: 20_000, spacing: 48), into: &table)
        let inOrderAgain = Self.inAddressOrder(table)
        #expect(firstFound && followingFound && inOrderAgain)
        // Alias only at the present size: the next growth would spread them.
        let secondAliasing = Self.addresses(from: 1 << 38, count: 56, spacing: UInt(table.slotCount) * 16)
        let secondFound = Self.insertAndFind(secondAliasing, into: &table)
        let scrambledAgain = !Self.inAddressOrder(table)
        let grownFrom = table.slotCount
        // Enough for one growth, at addresses whose homes neither wrap nor meet the others'.
        let last = Self.addresses(from: (1 << 39) + (1 << 22), count: 80_000, spacing: 48)
        let lastFound = Self.insertAndFind(last, into: &table)
        let stillScrambled = !Self.inAddressOrder(table)
        let slots = table.slotCount
        #expect(secondFound && scrambledAgain && lastFound && stillScrambled)
        #expect(slots > grownFrom)
    }

    /// A table's block grown keeps its values and is zero after them: a mapped one (1 MiB and
    /// more, remapped where the system can) and one from the heap (copied into a larger one).
    @Test(arguments: [ZeroedMemory.mappedMinimum / 8, 1000])
    func resizedBlockKeepsItsValues(count: Int) {
        let block = ZeroedMemory.allocateTable(UInt.self, count: count)
        for index in 0..<count { block[index] = UInt(index) &* 0x9E37_79B9 | 1 }
        let larger = ZeroedMemory.resize(block, count: count, to: count * 4)
        defer { ZeroedMemory.deallocate(larger, count: count * 4) }
        let kept = (0..<count).allSatisfy { larger[$0] == UInt($0) &* 0x9E37_79B9 | 1 }
        let zero = (count..<(count * 4)).allSatisfy { larger[$0] == 0 }
        #expect(kept && zero)
    }

    #if os(Linux)
    /// On Linux a mapped block grows by remapping its pages (not by the copy `resize` falls
    /// back to): its values kept, the added part zero.
    @Test func mappedBlockGrowsByRemapping() throws {
        let count = ZeroedMemory.mappedMinimum / 8
        let block = ZeroedMemory.allocateTable(UInt.self, count: count)
        for index in 0..<count { block[index] = UInt(index) | 1 }
        let grown = try #require(ZeroedMemory.extend(block, count: count, to: count * 2))
        defer { ZeroedMemory.deallocate(grown, count: count * 2) }
        #expect((0..<count).allSatisfy { grown[$0] == UInt($0) | 1 })
        #expect((count..<(count * 2)).allSatisfy { grown[$0] == 0 })
    }
    #endif

    /// A table large enough to grow by remapping its slots and rehashing them in place (from
    /// 131,072 slots, quadrupling once) finds every object again, under either mapping.
    @Test(arguments: [false, true])
    func tableGrownInPlaceKeepsEveryIndex(scrambled: Bool) {
        var table = IdentityTable(minimumCapacity: 98_304, scrambled: scrambled)
        let objects = (0..<150_000).map { Record(name: "", color: $0, date: "") }
        for (index, object) in objects.enumerated() {
            #expect(table.indexOrInsert(object, next: UInt32(index)).inserted)
        }
        var misplaced = 0
        for (index, object) in objects.enumerated() {
            let found = table.indexOrInsert(object, next: 999_999)
            if found.inserted || found.index != UInt32(index) { misplaced += 1 }
        }
        #expect(misplaced == 0)
        #expect(table.count == objects.count)
    }

    /// The in-place rehash of a grown table, on made-up keys: tables filled up to three
    /// quarters, in half the trials with runs at their end that wrap to their start, doubled or
    /// quadrupled. Afterwards every key is reached from its new home without crossing an empty
    /// slot, with its value, and nothing else is there.
    @Test func rehashInPlaceKeepsEveryKey() {
        var random = SplitMix(seed: 7)
        for trial in 0..<3000 {
            let oldCapacity = 16 << (trial % 3)
            let capacity = oldCapacity << (1 + trial % 2)
            let keys = UnsafeMutablePointer<UInt>.allocate(capacity: capacity)
            let values = UnsafeMutablePointer<UInt32>.allocate(capacity: capacity)
            defer {
                keys.deallocate()
                values.deallocate()
            }
            keys.initialize(repeating: 0, count: capacity)
            values.initialize(repeating: 0, count: capacity)
            // Keys are 16-byte units; their home is their unit under the table's mask.
            func home(_ key: UInt, _ mask: Int) -> Int { Int(key >> 4) & mask }
            var inserted: [UInt: UInt32] = [:]
            let count = 1 + Int(random.next() % UInt64(oldCapacity * 3 / 4))
            while inserted.count < count {
                var unit = UInt(random.next() >> 20) | 1
                // Half the trials crowd homes into the last slots, so that runs wrap.
                if trial % 4 < 2 { unit = unit & ~UInt(oldCapacity - 1) | UInt(oldCapacity - 1 - Int(unit % 4)) }
                let key = unit << 4
                guard inserted[key] == nil else { continue }
                var slot = home(key, oldCapacity - 1)
                while keys[slot] != 0 { slot = (slot + 1) & (oldCapacity - 1) }
                keys[slot] = key
                values[slot] = UInt32(inserted.count)
                inserted[key] = UInt32(inserted.count)
            }
            IdentityTable.rehashInPlace(keys, values, from: oldCapacity, to: capacity) { home($0, capacity - 1) }
            var lost = 0
            for (key, value) in inserted {
                var slot = home(key, capacity - 1)
                while keys[slot] != 0 && keys[slot] != key { slot = (slot + 1) & (capacity - 1) }
                if keys[slot] != key || values[slot] != value { lost += 1 }
            }
            let held = (0..<capacity).filter { keys[$0] != 0 }.count
            #expect(lost == 0 && held == count, "trial \(trial): \(lost) keys lost, \(held) held of \(count)")
        }
    }

    /// When a table ends it releases the objects it retained, each once, and no object
    /// inserted without a retain: none retained, every one, and one in `retainedEvery`, in a
    /// table grown from 16 slots past 8,192. The release scan stops after the last retained key.
    @Test(arguments: [0, 1, 3, 1000])
    func tableReleasesWhatItRetained(retainedEvery: Int) {
        var retained: [WeakBox] = []
        var held: [Record] = []
        var table = IdentityTable(minimumCapacity: 8)
        for index in 0..<6000 {
            let object = Record(name: "", color: index, date: "")
            let isRetained = retainedEvery > 0 && index % retainedEvery == 0
            if isRetained {
                retained.append(WeakBox(object))
            } else {
                held.append(object)
            }
            let keeping: IdentityTable.Keeping = isRetained ? .retained : .heldByCaller
            #expect(table.indexOrInsert(object, next: UInt32(index), keeping: keeping).inserted)
        }
        // Only the table holds the retained objects now.
        #expect(retained.allSatisfy { $0.object != nil })
        Self.end(table)
        #expect(retained.allSatisfy { $0.object == nil })
        // The objects inserted without a retain were not released by the table: alive until
        // their last holder lets go.
        let heldBoxes = held.map(WeakBox.init)
        #expect(heldBoxes.allSatisfy { $0.object != nil })
        held.removeAll()
        #expect(heldBoxes.allSatisfy { $0.object == nil })
    }

    /// Ends `table` here, not where the optimizer would.
    private static func end(_ table: consuming IdentityTable) {}

    @Test func borrowedObjectsAreTheArraysReferences() {
        let objects = (0..<40).map { Record(name: "", color: $0, date: "") }
        for positions in [0..<0, 0..<1, 3..<19, 16..<32, 39..<40, 0..<40] {
            let (addresses, lent) = objects.withBorrowedObjects(in: positions) { borrowed in
                (Array(borrowed.addresses), (0..<borrowed.count).map { borrowed.lent(at: $0).withObject { $0 } })
            }
            #expect(addresses == objects[positions].map { UInt(bitPattern: ObjectIdentifier($0)) }, "\(positions)")
            #expect(lent.count == positions.count && zip(lent, objects[positions]).allSatisfy { $0 === $1 })
        }
    }

    @Test func borrowingObjectsRetainsNone() {
        // The only strong reference to each object is the array's: one held by the borrow would
        // keep it alive after the array goes.
        var objects: [Record]? = (0..<20).map { Record(name: "", color: $0, date: "") }
        let boxes = objects!.map(WeakBox.init)
        let colors = objects!.withBorrowedObjects(in: 0..<20) { borrowed in
            (0..<borrowed.count).map { borrowed.lent(at: $0).withObject { $0.color } }
        }
        #expect(colors == Array(0..<20))
        objects = nil
        #expect(boxes.allSatisfy { $0.object == nil })
    }

    @Test func touchingHomeSlotsChangesNothing() {
        var table = IdentityTable()
        let objects = (0..<1000).map { Record(name: "", color: $0, date: "") }
        for (index, object) in objects.prefix(500).enumerated() { _ = table.indexOrInsert(object, next: UInt32(index)) }
        _ = objects.withBorrowedObjects(in: 0..<1000) { table.touchHomeSlots(of: $0.addresses) }
        #expect(table.count == 500)
        for (index, object) in objects.enumerated() {
            let found = table.indexOrInsert(object, next: UInt32(index))
            #expect(found.inserted == (index >= 500) && found.index == UInt32(index))
        }
    }

    /// Lengths around the encoder's look-ahead batches (`ReferenceLookAhead.count`).
    static let lookAheadLengths: [Int] = {
        let batch = ReferenceLookAhead.count
        return [1, batch - 1, batch, batch + 1, 2 * batch, 2 * batch + 1, 5 * batch + 3, 100]
    }()

    /// The encoder looks references up in batches of `ReferenceLookAhead.count`: every length
    /// around the batch boundaries, with slots that repeat records of earlier and of the same
    /// batch.
    @Test(arguments: lookAheadLengths)
    func referenceArraysAcrossLookAheadBatches(length: Int) throws {
        let batch = ReferenceLookAhead.count
        let records = (0..<(3 * batch)).map { Record(name: "r\($0)", color: $0, date: "") }
        let slots = (0..<length).map { records[($0 * 7 + $0 / batch) % records.count] }
        let back = try GraphUnarchiver.unarchivedObject(
            ofType: [Record].self,
            from: GraphArchiver.archivedData(withRootObject: slots)
        )
        ReferenceBatchTests.expectSameSlots(back, as: slots)
    }
}
