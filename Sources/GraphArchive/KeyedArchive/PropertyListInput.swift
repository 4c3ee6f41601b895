// Sources/GraphArchive/KeyedArchive/PropertyListInput.swift - a keyed archive's bytes as a binary property list

/// The one door keyed-archive bytes go through: a binary property list is read where it lies,
/// an XML one is parsed into the binary form first (see ``XMLPropertyList``).
enum PropertyListInput {
    /// Runs `body` with a checked binary property list of `bytes`, binary or XML.
    ///
    /// Errors found after an XML input was converted would give offsets into its binary form,
    /// which the caller never sees; they lose the offset (XML syntax errors keep theirs, with
    /// the line).
    ///
    /// - Throws: What ``XMLPropertyList/binary(from:options:)`` and ``BPlist/scan(_:maximumObjectCount:)``
    ///   throw, and what `body` throws.
    static func withPropertyList<Result>(
        _ bytes: ArchiveBytes,
        options: GraphUnarchiver.Options,
        _ body: (BPlist) throws(GraphArchiveError) -> Result
    ) throws(GraphArchiveError) -> Result {
        let input = try binary(bytes, options: options)
        // `input.bytes` must outlive every reader made from it.
        return try withExtendedLifetime(input.bytes) { () throws(GraphArchiveError) -> Result in
            do throws(GraphArchiveError) {
                return try body(BPlist.scan(input.bytes.reader(), maximumObjectCount: options.maximumObjectCount))
            } catch {
                throw input.isXML ? withoutOffset(error) : error
            }
        }
    }

    /// `bytes` as binary property list bytes: themselves, or the binary form of an XML
    /// property list.
    static func binary(_ bytes: ArchiveBytes, options: GraphUnarchiver.Options) throws(GraphArchiveError)
        -> (bytes: ArchiveBytes, isXML: Bool)
    {
        guard isXML(bytes.copyBytes(0..<min(8, bytes.count))) else { return (bytes, false) }
        let binary = try withExtendedLifetime(bytes) { () throws(GraphArchiveError) -> ByteWriter in
            try XMLPropertyList.binary(from: bytes.reader(), options: options)
        }
        return (ArchiveBytes(copying: binary), true)
    }

    /// `error` without its offset, which points into the binary form made from XML.
    static func withoutOffset(_ error: GraphArchiveError) -> GraphArchiveError {
        var located = error
        located.offset = nil
        return located
    }

    /// Whether `bytes` start like an XML property list.
    static func isXML(_ bytes: some Collection<UInt8>) -> Bool {
        XMLPropertyList.hasPrefix(bytes.prefix(8))
    }
}
