// Sources/GraphArchive/Internals/PagePopulator.swift - fresh pages made resident ahead of a writer

import Dispatch
import Synchronization

/// Makes the pages of a range of reserved bytes (`ArchiveBytes(reservingMapped:)`) resident on
/// a thread of its own, a piece at a time, ahead of a writer that fills the range front to
/// back (zstd decompressing a payload): the writer then finds them there instead of taking a
/// fault and zeroing each page itself, as zstd's floor (decompressing into a buffer made
/// beforehand) does not. Decompressing 1M grid states' 38.6 MB payload took 39.9 ms (median of
/// 54) with the faults, 36.2 ms without, against zstd's own 32 ms.
///
/// It stays at most ``lead`` bytes ahead of what the writer reports (`advance(to:)`), so a
/// frame that claims more than it holds makes little more resident than it writes. When the
/// system cannot populate pages (Linux before 5.14, other systems), it stops at the first
/// refusal, and the writer faults its pages in as before.
final class PagePopulator: Sendable {
    /// Populates the pages `range` of the bytes touches; false if it cannot.
    typealias Populate = @Sendable (Range<Int>) -> Bool

    private let range: Range<Int>
    /// An offset at which a piece starts: on huge pages, the start of one, so that each piece
    /// covers one.
    private let boundary: Int
    private let populate: Populate
    /// How far the writer has written, from `range`'s start.
    private let written: Atomic<Int>
    private let isStopped = Atomic<Bool>(false)
    /// Signalled when the writer moves or stops, so a waiting thread looks again.
    private let moved = DispatchSemaphore(value: 0)
    /// Signalled once the thread has returned.
    private let finished = DispatchSemaphore(value: 0)

    /// How far ahead of the writer pages are made resident: a few of zstd's steps (about
    /// 2.6 MB of grid-state payload per megabyte of frame it is given).
    static let lead = 8 << 20
    /// What one call populates: a huge page's worth, which the writer can use as soon as it is in.
    static let piece = ZeroedMemory.hugePageBytes

    /// Starts making `range` of `bytes` resident, written from its start.
    convenience init(_ bytes: ArchiveBytes, range: Range<Int>) {
        self.init(range: range, boundary: bytes.hugePageStart(of: range.lowerBound)) { bytes.populate($0) }
    }

    /// Starts calling `populate` on pieces of `range`, in order, ahead of the writer, each
    /// ending at `boundary` plus a multiple of ``piece`` (or where the range or the lead ends).
    init(range: Range<Int>, boundary: Int, populate: @escaping Populate) {
        self.range = range
        self.boundary = boundary
        self.populate = populate
        written = Atomic(range.lowerBound)
        let populator = self
        DispatchQueue.global(qos: .userInitiated).async { populator.run() }
    }

    /// Reports that the writer has written the range up to `offset`.
    func advance(to offset: Int) {
        written.store(offset, ordering: .relaxed)
        moved.signal()
    }

    /// Stops the thread after its current piece (the writer is done or failed).
    func stop() {
        isStopped.store(true, ordering: .relaxed)
        moved.signal()
    }

    /// Waits until the thread has returned: once it has populated the whole range, been
    /// stopped, or been refused.
    func wait() {
        finished.wait()
        finished.signal()
    }

    private func run() {
        defer { finished.signal() }
        var next = range.lowerBound
        while !isStopped.load(ordering: .relaxed) {
            let writer = written.load(ordering: .relaxed)
            // What the writer has passed is resident already.
            next = max(next, writer)
            guard next < range.upperBound else { return }
            let limit = min(range.upperBound, writer + Self.lead)
            guard next < limit else {
                moved.wait()
                continue
            }
            let end = min(limit, boundary + ((next - boundary) / Self.piece + 1) * Self.piece)
            guard populate(next..<end) else { return }
            next = end
        }
    }
}
