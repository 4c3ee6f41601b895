// Sources/GraphArchive/ArchiveGraph/GraphVisitor.swift - the events both archive formats stream their values as
//
// A source (gridstore's object table or a keyed archive's `$objects`) walks the values of a
// top-level entry or of one object and calls a visitor per value, without building them:
// JSON, the tree, the summary, building ``ArchiveValue``s and both converters are visitors, so
// each format is walked by one piece of code and a million objects are never values at once.

/// How a value was stored in a keyed archive, carried through a conversion so that a keyed
/// archive converted to gridstore and back is stored as it was (FORMAT.md §12).
///
/// `unspecified` parts are a writer's to choose; a keyed archive's source specifies both.
struct ValueForm: Hashable {
    enum Storage: UInt8, Hashable {
        case unspecified
        /// In the dictionary that holds it (`encodeInteger(_:forKey:)`, `encodeBytes`).
        case inline
        /// As a `$objects` entry, by UID (`encodeObject(_:forKey:)`).
        case reference
    }

    enum Instance: Hashable {
        case unspecified
        /// A plain property list object (NSString, NSNumber, NSData as Foundation stores them).
        case plain
        /// An instance of this class, read as a value (NSMutableString, NSDate, NSArray, NSNull…).
        case instance(String)
    }

    var storage = Storage.unspecified
    var instance = Instance.unspecified

    static let unspecified = ValueForm()
}

/// Receives the values of an archive graph, one event per value; containers as begin and end
/// events around their elements.
///
/// Before each value of an object, a record or the top level comes ``field(_:keyID:)``; a
/// dictionary's entries come as key, value, key, value… Object references are ids, never
/// followed. `keyID` identifies the key within the source, for visitors that cache per key.
protocol GraphVisitor {
    mutating func field(_ key: String, keyID: Int) throws(GraphArchiveError)
    mutating func null(_ form: ValueForm) throws(GraphArchiveError)
    mutating func bool(_ value: Bool, _ form: ValueForm) throws(GraphArchiveError)
    mutating func integer(_ value: Int64, _ form: ValueForm) throws(GraphArchiveError)
    /// Above `Int64.max`.
    mutating func unsignedInteger(_ value: UInt64, _ form: ValueForm) throws(GraphArchiveError)
    /// Outside both 64-bit ranges.
    mutating func integer128(high: Int64, low: UInt64, _ form: ValueForm) throws(GraphArchiveError)
    mutating func float(_ value: Float, _ form: ValueForm) throws(GraphArchiveError)
    mutating func double(_ value: Double, _ form: ValueForm) throws(GraphArchiveError)
    mutating func string(_ value: String, _ form: ValueForm) throws(GraphArchiveError)
    /// A string as it is stored: `count` bytes of UTF-8, unchecked, at `reader`'s position. The
    /// default reads them (throwing `.invalidUTF8` or `.truncated`) and calls
    /// ``string(_:_:)``; a visitor that copies bytes can take them as they are.
    mutating func string(utf8 reader: ByteReader, count: Int, _ form: ValueForm) throws(GraphArchiveError)
    mutating func data(_ value: [UInt8], _ form: ValueForm) throws(GraphArchiveError)
    /// Seconds since 2001-01-01.
    mutating func date(_ seconds: Double, _ form: ValueForm) throws(GraphArchiveError)
    mutating func object(_ id: Int, _ form: ValueForm) throws(GraphArchiveError)
    mutating func beginArray(count: Int, _ form: ValueForm) throws(GraphArchiveError)
    mutating func endArray() throws(GraphArchiveError)
    mutating func beginDictionary(count: Int, _ form: ValueForm) throws(GraphArchiveError)
    mutating func endDictionary() throws(GraphArchiveError)
    mutating func beginRecord(typeName: String, fieldCount: Int, _ form: ValueForm) throws(GraphArchiveError)
    mutating func endRecord() throws(GraphArchiveError)
}

extension GraphVisitor {
    mutating func string(utf8 reader: ByteReader, count: Int, _ form: ValueForm) throws(GraphArchiveError) {
        var reader = reader
        try string(reader.readString(count: count), form)
    }
}

/// Bounds the work of walking values that a keyed archive shares: a string or an array stored
/// once and referred to a million times is walked a million times, so a walk may cost this
/// many times the archive's size (plus an allowance) before it is refused, as the typed
/// reader's copies are (``KeyedArchiveReader/expansionFactor``).
struct ExpansionBudget {
    private var left: Int

    init(inputBytes: Int) {
        let (scaled, overflow) = inputBytes.multipliedReportingOverflow(by: KeyedArchiveReader.expansionFactor)
        let (limit, overflowAgain) = scaled.addingReportingOverflow(KeyedArchiveReader.expansionAllowance)
        left = overflow || overflowAgain ? Int.max : limit
    }

    private init(left: Int) {
        self.left = left
    }

    /// No limit: gridstore archives store every value once (only objects are shared).
    static var unlimited: ExpansionBudget { ExpansionBudget(left: Int.max) }

    @inline(__always)
    mutating func spend(_ work: Int) throws(GraphArchiveError) {
        left &-= work
        if left < 0 { throw exceeded() }
    }

    @inline(never)
    private func exceeded() -> GraphArchiveError {
        GraphArchiveError(
            .limitExceeded,
            "the archive shares values so widely that walking them would exceed \(KeyedArchiveReader.expansionFactor) times its size"
        )
    }
}
