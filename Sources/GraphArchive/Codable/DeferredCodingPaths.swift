// Sources/GraphArchive/Codable/DeferredCodingPaths.swift - coding paths of work done after the value that asked for it

/// The coding paths of work the bridge does after the value that asked for it has finished:
/// the bodies of objects first met through `encodeLater(_:forKey:)`, and the assignments of
/// `decodeLater(_:forKey:assign:)`.
///
/// Such work runs with no frames of the value that asked for it left, so each entry keeps the
/// path from where its asker's own work began (the root value, or an earlier entry) to the
/// key it was asked for under. A full path is that chain joined, built only when asked for: a
/// linked list of a million nodes, each queued by the one before, stores one short path per
/// node rather than a million paths of up to a million keys.
struct DeferredCodingPaths {
    /// Per entry: the entry whose work was running when it was added (-1: the root value).
    private var origins: [Int] = []
    /// Per entry: the path from the start of that work to the key it was asked for under.
    private var localPaths: [[any CodingKey]] = []
    /// The entry whose work is running, or -1 while the root value is coded.
    var current = -1

    var count: Int { origins.count }

    /// Adds an entry asked for at `localPath` within the current work; returns its number.
    mutating func add(_ localPath: [any CodingKey]) -> Int {
        origins.append(current)
        localPaths.append(localPath)
        return origins.count - 1
    }

    /// The full coding path of entry `entry`, from the root value.
    func path(of entry: Int) -> [any CodingKey] {
        var chain: [Int] = []
        var walk = entry
        while walk >= 0 {
            chain.append(walk)
            walk = origins[walk]
        }
        return chain.reversed().flatMap { localPaths[$0] }
    }

    /// The path that precedes the frames of the running work: empty for the root value.
    var prefix: [any CodingKey] {
        current < 0 ? [] : path(of: current)
    }
}
