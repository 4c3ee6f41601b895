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
    func objectsComeBackAndAreReleased(reach: UInt) throws {
        var weak: [WeakCounted] = []
        do {
            let objects = (0..<5_000).map(Counted.init)
            var table = DecodedObjects(reach: reach)
            var memory = MemoryBudget(limit: 1 << 30, source: "a test budget")
            table.reserveCapacity(objects.count)
            for object in objects {
                try table.append(object, memory: &memory)
                weak.append(WeakCounted(object: object))
            }
            let count = table.count
            #expect(count == objects.count)
            var same = 0
            for index in objects.indices where table[index] === objects[index] { same += 1 }
            #expect(same == objects.count)
            // The form byte says what the flags say; the compact form's own lookup agrees.
            let form = table.form
            #expect(form == (table.isCompact ? .compact : .words))
            if form == .compact {
                #expect(objects.indices.allSatisfy { table.compactObject(checkedAt: $0) === objects[$0] })
            }
            let indexes = [0, 17, 4_999, -1, 5_000]
            _ = table.touch(indexes.span, count: indexes.count, handingOver: false)
            let handed = table.handOver(17)
            let again = table.handOver(17)
            let last = table[4_999]
            #expect(handed === objects[17] && again === objects[17] && last === objects[4_999])
        }
        // Every object was released by its last holder: the table released the rest.
        #expect(weak.allSatisfy { $0.object == nil })
    }

    /// Handing each object to its first reference: a taken object is the taker's alone (the
    /// table no longer holds it, and says so), and the table releases only those not taken,
    /// compact or in words, whatever the count's remainder in a word of bits.
    @Test(arguments: [UInt(1) << 35, 64], [5_000, 64, 1])
    func objectsTakenByTheirFirstReferenceAreTheTakers(reach: UInt, count: Int) throws {
        var weak: [WeakCounted] = []
        var taken: [Counted] = []
        do {
            var table = DecodedObjects(reach: reach)
            var memory = MemoryBudget(limit: 1 << 30, source: "a test budget")
            table.handOverFirstReferences()
            table.reserveCapacity(count)
            let handsOver = table.handsOverFirstReferences
            #expect(handsOver)
            for value in 0..<count {
                let object = Counted(value)
                weak.append(WeakCounted(object: object))
                try table.append(object, memory: &memory)
            }
            // The form byte says what the flags say; its compact way takes as `takeFirst` does.
            let form = table.form
            #expect(form == (table.isCompact ? .compactTakingFirst : .wordsTakingFirst))
            var takenBefore = 0
            for index in stride(from: 0, to: count, by: 3) {
                if table.isTaken(index) { takenBefore += 1 }
                let object =
                    form == .compactTakingFirst
                    ? table.takeFirstCompact(checkedAt: index) : table.takeFirst(checkedAt: index)
                taken.append(try #require(object as? Counted))
            }
            #expect(takenBefore == 0)
            #expect(taken.map(\.value) == Array(stride(from: 0, to: count, by: 3)))
            // Taken once: nothing the second time, and still marked.
            let again = table.takeFirst(checkedAt: 0)
            let againCompact = form == .compactTakingFirst ? table.takeFirstCompact(checkedAt: 0) : nil
            #expect(again == nil && againCompact == nil && table.isTaken(0))
            var marks: [Bool] = []
            for index in 0..<count { marks.append(table.isTaken(index)) }
            #expect(marks == (0..<count).map { $0 % 3 == 0 })
        }
        // The table released the objects it kept; the taken ones live on with their taker.
        #expect(weak.indices.allSatisfy { (weak[$0].object == nil) == ($0 % 3 != 0) })
        taken = []
        #expect(weak.allSatisfy { $0.object == nil })
    }

    /// An object taken while the table is compact stays taken when the table turns to words
    /// (within no distance of the first object, the second turns it), and is not released.
    @Test func anObjectTakenBeforeTheTableTurnsToWordsStaysTaken() throws {
        var weak: [WeakCounted] = []
        var taken: Counted?
        do {
            var table = DecodedObjects(reach: 0)
            var memory = MemoryBudget(limit: 1 << 30, source: "a test budget")
            table.handOverFirstReferences()
            table.reserveCapacity(3)
            let first = Counted(0)
            weak.append(WeakCounted(object: first))
            try table.append(first, memory: &memory)
            let form = table.form
            #expect(form == .compactTakingFirst)
            taken = try #require(table.takeFirstCompact(checkedAt: 0) as? Counted)
            for value in 1..<3 {
                let object = Counted(value)
                weak.append(WeakCounted(object: object))
                try table.append(object, memory: &memory)
            }
            let turned = table.form
            #expect(turned == .wordsTakingFirst)
            #expect(table.isTaken(0) && !table.isTaken(1) && table.takeFirst(checkedAt: 0) == nil)
            let second = try #require(table.takeFirst(checkedAt: 1) as? Counted)
            #expect(second.value == 1 && table.isTaken(1))
        }
        // The table released the one it kept; the first lives on with its taker.
        #expect(weak[0].object != nil && weak[1].object == nil && weak[2].object == nil)
        #expect(taken?.value == 0)
        taken = nil
        #expect(weak[0].object == nil)
    }

    /// The compact table is charged by the decoder before it is reserved; turning to words
    /// charges them first (the two forms are held at once while the references move), then
    /// gives back the compact form, so that the budget ends holding the words alone. A budget
    /// one byte short of both forms refuses the words, and the table stays as it was.
    @Test func turningToWordsIsChargedFirst() throws {
        let compact = DecodedObjects.compactBytes(capacity: 5_000)
        let words = DecodedObjects.wordBytes(capacity: 5_000)
        #expect(compact == 20_016 && words == 40_016)
        for limit in [compact + words, compact + words - 1] {
            var weak: [WeakCounted] = []
            do {
                let objects = (0..<5_000).map(Counted.init)
                // Within no distance of the first object: the second turns the table to words.
                var table = DecodedObjects(reach: 0)
                var memory = MemoryBudget(limit: limit, source: "a test budget")
                try memory.charge(compact, for: "the compact table")
                table.reserveCapacity(objects.count)
                let error = archiveError {
                    for object in objects {
                        weak.append(WeakCounted(object: object))
                        try table.append(object, memory: &memory)
                    }
                }
                if limit == compact + words {
                    #expect(error == nil)
                    #expect(table.count == objects.count && memory.used == words)
                } else {
                    #expect(error?.code == .limitExceeded)
                    #expect(
                        error?.message
                            == "decoding needs more memory than a test budget allows: the table of 5000 objects in "
                            + "8-byte words, for object #1, which 4-byte entries cannot reach needs 39.1 KiB after "
                            + "19.5 KiB already committed"
                    )
                    #expect(table.count == 1 && table[0] === objects[0] && memory.used == compact)
                }
            }
            #expect(weak.allSatisfy { $0.object == nil })
        }
    }
}
