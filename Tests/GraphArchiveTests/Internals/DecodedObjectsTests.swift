// Tests/GraphArchiveTests/Internals/DecodedObjectsTests.swift - the unarchiver's table of built objects

import Testing

@testable import GraphArchive

private final class Counted {
    let value: Int
    init(_ value: Int) { self.value = value }
}

private struct WeakCounted {
    weak var object: Counted?
}

@Suite("Decoded objects")
struct DecodedObjectsTests {
    /// Objects come back as the same instances, handed over or not, whether the table keeps
    /// them compactly or, past its reach, in words; and it releases the ones it still holds.
    @Test(arguments: [UInt(1) << 35, 64])
    func objectsComeBackAndAreReleased(reach: UInt) {
        var weak: [WeakCounted] = []
        do {
            let objects = (0..<5_000).map(Counted.init)
            var table = DecodedObjects(reach: reach)
            table.reserveCapacity(objects.count)
            for object in objects {
                table.append(object)
                weak.append(WeakCounted(object: object))
            }
            let count = table.count
            #expect(count == objects.count)
            var same = 0
            for index in objects.indices where table[index] === objects[index] { same += 1 }
            #expect(same == objects.count)
            var indexes = [0, 17, 4_999, -1, 5_000]
            _ = table.touch(&indexes, count: indexes.count, handingOver: false)
            let handed = table.handOver(17)
            let again = table.handOver(17)
            let last = table[4_999]
            #expect(handed === objects[17] && again === objects[17] && last === objects[4_999])
        }
        // Every object was released by its last holder: the table released the rest.
        #expect(weak.allSatisfy { $0.object == nil })
    }
}
