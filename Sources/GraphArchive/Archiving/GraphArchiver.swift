// Sources/GraphArchive/Archiving/GraphArchiver.swift - writes object graphs (the NSKeyedArchiver equivalent)

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes an object graph into a gridstore archive: GraphArchive's `NSKeyedArchiver`.
///
/// Use the one-call forms for a single root, or encode several top-level values by key:
///
/// ```swift
/// try GraphArchiver.archiveRootObject(states, toFile: path)        // root key "root"
///
/// let archiver = GraphArchiver()
/// try archiver.encode(fourLines, forKey: "Data")
/// try archiver.finishEncoding()
/// let data = try archiver.encodedData
/// ```
///
/// Each class instance is written once however often it is referenced; references are
/// numbered by identity (`===`), so equal but distinct instances stay distinct. Object bodies
/// are written one after another from a queue, never by recursion, so a chain of a million
/// objects needs no deep stack. An archiver is single-use and not thread-safe.
public final class GraphArchiver {
    /// Settings for writing.
    public struct Options: Sendable {
        /// How the payload is compressed. Default: ``ArchiveCompression/none``.
        public var compression: ArchiveCompression = .none
        /// Deepest nesting of values (structs, arrays, dictionaries) inside one object; deeper
        /// values throw instead of overflowing the stack. Objects do not count: they are written
        /// from a queue. Default: 512.
        public var maximumDepth: Int = 512
        /// zstd worker threads that compress a payload of more than one object block (about
        /// 2 MiB of records) while the encoder goes on, or nil to let the archiver choose:
        /// none for a save, which holds one block at a time; for an archive made in memory,
        /// one on a machine with two cores and two on more. Each worker holds a few MiB of
        /// input and output. 0 compresses beside the encoder on one thread, which writes a
        /// slightly smaller archive (each column starts a zstd block of its own); the bytes
        /// differ between 0 and any number of workers, never between runs of one setting.
        /// Ignored without compression, and where libzstd was built without threads.
        public var zstdWorkers: Int?

        public init() {}

        public init(compression: ArchiveCompression) {
            self.compression = compression
        }
    }

    /// The root key of ``archivedData(withRootObject:options:)``, as in `NSKeyedArchiver`.
    public static let rootKey = "root"

    public let options: Options
    /// Usable from inline for the inlinable `encode` forms (see `encode(_:forKey:)` for `Int`).
    @usableFromInline let storage: UncheckedStateBox<EncodingState>
    private var output: ArchiveOutput?
    /// The first error a nested value's encoding threw, kept for `finishEncoding`'s message: a
    /// caller that caught it and encoded on left the archiver inside that value.
    private var nestedValueError: (any Error)?

    /// The encoding state, addressed in place (see `UncheckedStateBox` for why).
    var state: EncodingState {
        _read { yield storage.value }
        _modify { yield &storage.value }
    }

    public init(options: Options = Options()) {
        self.options = options
        self.storage = UncheckedStateBox(EncodingState(maximumDepth: options.maximumDepth))
        // A compression this build can write is applied while encoding (FORMAT.md §5.6); any
        // other is refused by finishEncoding().
        if case .zstd(let level) = options.compression, (try? PayloadCompression.validate(options.compression)) != nil {
            state.zstdLevel = level
            state.zstdWorkers = options.zstdWorkers
        }
    }

    // MARK: - Encoding by key

    public func encode(_ value: Bool, forKey key: String) throws {
        try state.writeKey(key)
        state.writeBool(value)
    }

    // The common case of the forms an `encode(with:)` calls for every field (an integer, an
    // object reference), the next key of the record's expected shape, is inlinable: inlined
    // into the caller, in another module, and specialized for its class, it takes no call for
    // an integer, and one to number an object. Their slow forms, for anything else, stay here.

    @inlinable @inline(__always)
    public func encode(_ value: Int, forKey key: String) throws {
        if storage.value.writeExpectedKey(key) {
            storage.value.writeInteger(value)
            return
        }
        try encodeInteger(value, forKey: key)
    }

    @usableFromInline @inline(never)
    func encodeInteger(_ value: Int, forKey key: String) throws {
        try state.writeKey(key)
        state.writeInteger(value)
    }

    public func encode(_ value: Int64, forKey key: String) throws {
        try state.writeKey(key)
        state.writeInteger(value)
    }

