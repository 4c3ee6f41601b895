// Tests/GraphArchiveTests/Unarchiving/ObjectArrayDecodeTests.swift - decode([T].self) of a class reads as GraphValue's path does

import Foundation
import Testing

@testable import GraphArchive

final class ArrayItem: GraphCoding {
    let label: Int

    init(_ label: Int) { self.label = label }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(label, forKey: "label")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        label = try unarchiver.decode(Int.self, forKey: "label")
    }
}

final class OtherArrayItem: GraphCoding {
    init() {}
    func encode(with archiver: GraphArchiver) throws {}
    init(from unarchiver: borrowing GraphUnarchiver) throws {}
}

/// What `ItemsWriter` writes under "items".
enum StoredItems: CaseIterable {
    case references, empty, optionals, optionalsWithNil, number, null, otherClass, absent
}

/// Writes one of `StoredItems` under "items", and the same items again under "more" for
/// shared references.
final class ItemsWriter: GraphCoding {
    static var archivedTypeName: String { "Items" }

    let stored: StoredItems

    init(_ stored: StoredItems) { self.stored = stored }

    func encode(with archiver: GraphArchiver) throws {
        let items = [ArrayItem(1), ArrayItem(2), ArrayItem(3)]
        switch stored {
        case .references: try archiver.encode(items, forKey: "items")
        case .empty: try archiver.encode([ArrayItem](), forKey: "items")
        case .optionals: try archiver.encode(items as [ArrayItem?], forKey: "items")
        case .optionalsWithNil: try archiver.encode([items[0], nil], forKey: "items")
        case .number: try archiver.encode(7, forKey: "items")
        case .null: try archiver.encode(ArrayItem?.none, forKey: "items")
        case .otherClass: try archiver.encode([OtherArrayItem()], forKey: "items")
        case .absent: break
        }
        try archiver.encode(items, forKey: "more")
    }

    init(from unarchiver: borrowing GraphUnarchiver) throws { stored = .absent }
}

/// How `ItemsReader` reads an array of `ArrayItem`.
protocol ItemsReading {
    static func read(_ key: String, from unarchiver: borrowing GraphUnarchiver) throws -> [ArrayItem]
}

/// With the direct `decode([T].self)`.
enum DirectItemsReading: ItemsReading {
    static func read(_ key: String, from unarchiver: borrowing GraphUnarchiver) throws -> [ArrayItem] {
        try unarchiver.decode([ArrayItem].self, forKey: key)
    }
}

/// Through `GraphValue`'s generic path, as `decode` read it before the direct form.
enum GenericItemsReading: ItemsReading {
    static func read(_ key: String, from unarchiver: borrowing GraphUnarchiver) throws -> [ArrayItem] {
        try generic([ArrayItem].self, key, unarchiver)
    }

    private static func generic<T: GraphValue>(_: T.Type, _ key: String, _ unarchiver: borrowing GraphUnarchiver)
        throws -> T
    {
        try unarchiver.decode(T.self, forKey: key)
    }
}

/// Reads `ItemsWriter`'s "items" and "more" as `Reading` says.
final class ItemsReader<Reading: ItemsReading>: GraphCoding {
    static var archivedTypeName: String { "Items" }

    let items: [ArrayItem]
    let more: [ArrayItem]

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        items = try Reading.read("items", from: unarchiver)
        more = try Reading.read("more", from: unarchiver)
    }
}

/// Reads "items" and "more" as arrays of optionals.
final class OptionalItemsReader: GraphCoding {
    static var archivedTypeName: String { "Items" }

    let items: [ArrayItem?]
    let more: [ArrayItem?]

    func encode(with archiver: GraphArchiver) throws {}

    init(from unarchiver: borrowing GraphUnarchiver) throws {
        items = try unarchiver.decode([ArrayItem?].self, forKey: "items")
        more = try unarchiver.decode([ArrayItem?].self, forKey: "more")
    }
}

