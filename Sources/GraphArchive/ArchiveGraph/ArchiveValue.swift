// Sources/GraphArchive/ArchiveGraph/ArchiveValue.swift - the typed values of a schema-less archive graph

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value read from an archive without its model types: what a field, a top-level key or an
/// element holds.
///
/// Objects are not nested in values: a reference is ``object(_:)``, the object's id in its
/// ``ArchiveGraph``, so shared objects and cycles stay visible. Foundation's value classes
/// (NSString, NSMutableString, NSNumber, NSData, NSDate, NSNull) read as values, and an
/// NSArray or NSDictionary referred to from one place only reads as an array or a dictionary;
/// a collection referred to from several places stays one object.
public enum ArchiveValue: Hashable, Sendable {
    /// nil (`$null` in a keyed archive), or NSNull.
    case null
    case bool(Bool)
    /// An integer that fits `Int64`.
    case integer(Int64)
    /// An integer above `Int64.max` (CF's 16-byte integers with a zero high half).
    case unsignedInteger(UInt64)
    /// An integer outside both 64-bit ranges (CF's 16-byte integers): the high and low 64 bits
    /// of its two's complement.
    case integer128(high: Int64, low: UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    /// Seconds since 2001-01-01T00:00:00Z, Foundation's reference date.
    case date(Date)
    case array([ArchiveValue])
    /// Keys of any kind, in stored order.
    case dictionary([ArchiveDictionaryEntry])
    /// A reference to the object with this id (see ``ArchiveGraph/object(withID:)``).
    case object(Int)
    /// An inline value of a value type (a struct of a gridstore archive).
    case record(ArchiveRecord)
}

/// One key and value of a dictionary ``ArchiveValue``.
public struct ArchiveDictionaryEntry: Hashable, Sendable {
    public var key: ArchiveValue
    public var value: ArchiveValue

    public init(key: ArchiveValue, value: ArchiveValue) {
        self.key = key
        self.value = value
    }
}

/// A field: a key and its value.
public struct ArchiveField: Hashable, Sendable {
    public var key: String
    public var value: ArchiveValue

    public init(key: String, value: ArchiveValue) {
        self.key = key
        self.value = value
    }
}

/// An inline value of a value type: its type name and fields.
public struct ArchiveRecord: Hashable, Sendable {
    public var typeName: String
    public var fields: [ArchiveField]

    public init(typeName: String, fields: [ArchiveField]) {
        self.typeName = typeName
        self.fields = fields
    }
}

/// An object of an ``ArchiveGraph``: its id, class and fields.
public struct ArchiveObject: Hashable, Sendable {
    /// Its id: the `$objects` index (UID) in a keyed archive, the object table index in a
    /// gridstore archive.
    public var id: Int
    /// The class name: `$classname`, or the archived type name.
    public var className: String
    /// The class and its superclasses, most derived first: a keyed archive's `$classes`
    /// (``className`` alone when the class entry has none).
    public var classChain: [String]
    /// The fields in stored order (a keyed archive's `$class` is not one of them).
    public var fields: [ArchiveField]

    public init(id: Int, className: String, classChain: [String], fields: [ArchiveField]) {
        self.id = id
        self.className = className
        self.classChain = classChain
        self.fields = fields
    }

    /// The value of the first field named `key`, or nil.
    public subscript(key: String) -> ArchiveValue? {
        fields.first { $0.key == key }?.value
    }
}
