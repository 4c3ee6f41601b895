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
}
