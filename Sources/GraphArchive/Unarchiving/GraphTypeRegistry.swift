// Sources/GraphArchive/Unarchiving/GraphTypeRegistry.swift - the classes a decoder may create

/// The classes a decoder is allowed to create, by archived name: one registry for
/// ``GraphUnarchiver`` and ``GraphArchiveDecoder``.
///
/// Decoding creates only registered classes: a name in the archive that is not here is an
/// `.unknownType` error, never a guess. Register under more names to read archives written by
/// a renamed type or another program, the `setClass(_:forClassName:)` of `NSKeyedUnarchiver`:
///
/// ```swift
/// var registry = GraphTypeRegistry([GridState.self])
/// registry.register(GridState.self, forName: "UAGridState")
/// ```
///
/// Each decoder uses the registered classes it can build: ``GraphUnarchiver`` those that adopt
/// ``GraphCoding``, ``GraphArchiveDecoder`` those that adopt `Decodable`. A class that adopts
/// both serves both under one registration.
///
/// Structs need no registration: they are decoded as the type the caller asks for.
public struct GraphTypeRegistry: @unchecked Sendable {
    // @unchecked: holds only metatypes and strings, never mutated through shared references.

    /// A registered class, with the views of it each decoder builds from, cast once here.
    struct RegisteredClass {
        let graphCoding: (any (GraphCoding & AnyObject).Type)?
        let decodable: (any (AnyObject & Decodable).Type)?

        init(_ type: AnyObject.Type) {
            graphCoding = type as? any (GraphCoding & AnyObject).Type
            decodable = type as? any (AnyObject & Decodable).Type
        }

        /// The names ``GraphCoding`` archives the class under: its archived name and aliases.
        var archivedNames: [String] {
            graphCoding.map { [$0.archivedTypeName] + $0.archivedTypeAliases } ?? []
        }
    }

    private(set) var classes: [String: RegisteredClass] = [:]

    public init() {}

    /// A registry of `types` under their archived names and aliases; non-class types are ignored.
    public init(_ types: [any GraphCoding.Type]) {
        for type in types { register(type) }
    }

    /// Registers `type` under its ``GraphCoding/archivedTypeName`` and every alias, and with it
    /// the classes of its ``GraphCoding/archivedSubclasses`` (theirs too, and so on).
    public mutating func register(_ type: any GraphCoding.Type) {
        registerHierarchy(type) { $0.graphCoding == nil ? nil : $0.archivedNames }
    }

    /// Registers `type` under `name` as well, for archives that call it that.
    public mutating func register(_ type: any GraphCoding.Type, forName name: String) {
        guard let objectType = type as? AnyObject.Type else { return }
        classes[name] = RegisteredClass(objectType)
    }

    /// Registers a `Decodable` class for ``GraphArchiveDecoder``, which builds it where one of
    /// its superclasses is asked for.
    ///
    /// Without `name`, `type` is registered under the name ``GraphArchiveEncoder`` archives it
    /// by (`String(describing: type)`) and, if it adopts ``GraphCoding``, under its
    /// ``GraphCoding/archivedTypeName`` and aliases, with the `Decodable` classes of its
    /// ``GraphCoding/archivedSubclasses`` (theirs too, and so on), as
    /// ``register(_:)`` follows them. With `name`, `type` alone is registered under `name`, for
    /// archives written before a rename.
    public mutating func registerDecodable<T: AnyObject & Decodable>(_ type: T.Type, forName name: String? = nil) {
        if let name {
            classes[name] = RegisteredClass(type)
            return
        }
        registerHierarchy(type) { registered in
            registered.decodable.map { [String(describing: $0)] + registered.archivedNames }
        }
    }

    /// Registers `root` and the classes of its ``GraphCoding/archivedSubclasses``, recursively,
    /// each under the names `names` gives it; a class `names` gives none (nil) is skipped.
    private mutating func registerHierarchy(_ root: any Any.Type, names: (RegisteredClass) -> [String]?) {
        var pending: [any Any.Type] = [root]
        var seen: Set<ObjectIdentifier> = []
        while let next = pending.popLast() {
            guard seen.insert(ObjectIdentifier(next)).inserted, let objectType = next as? AnyObject.Type else {
                continue
            }
            let registered = RegisteredClass(objectType)
            guard let names = names(registered) else { continue }
            for name in names { classes[name] = registered }
            for subclass in (registered.graphCoding?.archivedSubclasses ?? []).reversed() { pending.append(subclass) }
        }
    }

    /// Adds every registration of `other`.
    public mutating func merge(_ other: GraphTypeRegistry) {
        classes.merge(other.classes) { _, new in new }
    }

    /// The ``GraphCoding`` class registered for `name`.
    public func type(named name: String) -> (any GraphCoding.Type)? {
        classes[name]?.graphCoding
    }

    func objectType(named name: String) -> (any (GraphCoding & AnyObject).Type)? {
        classes[name]?.graphCoding
    }

    /// The `Decodable` class registered for `name`, for ``GraphArchiveDecoder``.
    func decodableType(named name: String) -> (any (AnyObject & Decodable).Type)? {
        classes[name]?.decodable
    }

    /// The names a class archived as `name` is looked up by, in order, as NSKeyedUnarchiver
    /// falls back: `name`, its unqualified form ("MyApp.Note" → "Note"), then the classes of
    /// `superclasses` (a keyed archive's `$classes`: the class, then its superclasses).
    static func lookupNames(for name: String, superclasses: [String]) -> [String] {
        var names = [name]
        if let dot = name.lastIndex(of: ".") { names.append(String(name[name.index(after: dot)...])) }
        return names + superclasses.filter { $0 != name }
    }

    /// Names with a registered class.
    public var names: [String] { classes.keys.sorted() }
}
