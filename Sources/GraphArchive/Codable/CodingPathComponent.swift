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

/// Where a frame's value sits in its parent, as a frame stores it for coding paths: an element
/// index, or a key by position (for the decoder, the key's position in the parent's record; for
/// the encoder, its place in the encoder's stack of keys), named only when a path is asked for.
/// Two integers instead of a `CodingKey` existential keep the frames plain values.
struct CodingPathStep {
    enum Kind: UInt8 { case none, index, key }
    var kind: Kind
    var value: Int

    static let none = CodingPathStep(kind: .none, value: 0)
    static func index(_ index: Int) -> CodingPathStep { CodingPathStep(kind: .index, value: index) }
    static func key(at position: Int) -> CodingPathStep { CodingPathStep(kind: .key, value: position) }
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
