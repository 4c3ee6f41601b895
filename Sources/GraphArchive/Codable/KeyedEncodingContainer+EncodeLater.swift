// Sources/GraphArchive/Codable/KeyedEncodingContainer+EncodeLater.swift - the encode half of the Codable bridge's cycle opt-in

extension KeyedEncodingContainer {
    /// Encodes `value` for `key` so that the object references in it may close reference
    /// cycles: a parent link, the back link of a doubly linked list, an object that refers to
    /// itself. Decode it with ``Swift/KeyedDecodingContainer/decodeLater(_:forKey:assign:)``.
    ///
    /// ```swift
    /// final class Node: Codable {
    ///     var children: [Node] = []
    ///     weak var parent: Node?
    ///
    ///     func encode(to encoder: any Encoder) throws {
    ///         var container = encoder.container(keyedBy: CodingKeys.self)
    ///         try container.encode(children, forKey: .children)
    ///         try container.encodeLater(parent, forKey: .parent)
    ///     }
    ///
    ///     init(from decoder: any Decoder) throws {
    ///         let container = try decoder.container(keyedBy: CodingKeys.self)
    ///         children = try container.decode([Node].self, forKey: .children)
    ///         try container.decodeLater(Node?.self, forKey: .parent) { [unowned self] in self.parent = $0 }
    ///     }
    /// }
    /// ```
    ///
    /// Only ``GraphArchiveEncoder`` supports this call. `value` is written in place like
    /// `encode(_:forKey:)` writes it (nil as a stored nil), except for the class instances in it
    /// (in it directly, or inside its arrays, optionals and structs, but not inside the bodies
    /// of those instances):
    /// - An instance whose `encode(to:)` is still running (the object being encoded, or one
    ///   that encloses it) is referred to, where a plain `encode` throws. The reference points
    ///   forward in the archive, as cycle-closing references do (FORMAT.md §5.4, §7).
    /// - An instance met for the first time is referred to the same way, and its body is
    ///   written after the root value, not here. Linking a list's nodes both ways through
    ///   `encodeLater` therefore encodes (and, with `decodeLater`, decodes) any length in a
    ///   loop, where nodes linked by plain `encode` nest one level per node and stop at
    ///   ``GraphArchiver/Options/maximumDepth``.
    /// - An instance already written is referred to as usual.
    ///
    /// The archive stays an ordinary one: ``GraphUnarchiver`` reads it with its own
    /// ``GraphUnarchiver/decodeLater(_:forKey:assign:)`` (FORMAT.md §11.4, §11.5).
    ///
    /// - Throws: `EncodingError.invalidValue` from any other encoder (`JSONEncoder` would
    ///   recurse forever on a cycle); what encoding `value` throws.
    public mutating func encodeLater<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encode(CodableLaterValue(value: value), forKey: key)
    }
}

/// The value of an `encodeLater` call, as its container receives it: the bridge recognizes the
/// type (kind `.later`) and writes `value` in place; any other encoder asks it to encode
/// itself, which throws.
struct CodableLaterValue<Value: Encodable>: Encodable, CodableLaterEncodable {
    let value: Value

    func encodeWrapped(to encoder: CodableEncoder, key: CodingPathComponent) throws {
        try encoder.encodeLater(value, key: key)
    }

    func encode(to encoder: any Encoder) throws {
        throw EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: encoder.codingPath,
                debugDescription: """
                    encodeLater(_:forKey:) needs GraphArchiveEncoder, which writes the references it \
                    allows to close cycles; \(type(of: encoder)) would recurse on a cycle (use encode(_:forKey:))
                    """
            )
        )
    }
}

/// `CodableLaterValue` of any value type, for the bridge's kind lookup.
protocol CodableLaterEncodable {
    func encodeWrapped(to encoder: CodableEncoder, key: CodingPathComponent) throws
}
