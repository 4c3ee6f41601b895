// Sources/GraphArchive/Files/GraphUnarchiver+AnyArchiveFile.swift - reading a file in whichever format it is

extension ArchiveKind {
    /// The format the file at `path` starts like, from its first eight bytes.
    ///
    /// - Throws: `.fileNotFound`, or `.ioError` when the file cannot be read or is not a
    ///   regular file (a folder, a named pipe, a device): a read that fails is reported as the
    ///   failure it is, never as a file of an unknown format.
    public static func detect(fileAt path: String) throws -> ArchiveKind {
        try ArchiveFile(path: path, maximumBytes: Int.max).kind()
    }
}

extension GraphUnarchiver {
    /// Decodes the root value of the archive at `path`, a gridstore archive or an NSKeyedArchiver
    /// one (told apart by its first bytes, through one open file), as `type`.
    ///
    /// - Throws: `.fileNotFound` if there is no file at `path`, `.ioError` if it cannot be read
    ///   or is not a regular file, and what ``unarchivedObject(ofType:fromFile:registry:options:)``
    ///   or ``unarchivedObject(ofType:fromKeyedArchiveFile:registry:valueTypes:options:)`` throw.
    public static func unarchivedObject<T: GraphValue>(
        ofType type: T.Type,
        fromAnyArchiveFile path: String,
        registry: GraphTypeRegistry = GraphTypeRegistry(),
        valueTypes: [any GraphCoding.Type] = [],
        options: Options = Options()
    ) throws -> T {
        let unarchiver = try GraphUnarchiver(
            contentsOfAnyArchiveFile: path,
            registry: registry.including(T.self),
            valueTypes: valueTypes + rootValueType(T.self),
            options: options,
            root: RootRequest(T.self)
        )
        return try unarchiver.decodeRoot(T.self)
    }

    /// What the archive at `path` holds, a gridstore archive or an NSKeyedArchiver one, read
    /// through one open file; see ``archiveInfo(from:options:)-(Data,_)`` and
    /// ``KeyedArchive/archiveInfo(fromKeyedArchive:options:)-(Data,_)``. A keyed archive carries no
    /// checksum: its ``ArchiveInfo/checksumVerified`` is false, and its whole structure was
    /// checked instead.
    public static func archiveInfo(fromAnyArchiveFile path: String, options: Options = Options()) throws -> ArchiveInfo
    {
        let file = try ArchiveFile(path: path, maximumBytes: options.maximumArchiveBytes)
        guard try file.kind() == .keyedArchive else {
            return try archiveInfo(loaded: LoadedArchive.load(file: file, options: options), options: options)
        }
        var memory = MemoryBudget(options)
        let bytes = try file.readPropertyList(maximumObjectCount: options.maximumObjectCount, memory: &memory)
        return try keyedInfo(bytes, options: options, memory: memory)
    }

    /// Checks every byte of the archive at `path`, a gridstore archive or an NSKeyedArchiver
    /// one, read through one open file; see ``verify(_:options:)-(Data,_)``. A keyed archive's trailer,
    /// offset table, objects and UID references are checked (it has no checksum).
    public static func verify(anyArchiveFile path: String, options: Options = Options()) throws -> ArchiveInfo {
        let file = try ArchiveFile(path: path, maximumBytes: options.maximumArchiveBytes)
        guard try file.kind() == .keyedArchive else {
            return try verify(loaded: LoadedArchive.load(file: file, options: options), options: options)
        }
        var memory = MemoryBudget(options)
        let bytes = try file.readPropertyList(maximumObjectCount: options.maximumObjectCount, memory: &memory)
        return try keyedInfo(bytes, options: options, memory: memory)
    }

    private static func keyedInfo(_ bytes: ArchiveBytes, options: Options, memory: MemoryBudget)
        throws(GraphArchiveError) -> ArchiveInfo
    {
        var info = try KeyedArchive.archiveInfo(bytes: bytes, options: options, memory: memory)
        info.checksumVerified = false
        return info
    }
}
