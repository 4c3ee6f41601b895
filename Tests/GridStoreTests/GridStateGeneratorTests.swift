// Tests/GridStoreTests/GridStateGeneratorTests.swift - the deterministic record generator

import GraphArchive
import Testing

@testable import GridStore

@Suite("Generator")
struct GridStateGeneratorTests {
    @Test func sharedSlotsReferToEarlierRecords() throws {
        let states = GridStateGenerator(count: 1000, sharedFraction: 0.25, seed: 7).generate()
        #expect(states.count == 1000)
        let distinct = Set(states.map(ObjectIdentifier.init))
        #expect(distinct.count <= 750)
        #expect(Set(states[0..<750].map(ObjectIdentifier.init)).count == 750)
        for state in states {
            #expect((5...40).contains(state.name.utf8.count))
            #expect((0..<(1 << 24)).contains(state.color))
            #expect(state.date.utf8.count == 20)
        }
    }

    @Test func sameSeedSameRecords() {
        let first = GridStateGenerator(count: 50, sharedFraction: 0.5, seed: 3).generate()
        let second = GridStateGenerator(count: 50, sharedFraction: 0.5, seed: 3).generate()
        #expect(first.map(\.name) == second.map(\.name))
        #expect(first.map(\.date) == second.map(\.date))
    }

    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"),
        (1_709_294_399, "2024-03-01T11:59:59Z"), (-1, "1969-12-31T23:59:59Z"),
    ])
    func iso8601Formatting(seconds: Int64, expected: String) {
        #expect(GridStateGenerator.iso8601(secondsSince1970: seconds) == expected)
    }

    @Test func archiveRoundTripKeepsSharing() throws {
        let states = GridStateGenerator(count: 2000, sharedFraction: 0.25, seed: 1).generate()
        let data = try GraphArchiver.archivedData(withRootObject: states)
        let info = try GraphUnarchiver.archiveInfo(from: data)
        #expect(info.objectCount == 1500)
        #expect(info.rootElementCount == 2000)
        let back = try GraphUnarchiver.unarchivedObject(ofType: [GridState].self, from: data)
        #expect(back.map(\.name) == states.map(\.name))
        for index in states.indices {
            let original = states.firstIndex { $0 === states[index] }!
            #expect(back[index] === back[original])
        }
    }
}
