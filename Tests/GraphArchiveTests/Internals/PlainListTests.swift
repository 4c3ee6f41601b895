// Tests/GraphArchiveTests/Internals/PlainListTests.swift - the engine's lists without copy-on-write checks, in both kinds of memory

import Foundation
import Testing

@testable import GraphArchive

@Suite("Plain stack")
struct PlainStackTests {
    /// Growth from the heap into pages of its own (past `ZeroedMemory.mappedMinimum`) and a
    /// reservation keep every element; `removeLast` returns them last first.
    @Test func elementsSurviveGrowthAndReservation() {
        var stack = PlainStack<Int>(capacity: 2)
        let total = ZeroedMemory.mappedMinimum / MemoryLayout<Int>.stride * 3
        for value in 0..<total { stack.append(value &* 31) }
        #expect(stack.count == total && stack[0] == 0 && stack[total - 1] == (total - 1) &* 31)
        stack.reserveCapacity(total * 2)
        stack.reserveCapacity(10)  // smaller than what it has: nothing changes
        #expect(stack.count == total && (0..<total).allSatisfy { stack[$0] == $0 &* 31 })
        #expect(stack.removeLast() == (total - 1) &* 31)
        #expect(stack.removeLast() == (total - 2) &* 31)
        stack.truncate(to: 1)
        #expect(!stack.isEmpty && stack.removeLast() == 0 && stack.isEmpty)
    }

    /// A table of zeros holds as many elements as asked, each zero, and changes stick.
    @Test func tableOfZeros() {
        let count = ZeroedMemory.mappedMinimum / MemoryLayout<Int>.stride + 5
        var table = PlainStack<Int>(zeros: count)
        #expect(table.count == count && table.withView { $0.allSatisfy { $0 == 0 } })
        table[count - 1] = 7
        #expect(table.last == 7 && table[0] == 0)
    }

    /// A table of a huge page (2 MiB) or more starts on one on Linux, is zero throughout, and
    /// keeps what is written at either end; each size of a page either side of a huge page.
    @Test func largeTablesStartOnAHugePage() {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        for byteCount in [2 << 20, (2 << 20) + page, (3 << 20) - 8, 5 << 20] {
            let count = byteCount / MemoryLayout<UInt64>.stride
            let table = ZeroedMemory.allocateTable(UInt64.self, count: count)
            #if os(Linux)
            #expect(UInt(bitPattern: table) % UInt(2 << 20) == 0, "\(byteCount) bytes")
            #endif
            #expect(table[0] == 0 && table[count / 2] == 0 && table[count - 1] == 0)
            table[0] = 1
            table[count - 1] = 2
            #expect(table[0] == 1 && table[count - 1] == 2)
            ZeroedMemory.deallocate(table, count: count)
        }
    }

    @Test func bytesAreTheElementsInOrder() {
        var stack = PlainStack<UInt32>()
        for value: UInt32 in [7, 0xFFFF_FFFF, 1] { stack.append(value) }
        let bytes = stack.withUnsafeBytes { Array($0) }
        #expect(bytes == [7, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0])
        #expect(PlainStack<UInt32>().withUnsafeBytes { $0.count } == 0)
    }
}

@Suite("Growable buffer")
struct GrowableBufferTests {
    /// Growth by `realloc` (past the size glibc maps on its own) keeps every element, in place
    /// changes stick, and a view reads what was appended.
    @Test func elementsSurviveGrowth() {
        var buffer = GrowableBuffer<Int>(capacity: 1)
        let total = 300_000
        for value in 0..<total { buffer.append(value &* 31) }
        buffer[5] += 1
        #expect(buffer.count == total && buffer.capacity >= total && buffer.last == (total - 1) &* 31)
        #expect(
            buffer.withView { view in view.count == total && view[5] == 5 &* 31 + 1 && view[total - 1] == buffer.last }
        )
        let sum = buffer.withView { $0.reduce(0, &+) }
        #expect(sum == (0..<total).reduce(0) { $0 &+ $1 &* 31 } &+ 1)
    }

    @Test func appendsRunsAndTruncates() {
        var buffer = GrowableBuffer<Int>()
        #expect(buffer.isEmpty && buffer.last == nil && buffer.array.isEmpty)
        buffer.append(repeating: 0, count: 3)
        buffer.append(contentsOf: 3..<6)
        #expect(buffer.array == [0, 0, 0, 3, 4, 5])
        buffer.truncate(to: 2)
        buffer.append(9)
        #expect(buffer.array == [0, 0, 9])
        buffer.reserveCapacity(1)  // smaller than what it has: nothing changes
        #expect(buffer.array == [0, 0, 9] && buffer.capacity >= 3)
    }
}
