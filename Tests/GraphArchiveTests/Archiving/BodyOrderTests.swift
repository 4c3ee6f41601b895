// Tests/GraphArchiveTests/Archiving/BodyOrderTests.swift - bodies written in the order their objects were met

import Foundation
import Testing

@testable import GraphArchive

@Suite("Body order")
struct BodyOrderTests {
    /// Bodies that meet one new object while none waits, two, one while another waits, and
    /// none: the objects are numbered breadth first, as met, and each body is written in that
    /// order, so that the tree is stored as the reverse of it (the order a tree whose references
    /// all point forward takes), and comes back whole.
    @Test func bodiesAreWrittenInTheOrderTheirObjectsWereMet() throws {
        let branches = [[1], [2, 3], [4], [], [5, 6], [7], [8], [], []]
        // Nodes without heirs: each body references only its children.
        let places = branches.indices.map(OwningNode.init(label:))
        for (place, targets) in zip(places, branches) { place.children = targets.map { places[$0] } }
        let data = try GraphArchiver.archivedData(withRootObject: places[0])
        let graph = try ArchiveGraph(data: data)
        var stored: [ArchiveValue?] = []
        try graph.forEachObject { stored.append($0["label"]) }
        #expect(stored == branches.indices.reversed().map { .integer(Int64($0)) })
        let back = try GraphUnarchiver.unarchivedObject(ofType: OwningNode.self, from: data)
        var pending = [back]
        var visited = 0
        while let copy = pending.popLast() {
            visited += 1
            #expect(copy.children.map(\.label) == branches[copy.label], "branches of \(copy.label)")
            pending += copy.children
        }
        #expect(visited == places.count)
    }
}
