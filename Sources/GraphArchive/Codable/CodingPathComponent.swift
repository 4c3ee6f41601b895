// Sources/GraphArchive/Codable/CodingPathComponent.swift - coding paths, built only when asked for

/// One step of a Codable coding path as the bridge keeps it: an array position stays an `Int`
/// and becomes a `CodingKey` only when a path is needed (`codingPath`, an error), so the
/// million-element hot path never formats "Index 12".
enum CodingPathComponent {
    /// Adds no step: the root value, or the value of a single-value container.
    case none
    case key(any CodingKey)
    case index(Int)

    var codingKey: (any CodingKey)? {
        switch self {
        case .none: nil
        case .key(let key): key
        case .index(let index): GraphArchiveCodingKey(index: index)
        }
    }
}

/// A container frame that knows its parent frame and its own step, so a coding path is a walk
/// up the frame array.
protocol CodingPathNode {
    /// Index of the enclosing frame, or -1 at the root.
    var parent: Int { get }
    var key: CodingPathComponent { get }
}

extension ContiguousArray where Element: CodingPathNode {
    /// The coding path of frame `index` (empty for -1, the root).
    func codingPath(to index: Int) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var walk = index
        while walk >= 0 && walk < count {
            if let key = self[walk].key.codingKey { keys.append(key) }
            walk = self[walk].parent
        }
        return keys.reversed()
    }

    /// The coding path of frame `index` followed by `key`.
    func codingPath(to index: Int, appending key: any CodingKey) -> [any CodingKey] {
        codingPath(to: index) + [key]
    }
}

/// The keys the bridge makes itself: array positions (as `JSONEncoder` names them) and "super".
struct GraphArchiveCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    /// The key of `superEncoder()` / `superDecoder()`.
    static let superKey = GraphArchiveCodingKey(stringValue: "super")
}
