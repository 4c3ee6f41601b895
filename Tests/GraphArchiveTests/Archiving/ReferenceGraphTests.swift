// Tests/GraphArchiveTests/Archiving/ReferenceGraphTests.swift - the construction order of small reference graphs

import Testing

@testable import GraphArchive

/// The depth-first walk behind `ReferenceGraph.constructionOrder(roots:)` on graphs small enough
/// to order by hand: each node after the nodes its references lead to, the walk going back up
/// to nodes with references still to follow.
@Suite("Reference graph")
struct ReferenceGraphTests {
    /// A plain reference to `target`, or a back link.
    static func edge(_ target: Int, back: Bool = false) -> Int {
        ReferenceEdge.edge(to: target, isBackLink: back)
    }

    /// The construction order of the graph whose node `i` makes the references `references[i]`,
    /// from `roots`, or the cycle of plain references that has none.
    static func order(_ references: [[Int]], roots: [Int]) -> Result<[Int], UnmarkedCycle> {
        var edges = GrowableBuffer<Int>()
        var ranges: [Range<Int>] = []
        for node in references {
            let start = edges.count
            for reference in node { edges.append(reference) }
            ranges.append(start..<edges.count)
        }
        return edges.withView { view in
            let graph = ReferenceGraph(
                edges: view,
                edgeRange: ListedReferenceRanges(ranges: ranges),
                nodes: ReferenceGraphNodes(from: 0, count: references.count)
            )
            do throws(UnmarkedCycle) {
                return .success(try graph.constructionOrder(roots: roots).array)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Node 0 refers to 1 and 2, 1 to 3 and back to 0, 2 to 3: the walk comes back to 1 with
    /// its back link left and to 0 with 2 left, and resumes each where it stopped.
    @Test func walkResumesEachNodeWhereItStopped() throws {
        let references = [[Self.edge(1), Self.edge(2)], [Self.edge(3), Self.edge(0, back: true)], [Self.edge(3)], []]
        #expect(try Self.order(references, roots: [0, 1, 2, 3]).get() == [3, 1, 2, 0])
        #expect(try Self.order(references, roots: [2, 0, 1, 3]).get() == [3, 2, 1, 0])
    }

    /// A deep path, each node with a second reference to a leaf after the one that goes on:
    /// every node is resumed after its whole subtree, the leaf ordered once, from the deepest.
    @Test func deepPathResumesEveryNode() throws {
        let depth = 500
        var references = (0..<depth).map { [Self.edge($0 + 1), Self.edge(depth + 1)] }
        references.append([Self.edge(0, back: true)])  // node `depth`, back to the start
        references.append([])  // the leaf
        let order = try Self.order(references, roots: Array(0..<references.count)).get()
        #expect(order == [depth, depth + 1] + (0..<depth).reversed())
    }

    /// Plain references 0 → 1 → 2 → 0 have no order: the cycle is reported, each step with the
    /// edge it leaves by.
    @Test func plainCycleIsReported() {
        let references = [[Self.edge(1)], [Self.edge(3), Self.edge(2)], [Self.edge(0)], []]
        guard case .failure(let cycle) = Self.order(references, roots: [0, 1, 2, 3]) else {
            Issue.record("a cycle of plain references was ordered")
            return
        }
        #expect(cycle.steps.map(\.object) == [0, 1, 2])
        #expect(cycle.steps.map(\.edge) == [0, 2, 3])
    }
}
