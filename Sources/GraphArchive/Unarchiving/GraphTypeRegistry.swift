// Sources/GraphArchive/Unarchiving/GraphTypeRegistry.swift - the types an unarchiver may create

/// The classes an unarchiver is allowed to create, by archived name.
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
/// Structs need no registration: they are decoded as the type the caller asks for.
public struct GraphTypeRegistry: @unchecked Sendable {
    // @unchecked: holds only metatypes and strings, never mutated through shared references.
    private(set) var classes: [String: any (GraphCoding & AnyObject).Type] = [:]

    public init() {}

    /// A registry of `types` under their archived names and aliases; non-class types are ignored.
    public init(_ types: [any GraphCoding.Type]) {
        for type in types { register(type) }
    }

    /// Registers `type` under its ``GraphCoding/archivedTypeName`` and every alias, and with it
    /// the classes of its ``GraphCoding/archivedSubclasses`` (theirs too, and so on).
    public mutating func register(_ type: any GraphCoding.Type) {
        var pending = [type]
        var seen: Set<ObjectIdentifier> = []
        while let next = pending.popLast() {
            guard seen.insert(ObjectIdentifier(next)).inserted,
                let objectType = next as? any (GraphCoding & AnyObject).Type
            else { continue }
            classes[next.archivedTypeName] = objectType
            for alias in next.archivedTypeAliases {
                classes[alias] = objectType
            }
            pending += next.archivedSubclasses.reversed()
        }
    }

    /// Registers `type` under `name` as well, for archives that call it that.
    public mutating func register(_ type: any GraphCoding.Type, forName name: String) {
        guard let objectType = type as? any (GraphCoding & AnyObject).Type else { return }
        classes[name] = objectType
    }

    /// Adds every registration of `other`.
    public mutating func merge(_ other: GraphTypeRegistry) {
        classes.merge(other.classes) { _, new in new }
    }

    /// The class registered for `name`.
    public func type(named name: String) -> (any GraphCoding.Type)? {
        classes[name]
    }

    func objectType(named name: String) -> (any (GraphCoding & AnyObject).Type)? {
        classes[name]
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
