// Sources/GraphArchive/Internals/PayloadWindow.swift - a payload given back as the decoder passes it

import Dispatch

/// A payload in pages of its own (`ArchiveBytes(reservingMapped:)`) that the decoder gives back
/// as it builds the objects whose records it has passed, so that memory held for the input
/// shrinks while the graph grows (FORMAT.md §8). This one holds all of its bytes from the start
/// (a decompressed payload rebuilt row-wise); ``FilePayloadStream`` reads its own as they are
/// needed.
///
/// Bytes keep their offsets, so readers and error offsets are those of the payload held whole;
/// bytes given back read as zero, and the decoder never reads them again.
class PayloadWindow {
    let bytes: ArchiveBytes
    /// Bytes before this offset are in (read, for a stream).
    fileprivate(set) var loadedEnd: Int
    /// Bytes before this offset are kept whatever `discard(below:)` is asked: the header, the
    /// tables and the top section.
    private var keptEnd: Int
    /// Bytes from `keptEnd` up to this offset have been given back.
    private var discardedEnd: Int

    /// Payloads at least this large are given back as they are decoded (and files read so);
    /// smaller ones are held whole.
    static let minimumSize = 8 << 20

    var end: Int { bytes.count }
    /// True once some object bytes have been given back: error paths that walk the object
    /// table from its start cannot.
    var hasDiscarded: Bool { discardedEnd > keptEnd }
    /// True when every byte is in, so the decoder need not ask for more.
    var isWhole: Bool { loadedEnd == end }

    /// A window over `bytes`, reserved with `ArchiveBytes(reservingMapped:)`, whose bytes before
    /// `loadedEnd` are in.
    init(bytes: ArchiveBytes, loadedEnd: Int) {
        self.bytes = bytes
        self.loadedEnd = loadedEnd
        keptEnd = 0
        discardedEnd = 0
    }

    /// Makes the bytes up to `target` (at most the end) readable; a whole payload has them.
    func load(upTo target: Int, memory: inout MemoryBudget) throws(GraphArchiveError) {}

    /// How many records (from the first) lie whole before `loadedEnd`, when the window knows;
    /// nil when the decoder has to step over them to find out.
    var recordsLoaded: Int? { nil }

    /// Keeps every byte before `offset` (the tables and the top section) for good.
    func keep(below offset: Int) {
        keptEnd = max(keptEnd, min(offset, loadedEnd))
        discardedEnd = max(discardedEnd, keptEnd)
    }

    /// Gives back what is in before `offset` and is not kept, in whole pages, and releases
    /// it from `memory`.
    func discard(below offset: Int, memory: inout MemoryBudget) {
        let offset = min(offset, loadedEnd)
        guard offset > discardedEnd else { return }
        let given = bytes.discard(discardedEnd..<offset)
        guard !given.isEmpty else { return }
        // Bytes between the last discard and the first whole page stay resident: count them gone too.
        memory.release(given.upperBound - discardedEnd)
        discardedEnd = given.upperBound
    }

    /// Once every byte is in: checks they are what was verified before (a stream's checksum).
    func verify() throws(GraphArchiveError) {}

    /// For a decode that failed: the error that explains the failure better, if any (a
    /// stream's file changed under it).
    func damage() -> GraphArchiveError? { nil }
}

/// The bytes of an uncompressed archive file, read a piece at a time as the decoder reaches
/// them, and given back once it has passed them, so that a load holds a window of the file
/// rather than all of it (FORMAT.md §8).
///
/// `bytes` is reserved for the whole file and resident only where read and not yet given
/// back. The payload checksum was verified by a pass before; every byte read is hashed again
/// on the way, and compared once the last byte is in (`verify`): a file changed in place
/// between the passes is caught, and a decode that fails before then asks `damage()` whether
/// such a change explains the failure.
final class FilePayloadStream: PayloadWindow {
    private let file: ArchiveFile
    /// Where the stored payload starts (after the header).
    let payloadStart: Int
    private let expectedChecksum: UInt64
    private var checksum = XXH64()