    public func encode(_ value: UInt64, forKey key: String) throws {
        try state.writeKey(key)
        state.writeInteger(value)
    }

    public func encode(_ value: Double, forKey key: String) throws {
        try state.writeKey(key)
        state.writeDouble(value)
    }

    public func encode(_ value: String, forKey key: String) throws {
        try state.writeKey(key)
        state.writeString(value)
    }

    public func encode(_ value: Data, forKey key: String) throws {
        try state.writeKey(key)
        state.writeBytes(value)
    }

    public func encode(_ value: [UInt8], forKey key: String) throws {
        try state.writeKey(key)
        state.writeBytes(value)
    }

    public func encode(_ value: Date, forKey key: String) throws {
        try state.writeKey(key)
        state.writeDate(value.timeIntervalSinceReferenceDate)
    }

    /// Encodes any archivable value: other integer widths, `Float`, ``GraphCoding`` objects and
    /// structs, optionals (nil is stored and decodes as nil), arrays, sets and dictionaries.
    public func encode<T: GraphValue>(_ value: T, forKey key: String) throws {
        try state.writeKey(key)
        try value._encodeGraphValue(to: self)
        try writeBodiesAtTop()
    }

    /// Encodes a reference to `object`, or nil, as ``encode(_:forKey:)-(T,_)`` does for an
    /// optional object (the same bytes), in one call: the general form reaches the reference
    /// through the optional's and the class's generic conformances, a few dozen instructions a
    /// reference (a chain of links pays them once per link).
    @inlinable @inline(__always)
    public func encode<T: GraphCoding & AnyObject>(_ object: consuming T?, forKey key: String) throws {
        // A record's key: no bodies to write after it (they are only written at the top level).
        guard storage.value.writeExpectedKey(key) else {
            return try encodeOptionalReference(object, forKey: key, backLink: false)
        }
        // The reference is passed on, not copied: the identity table keeps it for an object it
        // has not met (see `EncodingState.writeReference(_:)`).
        switch consume object {
        case .some(let object): storage.value.writeReference(object)
        case .none: storage.value.writeNil()
        }
    }

    /// The slow form of the inlinable forms for an optional object: any key.
    @usableFromInline @inline(never)
    func encodeOptionalReference<T: GraphCoding & AnyObject>(_ object: T?, forKey key: String, backLink: Bool)
        throws
    {
        try state.writeKey(key)
        writeOptionalReference(object, backLink: backLink)
        try writeBodiesAtTop()
    }

    /// Encodes an array of objects as ``encode(_:forKey:)-(T,_)`` does (the same bytes), in one
    /// call: the general form reaches the packed references through the array's generic
    /// conformance, which costs a tree of small arrays (children lists) a few percent.
    @_documentation(visibility: internal)
    public func encode<T: GraphCoding & AnyObject>(_ objects: [T], forKey key: String) throws {
        try state.writeKey(key)
        try writeReferenceArray(objects)
        try writeBodiesAtTop()
    }

    /// Writes a reference to `object` (a back link if `conditional`, `backLink`, or inside
    /// `encodeLater`), or nil.
    @inline(__always)
    private func writeOptionalReference<T: GraphCoding & AnyObject>(
        _ object: T?,
        conditional: Bool = false,
        backLink: Bool = false
    ) {
        // A `switch`, not `if let`, which retains the object (see `_encodeOptional`).
        switch object {
        case .some(let object): state.writeReference(object, conditional: conditional, backLink: backLink)
        case .none: state.writeNil()
        }
    }

    /// Encodes `value` as ``encode(_:forKey:)-(T,_)`` does, its object references marked as
    /// back links: references that may close a cycle, such as a child's link to its parent.
    ///
    /// The archive stores records so that a plain reference always points to a record stored
    /// before (the reader builds it first); a back link may point forward, and does so exactly
    /// when it lies on a cycle. Decode the key with ``GraphUnarchiver/decodeLater(_:forKey:assign:)``,
    /// which assigns the value once every object exists. Every cycle needs a back link: a cycle
    /// of plain references makes ``finishEncoding()`` throw `.unresolvedCycle`, naming it.
    ///
    /// The objects are archived as by `encode` (unlike ``encodeConditionalObject(_:forKey:)``);
    /// the references to them inside arrays, optionals and structs in `value` are all back
    /// links, those in the objects' own `encode(with:)` are not.
    public func encodeLater<T: GraphValue>(_ value: T, forKey key: String) throws {
        try state.writeKey(key)
        // Restored before the queued bodies are written (they make plain references).
        let enclosing = state.writesBackLinks
        state.writesBackLinks = true
        do {
            try value._encodeGraphValue(to: self)
        } catch {
            state.writesBackLinks = enclosing
            throw error
        }
        state.writesBackLinks = enclosing
        try writeBodiesAtTop()
    }

