// Sources/GridStore/GridState.swift - one grid state record (the seed app's UAGridState)

import GraphArchive

/// One grid state: the seed app's `UAGridState` (name, color, date), archivable by key.
///
/// The fields and keys are the iOS app's own (`kEncodeKeyName`, `kEncodeKeyColor`,
/// `kEncodeKeyDate`), so the same decoding code reads the app's archives. The same instance may
/// sit in many slots of the data source's array; archives keep that sharing.
public final class GridState: GraphCoding {
    /// The archive keys, as the seed app defines them.
    public enum Key {
        public static let name = "kEncodeKeyName"
        public static let color = "kEncodeKeyColor"
        public static let date = "kEncodeKeyDate"
    }

    /// Stored in archives as "GridState"; also reads archives that call it "UAGridState".
    public static var archivedTypeName: String { "GridState" }
    public static var archivedTypeAliases: [String] { ["UAGridState"] }

    public var name: String {
        get { storedName }
        set { storedName = newValue }
    }
    /// An RGB color, 0..<2^24 in generated data (the app's NSInteger, kept as `Int`).
    public var color: Int {
        get { storedColor }
        set { storedColor = newValue }
    }
    /// The app's date string, ISO-8601 in generated data (kept as a string, as the app does).
    public var date: String {
        get { storedDate }
        set { storedDate = newValue }
    }

    // The fields live in private storage behind the public accessors. A stored `public var`
    // of a class is checked for exclusive access at run time on every read (swift_beginAccess,
    // 9% of a 1M-record encode by perf), because code in another module could hold a long
    // modify access to it; private storage lets the whole-module optimizer see every access
    // and drop the checks. Callers see the same `var`s.
    //
    // The strings are declared unchecked as well: `encodeFields` borrows them `inout`, a
    // modify access the optimizer cannot prove free of conflicts, so it would be checked at
    // run time again. It is free of them: the only call made during it is the archiver's
    // copy of the string's bytes, which never reaches a record.
    @exclusivity(unchecked) private var storedName: String
    private var storedColor: Int
    @exclusivity(unchecked) private var storedDate: String

    public init(name: String, color: Int, date: String) {
        storedName = name
        storedColor = color
        storedDate = date
    }

    public func encode(with archiver: GraphArchiver) throws {
        try Self.encodeFields(name: &storedName, color: storedColor, date: &storedDate, with: archiver)
    }

    // Passing a class's stored `var` to a function copies the value out: a retain and a
    // release of each string's buffer per record, atomic, and 11% of a 1M-record encode. An
    // `inout` argument is the property's own storage, lent for the call, so its strings are
    // read where they are. (Nothing is written to them.)
    private static func encodeFields(
        name: inout String,
        color: Int,
        date: inout String,
        with archiver: GraphArchiver
    ) throws {
        try archiver.encode(name, forKey: Key.name)
        try archiver.encode(color, forKey: Key.color)
        try archiver.encode(date, forKey: Key.date)
    }

    // `borrowing`, as the protocol declares it: no retain of the unarchiver per record.
    public init(from unarchiver: borrowing GraphUnarchiver) throws {
        storedName = try unarchiver.decode(String.self, forKey: Key.name)
        storedColor = try unarchiver.decode(Int.self, forKey: Key.color)
        storedDate = try unarchiver.decode(String.self, forKey: Key.date)
    }
}
