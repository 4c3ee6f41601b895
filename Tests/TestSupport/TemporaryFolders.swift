// Tests/TestSupport/TemporaryFolders.swift - scratch folders and paths for tests of every target

import Foundation

/// A fresh folder under the system's temporary directory, removed when released.
public final class TemporaryDirectory {
    public let path: String

    public init() throws {
        path = NSTemporaryDirectory() + "gridstore-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `name` inside the folder.
    public func file(_ name: String) -> String {
        path + "/" + name
    }

    public func bytes(of name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name)).map(Array.init)
    }
}

/// Runs `body` with a fresh folder, removed afterwards.
public func withTemporaryFolder<R>(_ body: (String) throws -> R) throws -> R {
    let folder = try TemporaryDirectory()
    return try withExtendedLifetime(folder) { try body(folder.path) }
}

/// Runs `body` with a fresh folder, removed afterwards.
public func withTemporaryFolderAsync(_ body: (String) async throws -> Void) async throws {
    let folder = try TemporaryDirectory()
    try await body(folder.path)
    withExtendedLifetime(folder) {}
}

/// A fresh path in the temporary folder, for a test that removes what it writes there.
public func temporaryPath(_ name: String) -> String {
    "\(NSTemporaryDirectory())/gridstore-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
}
