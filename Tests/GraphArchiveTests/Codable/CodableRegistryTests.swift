// Tests/GraphArchiveTests/Codable/CodableRegistryTests.swift - one class registry for both decoders

import Foundation
import Testing

@testable import GraphArchive

/// A base class that adopts both protocols and lists its subclasses once, for both decoders.
class RegistryShape: GraphCoding, Codable {
    class var archivedSubclasses: [any GraphCoding.Type] { [RegistryCircle.self] }
    class var archivedTypeAliases: [String] { [] }

    var name: String

    init(name: String) { self.name = name }

    func encode(with archiver: GraphArchiver) throws {
        try archiver.encode(name, forKey: "name")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        name = try unarchiver.decode(String.self, forKey: "name")
    }
}

/// Listed by `RegistryShape`; lists a subclass of its own, and answers to an old name.
class RegistryCircle: RegistryShape {
    override class var archivedSubclasses: [any GraphCoding.Type] { [RegistryRing.self] }
    override class var archivedTypeAliases: [String] { ["RegistryDiscus"] }

    var radius: Double

    init(name: String, radius: Double) {
        self.radius = radius
        super.init(name: name)
    }

    private enum CodingKeys: String, CodingKey { case radius }

    override func encode(with archiver: GraphArchiver) throws {
        try super.encode(with: archiver)
        try archiver.encode(radius, forKey: "radius")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        radius = try unarchiver.decode(Double.self, forKey: "radius")
        try super.init(from: unarchiver)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(radius, forKey: .radius)
        try super.encode(to: encoder)
    }

    required init(from decoder: any Decoder) throws {
        radius = try decoder.container(keyedBy: CodingKeys.self).decode(Double.self, forKey: .radius)
        try super.init(from: decoder)
    }
}

/// Reached only through `RegistryCircle`'s list.
final class RegistryRing: RegistryCircle {
    override class var archivedTypeAliases: [String] { [] }
    var width: Double

    init(name: String, radius: Double, width: Double) {
        self.width = width
        super.init(name: name, radius: radius)
    }

    private enum CodingKeys: String, CodingKey { case width }

    override func encode(with archiver: GraphArchiver) throws {
        try super.encode(with: archiver)
        try archiver.encode(width, forKey: "width")
    }

    required init(from unarchiver: borrowing GraphUnarchiver) throws {
        width = try unarchiver.decode(Double.self, forKey: "width")
        try super.init(from: unarchiver)
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(width, forKey: .width)
        try super.encode(to: encoder)
    }

    required init(from decoder: any Decoder) throws {
        width = try decoder.container(keyedBy: CodingKeys.self).decode(Double.self, forKey: .width)
        try super.init(from: decoder)
    }
}

/// A Codable class hierarchy that does not adopt GraphCoding: nothing lists its subclasses.
class PlainShape: Codable {
    var name: String
    init(name: String) { self.name = name }
}

final class PlainSquare: PlainShape {
    var side: Int

    init(name: String, side: Int) {
        self.side = side
        super.init(name: name)
    }

    private enum CodingKeys: String, CodingKey { case side }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(side, forKey: .side)
        try super.encode(to: encoder)
    }

    required init(from decoder: any Decoder) throws {
        side = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .side)
        try super.init(from: decoder)
    }
}

@Suite("One class registry")
struct CodableRegistryTests {
    let drawing: [RegistryShape] = [
        RegistryRing(name: "ring", radius: 2, width: 0.5), RegistryCircle(name: "sun", radius: 3),
        RegistryShape(name: "sky"),
    ]

    private func summary(_ shapes: [RegistryShape]) -> [String] {
        shapes.map { shape in
            let radius = (shape as? RegistryCircle).map { " \($0.radius)" } ?? ""
            let width = (shape as? RegistryRing).map { " \($0.width)" } ?? ""
            return "\(type(of: shape)) \(shape.name)\(radius)\(width)"
        }
    }

    @Test func registeringABaseClassFollowsItsListedSubclasses() throws {
        let data = try GraphArchiveEncoder().encode(drawing)
        #expect(throws: DecodingError.self) { _ = try GraphArchiveDecoder().decode([RegistryShape].self, from: data) }
        // The base class names its subclasses, and theirs: registering it is enough, as for
        // GraphUnarchiver.
        var decoder = GraphArchiveDecoder()
        decoder.register(RegistryShape.self)
        #expect(try summary(decoder.decode([RegistryShape].self, from: data)) == summary(drawing))
    }

    @Test func oneRegistryServesBothDecoders() throws {
        let registry = GraphTypeRegistry([RegistryShape.self])
        let codable = try GraphArchiveEncoder().encode(drawing)
        let decoder = GraphArchiveDecoder(registry: registry)
        #expect(try summary(decoder.decode([RegistryShape].self, from: codable)) == summary(drawing))
        let native = try GraphArchiver.archivedData(withRootObject: drawing)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [RegistryShape].self, from: native, registry: registry)
        #expect(summary(back) == summary(drawing))
    }

    @Test func archivedTypeAliasesReadRenamedClasses() throws {
        // An archive whose circle was called RegistryDiscus when it was written.
        var bytes = [UInt8](try GraphArchiveEncoder().encode(drawing))
        let old = Array("RegistryCircle".utf8)
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: old) })
        bytes.replaceSubrange(at..<at + old.count, with: "RegistryDiscus".utf8)
        let renamed = Data(try reseal(bytes))
        var decoder = GraphArchiveDecoder()
        decoder.register(RegistryShape.self)
        let back = try decoder.decode([RegistryShape].self, from: renamed)
        #expect(summary(back) == summary(drawing))
    }

    @Test func aPlainCodableBaseClassNamesNoSubclasses() throws {
        // Nothing lists PlainSquare: the base class alone does not let it be built.
        let data = try GraphArchiveEncoder().encode([PlainSquare(name: "tile", side: 2) as PlainShape])
        var decoder = GraphArchiveDecoder()
        decoder.register(PlainShape.self)
        #expect {
            _ = try decoder.decode([PlainShape].self, from: data)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else { return false }
            return context.debugDescription.contains("PlainSquare")
        }
        decoder.register(PlainSquare.self)
        #expect(try (decoder.decode([PlainShape].self, from: data)[0] as? PlainSquare)?.side == 2)
    }

    @Test func eachDecoderBuildsOnlyTheClassesOfItsProtocol() throws {
        var registry = GraphTypeRegistry()
        registry.registerDecodable(PlainSquare.self)
        registry.register(Checklist.self, forName: "Checklist")
        #expect(registry.names == ["Checklist", "PlainSquare"])
        // A Decodable-only class is not a GraphCoding type, and the other way around.
        #expect(registry.type(named: "PlainSquare") == nil)
        #expect(registry.decodableType(named: "Checklist") == nil)
        #expect(registry.type(named: "Checklist") == Checklist.self)
        #expect(registry.decodableType(named: "PlainSquare") == PlainSquare.self)
    }
}
