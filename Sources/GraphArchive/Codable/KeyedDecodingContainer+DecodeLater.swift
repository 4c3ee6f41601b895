// Sources/GraphArchive/Codable/KeyedDecodingContainer+DecodeLater.swift - the decode half of the Codable bridge's cycle opt-in

extension KeyedDecodingContainer {
    /// Decodes the value for `key` as `type` once the root value is decoded, then passes it to
    /// `assign`: the way an `init(from:)` restores a reference that closes a cycle (a parent
    /// link, a back link, a reference to itself), written with
    /// ``Swift/KeyedEncodingContainer/encodeLater(_:forKey:)``.
    ///
    /// ```swift
    /// init(from decoder: any Decoder) throws {
    ///     let container = try decoder.container(keyedBy: CodingKeys.self)
    ///     name = try container.decode(String.self, forKey: .name)
    ///     try container.decodeLater(Node?.self, forKey: .parent) { [unowned self] in self.parent = $0 }
    /// }
    /// ```
    ///
    /// Only ``GraphArchiveDecoder`` supports this call. The assignments run in the order they
    /// were asked for, after the root value is decoded and before
    /// ``GraphArchiveDecoder/decode(_:from:)-(_,Data)`` returns, the way
    /// ``GraphUnarchiver/decodeLater(_:forKey:assign:)`` runs them after the last object. By
    /// then every object the root value reaches through plain `decode` calls exists, and the
    /// value is decoded as usual, so a reference returns the one instance (`===`). An object
    /// reached only through deferred values is built when the first of them is decoded, and the
    /// assignments its own initializer asks for run after those already waiting, so a list
    /// linked both ways through `decodeLater` is built in a loop whatever its length.
    ///
    /// - Parameters:
    ///   - type: The type to decode, typically an optional class (`Node?.self`); any `Decodable`
    ///     type works (`[Node].self` for an array of back references).
    ///   - key: The key the value is stored under.
    ///   - assign: Receives the value; typically `{ [unowned self] in self.parent = $0 }`. What it
    ///     throws is thrown by `decode` unchanged.
    /// - Throws: `DecodingError.keyNotFound` now if the key is absent, and
    ///   `DecodingError.dataCorrupted` from any other decoder (`JSONDecoder` has no way to run
    ///   the assignment later). Errors decoding the value (`typeMismatch` for an object of
    ///   another class, `valueNotFound` for nil where `type` is not optional, `dataCorrupted`)
    ///   are thrown by `decode`, with this key's coding path, when the assignment runs.
    public func decodeLater<T: Decodable>(
        _ type: T.Type,
        forKey key: Key,
        assign: @escaping (T) throws -> Void
    ) throws {
        let place = try superDecoder(forKey: key)
        guard let place = place as? CodableSuperDecoder else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [key],
                    debugDescription: """
                        decodeLater(_:forKey:assign:) needs GraphArchiveDecoder, which runs the assignment \
                        once every object exists; \(Swift.type(of: place)) cannot (use decode(_:forKey:))
                        """
                )
            )
        }
        try place.decoder.decodeLater(type, at: place, assign: assign)
    }
}
