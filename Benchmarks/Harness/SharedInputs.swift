// Benchmarks/Harness/SharedInputs.swift - what a workload makes once and its rows share, with what it cost

import Foundation

/// Graphs, reference archives and peer inputs a workload makes once per size and shares between
/// its rows (a peer's encode and decode rows, their pilot runs, gridstore's four operations).
///
/// Each value keeps the seconds making it took, so that a pilot run reusing an input another row
/// made still counts what the input costs at that size: the decoder of a peer whose encoder grows
/// faster than linearly must not be sent to a size whose input takes minutes to write.
final class SharedInputs {
    private var made: [String: (value: Any, seconds: Double)] = [:]

    /// The value under `key`, made by `make` the first time.
    func value<Value>(_ key: String, _ make: () throws -> Value) rethrows -> Value {
        try entry(key, make).value
    }

    /// The value under `key`, made by `make` the first time, and the seconds making it took.
    func entry<Value>(_ key: String, _ make: () throws -> Value) rethrows -> (value: Value, seconds: Double) {
        if let entry = made[key], let value = entry.value as? Value { return (value, entry.seconds) }
        let start = ContinuousClock.now
        let value = try make()
        let seconds = start.duration(to: .now).seconds
        made[key] = (value, seconds)
        return (value, seconds)
    }
}

/// What a peer's encode and decode rows start from at one size: the peer's model of the graph
/// and the peer's own archive of it, already checked by decoding it.
struct PeerInput<Model> {
    var model: Model
    var archive: Data
    /// What making the model and the checked archive took.
    var seconds = 0.0

    /// A trial of the peer on this input. Making the input encoded the model and decoded the
    /// archive, the very calls the rows time: that was their warm-up.
    func trial(run: @escaping () throws -> Void, check: @escaping () throws -> Void) -> Trial {
        Trial(bytes: archive.count, inputSeconds: seconds, isWarmedUp: true, run: run, check: check)
    }
}
