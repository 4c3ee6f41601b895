// Sources/GraphArchive/Internals/GraphCoding+QueuedBody.swift - a queued object's body, written

extension GraphCoding {
    /// Structs are written inline, never queued.
    @_documentation(visibility: internal)
    public static func _encodeBody(of object: _QueuedObjectAddress, with archiver: GraphArchiver) throws {
        preconditionFailure("\(Self.self) is not a class: its values are never queued")
    }
}

extension GraphCoding where Self: AnyObject {
    /// Runs `encode(with:)` of the instance at `object`, borrowed (no retain). Inlinable, so
    /// that each class's conformance holds this specialized for it, with its `encode(with:)`
    /// called directly: the queue's loop reaches a body in one call through the conformance,
    /// not a generic function and a witness after it (callgrind: about 20 instructions a link
    /// of a chain).
    @_documentation(visibility: internal)
    @inlinable
    public static func _encodeBody(of object: _QueuedObjectAddress, with archiver: GraphArchiver) throws {
        try Unmanaged<Self>.fromOpaque(object.pointer)._withUnsafeGuaranteedRef { try $0.encode(with: archiver) }
    }
}
