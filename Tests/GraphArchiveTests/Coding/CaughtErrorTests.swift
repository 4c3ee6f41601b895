// Tests/GraphArchiveTests/Coding/CaughtErrorTests.swift - coders whose callers catch a nested value's error and carry on

import Foundation
import Testing

@testable import GraphArchive

/// A value the newer `Settings` below expects, written by an older one with other keys.
private struct Margins: GraphCoding, Equatable {
    var top: Int
    var bottom: Int

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(top, forKey: "top")
        try archiver.encode(bottom, forKey: "bottom")
    }

    init(top: Int, bottom: Int) {
        self.top = top
        self.bottom = bottom
    }

    init(from unarchiver: GraphUnarchiver) throws {
        top = try unarchiver.decode(Int.self, forKey: "top")
        bottom = try unarchiver.decode(Int.self, forKey: "bottom")
    }
}

/// What an older version wrote under "margins": a record with a "top" but no "bottom".
private struct OldMargins: GraphCoding {
    static var archivedTypeName: String { "Margins" }
    var top: Int

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(top, forKey: "top")
        try archiver.encode(99, forKey: "name")
    }

    init(top: Int) { self.top = top }

    init(from unarchiver: GraphUnarchiver) throws {
        top = try unarchiver.decode(Int.self, forKey: "top")
    }
}

private final class OldSettings: GraphCoding {
    static var archivedTypeName: String { "Settings" }
    let margins = OldMargins(top: 7)

    init() {}

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(1, forKey: "version")
        try archiver.encode(margins, forKey: "margins")
        try archiver.encode([margins, margins], forKey: "history")
        try archiver.encode(["left": margins], forKey: "byEdge")
        try archiver.encode("after", forKey: "name")
        try archiver.encode(42, forKey: "width")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        fatalError("only written")
    }
}

/// Falls back to defaults when the archived margins cannot be read, as an app migrating its
/// archives would, and reads on; `order` says when it reads them: first, in between, or after
/// the keys stored after them (so that the record is read out of order).
private final class Settings: GraphCoding {
    enum Order: CaseIterable { case asStored, widthFirst }
    nonisolated(unsafe) static var order = Order.asStored

    var margins: Margins?
    var history: [Margins]?
    var byEdge: [String: Margins]?
    var name = ""
    var width = 0

    func encode(with archiver: GraphArchiver) throws {
        fatalError("only read")
    }

    init(from unarchiver: GraphUnarchiver) throws {
        if Self.order == .widthFirst { width = try unarchiver.decode(Int.self, forKey: "width") }
        margins = try? unarchiver.decode(Margins.self, forKey: "margins")
        history = try? unarchiver.decode([Margins].self, forKey: "history")
        byEdge = try? unarchiver.decode([String: Margins].self, forKey: "byEdge")
        name = try unarchiver.decode(String.self, forKey: "name")
        if Self.order == .asStored { width = try unarchiver.decode(Int.self, forKey: "width") }
    }
}

@Suite("Caught decoding errors", .serialized)
struct CaughtErrorTests {
    /// A nested value's failure must not leave the unarchiver inside that value (a record, an
    /// array of records, a dictionary of them): the keys after it are the outer record's, and
    /// the outer "name" must not be the nested record's. Every initializer throws from inside
    /// a nested record, read in order and out of order.
    @Test(arguments: Settings.Order.allCases)
    fileprivate func aCaughtFailureInANestedValueLeavesTheOuterRecordReadable(order: Settings.Order) throws {
        Settings.order = order
        let data = try GraphArchiver.archivedData(withRootObject: [OldSettings(), OldSettings()])
        let settings = try GraphUnarchiver.unarchivedObject(
            ofType: [Settings].self,
            from: data,
            registry: GraphTypeRegistry([Settings.self])
        )
        #expect(settings.count == 2)
        for each in settings {
            #expect(each.margins == nil)
            #expect(each.history == nil)
            #expect(each.byEdge == nil)
            #expect(each.name == "after")
            #expect(each.width == 42)
        }
    }
}

private struct EncodeRefusal: Error {}

/// Writes part of itself, then refuses.
private struct HalfWritten: GraphCoding {
    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(1, forKey: "a")
        try archiver.encode(["x", "y"], forKey: "b")
        throw EncodeRefusal()
    }

    init() {}
    init(from unarchiver: GraphUnarchiver) throws { throw EncodeRefusal() }
}

/// An object that refuses to be written.
private final class RefusingObject: GraphCoding {
    init() {}
    func encode(with archiver: GraphArchiver) throws { throw EncodeRefusal() }
    init(from unarchiver: GraphUnarchiver) throws { throw EncodeRefusal() }
}

/// Catches the nested value's error and writes on.
private final class Swallower: GraphCoding {
    init() {}

    func encode(with archiver: GraphArchiver) throws {
        try? archiver.encode(HalfWritten(), forKey: "bad")
        try? archiver.encode([HalfWritten()], forKey: "badList")
        if Self.withObject { try? archiver.encode([RefusingObject()], forKey: "objects") }
        try archiver.encode("after", forKey: "name")
    }

    nonisolated(unsafe) static var withObject = false
    let name = ""
    init(from unarchiver: GraphUnarchiver) throws {
        _ = try unarchiver.decode(String.self, forKey: "name")
    }
}

/// An encoder that catches a nested value's error and encodes on has left part of that value
/// written: the archiver refuses to finish, naming the error, and a file is left as it was.
@Suite("Caught encoding errors", .serialized)
struct CaughtEncodingErrorTests {
    @Test func aCaughtFailureInANestedValueFailsTheArchiveNamingIt() throws {
        Swallower.withObject = false
        #expect {
            _ = try GraphArchiver.archivedData(withRootObject: [Swallower(), Swallower()])
        } throws: { error in
            guard let error = error as? GraphArchiveError else { return false }
            return error.code == .invalidState && error.message.contains("EncodeRefusal")
                && error.message.contains("caught")
        }
    }

    @Test func aFailingObjectFailsTheArchiveWithItsOwnError() throws {
        // Object bodies are written after the reference the caller caught around: the error
        // reaches the top.
        Swallower.withObject = true
        defer { Swallower.withObject = false }
        #expect(throws: EncodeRefusal.self) {
            _ = try GraphArchiver.archivedData(withRootObject: [Swallower()])
        }
    }

    @Test func aFileIsLeftAsItWas() throws {
        Swallower.withObject = false
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("caught-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("settings.archive").path
        try GraphArchiver.archiveRootObject(["kept"], toFile: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: GraphArchiveError.self) { try GraphArchiver.archiveRootObject([Swallower()], toFile: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["settings.archive"])
    }
}
