// Tests/BenchmarksTests/CodableCallsFloorTests.swift - the codable workload's floor coders

import Testing

@testable import Benchmarks

@Suite struct CodableCallsFloorTests {
    @Test func floorCodersRoundTripTheModelWithItsSharing() throws {
        var settings = Settings()
        settings.count = 300
        settings.sharedFraction = 0.5
        let workload = CodableGridStateWorkload(settings: settings)
        let model = workload.model(300)
        let repeats = CodableCallsEncoder.repeats(of: model)
        let encoder = CodableCallsEncoder(repeats: repeats)
        defer { encoder.finish() }
        try model.encode(to: encoder)
        let distinct = repeats.filter { $0 < 0 }.count
        #expect(distinct < 300 && encoder.values.strings.count == 2 * distinct)
        #expect(encoder.values.ints.count == distinct && encoder.values.counts == [300])

        let decoded = try CodableGridStateWorkload.floorDecode(encoder.values, repeats: repeats)
        try CodableGridStateWorkload.verify(decoded, against: workload.graph(300))
    }

    @Test func repeatsNameEachInstancesFirstSlot() {
        let first = GridStateModel(name: "a", color: 1, date: "d")
        let second = GridStateModel(name: "b", color: 2, date: "d")
        #expect(CodableCallsEncoder.repeats(of: [first, second, first, second, first]) == [-1, -1, 0, 1, 0])
    }

    @Test func valuesTheModelDidNotWriteThrow() throws {
        let model = [GridStateModel(name: "a", color: 1, date: "d")]
        let encoder = CodableCallsEncoder(repeats: [-1])
        defer { encoder.finish() }
        try model.encode(to: encoder)
        var short = encoder.values
        short.strings.removeLast()
        #expect(throws: VerificationError.self) { try CodableGridStateWorkload.floorDecode(short, repeats: [-1]) }
        var noArray = encoder.values
        noArray.counts = []
        #expect(throws: VerificationError.self) { try CodableGridStateWorkload.floorDecode(noArray, repeats: [-1]) }
        // A repeat of an element that does not come before it.
        #expect(throws: VerificationError.self) {
            try CodableGridStateWorkload.floorDecode(encoder.values, repeats: [0])
        }
    }
}
