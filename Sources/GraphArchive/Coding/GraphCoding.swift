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
/// initializer can `decode` its references directly. Only a reference that closes a cycle
/// cannot be ready in time; decode such references with
/// ``GraphUnarchiver/decodeLater(_:forKey:assign:)`` (see FORMAT.md §7).
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
    /// Speed, for classes with many instances: Swift passes a class's stored `var` by copying
    /// it out first, so each `String` or array field written costs an atomic retain and release
    /// (11% of encoding a million `GridState`s). A `let` is passed in place. `GridState` shows a
    /// way to do the same for `var`s: it hands them to a private helper as `inout` arguments.
    func encode(with archiver: GraphArchiver) throws

    /// Creates a value from the fields the unarchiver holds for it.
    ///
    /// The unarchiver is lent for the call (`borrowing`), so the engine does not retain it for
    /// every object it builds. A conformer may declare the parameter with or without
    /// `borrowing`; without, Swift retains the unarchiver for the call as before.
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
