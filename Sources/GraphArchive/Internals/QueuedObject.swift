// Sources/GraphArchive/Internals/QueuedObject.swift - an object owed a body, held without a retain

/// An object whose body is still to be written, by index.
///
/// The reference is `unowned(unsafe)`: the archiver's `IdentityTable` retains every object it
/// numbers until the archive is assembled, which outlasts every queue entry. A strong reference
/// here would cost one more retain and release per object of a large graph.
struct QueuedObject {
    var index: Int
    unowned(unsafe) var object: any GraphCoding & AnyObject
}