    /// What one read adds to the window; a payload held whole is also given back about this
    /// often. Small, so that little is held ahead of the decoder: with a million objects
    /// built from a 10 MB file, what is held at the end is on top of all of them.
    static let pieceSize = 512 << 10

    /// Takes over `file`, whose header (`headerBytes`, its first ``ArchiveHeader/size`` bytes)
    /// has been checked, and reserves room for all of it.
    ///
    /// - Throws: `.limitExceeded` when the address space cannot hold the file.
    init(file: consuming ArchiveFile, headerBytes: ArchiveBytes, expectedChecksum: UInt64) throws(GraphArchiveError) {
        let bytes = try ArchiveBytes(reservingMapped: file.size, hugePages: false)
        payloadStart = headerBytes.count
        _ = headerBytes.withUnsafeBytes(0..<headerBytes.count) { header in
            bytes.fill(0..<header.count) { target in
                target.copyMemory(from: header)
                return header.count
            }
        }
        self.expectedChecksum = expectedChecksum
        self.file = file
        super.init(bytes: bytes, loadedEnd: payloadStart)
        keep(below: payloadStart)
    }

    /// Reads the file up to `target` (at most its end), charging `memory` for what is read.
    ///
    /// - Throws: `.limitExceeded` past the budget, `.ioError`, `.truncated` if the file
    ///   ended early (another process cut it short).
    override func load(upTo target: Int, memory: inout MemoryBudget) throws(GraphArchiveError) {
        let target = min(target, end)
        guard target > loadedEnd else { return }
        try memory.charge(target - loadedEnd, for: "reading \(target - loadedEnd) bytes of the archive file")
        let start = loadedEnd
        let read = try bytes.fill(start..<target) { (buffer) throws(GraphArchiveError) -> Int in
            let count = try file.read(into: buffer, at: start)
            checksum.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            return count
        }
        loadedEnd = start + read
        guard loadedEnd == target else {
            throw GraphArchiveError(.truncated, "\(file.path) ended while it was being read", offset: loadedEnd)
        }
    }

    /// Compares the checksum of the whole stored payload, all of it read, with the header's.
    ///
    /// - Throws: `.ioError` when they differ: the file changed since the first pass.
    override func verify() throws(GraphArchiveError) {
        precondition(loadedEnd == end, "the whole file is read before its checksum is compared")
        if let mismatch = mismatch(checksum.finalize()) { throw mismatch }
    }

    /// For a decode that failed before the whole file was read: hashes the rest of the file,
    /// without keeping it, and returns `.ioError` if the file changed since the checksum was
    /// verified (the change, not the decoder, explains the failure), else nil. Nil too if the
    /// rest cannot be read.
    override func damage() -> GraphArchiveError? {
        var rest = checksum
        do {
            try file.forEachPiece(of: loadedEnd..<end) { piece in rest.update(piece) }
        } catch {
            return nil
        }
        return mismatch(rest.finalize())
    }

    private func mismatch(_ actual: UInt64) -> GraphArchiveError? {
        guard actual != expectedChecksum else { return nil }
        return GraphArchiveError(.ioError, "\(file.path) changed while it was being read")
    }
}

/// A decompressed columnar payload (FORMAT.md §5.5, §5.6) rebuilt row-wise on a thread of its
/// own, a few thousand records at a time, while the decoder builds the objects of the records
/// already rebuilt: rebuilding then costs a decode little more than the wait for the first ones.
///
/// The tables and the top section are written before the thread starts. The thread publishes,
/// after every ``recordsPerPublication`` records (and at the end of each block), how far the
/// rows are written and how many records they hold; ``load(upTo:memory:)`` waits for the bytes
/// asked for, and hands out only published ones, which the thread never writes again (and the
/// decoder's `discard` gives back only pages below them). An error of the rebuild is thrown by
/// the first `load` that needs bytes past it. The thread stops after its current records once
/// the window is gone (a decode that failed).
final class RebuiltPayloadWindow: PayloadWindow {
    /// What the thread has done, read and written under the lock: published records' bytes are
    /// complete before their end is.
    private struct Progress {
        var end: Int
        var records = 0
        var isDone = false
        var failure: GraphArchiveError?
        var isCancelled = false
    }