@Suite("decode([T].self) of a class")
struct ObjectArrayDecodeTests {
    /// The labels of "items" and "more" and whether they share their objects, or the error.
    static func read<Reading: ItemsReading>(_: Reading.Type, _ data: Data) -> String {
        do {
            let reader = try GraphUnarchiver.unarchivedObject(
                ofType: ItemsReader<Reading>.self,
                from: data,
                registry: GraphTypeRegistry([ArrayItem.self, OtherArrayItem.self])
            )
            let shared = zip(reader.items, reader.more).allSatisfy { $0 === $1 }
            return "\(reader.items.map(\.label)) \(reader.more.map(\.label)) shared: \(shared)"
        } catch let error as GraphArchiveError {
            // The reader's own name, which differs, left out.
            let message = error.message.replacingOccurrences(of: "<\(Reading.self)>", with: "")
            return "\(error.code) \(message) at \(error.offset.map(String.init) ?? "-") \(error.keyPath)"
        } catch {
            return "\(error)"
        }
    }

    @Test("reads and fails as the generic path does", arguments: StoredItems.allCases)
    func sameAsGeneric(_ stored: StoredItems) throws {
        let data = try GraphArchiver.archivedData(withRootObject: ItemsWriter(stored))
        let direct = Self.read(DirectItemsReading.self, data)
        let generic = Self.read(GenericItemsReading.self, data)
        #expect(direct == generic)
        switch stored {
        case .references, .optionals: #expect(direct == "[1, 2, 3] [1, 2, 3] shared: true")
        case .empty: #expect(direct.hasPrefix("[] [1, 2, 3]"))
        case .optionalsWithNil, .number, .null, .otherClass: #expect(direct.hasPrefix("typeMismatch"), "\(direct)")
        case .absent: #expect(direct.hasPrefix("keyNotFound"), "\(direct)")
        }
    }

    /// A field that was `[T]` read as `[T?]`: the packed references come back wrapped, shared
    /// objects still shared; what is no array of `ArrayItem` is still an error.
    @Test("an array of objects reads as an array of optionals", arguments: StoredItems.allCases)
    func readAsOptionals(_ stored: StoredItems) throws {
        let data = try GraphArchiver.archivedData(withRootObject: ItemsWriter(stored))
        let registry = GraphTypeRegistry([ArrayItem.self, OtherArrayItem.self])
        do {
            let reader = try GraphUnarchiver.unarchivedObject(
                ofType: OptionalItemsReader.self,
                from: data,
                registry: registry
            )
            let labels = reader.items.map { $0?.label }
            let shared = zip(reader.items, reader.more).allSatisfy { $0 == nil || $0 === $1 }
            #expect(reader.more.map { $0?.label } == [1, 2, 3])
            #expect(shared)
            switch stored {
            case .references, .optionals: #expect(labels == [1, 2, 3])
            case .empty: #expect(labels.isEmpty)
            case .optionalsWithNil: #expect(labels == [1, nil])
            case .number, .null, .otherClass, .absent: Issue.record("\(stored) read as \(labels)")
            }
        } catch let error as GraphArchiveError {
            switch stored {
            case .number, .null, .otherClass: #expect(error.code == .typeMismatch, "\(error)")
            case .absent: #expect(error.code == .keyNotFound, "\(error)")
            case .references, .optionals, .empty, .optionalsWithNil: Issue.record("\(stored): \(error)")
            }
        }
    }

    @Test("damage, checksums resealed, is the same result as through the generic path")
    func damagedArchive() throws {
        let archive = [UInt8](try GraphArchiver.archivedData(withRootObject: ItemsWriter(.references)))
        // Every bit of the payload flipped: the same array or error either way, and no crash.
        for bit in (ArchiveHeader.size * 8)..<(archive.count * 8) {
            var damaged = archive
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            let data = Data(withRecomputedChecksums(damaged))
            let direct = Self.read(DirectItemsReading.self, data)
            #expect(direct == Self.read(GenericItemsReading.self, data), "bit \(bit)")
        }
    }
}
