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

    public var name: String
    /// An RGB color, 0..<2^24 in generated data (the app's NSInteger, kept as `Int`).
    public var color: Int
    /// The app's date string, ISO-8601 in generated data (kept as a string, as the app does).
    public var date: String

    public init(name: String, color: Int, date: String) {
        self.name = name
        self.color = color
        self.date = date
    }

    public func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(name, forKey: Key.name)
        try archiver.encode(color, forKey: Key.color)
        try archiver.encode(date, forKey: Key.date)
    }

    public init(from unarchiver: GraphUnarchiver) throws {
        name = try unarchiver.decode(String.self, forKey: Key.name)
        color = try unarchiver.decode(Int.self, forKey: Key.color)
        date = try unarchiver.decode(String.self, forKey: Key.date)
    }
}
