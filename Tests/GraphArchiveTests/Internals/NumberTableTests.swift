// Tests/GraphArchiveTests/Internals/NumberTableTests.swift - big-endian number tables read whole and checked against bounds

import Testing

@testable import GraphArchive

@Suite("Number tables")
struct NumberTableTests {
    /// What `bigEndianTable` reads from `values`, written big endian in `width` bytes each.
    func table(_ values: [UInt64], width: Int, within bounds: Range<UInt64>) throws -> (
        table: [UInt32], outside: (position: Int, value: UInt64)?
    ) {
        var bytes: [UInt8] = []
        for value in values {
            for shift in stride(from: 8 * (width - 1), through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        let owner = ArchiveBytes(copying: bytes)
        return try owner.reader().bigEndianTable(count: values.count, width: width, within: bounds)
    }

    /// Each width (1, 2 and 4 read as what they are, the others the general way): the numbers
    /// before the first outside the bounds (below, at the upper bound, beyond), and that one,
    /// wherever it is and whatever follows.
    @Test(arguments: [1, 2, 3, 4, 8])
    func firstNumberOutsideIsReported(width: Int) throws {
        let high: UInt64 = width == 1 ? 200 : 60_000
        let values = (0..<40).map { UInt64(10 + 3 * $0) }
        let whole = try table(values, width: width, within: 10..<high)
        #expect(whole.table == values.map { UInt32($0) } && whole.outside == nil)
        for position in [0, 17, 39] {
            for outside in [9, high, high + 50] {
                var damaged = values
                damaged[position] = outside
                // Another one outside after it: the first is the one reported.
                if position < 39 { damaged[39] = 0 }
                let read = try table(damaged, width: width, within: 10..<high)
                #expect(read.table == values[..<position].map { UInt32($0) })
                #expect(read.outside?.position == position && read.outside?.value == outside)
            }
        }
        // Empty bounds hold nothing: the first number is outside.
        let empty = try table(values, width: width, within: 10..<10)
        #expect(empty.table.isEmpty && empty.outside?.position == 0 && empty.outside?.value == 10)
    }

    /// Bounds as wide as 32 bits hold every 4-byte number; a number below the lower bound is
    /// outside, though it wraps to the top of 32 bits.
    @Test func thirtyTwoBitBounds() throws {
        let values: [UInt64] = [0, 1, 0xFFFF_FFFF, 0x8000_0000, 7]
        let whole = try table(values, width: 4, within: 0..<(1 << 32))
        #expect(whole.table == values.map { UInt32($0) } && whole.outside == nil)
        let below = try table(values, width: 4, within: 1..<(1 << 32))
        #expect(below.table.isEmpty && below.outside?.position == 0 && below.outside?.value == 0)
        let above = try table(values, width: 4, within: 0..<0xFFFF_FFFF)
        #expect(above.table == [0, 1] && above.outside?.position == 2 && above.outside?.value == 0xFFFF_FFFF)
    }
}
