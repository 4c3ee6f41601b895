// Sources/GraphArchive/Coding/GraphCoding.swift - the keyed coding protocol (the NSCoding equivalent)

/// A type that archives itself by key: GraphArchive's `NSCoding`.
///
/// Classes and structs both adopt it. A class instance is archived once, however many places
/// refer to it, and comes back as one shared instance (`===`); a struct is archived inline
/// wherever it appears, as a value.
///
/// ```swift
/// final class GridState: GraphCoding {
///     var name: String
///     var color: Int
///
///     func encode(with archiver: GraphArchiver) throws {
///         try archiver.encode(name, forKey: "kEncodeKeyName")
///         try archiver.encode(color, forKey: "kEncodeKeyColor")
///     }
///
///     init(from unarchiver: GraphUnarchiver) throws {
///         name = try unarchiver.decode(String.self, forKey: "kEncodeKeyName")
///         color = try unarchiver.decode(Int.self, forKey: "kEncodeKeyColor")
///     }
/// }
/// ```
///
/// Objects are decoded in an order where everything an object refers to already exists, so an
/// initializer can `decode` its references directly. A reference that may close a cycle, such
/// as a link back to a parent, is a *back link*: encode it with
/// ``GraphArchiver/encodeConditionalObject(_:forKey:)`` (for a `weak` reference) or
/// ``GraphArchiver/encodeLater(_:forKey:)``, and decode it with
/// ``GraphUnarchiver/decodeLater(_:forKey:assign:)``, which assigns it once every object exists.
/// Then every other reference decodes directly, whichever object the graph was reached from:
///
/// ```swift
/// final class Note: GraphCoding {
///     var title: String
///     var children: [Note] = []
///     weak var parent: Note?
///
///     func encode(with archiver: GraphArchiver) throws {
///         try archiver.encode(title, forKey: "title")
///         try archiver.encode(children, forKey: "children")
///         try archiver.encodeConditionalObject(parent, forKey: "parent")
///     }
///
///     init(from unarchiver: borrowing GraphUnarchiver) throws {
///         title = try unarchiver.decode(String.self, forKey: "title")
///         children = try unarchiver.decode([Note].self, forKey: "children")
///         try unarchiver.decodeLater(Note?.self, forKey: "parent") { [unowned self] in self.parent = $0 }
///     }
/// }
/// ```
///
/// Every cycle needs a back link: encoding a cycle of plain references throws
/// `.unresolvedCycle`, naming the classes and keys it goes through (see <doc:SharedReferencesAndCycles>).
public protocol GraphCoding: GraphValue {
    /// The stable name stored in archives and looked up in a ``GraphTypeRegistry``.
    ///
    /// Defaults to the unqualified type name (`GridState`, not `MyModule.GridState`). Override
    /// it to keep archives readable across renames and module moves; a subclass that overrides
    /// it must declare it `class var` in the base class.
    static var archivedTypeName: String { get }

    /// Older names this type also answers to when decoding, e.g. after a rename.
    static var archivedTypeAliases: [String] { get }

    /// Writes the value's fields by key.
    ///
    /// Write each field with one of the archiver's `encode(_:forKey:)` calls, under a key that
    /// ``init(from:)`` reads it back by. A field that holds a class instance is written as a
    /// reference: the instance itself is archived once, however many fields refer to it. Write a
    /// link back to an owner (a parent, a delegate) with
    /// ``GraphArchiver/encodeConditionalObject(_:forKey:)``, so that it keeps no object in the
    /// archive by itself.
    ///
    /// - Throws: What the archiver's calls throw, such as nesting deeper than
    ///   ``GraphArchiver/Options/maximumDepth``, and errors of your own; either fails the archive.
    func encode(with archiver: GraphArchiver) throws

    /// Creates a value from the fields the unarchiver holds for it.
    ///
    /// Read the fields by the keys ``encode(with:)`` wrote them under, in any order; keys you do
    /// not read are skipped, so a newer version of a type may stop reading old fields. Read a
    /// reference that may close a cycle with ``GraphUnarchiver/decodeLater(_:forKey:assign:)``.
    /// The unarchiver is lent for the call: a conformer may declare the parameter `borrowing`
    /// or leave the word out; both satisfy this requirement.
    ///
    /// - Throws: What the unarchiver's calls throw (a missing key, a value of another type), and
    ///   errors of your own; either fails the whole unarchiving.
    init(from unarchiver: borrowing GraphUnarchiver) throws
}

extension GraphCoding {
    public static var archivedTypeName: String { String(describing: self) }
    public static var archivedTypeAliases: [String] { [] }

    // Structs are inline value records.
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeValueRecord(self)
    }

    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Self {
        try unarchiver.readValueRecord(Self.self)
    }
}

extension GraphCoding where Self: AnyObject {
    // Class instances are object references: written once, shared on the way back.
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeObjectReference(self, conditional: false)
    }

    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Self {
        try unarchiver.readObjectReference(Self.self)
    }

    public static func _encodeObjectArray(_ array: [Self], to archiver: GraphArchiver) throws -> Bool {
        try archiver.writeReferenceArray(array)
        return true
    }

    public static func _decodeObjectArray(count: Int, capacity: Int, from unarchiver: GraphUnarchiver) throws -> [Self]
    {
        try unarchiver.readReferenceArray(count: count, capacity: capacity, as: Self.self)
    }

    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        registry.register(self)
    }
}
