// Sources/GraphArchive/ArchiveGraph/ArchiveGraph+Output.swift - an archive graph as JSON, as a tree, as counts

extension ArchiveGraph {
    /// The format in words: "gridstore archive (format 1.0, zstd)" or "keyed archive
    /// (NSKeyedArchiver 100000, XML property list)".
    public var formatDescription: String {
        switch source {
        case .native(let native):
            let header = native.loaded.header
            let compression = header.flags.contains(.zstdPayload) ? "zstd" : "uncompressed"
            return "gridstore archive (format \(header.majorVersion).\(header.minorVersion), \(compression))"
        case .keyed(let keyed):
            let form = keyed.isXML ? "XML" : "binary"
            return
                "keyed archive (\(KeyedArchiveIndex.archiverName) \(KeyedArchiveIndex.version), \(form) property list)"
        case .moving:
            return "archive"
        }
    }

    /// The class name of object `id`.
    ///
    /// - Throws: `.badObjectReference` if the graph has no object `id`.
    public func className(ofObject id: Int) throws -> String {
        try classes[classIndex(ofObject: id)].name
    }

    /// One more than the largest object id.
    var objectIDLimit: Int {
        switch source {
        case .native(let native): native.objectCount
        case .keyed(let keyed): keyed.index.entryCount
        case .moving: 0
        }
    }

    // MARK: - JSON

    /// Writes the whole graph as one JSON document, handing it to `output` in pieces of about
    /// `chunkSize` bytes as it is made: the top level, then every object once.
    ///
    /// The document is `{"format": …, "top": {KEY: VALUE, …}, "objects": [{"id": ID,
    /// "class": NAME, "classes": [NAME, …], "fields": {KEY: VALUE, …}}, …]}`; docs/CLI.md
    /// documents every value form. Only a dictionary being written is held whole (its form
    /// depends on all its keys), so memory stays bounded whatever the archive's size.
    ///
    /// - Throws: What `output` throws, and ``GraphArchiveError`` for damage found on the way
    ///   (the output then ends early).
    public func writeJSON(chunkSize: Int = 1 << 16, to output: @escaping ([UInt8]) throws -> Void) throws {
        var writer = GraphJSONWriter(classes: classes, chunkSize: chunkSize, output: output)
        var budget = walkBudget()
        do {
            writer.beginDocument(format: format)
            for position in topLevelKeys.indices { try walkTopEntry(position, &writer, budget: &budget) }
            try writer.beginObjects()
            try walkObjects(&writer, budget: &budget)
            try writer.endDocument()
        } catch {
            throw writer.outputError ?? error
        }
    }

    /// The whole graph as one JSON document (see ``writeJSON(chunkSize:to:)``).
    public func jsonData() throws -> [UInt8] {
        var document: [UInt8] = []
        try writeJSON { document.append(contentsOf: $0) }
        return document
    }

    // MARK: - Tree

    /// Writes the graph as an indented tree for people, like `plutil -p` with references
    /// followed: each object in full where it is first reached from the top level, later
    /// references as `→ #ID Class`, references back to an object being printed as
    /// `↻ #ID Class (cycle)`; objects the top level does not reach come last.
    ///
    /// - Parameters:
    ///   - maximumDepth: Levels of nesting shown (containers and objects); deeper ones show as
    ///     `{…}` or `[… N items]`. Default: all.
    ///   - chunkSize: About how many bytes `output` receives at a time.
    ///   - output: Receives the text, UTF-8, in order.
    /// - Throws: What `output` throws, and ``GraphArchiveError`` for damage found on the way.
    public func writeTree(
        maximumDepth: Int? = nil,
        chunkSize: Int = 1 << 16,
        to output: @escaping ([UInt8]) throws -> Void
    ) throws {
        var writer = GraphTreeWriter(graph: self, maximumDepth: maximumDepth, chunkSize: chunkSize, output: output)
        try writer.write()
    }

    // MARK: - Summary

    /// Counts the graph's objects by class and its values by kind (one walk over everything).
    public func summary() throws -> ArchiveSummary {
        var counter = SummaryCounter(classCount: classes.count)
        var budget = walkBudget()
        for position in topLevelKeys.indices { try walkTopEntry(position, &counter, budget: &budget) }
        try walkObjects(&counter, budget: &budget)
        let classCounts = classes.indices.filter { counter.objects[$0] > 0 }.map { index in
            ArchiveSummary.ClassCount(
                className: classes[index].name,
                classChain: classes[index].chain,
                objects: counter.objects[index],
                bytes: counter.bytes[index]
            )
        }
        return ArchiveSummary(
            format: format,
            formatDescription: formatDescription,
            archiveBytes: archiveBytes,
            topLevelKeys: topLevelKeys,
            objectCount: objectCount,
            classes: classCounts.sorted { ($0.objects, $1.className) > ($1.objects, $0.className) },
            values: SummaryCounter.kinds.indices.filter { counter.counts[$0] > 0 }.map {
                ArchiveSummary.ValueCount(
                    kind: SummaryCounter.kinds[$0],
                    count: counter.counts[$0],
                    bytes: counter.sizes[$0]
                )
            }
        )
    }
}
