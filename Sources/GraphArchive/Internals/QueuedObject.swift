// Sources/GraphArchive/Internals/QueuedObject.swift - an object owed a body, held without a retain

/// An object whose body is still to be written, by index.
///
/// The object is held by address, without a retain: the archiver's `IdentityTable` retains
/// every object it numbers (or the archiver keeps the array it came from) until the archive is
/// assembled, which outlasts every queue entry. A strong reference here would cost a retain
/// and a release per object of a large graph, and so would reading an `unowned(unsafe)` one
/// back as the existential a body is written from (callgrind: 1M of each for 500,000 links; an
/// object with a weak reference to it pays each in its side table, at about 50 instructions).
struct QueuedObject {
    var index: Int
    /// The class the object was referenced as, with its conformance: a subclass instance
    /// dispatches `encode(with:)` to its own override through it. Not the dynamic type, which
    /// would load the object's header when it is queued, a cache miss per object of a large
    /// graph (gridstate encode at 1M: 4.6% of the run's samples) that its body pays again.
    private let staticType: any (GraphCoding & AnyObject).Type
    private let address: UnsafeRawPointer

    @inline(__always)
    init<Object: GraphCoding & AnyObject>(index: Int, object: Object) {
        self.init(index: index, lent: LentReference(object))
    }

    @inline(__always)
    init<Object: GraphCoding & AnyObject>(index: Int, lent object: LentReference<Object>) {
        self.index = index
        staticType = Object.self
        address = object.pointer
    }

    init(index: Int, existential object: any GraphCoding & AnyObject) {
        self.init(index: index, object: object)
    }

    /// The object's address, as the identity table keys it.
    var addressBits: UInt { UInt(bitPattern: address) }

    /// The object's class (its dynamic type, with its conformance), read from the object.
    @inline(__always)
    var type: any (GraphCoding & AnyObject).Type {
        staticType.dynamicType(at: address)
    }

    /// Whether the object's class is the one `type` identifies (`ObjectIdentifier` of a class),
    /// read from the object's header: a native Swift object starts with its class's metadata
    /// pointer, which is what that identifier holds. Compared before ``type`` is read, it spares
    /// a body of the class before it opening the existential and calling through the conformance
    /// (callgrind: about 15 instructions a link of a chain). False where a header may hold
    /// something else (Objective-C interop): callers then read ``type``.
    @inline(__always)
    func isInstance(ofExactly type: ObjectIdentifier) -> Bool {
        #if canImport(ObjectiveC)
        return false
        #else
        return address.load(as: UInt.self) == UInt(bitPattern: type)
        #endif
    }

    /// Runs the object's `encode(with:)`, borrowing the object (no retain).
    func encodeBody(with archiver: GraphArchiver) throws {
        try staticType._encodeBody(of: _QueuedObjectAddress(address), with: archiver)
    }
}

extension GraphCoding where Self: AnyObject {
    /// The class of the instance at `address` (`Self` or a subclass). Not forced inline: the
    /// release build with `-enable-testing` (scripts/fuzz) then trips a compiler assertion in
    /// cross-module optimization (`value_metatype` of the opened instance).
    fileprivate static func dynamicType(at address: UnsafeRawPointer) -> any (GraphCoding & AnyObject).Type {
        Unmanaged<Self>.fromOpaque(address)._withUnsafeGuaranteedRef { Swift.type(of: $0) }
    }
}
