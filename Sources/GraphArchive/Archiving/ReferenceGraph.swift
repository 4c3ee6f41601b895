// Sources/GraphArchive/Archiving/ReferenceGraph.swift - the order records are stored in (FORMAT.md §5.4)

/// The references the bodies of an archive being written make, and the construction order
/// they allow (FORMAT.md §5.4).
///
/// A reference is either plain or a back link: one the caller marked as possibly closing a
/// cycle (`encodeConditionalObject`, `encodeLater`), which the reader restores with
/// `decodeLater`. A plain reference must point back, to a record stored before the one holding
/// it, so that a plain `decode` finds its object built. A back link may point forward, and
/// does so only where it lies on a cycle: whatever order the graph was reached in, the result
/// is the same up to the order of independent parts.
///
/// A depth-first post-order of all references is such an order when every reference that
/// closes a cycle in it is a back link: the common case (a graph without cycles, or one reached
/// from its top), and the cheapest. Otherwise the order is that of the strongly connected
/// components of the whole graph, each after the components it refers to (Tarjan's algorithm,
/// so every reference between components points back), and inside a component a depth-first
/// post-order of its plain references alone. A cycle of plain references has no such order:
/// ``constructionOrder(roots:)`` reports it. Every walk keeps its own stack, so a chain of a
/// million objects needs no deep call stack.
struct ReferenceGraph<EdgeRanges: ReferenceRanges> {
    /// Each reference, `target << 1 | 1` for a back link and `target << 1` for a plain one.
    let edges: BufferView<Int>
    /// The references of each object: `edges[edgeRange[object]]`.
    let edgeRange: EdgeRanges
    /// The objects to order; references to others (conditional-only objects, bodies already
    /// placed) are ignored.
    let nodes: ReferenceGraphNodes

    /// The nodes reachable from `roots` (tried in that order), each after the nodes its plain
    /// references lead to.
    ///
    /// - Throws: ``UnmarkedCycle`` for a cycle of plain references.
    func constructionOrder(roots: some Collection<Int>) throws(UnmarkedCycle) -> GrowableBuffer<Int> {
        var progress = PlainStack<WalkProgress>(zeros: nodes.count)
        var frames = PlainStack<WalkFrame>()
        var order = GrowableBuffer<Int>(capacity: roots.count)
        let closesCycle = walkPostOrder(
            from: roots,
            following: { _, target in nodes[target] },
            progress: &progress,
            frames: &frames,
            into: &order
        )
        guard closesCycle != nil else { return order }
        return try orderByComponents(roots: roots)
    }

    /// ``constructionOrder(roots:)`` for a graph whose plain references close a cycle in the
    /// depth-first order of all references: component by component.
    private func orderByComponents(roots: some Collection<Int>) throws(UnmarkedCycle) -> GrowableBuffer<Int> {
        let count = nodes.count
        // Tarjan's algorithm: the visit number of each node (`none`: not yet), the lowest visit
        // number it reaches, and its component (`none` until its component is complete; a
        // visited node without one is on `open`). 32 bits, as the archiver's object indexes.
        let none = UInt32.max
        var number = [UInt32](repeating: none, count: count)
        var low = [UInt32](repeating: 0, count: count)
        var component = [UInt32](repeating: none, count: count)
        var open: [Int] = []
        var frames: [(object: Int, edge: Int)] = []
        var progress = PlainStack<WalkProgress>(zeros: count)
        var innerFrames = PlainStack<WalkFrame>()
        var order = GrowableBuffer<Int>(capacity: roots.count)
        var visits: UInt32 = 0
        var components: UInt32 = 0

        for root in roots where number[root] == none {
            number[root] = visits
            low[root] = visits
            visits += 1
            open.append(root)
            frames.append((root, edgeRange[root].lowerBound))
            while let frame = frames.last {
                let (object, edge) = frame
                if edge < edgeRange[object].upperBound {
                    frames[frames.count - 1].edge = edge + 1
                    let target = ReferenceEdge.target(of: edges[edge])
                    guard nodes[target] else { continue }
                    if number[target] == none {
                        number[target] = visits
                        low[target] = visits
                        visits += 1
                        open.append(target)
                        frames.append((target, edgeRange[target].lowerBound))
                    } else if component[target] == none {
                        low[object] = min(low[object], number[target])
                    }
                    continue
                }
                frames.removeLast()
                if let parent = frames.last {
                    low[parent.object] = min(low[parent.object], low[object])
                }
                guard low[object] == number[object] else { continue }
                // `object` and everything opened after it form a component, complete: its
                // members go in a post-order of their plain references to one another.
                var first = open.count - 1
                while open[first] != object { first -= 1 }
                let id = components
                for member in open[first...] { component[member] = id }
                if let cycle = walkPostOrder(
                    from: open[first...],
                    following: { reference, target in
                        !ReferenceEdge.isBackLink(reference) && nodes[target] && component[target] == id
                    },
                    progress: &progress,
                    frames: &innerFrames,
                    into: &order
                ) {
                    throw cycle
                }
                open.removeSubrange(first...)
                components += 1
            }
        }
        return order
    }

