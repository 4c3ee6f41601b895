// Tests/GraphArchiveTests/Internals/GrowableBufferTests.swift - the encoder's lists grown in place

import Testing

@testable import GraphArchive

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
