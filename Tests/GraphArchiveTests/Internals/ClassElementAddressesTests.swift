// Tests/GraphArchiveTests/Internals/ClassElementAddressesTests.swift - the addresses of an array's objects

import Testing

@testable import GraphArchive

@Suite("Class element addresses")
struct ClassElementAddressesTests {
    final class Object {}

    @Test func classElementAddressesAreTheObjects() {
        let objects = (0..<6).map { _ in Object() }
        let addresses = objects.withClassElementAddresses(in: 2..<5) { Array($0) }
        #expect(addresses == objects[2..<5].map { UInt(bitPattern: ObjectIdentifier($0)) })
        #expect(objects.withClassElementAddresses(in: 6..<6) { $0.count } == 0)
    }

    /// Called from generic code that knows only that the elements are objects.
    @Test func worksForAnUnspecializedElementType() {
        func addresses<Element>(of array: [Element]) -> [UInt] {
            array.withClassElementAddresses(in: 0..<array.count) { Array($0) }
        }
        let objects = (0..<3).map { _ in Object() }
        #expect(addresses(of: objects) == objects.map { UInt(bitPattern: ObjectIdentifier($0)) })
    }

    /// What the encoders keep of an array whose objects the identity table holds unretained:
    /// the elements stay alive while the reference is held, as long as the array would.
    @Test func storageReferenceKeepsTheElementsAlive() {
        func weakly<Element: AnyObject>(_ objects: [Element]) -> [() -> Element?] {
            objects.map { object in { [weak object] in object } }
        }
        var kept: AnyObject?
        var watched: [() -> Object?] = []
        do {
            let objects = (0..<5).map { _ in Object() }
            watched = weakly(objects)
            kept = objects.storageReference
        }
        #expect(watched.allSatisfy { $0() != nil })
        kept = nil
        #expect(watched.allSatisfy { $0() == nil })
        #expect(kept == nil)
    }

    /// Taken in generic code, which knows only that the elements are objects; an empty array's
    /// reference is one too.
    @Test func storageReferenceFromGenericCode() {
        func reference<Element>(of array: [Element]) -> AnyObject { array.storageReference }
        var watched: () -> Object? = { nil }
        var kept: AnyObject?
        do {
            let object = Object()
            watched = { [weak object] in object }
            kept = reference(of: [object, Object()])
        }
        #expect(watched() != nil)
        kept = nil
        #expect(watched() == nil)
        #expect(kept == nil)
        _ = reference(of: [Object]())
    }
}