    /// The rebuild and its output, touched only by the rebuilding thread once it starts.
    private final class Job: @unchecked Sendable {
        var rebuild: ColumnarObjects.Rebuild
        var output: ArchiveBytesWriter

        init(rebuild: consuming ColumnarObjects.Rebuild, output: consuming ArchiveBytesWriter) {
            self.rebuild = rebuild
            self.output = output
        }
    }

    /// Records rebuilt between publications: a few thousand, so that the decoder starts on a
    /// block's first records (and never waits long for more) rather than on the block whole
    /// (a 2 MiB block holds about 55,000 grid-state records).
    static let recordsPerPublication = 4096

    private let progress: Locked<Progress>
    /// Signalled once per publication, so a waiting `load` looks again.
    private let published = DispatchSemaphore(value: 0)
    private var records = 0
    /// Budget held for the columnar copy, released once the thread is done with it.
    private var columnarCharge: Int

    /// Starts rebuilding `rebuild` into `rows` (reserved with `ArchiveBytes(reservingMapped:)`,
    /// `rebuild.rowCount` bytes), which may be a slice of the reservation of `rebuild.stored`
    /// that starts at least `rebuild.rowsLead` bytes before it (`slice(from:count:)`): the rows
    /// are then written over the payload's bytes already read.
    ///
    /// - Parameter columnarCharge: What the budget holds for the columnar copy, released by the
    ///   first `load` after the rebuild is done.
    /// - Throws: what writing the tables and the top section throws.
    init(
        rebuilding rebuild: consuming ColumnarObjects.Rebuild,
        into rows: ArchiveBytes,
        columnarCharge: Int
    ) throws(GraphArchiveError) {
        var output = rows.sequentialWriter()
        try rebuild.writeHead(into: &output)
        let headEnd = output.count
        progress = Locked(Progress(end: headEnd))
        self.columnarCharge = columnarCharge
        super.init(bytes: rows, loadedEnd: headEnd)
        keep(below: headEnd)
        let job = Job(rebuild: rebuild, output: output)
        let progress = progress
        let published = published
        DispatchQueue.global(qos: .userInitiated).async {
            var failure: GraphArchiveError?
            do throws(GraphArchiveError) {
                while true {
                    let written = try job.rebuild.writeNextRecords(
                        into: &job.output,
                        atMost: Self.recordsPerPublication
                    )
                    guard written > 0 else { break }
                    let end = job.output.count
                    let isCancelled = progress.withLock { (state) -> Bool in
                        state.end = end
                        state.records += written
                        return state.isCancelled
                    }
                    published.signal()
                    if isCancelled { break }
                }
                if job.output.count != job.rebuild.rowCount && progress.withLock({ !$0.isCancelled }) {
                    failure = GraphArchiveError(
                        .corrupt,
                        "rebuilt payload has \(job.output.count) bytes, expected \(job.rebuild.rowCount)"
                    )
                }
            } catch {
                failure = error
            }
            // What the rows did not overwrite (the last blocks' worth, when they share the
            // payload's pages) is no longer read.
            job.rebuild.stored.discard(pastEndOf: rows)
            progress.withLock { (state) in
                state.isDone = true
                state.failure = failure
            }
            published.signal()
        }
    }

    deinit {
        progress.withLock { $0.isCancelled = true }
    }

    override var recordsLoaded: Int? { records }

    /// Waits until the rows are rebuilt up to `target` (at most the end), or the rebuild failed
    /// before it.
    ///
    /// - Throws: the rebuild's error (`.corrupt` and the others of
    ///   ``ColumnarObjects/rows(fromColumnar:header:options:head:)``) when it stopped before `target`.
    override func load(upTo target: Int, memory: inout MemoryBudget) throws(GraphArchiveError) {
        let target = min(target, end)
        while true {
            let seen = progress.withLock { $0 }
            loadedEnd = seen.end
            records = seen.records
            if seen.isDone && columnarCharge > 0 {
                memory.release(columnarCharge)
                columnarCharge = 0
            }
            if loadedEnd >= target { return }
            if let failure = seen.failure { throw failure }
            published.wait()
        }
    }
}