    /// Encodes a back link to `object`, or nil, as ``encodeLater(_:forKey:)-(T,_)`` does for
    /// an optional object (the same bytes), in one call (see ``encode(_:forKey:)-(T?,_)``).
    @inlinable @inline(__always)
    public func encodeLater<T: GraphCoding & AnyObject>(_ object: T?, forKey key: String) throws {
        guard storage.value.writeExpectedKey(key) else {
            return try encodeOptionalReference(object, forKey: key, backLink: true)
        }
        // A `switch`, not `if let`, which retains the object (see `_encodeOptional`). Borrowed:
        // a back link mostly goes to an object met before, for which taking the reference over
        // only moves its release here (callgrind: a few instructions more a link).
        switch object {
        case .some(let object): storage.value.writeBackLink(object)
        case .none: storage.value.writeNil()
        }
    }

    /// Encodes a reference that is kept only if `object` is also encoded unconditionally
    /// somewhere in the archive (before or after this call); otherwise it decodes as nil.
    /// The `encodeConditionalObject(_:forKey:)` of `NSCoder`.
    ///
    /// The reference is a back link, as for ``encodeLater(_:forKey:)-(T,_)``: the way to write a
    /// `weak` reference such as a parent link. It may point forward when it closes a cycle, so
    /// decode it with ``GraphUnarchiver/decodeLater(_:forKey:assign:)``:
    ///
    /// ```swift
    /// func encode(with archiver: GraphArchiver) throws {
    ///     try archiver.encode(children, forKey: "children")
    ///     try archiver.encodeConditionalObject(parent, forKey: "parent")
    /// }
    ///
    /// required init(from unarchiver: borrowing GraphUnarchiver) throws {
    ///     children = try unarchiver.decode([Note].self, forKey: "children")
    ///     try unarchiver.decodeLater(Note?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
    /// }
    /// ```
    public func encodeConditionalObject<T: GraphCoding & AnyObject>(_ object: T?, forKey key: String)
        throws
    {
        try state.writeKey(key)
        writeOptionalReference(object, conditional: true)
    }

    // MARK: - Plumbing called by the GraphValue conformances

    /// Generic rather than taking `any GraphCoding & AnyObject`: making the existential takes
    /// its own reference to the object, a retain and a release per reference written.
    func writeObjectReference<Object: GraphCoding & AnyObject>(_ object: Object, conditional: Bool) throws {
        state.writeReference(object, conditional: conditional)
    }

    func writeValueRecord<T: GraphCoding>(_ value: T) throws {
        state.out.writeByte(ValueTag.valueRecord)
        try state.beginRecord(typeID: state.typeID(for: T.self, object: nil))
        try notingNestedError { try value.encode(with: self) }
        state.endRecord()
    }

