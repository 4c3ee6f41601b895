// Tests/GridStoreTests/TemporaryDirectory.swift - a folder of scratch files per test

import Foundation

/// A fresh folder under the system's temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "gridstore-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `name` inside the folder.
    func file(_ name: String) -> String {
        path + "/" + name
    }

    func bytes(of name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name)).map(Array.init)
    }
}
