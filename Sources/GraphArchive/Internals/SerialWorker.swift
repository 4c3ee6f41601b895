// Sources/GraphArchive/Internals/SerialWorker.swift - one job at a time on another thread, beside the caller

import Dispatch

/// Work done on another thread while the caller goes on: jobs run one after another, in the
/// order given, on a state the worker owns, and the caller is at most one job ahead. The encoder
/// hands its records to such a worker, which lays them out in blocks and compresses them while
/// the next records are encoded: a compressed encode then takes about as long as compressing.
///
/// The state is touched by one thread at a time: by the running job, or by the caller while no
/// job runs (``submit(preparing:_:)`` waits for the last one to end before it prepares the
/// next; ``drained(_:)`` waits for it too). The semaphore hands the state over each time, which
/// orders every access of one thread after those of the other: hence `@unchecked Sendable`.
final class SerialWorker<State: AnyObject>: @unchecked Sendable {
    private let queue = DispatchQueue(label: "GraphArchive.SerialWorker")
    /// 1 while no job runs: the caller's turn with the state.
    private let idle = DispatchSemaphore(value: 1)
    private let state: State
    /// The first error a job threw; the jobs after it are skipped.
    private var failure: GraphArchiveError?

    init(_ state: State) {
        self.state = state
    }

    /// Waits for the last job to end, lets `prepare` give the state what the next job needs
    /// (on the caller's thread: the bytes to copy before the caller reuses its buffer), then
    /// starts `job` on the worker's thread and returns without waiting for it.
    ///
    /// - Throws: the error an earlier job threw, before anything else is done.
    func submit(
        preparing prepare: (State) -> Void,
        _ job: @escaping (State) throws(GraphArchiveError) -> Void
    ) throws(GraphArchiveError) {
        idle.wait()
        if let failure {
            idle.signal()
            throw failure
        }
        prepare(state)
        let work = UncheckedJob(run: job)
        queue.async { [self] in
            defer { idle.signal() }
            do throws(GraphArchiveError) {
                try work.run(state)
            } catch {
                failure = error
            }
        }
    }

    /// Waits for the last job to end, then runs `body` on the state on the caller's thread.
    ///
    /// - Throws: the error a job threw, or what `body` throws.
    func drained<Result>(_ body: (State) throws(GraphArchiveError) -> Result) throws(GraphArchiveError) -> Result {
        idle.wait()
        defer { idle.signal() }
        if let failure { throw failure }
        return try body(state)
    }

    /// A job crossing to the worker's thread; it only touches the state, whose turn it then is.
    private struct UncheckedJob: @unchecked Sendable {
        var run: (State) throws(GraphArchiveError) -> Void
    }
}