    /// Runs the encoding of a nested value's contents, noting the first error it throws.
    @inline(__always)
    private func notingNestedError(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            if nestedValueError == nil { nestedValueError = error }
            throw error
        }
    }

    func writeArray<Element: GraphValue>(_ array: [Element]) throws {
        if Element.self == UInt8.self {
            state.writeBytes(array as! [UInt8])
            return
        }
        // Arrays of a class type pack their references (FORMAT.md §6.5).
        if try Element._encodeObjectArray(array, to: self) { return }
        try state.beginNested()
        state.out.writeByte(ValueTag.array)
        state.out.writeVarint(array.count)
        try notingNestedError {
            for element in array {
                try element._encodeGraphValue(to: self)
            }
        }
        state.endNested()
    }

    /// Writes an array of objects as packed references. At the top level, the bodies of the
    /// objects met are written every few thousand references rather than after the whole
    /// array: the queue stays short, and each object is still in cache when its body is read.
    @inline(__always)
    func writeReferenceArray<Object: GraphCoding & AnyObject>(_ array: [Object]) throws {
        let count = array.count
        state.beginReferenceArray(count: count)
        // An empty array (a tree's leaves, most of its nodes) numbers nothing: only its count,
        // written here, without a call. (Not `isEmpty`: unspecialized, it looks the array
        // type's metadata up.)
        if count > 0 { try writeReferences(of: array, count: count) }
    }

    /// The references of a non-empty packed array, after its count.
    private func writeReferences<Object: GraphCoding & AnyObject>(of array: [Object], count: Int) throws {
        state.identity.reserve(forReferences: count)
        // Not inside `encodeLater`: its value's references are back links, the bodies' are not.
        let writesBodiesBetween = state.isWritingTopLevelValue && !state.writesBackLinks
        var previous = -1
        var isKept = false
        var start = 0
        while start < count {
            let end = writesBodiesBetween ? min(start + Self.referencesBetweenBodies, count) : count
            state.writeReferences(array, start..<end, previous: &previous, isKept: &isKept)
            if writesBodiesBetween { try writeQueuedObjects() }
            start = end
        }
    }

    /// How many top-level references are written before the bodies they queued.
    private static let referencesBetweenBodies = 2048

    func writeDictionary<Key: GraphValue, Value: GraphValue>(_ dictionary: [Key: Value]) throws {
        try state.beginNested()
        state.out.writeByte(ValueTag.dictionary)
        state.out.writeVarint(dictionary.count)
        try notingNestedError {
            for (key, value) in dictionary {
                try key._encodeGraphValue(to: self)
                try value._encodeGraphValue(to: self)
            }
        }
        state.endNested()
    }

    /// After a key's value at the top level, the bodies of the objects it numbered; inside a
    /// body, the queue's loop below writes them.
    @inline(__always)
    private func writeBodiesAtTop() throws {
        if state.isAtTop && state.hasQueuedObjects {
            try writeQueuedObjects()
        }
    }

    /// Writes the body of every object numbered but not yet written, from a queue: bodies that
    /// reference new objects add to the queue instead of recursing.
    private func writeQueuedObjects() throws {
        if state.hasQueuedObjects {
            // Bodies make plain references of their own: none is written inside `encodeLater`.
            assert(!state.writesBackLinks)
            try state.saveContainer()
            while let next = try state.beginNextObject() {
                try next.encodeBody(with: self)
                try state.endObject()
            }
            state.restoreContainer()
        }
        state.endObjects()
    }

    // MARK: - Finishing

    /// Completes the archive; after this no more values can be encoded.
    ///
    /// - Throws: `.compressionUnavailable` or `.invalidValue` for a compression this build cannot
    ///   write, `.compressionFailed`. (A compressed archive is compressed while it is encoded, in
    ///   blocks; the one-call ``archiveRootObject(_:toFile:options:)`` sends them straight to the file.)
    public func finishEncoding() throws {
        guard output == nil else { return }
        guard state.isAtTop else {
            guard let nestedValueError else {
                throw GraphArchiveError(.invalidState, "finishEncoding() called while a value is still being encoded")
            }
            throw GraphArchiveError(
                .invalidState,
                "encoding a nested value threw (\(nestedValueError)) and the error was caught: the archive would "
                    + "hold part of that value, so none is written"
            )
        }
        if let typeNameConflict = state.typeNameConflict { throw typeNameConflict }
        output = try ArchiveAssembler.assemble(state: &state, compression: options.compression)
    }

    /// The archive's bytes; available after ``finishEncoding()``.
    public var encodedData: Data {
        get throws {
            guard let finished = output else {
                throw GraphArchiveError(.invalidState, "encodedData read before finishEncoding()")
            }
            return finished.stored().data
        }
    }

    /// The archive's bytes as an array; available after ``finishEncoding()``.
    public var encodedBytes: [UInt8] {
        get throws {
            guard let output else {
                throw GraphArchiveError(.invalidState, "encodedBytes read before finishEncoding()")
            }
            return output.stored().contiguousBytes()
        }
    }

    /// Writes the finished archive to `path` atomically (see <doc:HostileInput#Saving>).
    public func write(toFile path: String) throws {
        guard let output else {
            throw GraphArchiveError(.invalidState, "write(toFile:) called before finishEncoding()")
        }
        try AtomicFile.write(output, to: path)
    }

    /// Encodes `rootObject` into the temporary file of an atomic save as it goes: each block
    /// of objects is compressed and written once encoded, behind a placeholder header that is
    /// overwritten at the end, so the uncompressed payload is never whole in memory.
    private static func archiveCompressed<T: GraphValue>(
        _ rootObject: T,
        toFile path: String,
        options: Options
    ) throws {
        try AtomicFile.write(to: path) { sink in
            try sink.write([UInt8](repeating: 0, count: ArchiveHeader.size))
            let archiver = GraphArchiver(options: options)
            archiver.state.payloadFile = sink.appender()
            try archiver.encode(rootObject, forKey: rootKey)
            try archiver.finishEncoding()
            guard let output = archiver.output, output.payloadIsInFile else {
                preconditionFailure("a compressed save kept its payload in memory")
            }
            try sink.write(output.header, at: 0)
        }
    }

    /// Size of the finished archive in bytes.
    var finishedOutput: ArchiveOutput? { output }

    /// The classes this archiver met, usable as a registry to decode what it wrote.
    var encounteredTypes: GraphTypeRegistry {
        var registry = GraphTypeRegistry()
        for type in state.types {
            if let objectType = type.objectType { registry.register(objectType, forName: type.name) }
        }
        return registry
    }

    /// The archived names of the superclasses of each class this archiver met, nearest first,
    /// as far up as they adopt ``GraphCoding``, by the class's archived name: what a keyed
    /// archive's `$classes` lists.
    var encounteredSuperclasses: [String: [String]] {
        var superclasses: [String: [String]] = [:]
        for type in state.types {
            guard let objectType = type.objectType else { continue }
            var chain: [String] = []
            var ancestor: AnyClass? = _getSuperclass(objectType)
            while let current = ancestor, let archivable = current as? any GraphCoding.Type {
                chain.append(archivable.archivedTypeName)
                ancestor = _getSuperclass(current)
            }
            if !chain.isEmpty { superclasses[type.name] = chain }
        }
        return superclasses
    }

    // MARK: - One-call forms

    /// Archives `rootObject` under the key ``rootKey`` and returns the bytes.
    /// The `archivedData(withRootObject:)` of `NSKeyedArchiver`.
    public static func archivedData<T: GraphValue>(
        withRootObject rootObject: T,
        options: Options = Options()
    ) throws -> Data {
        let archiver = GraphArchiver(options: options)
        try archiver.encode(rootObject, forKey: rootKey)
        try archiver.finishEncoding()
        return try archiver.takeEncodedData()
    }

    /// ``encodedData`` without the copy, for the one-call forms, which drop the archiver next:
    /// the output's own buffers become the `Data`, and the archiver has no output after.
    private func takeEncodedData() throws -> Data {
        guard let output else { throw GraphArchiveError(.invalidState, "encodedData read before finishEncoding()") }
        self.output = nil
        return output.takeData()
    }

    /// Archives `rootObject` under ``rootKey`` and saves it to `path` atomically: the file is
    /// either the previous archive or the whole new one, never a mix. The
    /// `archiveRootObject(_:toFile:)` of `NSKeyedArchiver`, throwing instead of returning `false`.
    public static func archiveRootObject<T: GraphValue>(
        _ rootObject: T,
        toFile path: String,
        options: Options = Options()
    ) throws {
        if case .zstd = options.compression {
            try PayloadCompression.validate(options.compression)
            try archiveCompressed(rootObject, toFile: path, options: options)
            return
        }
        let archiver = GraphArchiver(options: options)
        try archiver.encode(rootObject, forKey: rootKey)
        try archiver.finishEncoding()
        try archiver.write(toFile: path)
    }
}

extension ArchiveOutput {
    /// The archive as one `Data`, made from the payload's own buffers (see
    /// `StoredArchive.joinedInPlace()`): for a caller that needs nothing more from this output.
    func takeData() -> Data {
        stored().joinedInPlace().takeData()
    }
}

extension StoredArchive {
    /// The archive as one `Data`, in one copy.
    var data: Data {
        var data = Data(capacity: count)
        data.append(contentsOf: header)
        for piece in payload { data.append(piece.writer) }
        return data
    }
}
