// Sources/GraphArchive/Unarchiving/DecodingState+Describing.swift - what a stored value is, in words, for errors

extension DecodingState {
    /// The value at `offset` in words, naming the classes of the objects it refers to: "String",
    /// "a Note object (#3)", "an array of 4 Note objects", "an array of 5 objects (Note,
    /// Checklist)", "a Point value"; nil where no value starts there.
    func describeValue(at offset: Int) -> String? {
        guard offset >= 0 && offset < reader.end else { return nil }
        var walker = reader
        walker.offset = offset
        guard let tag = try? walker.readByte() else { return nil }
        switch tag {
        case ValueTag.objectReference:
            guard let index = try? walker.readVarint(), index < UInt64(objectCount) else {
                return ValueTag.describe(tag)
            }
            return describeObject(Int(index))
        case ValueTag.referenceArray:
            guard let count = try? walker.readCount() else { return ValueTag.describe(tag) }
            var indexes: [Int] = []
            var previous = -1
            for _ in 0..<min(count, Self.describedReferences) {
                guard let index = try? ValueScanner.nextReferenceIndex(&walker, previous: previous),
                    index < objectCount
                else { break }
                indexes.append(index)
                previous = index
            }
            let names = objectTypeNames(of: indexes)
            var classes: [String] = []
            for index in indexes {
                if let name = names[index], !classes.contains(name) { classes.append(name) }
            }
            let objects = count == 1 ? "object" : "objects"
            switch classes.count {
            case 0: return "an array of \(count) \(objects)"
            case 1 where count == indexes.count: return "an array of \(count) \(classes[0]) \(objects)"
            default:
                let more = count > indexes.count ? ", …" : ""
                return "an array of \(count) \(objects) (\(classes.joined(separator: ", "))\(more))"
            }
        case ValueTag.array:
            guard let count = try? walker.readCount() else { return ValueTag.describe(tag) }
            return "an array of \(count) \(count == 1 ? "value" : "values")"
        case ValueTag.valueRecord:
            guard let shape = try? scanner.readShape(&walker) else { return ValueTag.describe(tag) }
            let name = tables.typeNames[tables.shapeType[shape]]
            return "\(withIndefiniteArticle(name)) value"
        default:
            return ValueTag.describe(tag)
        }
    }

    /// Object `index` in words: "an OutlineNote object (#3)", or "object #3" if its record
    /// cannot be found.
    func describeObject(_ index: Int) -> String {
        guard let name = objectTypeNames(of: [index])[index] else { return "object #\(index)" }
        return "\(withIndefiniteArticle(name)) object (#\(index))"
    }

    /// Whether the value at `offset` is an object or an array of objects itself (not a value
    /// that holds some).
    func holdsObjects(at offset: Int) -> Bool {
        guard offset >= 0 && offset < reader.end else { return false }
        var walker = reader
        walker.offset = offset
        let tag = try? walker.peekByte()
        return tag == ValueTag.objectReference || tag == ValueTag.referenceArray
    }

    /// The elements of a reference array whose classes an error names at most.
    private static let describedReferences = 16

    /// The archived type name of each object of `indexes`: from the class table for objects
    /// built, else read from its record. Error paths only: it walks the object table from its
    /// start.
    func objectTypeNames(of indexes: [Int]) -> [Int: String] {
        var names: [Int: String] = [:]
        for index in indexes where index >= 0 && index < objects.count {
            names[index] = tables.typeNames[objectClasses.typeID(of: index)]
        }
        let wanted = Set(indexes.filter { names[$0] == nil })
        guard objectSectionStart >= 0, !objectInputDiscarded, let last = wanted.max(),
            last < min(objectCount, recordsRead)
        else { return names }
        var walker = reader
        walker.offset = objectSectionStart
        for index in 0...last {
            let start = walker.offset
            guard let shape = try? scanner.readShape(&walker) else { break }
            if wanted.contains(index) { names[index] = tables.typeNames[tables.shapeType[shape]] }
            walker.offset = start
            guard (try? scanner.skipRecord(&walker, depth: 0)) != nil else { break }
        }
        return names
    }
}
