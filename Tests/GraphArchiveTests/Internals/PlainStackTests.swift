// Tests/GraphArchiveTests/Internals/PlainStackTests.swift - the engine's stacks and tables without copy-on-write checks

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

    @Test func bytesAreTheElementsInOrder() {
        var stack = PlainStack<UInt32>()
        for value: UInt32 in [7, 0xFFFF_FFFF, 1] { stack.append(value) }
        let bytes = stack.withUnsafeBytes { Array($0) }
        #expect(bytes == [7, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0])
        #expect(PlainStack<UInt32>().withUnsafeBytes { $0.count } == 0)
    }
}