    /// Walks depth first from each of `starts` not visited yet, following the references
    /// `follows` accepts (given the reference and its target), and appends each node reached
    /// to `order` once every node it leads to is done: a post-order.
    ///
    /// - Returns: nil, or where it stopped: at a followed plain reference to a node still
    ///   being visited, the cycle that reference closes.
    @inline(__always)
    private func walkPostOrder(
        from starts: some Sequence<Int>,
        following follows: (_ reference: Int, _ target: Int) -> Bool,
        progress: inout PlainStack<WalkProgress>,
        frames: inout PlainStack<WalkFrame>,
        into order: inout GrowableBuffer<Int>
    ) -> UnmarkedCycle? {
        for start in starts where progress[start] == .unvisited {
            progress[start] = .visiting
            // The node being walked, its next reference and the end of its references are kept
            // here; `frames` holds the nodes it was reached through, each with the reference
            // after the one followed and its end (not looked up again on the way back).
            var object = start
            var (edge, end) = bounds(edgeRange[start])
            while true {
                guard edge < end else {
                    progress[object] = .done
                    order.append(object)
                    guard !frames.isEmpty else { break }
                    (object, edge, end) = frames.removeLast()
                    continue
                }
                let reference = edges[edge]
                edge += 1
                let target = ReferenceEdge.target(of: reference)
                guard follows(reference, target) else { continue }
                if progress[target] == .unvisited {
                    progress[target] = .visiting
                    frames.append((object, edge, end))
                    object = target
                    (edge, end) = bounds(edgeRange[target])
                } else if progress[target] == .visiting && !ReferenceEdge.isBackLink(reference) {
                    // Plain references lead from `target` to here and back: in this walk's
                    // order, this one would point forward.
                    frames.append((object, edge, end))
                    var first = frames.count - 1
                    while frames[first].object != target { first -= 1 }
                    return UnmarkedCycle(steps: (first..<frames.count).map { (frames[$0].object, frames[$0].edge - 1) })
                }
            }
        }
        return nil
    }
}

/// A node a depth-first walk goes back to: the node, the reference after the one followed
/// from it, and the end of its references.
private typealias WalkFrame = (object: Int, edge: Int, end: Int)

/// A range's bounds, read once.
@inline(__always)
private func bounds(_ range: Range<Int>) -> (Int, Int) {
    (range.lowerBound, range.upperBound)
}

/// How `ReferenceGraph` and the encoder hold one reference: `target << 1 | 1` for a back link,
/// `target << 1` for a plain one.
enum ReferenceEdge {
    @inline(__always)
    static func edge(to target: Int, isBackLink: Bool) -> Int {
        target << 1 | (isBackLink ? 1 : 0)
    }

    @inline(__always)
    static func target(of edge: Int) -> Int { edge >> 1 }

    @inline(__always)
    static func isBackLink(_ edge: Int) -> Bool { edge & 1 != 0 }
}

/// A cycle of plain references: each step is an object and the position in the graph's edges
/// of the reference leading to the next step's object (the last step's leads to the first's).
struct UnmarkedCycle: Error {
    var steps: [(object: Int, edge: Int)]
}

/// Where each object's references lie in a `ReferenceGraph`'s edges.
protocol ReferenceRanges {
    subscript(object: Int) -> Range<Int> { get }
}

/// Each object's references as a range of its own (bodies written in any order).
struct ListedReferenceRanges: ReferenceRanges {
    let ranges: [Range<Int>]

    @inline(__always)
    subscript(object: Int) -> Range<Int> { ranges[object] }
}

/// The references of bodies written in index order (body `i` object `i`'s), as
/// `EncodingState.edgeRange(ofBody:)` gives them, read where they are recorded rather than
/// copied into a table of ranges (16 bytes an object): from `starts` when those are recorded,
/// each ending where the next starts (the last at `edgeCount`), else one reference each
/// (none when there are none).
struct WrittenReferenceRanges: ReferenceRanges {
    let starts: BufferView<Int>
    let objects: Int
    let edgeCount: Int

    @inline(__always)
    subscript(object: Int) -> Range<Int> {
        let next = object &+ 1
        guard starts.isEmpty else { return starts[object]..<(next < starts.count ? starts[next] : edgeCount) }
        guard edgeCount > 0 else { return 0..<0 }
        return object..<(next < objects ? next : edgeCount)
    }
}

/// Which objects a `ReferenceGraph` orders: those from `first` on, all of them or those
/// `listed` marks.
struct ReferenceGraphNodes {
    private let first: Int
    private let listed: [Bool]?
    let count: Int

    /// The objects `listed` marks, of `listed.count`.
    init(listed: [Bool]) {
        first = 0
        self.listed = listed
        count = listed.count
    }

    /// Objects `first..<count`.
    init(from first: Int, count: Int) {
        self.first = first
        listed = nil
        self.count = count
    }

    @inline(__always)
    subscript(object: Int) -> Bool {
        guard let listed else { return object >= first }
        return listed[object]
    }
}

/// A node's progress in a depth-first walk (zero bytes: unvisited).
private struct WalkProgress: Equatable {
    private let value: UInt8
    static let unvisited = WalkProgress(value: 0)
    static let visiting = WalkProgress(value: 1)
    static let done = WalkProgress(value: 2)
}
