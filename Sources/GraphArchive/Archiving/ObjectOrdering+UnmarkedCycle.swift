// Sources/GraphArchive/Archiving/ObjectOrdering+UnmarkedCycle.swift - naming a cycle of plain references

extension ObjectOrdering {
    /// The error for a cycle of plain references: each step as the class and key it goes
    /// through (`Note.children → Note.parent → the first Note`), read back from the bodies.
    static func unmarkedCycleError(
        _ cycle: UnmarkedCycle,
        in graph: ReferenceGraph<some ReferenceRanges>,
        state: borrowing EncodingState,
        objects: borrowing ByteWriter,
        bodyStart: [Int]
    ) -> GraphArchiveError {
        let scanner = ValueScanner(
            shapeValueCounts: state.shapes.map(\.keyIDs.count),
            objectCount: Int.max,
            maximumDepth: Int.max
        )
        var steps: [(type: String, key: String)] = []
        for (object, edge) in cycle.steps {
            let place = objects.withReader { (reader: inout ByteReader) in
                reader.offset = bodyStart[object]
                return try? ReferenceLocator(scanner: scanner)
                    .locate(edge - graph.edgeRange[object].lowerBound, inRecord: &reader)
            }
            let type = place.map { state.types[state.shapes[$0.shape].typeID].name } ?? "object"
            let key = place.map { state.keys[state.shapes[$0.shape].keyIDs[$0.value]] } ?? "?"
            steps.append((type, key))
        }
        let first = steps[0].type
        var shown = steps.map { "\($0.type).\($0.key)" }
        if shown.count > maximumStepsShown {
            let left = shown.count - maximumStepsShown + 1
            shown[(maximumStepsShown / 2)..<(shown.count - maximumStepsShown / 2 + 1)] = [
                "… \(left) more references …"
            ]
        }
        let path =
            shown.joined(separator: " → ") + (steps.count == 1 ? " → the same \(first)" : " → the first \(first)")
        return GraphArchiveError(
            .unresolvedCycle,
            "the objects refer to one another in a cycle of plain references (\(path)), which no "
                + "construction order can hold: mark the back link (\(steps.last!.type).\(steps.last!.key) or another "
                + "reference on the cycle) by encoding it with encodeConditionalObject(_:forKey:) or "
                + "encodeLater(_:forKey:), and decode it with decodeLater(_:forKey:assign:)",
            keyPath: [steps[0].type, steps[0].key]
        )
    }

    /// The most steps of a cycle an error spells out; a longer one shows its ends.
    private static let maximumStepsShown = 7

    /// Finds which value of a record holds its n-th reference (references in the order they
    /// are stored, those inside arrays, dictionaries and nested records included).
    struct ReferenceLocator {
        let scanner: ValueScanner

        /// The record's shape and the position in it of the value holding reference `number`.
        func locate(_ number: Int, inRecord reader: inout ByteReader) throws(GraphArchiveError) -> (
            shape: Int, value: Int
        )? {
            let shape = try scanner.readShape(&reader)
            var left = number
            for value in 0..<scanner.shapeValueCounts[shape] {
                var references = 0
                try scanner.skipValue(&reader, countingReferencesInto: &references)
                if left < references { return (shape, value) }
                left -= references
            }
            return nil
        }
    }
}
