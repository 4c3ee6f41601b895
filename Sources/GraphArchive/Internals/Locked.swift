// Sources/GraphArchive/Internals/Locked.swift - a value behind a lock that ThreadSanitizer can see

import Foundation

/// A value reached only under a lock: the shape of `Synchronization.Mutex`, on `NSLock`.
///
/// Why not `Mutex`: on Linux (Swift 6.3.1) ThreadSanitizer does not see `Mutex` lock and unlock,
/// so every access it guards is reported as a data race, and `swift test --sanitize=thread`
/// could not tell a real race from these. `NSLock` is a pthread mutex, which ThreadSanitizer
/// follows. Package-wide: every module and test target of gridstore uses this, never `Mutex`.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `withLock`, under `lock`.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: sending Value) {
        self.value = value
    }

    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
