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
    /// The object's class (its dynamic type, with its conformance).
    let type: any (GraphCoding & AnyObject).Type
    private let address: UnsafeRawPointer

    init<Object: GraphCoding & AnyObject>(index: Int, object: Object) {
        self.index = index
        type = Swift.type(of: object)
        address = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
    }

    init(index: Int, existential object: any GraphCoding & AnyObject) {
        self.init(index: index, object: object)
    }

    /// Runs the object's `encode(with:)`, borrowing the object (no retain).
    func encodeBody(with archiver: GraphArchiver) throws {
        try type.encodeBody(at: address, with: archiver)
    }
}

extension GraphCoding where Self: AnyObject {
    /// Runs `encode(with:)` of the instance at `address`, which something else keeps alive.
    fileprivate static func encodeBody(at address: UnsafeRawPointer, with archiver: GraphArchiver) throws {
        try Unmanaged<Self>.fromOpaque(address)._withUnsafeGuaranteedRef { try $0.encode(with: archiver) }
    }
}
