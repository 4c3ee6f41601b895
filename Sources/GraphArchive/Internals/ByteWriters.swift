// Sources/GraphArchive/Internals/ByteWriters.swift - a row of byte buffers addressed by index

/// Byte buffers addressed by index, each growing on its own: the columns of an object block
/// being built (FORMAT.md §5.6), one cell at a time.
///
/// An array cannot hold the noncopyable ``ByteWriter``, and an array of class boxes holding
/// one retains and releases the box, and checks exclusive access to its buffer at run time, on
/// every cell appended: 10 instructions in 17 of a zstd encode of grid states (callgrind). These
/// buffers live in one allocation of their own and are reached through it.
struct ByteWriters: ~Copyable {
    private var writers: UnsafeMutablePointer<ByteWriter>
    private var capacity: Int
    private(set) var count = 0

    init() {
        capacity = 4
        writers = .allocate(capacity: capacity)
    }

    deinit {
        writers.deinitialize(count: count)
        writers.deallocate()
    }

    /// Adds empty buffers until there are `newCount`.
    mutating func extend(to newCount: Int) {
        if newCount > capacity {
            let grown = UnsafeMutablePointer<ByteWriter>.allocate(capacity: max(newCount, capacity * 2))
            grown.moveInitialize(from: writers, count: count)
            writers.deallocate()
            writers = grown
            capacity = max(newCount, capacity * 2)
        }
        while count < newCount {
            (writers + count).initialize(to: ByteWriter())
            count += 1
        }
    }

    /// Appends `bytes` to buffer `index` (`0..<count`).
    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer, to index: Int) {
        precondition(index >= 0 && index < count)
        writers[index].writeBytes(bytes)
    }

    /// The bytes buffer `index` holds.
    func bytesCount(_ index: Int) -> Int {
        precondition(index >= 0 && index < count)
        return writers[index].count
    }

    /// Calls `body` with buffer `index`.
    func withWriter<R, E: Error>(_ index: Int, _ body: (borrowing ByteWriter) throws(E) -> R) throws(E) -> R {
        precondition(index >= 0 && index < count)
        return try body(writers[index])
    }

    /// Empties buffer `index`, keeping its capacity.
    mutating func empty(_ index: Int) {
        precondition(index >= 0 && index < count)
        writers[index].truncate(to: 0)
    }
}
