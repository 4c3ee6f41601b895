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

    // A library's public class keeps its fields private behind public accessors: Swift checks
    // every access to a public stored property for exclusivity at run time, since code in
    // another module could be modifying it, while private storage lets the optimizer see every
    // access and drop the checks. A model in an app's own module needs none of this: plain
    // `var`s, as in the README.
    private var storedName: String
    private var storedColor: Int
    private var storedDate: String

    public init(name: String, color: Int, date: String) {
        storedName = name
        storedColor = color
        storedDate = date
    }

    public func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(storedName, forKey: Key.name)
        try archiver.encode(storedColor, forKey: Key.color)
        try archiver.encode(storedDate, forKey: Key.date)
    }

    public init(from unarchiver: borrowing GraphUnarchiver) throws {
        storedName = try unarchiver.decode(String.self, forKey: Key.name)
        storedColor = try unarchiver.decode(Int.self, forKey: Key.color)
        storedDate = try unarchiver.decode(String.self, forKey: Key.date)
    }
}
