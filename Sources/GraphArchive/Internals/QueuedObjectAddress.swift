// Sources/GraphArchive/Internals/QueuedObjectAddress.swift - an object owed a body, by address

/// The address of an object whose body the archiver writes from its queue, which the archiver
/// keeps alive meanwhile (see `QueuedObject`): what ``GraphCoding/_encodeBody(of:with:)`` is
/// given. Public only as that requirement's parameter; not API.
@_documentation(visibility: internal)
@frozen
public struct _QueuedObjectAddress {
    @usableFromInline let pointer: UnsafeRawPointer

    init(_ pointer: UnsafeRawPointer) {
        self.pointer = pointer
    }
}
