// Tests/GraphArchiveTests/Unarchiving/WaitingQueuesTests.swift - the table of queues of deferred assignments

import Testing

@testable import GraphArchive

@Suite("Waiting queues")
struct WaitingQueuesTests {
    /// Inserts, updates and removes at random, clustered keys included, against a dictionary:
    /// every key stays findable through growth and the shifts that removal makes.
    @Test func matchesADictionaryThroughGrowthAndRemoval() {
        var table = WaitingQueues()
        var model: [Int: (first: Int32, last: Int32)] = [:]
        var random = SystemRandomNumberGenerator()
        for step in 0..<20_000 {
            // Keys from a small range, so that probes collide and removals shift entries.
            let key = step % 3 == 0 ? Int.random(in: 0..<64, using: &random) : Int.random(in: 0..<2_000, using: &random)
            let slot = Int32(step)
            if let position = table.position(of: key) {
                // Read before `#expect`, whose macro takes only copyable subjects.
                let (first, last) = (table.first(at: position), table.last(at: position))
                #expect(model[key]?.first == first && model[key]?.last == last)
                if Bool.random(using: &random) {
                    table.remove(at: position)
                    model[key] = nil
                } else {
                    table.setLast(slot, at: position)
                    model[key]?.last = slot
                }
            } else {
                #expect(model[key] == nil)
                table.insert(key, first: slot)
                model[key] = (slot, slot)
            }
            let isEmpty = table.isEmpty
            #expect(isEmpty == model.isEmpty)
        }
        for (key, ends) in model {
            let position = table.position(of: key)
            let first = position.map { table.first(at: $0) }
            let last = position.map { table.last(at: $0) }
            #expect(first == ends.first && last == ends.last)
        }
        for key in model.keys { table.remove(at: table.position(of: key)!) }
        let (isEmpty, position) = (table.isEmpty, table.position(of: 5))
        #expect(isEmpty)
        #expect(position == nil)
    }
}
