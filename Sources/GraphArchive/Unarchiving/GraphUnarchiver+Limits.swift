// Sources/GraphArchive/Unarchiving/GraphUnarchiver+Limits.swift - the length and count limits every reader checks

extension GraphUnarchiver.Options {
    /// Checks the length of `what` (a string, a byte string, a name) against
    /// ``maximumStringLength``.
    ///
    /// - Throws: `.limitExceeded` at `offset`, with the key path `keyPath` gives.
    @inline(__always)
    func checkStringLength(
        _ length: Int,
        of what: String,
        at offset: Int,
        keyPath: () -> [String] = { [] }
    ) throws(GraphArchiveError) {
        guard length <= maximumStringLength else {
            throw limitExceeded(
                "\(what) of \(length) bytes exceeds maximumStringLength (\(maximumStringLength))",
                at: offset,
                keyPath: keyPath()
            )
        }
    }

    /// Checks a collection's count against ``maximumCollectionCount``.
    ///
    /// - Throws: `.limitExceeded` at `offset`, with the key path `keyPath` gives.
    @inline(__always)
    func checkCollectionCount(
        _ count: Int,
        at offset: Int,
        keyPath: () -> [String] = { [] }
    ) throws(GraphArchiveError) {
        guard count <= maximumCollectionCount else {
            throw limitExceeded(
                "collection of \(count) elements exceeds maximumCollectionCount (\(maximumCollectionCount))",
                at: offset,
                keyPath: keyPath()
            )
        }
    }

    @inline(never)
    private func limitExceeded(_ message: String, at offset: Int, keyPath: [String]) -> GraphArchiveError {
        GraphArchiveError(.limitExceeded, message, offset: offset, keyPath: keyPath)
    }
}
