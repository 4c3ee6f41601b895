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
///     init(from unarchiver: borrowing GraphUnarchiver) throws {
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
/// ``GraphArchiver/encodeLater(_:forKey:)-(T,_)``, and decode it with
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
///
/// ## Class hierarchies
///
/// A non-final class adopts the protocol with a `required` initializer; its subclasses extend
/// both methods through `super`, as with `NSCoding`. Arrays, optionals and dictionaries typed as
/// the base class hold instances of any subclass, and each comes back as its own class, shared
/// instances `===` again. Each class is archived under its own name (``archivedTypeName``), and
/// the base class lists the subclasses that may stand in its place in ``archivedSubclasses``, so
/// that decoding a `[Note]` may create them:
///
/// ```swift
/// class Note: GraphCoding {
///     class var archivedSubclasses: [any GraphCoding.Type] { [Checklist.self] }
///
///     var title: String
///
///     init(title: String) { self.title = title }
///
///     func encode(with archiver: GraphArchiver) throws {
///         try archiver.encode(title, forKey: "title")
///     }
///
///     required init(from unarchiver: borrowing GraphUnarchiver) throws {
///         title = try unarchiver.decode(String.self, forKey: "title")
///     }
/// }
///
/// final class Checklist: Note {
///     var items: [String] = []
///
///     override func encode(with archiver: GraphArchiver) throws {
///         try super.encode(with: archiver)
///         try archiver.encode(items, forKey: "items")
///     }
///
///     required init(from unarchiver: borrowing GraphUnarchiver) throws {
///         items = try unarchiver.decode([String].self, forKey: "items")
///         try super.init(from: unarchiver)
///     }
/// }
///
/// let notes: [Note] = [Note(title: "plain"), Checklist(title: "groceries")]
/// let data = try GraphArchiver.archivedData(withRootObject: notes)
/// let back = try GraphUnarchiver.unarchivedObject(ofType: [Note].self, from: data)
/// // back[1] is a Checklist
/// ```
///
/// A final class costs nothing for this; a reference typed as a non-final class is checked
/// with one dynamic cast when it is decoded.
public protocol GraphCoding: GraphValue {
    /// The stable name stored in archives and looked up in a ``GraphTypeRegistry``.
    ///
    /// Defaults to the unqualified type name (`GridState`, not `MyModule.GridState`), for
    /// subclasses too: each class of a hierarchy is archived under its own name. Override it to
    /// keep archives readable across renames and module moves. In a class hierarchy, declare it
    /// `class var` in the base class and override it in every subclass: a subclass that
    /// inherits the base class's name, or declares a `static var` the protocol never sees,
    /// would be archived under the base class's name, and encoding refuses two classes under
    /// one name (`.invalidValue`).
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
    /// or leave the word out; both satisfy this requirement. Declare it `borrowing`: without
    /// the word, every call retains and releases the unarchiver around the initializer, two
    /// atomic operations per object decoded, a large share of the cost of a small object.
    ///
    /// - Throws: What the unarchiver's calls throw (a missing key, a value of another type), and
    ///   errors of your own; either fails the whole unarchiving.
    init(from unarchiver: borrowing GraphUnarchiver) throws

    /// The subclasses whose instances may be archived where this class is, registered for
    /// decoding along with it. Default: none.
    ///
    /// Decoding creates only registered classes, and the one-call decodes
    /// (``GraphUnarchiver/unarchivedObject(ofType:from:registry:options:)-(_,Data,_,_)`` and the like)
    /// register the classes of the type asked for: listing the subclasses here lets a `[Note]`
    /// come back holding `Checklist`s. Declare it `class var` in the base class; the list is
    /// followed recursively, so a subclass may list its own subclasses. Alternatively, put the
    /// subclasses in the ``GraphTypeRegistry`` passed to the decode.
    static var archivedSubclasses: [any GraphCoding.Type] { get }

    /// Writes the body of the instance at `object`, which the archiver keeps alive: calls its
    /// `encode(with:)`. Engine plumbing with a default; do not implement it.
    @_documentation(visibility: internal)
    static func _encodeBody(of object: _QueuedObjectAddress, with archiver: GraphArchiver) throws
}

extension GraphCoding {
    public static var archivedTypeName: String { String(describing: self) }
    public static var archivedTypeAliases: [String] { [] }
    public static var archivedSubclasses: [any GraphCoding.Type] { [] }

    // Structs are inline value records.
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeValueRecord(self)
    }

    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Self {
        try unarchiver.readValueRecord(Self.self)
    }
}

extension GraphCoding where Self: AnyObject {
    // Class instances are object references: written once, shared on the way back.
    @_documentation(visibility: internal)
    public func _encodeGraphValue(to archiver: GraphArchiver) throws {
        try archiver.writeObjectReference(self, conditional: false)
    }

    @_documentation(visibility: internal)
    public static func _decodeGraphValue(from unarchiver: GraphUnarchiver) throws -> Self {
        try unarchiver.readObjectReference(Self.self)
    }

    // A class's optional is one pointer, nil or not, read without the generic copy.
    @_documentation(visibility: internal)
    public static func _encodeOptional(_ value: Self?, to archiver: GraphArchiver) throws {
        // A `switch`, not `if let`: binding with `if let` retains the object and releases it
        // after (in this unspecialized code), once per reference written.
        switch value {
        case .some(let object): try archiver.writeObjectReference(object, conditional: false)
        case .none: archiver.state.writeNil()
        }
    }

    @_documentation(visibility: internal)
    public static func _decodeOptional(from unarchiver: GraphUnarchiver) throws -> Self? {
        if try unarchiver.state.readNilIfPresent() { return nil }
        return try unarchiver.readObjectReference(Self.self)
    }

    @_documentation(visibility: internal)
    public static func _encodeObjectArray(_ array: [Self], to archiver: GraphArchiver) throws -> Bool {
        try archiver.writeReferenceArray(array)
        return true
    }

    @_documentation(visibility: internal)
    public static func _decodeObjectArray<Element>(
        _: Element.Type,
        count: Int,
        capacity: Int,
        from unarchiver: GraphUnarchiver
    ) throws -> [Element] {
        try unarchiver.readReferenceArray(count: count, capacity: capacity, as: Self.self).reinterpreted(
            as: Element.self
        )
    }

    @_documentation(visibility: internal)
    public static func _registerGraphTypes(in registry: inout GraphTypeRegistry) {
        registry.register(self)
    }
}
