// Sources/GraphArchive/Unarchiving/MemoryBudget.swift - what decoding may commit, approved before it is allocated

/// The memory one decode may commit, charged before each allocation an archive asks for.
///
/// Swift traps when an allocation fails (and glibc fails one under `ulimit -v` rather than
/// overcommitting), so decoding allocates nothing the budget has not approved: the file or the
/// decompressed payload, the tables, one table entry and one instance per object, each string
/// longer than fits inline, each array, dictionary and byte string. Sizes are estimates of what
/// the allocator hands out (a malloc chunk's header and rounding included), never below it.
/// Past the budget, decoding stops with `limitExceeded` before the allocation.
///
/// Finding the machine's figures reads `/proc` and `/sys` (about a millisecond), which a small
/// decode should not pay: the budget starts with an allowance of ``provisionalAllowance`` and
/// asks ``AvailableMemory`` only when a charge would go past it.
struct MemoryBudget {
    /// What a decode may commit before the machine's figures are read: a process that cannot
    /// spare this much fails on its next allocation of any kind.
    static let provisionalAllowance = 32 << 20

    /// The budget, in bytes (provisional until `isResolved`).
    private(set) var limit: Int
    /// Bytes left: `limit` less what is charged and not released. Counted down on the hot path.
    private(set) var remaining: Int
    /// ``GraphUnarchiver/Options/maximumMemoryBytes``, if set.
    private let chosen: Int?
    /// Whether `limit` is final (the machine's figures read, or a chosen limit under the
    /// provisional allowance).
    private var isResolved: Bool
    /// Where the limit comes from, for the error: "maximumMemoryBytes (…)" or the machine's.
    private(set) var source: String
    /// The size of the input being decoded (the file, or the bytes handed over), once known.
    private var inputBytes: Int?

    /// Without a chosen limit, a decode commits at most this many bytes per byte of its input
    /// (and at least ``minimumInputAllowance``): a small file that claims or describes far more
    /// than any archive its size holds (a 21 KB archive of 40 million identical records) fails
    /// before that memory is committed, whatever the machine could give. Real archives need
    /// 10 to 50 times their size; ``GraphUnarchiver/Options/maximumMemoryBytes`` lifts this.
    static let expansionPerInputByte = 1024
    /// What any input may commit without a chosen limit, however small it is.
    static let minimumInputAllowance = 256 << 20

    /// What an input of `bytes` bytes may commit without a chosen limit.
    static func inputAllowance(_ bytes: Int) -> Int {
        let (product, overflow) = bytes.multipliedReportingOverflow(by: expansionPerInputByte)
        return overflow ? Int.max : max(product, minimumInputAllowance)
    }

    var used: Int { limit - remaining }

    /// The budget of one decode with `options`: ``GraphUnarchiver/Options/maximumMemoryBytes``
    /// when set, else ``AvailableMemory/budget(choosing:)``: what this process can commit,
    /// less a reserve for the rest of the program. A value set by the caller is still held to
    /// the address space left under `RLIMIT_AS`, past which every allocation fails.
    init(_ options: GraphUnarchiver.Options) {
        chosen = options.maximumMemoryBytes
        let allowance = min(chosen ?? Int.max, Self.provisionalAllowance)
        limit = allowance
        remaining = allowance
        isResolved = false
        source = ""
    }

    /// A budget of exactly `limit` bytes.
    init(limit: Int, source: String) {
        chosen = limit
        self.limit = limit
        remaining = limit
        isResolved = true
        self.source = source
    }

    /// Approves `bytes` more, or throws `.limitExceeded` saying for `what` they were asked.
    @inline(__always)
    mutating func charge(_ bytes: Int, for what: @autoclosure () -> String, offset: Int? = nil)
        throws(GraphArchiveError)
    {
        if !tryCharge(bytes) { throw exceeded(bytes, what(), offset: offset) }
    }

    /// Approves `bytes` (at most `Int.max / 2`) more if they fit; the hot paths' form, which
    /// builds no message: a subtraction and a sign test.
    @inline(__always)
    mutating func tryCharge(_ bytes: Int) -> Bool {
        remaining &-= bytes
        if remaining >= 0 { return true }
        return chargePastAllowance(bytes)
    }

    /// A charge that went past the limit: reads the machine's figures if the limit was only
    /// provisional, then approves the charge if it fits the real one.
    @inline(never)
    private mutating func chargePastAllowance(_ bytes: Int) -> Bool {
        remaining &+= bytes
        resolve()
        guard remaining >= bytes else { return false }
        remaining -= bytes
        return true
    }

    /// What is left of the final limit (read from the machine now if it was provisional), for a
    /// consumer that takes a share of it up front.
    mutating func finalRemaining() -> Int {
        resolve()
        return remaining
    }

    /// Sets the final limit and where it comes from.
    private mutating func resolve() {
        guard !isResolved else { return }
        isResolved = true
        let used = self.used
        let available = AvailableMemory.current()
        // What is already committed counts against the machine's figures as read now.
        let final = available.budget(choosing: chosen).addingReportingOverflow(used)
        limit = final.overflow ? Int.max : max(final.partialValue, used)
        if let chosen, limit >= chosen {
            limit = chosen
            source = "maximumMemoryBytes (\(Self.describe(chosen)))"
        } else if chosen != nil {
            source = "the address space this process has left (\(Self.describe(limit)))"
        } else {
            source = "the memory budget (\(Self.describe(limit))), derived from \(available.limitingFactor)"
        }
        remaining = limit - used
        applyInputAllowance()
    }

    /// Holds a budget without a chosen limit to ``inputAllowance(_:)`` of the input, `bytes`
    /// long; the first input a decode names counts (a keyed archive's, not the payload it is
    /// transcoded to).
    mutating func limitToInput(bytes: Int) {
        guard inputBytes == nil else { return }
        inputBytes = bytes
        if isResolved { applyInputAllowance() }
    }

    /// Lowers a limit derived from the machine to what the input allows, if that is less.
    private mutating func applyInputAllowance() {
        guard chosen == nil, let inputBytes else { return }
        let allowance = Self.inputAllowance(inputBytes)
        guard allowance < limit else { return }
        let used = self.used
        limit = max(allowance, used)
        remaining = limit - used
        source =
            "the memory budget for an input of \(Self.describe(inputBytes)) (\(Self.expansionPerInputByte) times "
            + "its size, at least \(Self.describe(Self.minimumInputAllowance)))"
    }

    /// Gives back `bytes` charged earlier (a buffer freed while decoding goes on).
    mutating func release(_ bytes: Int) {
        remaining = min(limit, remaining + bytes)
    }

    @inline(never)
    func exceeded(_ bytes: Int, _ what: String, offset: Int? = nil, keyPath: [String] = []) -> GraphArchiveError {
        GraphArchiveError(
            .limitExceeded,
            "decoding needs more memory than \(source) allows: \(what) needs \(Self.describe(bytes)) "
                + "after \(Self.describe(used)) already committed",
            offset: offset,
            keyPath: keyPath
        )
    }

    /// "1.5 GiB", "12.0 MiB", "800 bytes".
    static func describe(_ bytes: Int) -> String {
        let units = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, name) in units where bytes >= size {
            let value = Double(bytes) / Double(size)
            return "\((value * 10).rounded() / 10) \(name)"
        }
        return "\(bytes) bytes"
    }

    // MARK: - What allocations cost

    /// One malloc chunk for `bytes`: an 8-byte header, rounded up to 16; a large block is pages
    /// of its own.
    @inline(__always)
    static func chunk(_ bytes: Int) -> Int {
        bytes >= 128 << 10 ? (bytes + 4096 + 4095) & ~4095 : (bytes + 8 + 15) & ~15
    }

    /// A `String` of `count` UTF-8 bytes: none up to 15 (stored inline), else a native storage
    /// object of a 32-byte header, the bytes and a NUL, in one malloc chunk. Written so that it
    /// compiles without a branch: decoders charge every string, and name lengths vary.
    @inline(__always)
    static func string(_ count: Int) -> Int {
        count > 15 ? (count &+ 33 &+ 8 &+ 15) & ~15 : 0
    }

    /// An array buffer of `count` elements of `stride` bytes (header included).
    @inline(__always)
    static func array(_ count: Int, stride: Int) -> Int {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: max(stride, 1))
        return overflow ? Int.max / 2 : chunk(32 &+ bytes)
    }

    /// A dictionary's storage for `count` entries: buckets a power of two at most 3/4 full,
    /// each a key and a value, a bit each in the occupancy map, and a header.
    static func dictionary(_ count: Int, keyStride: Int, valueStride: Int) -> Int {
        var buckets = 1
        while buckets * 3 < count * 4 && buckets < 1 << 56 { buckets <<= 1 }
        let (entries, overflow) = buckets.multipliedReportingOverflow(by: max(keyStride + valueStride, 1))
        return overflow ? Int.max / 2 : chunk(64 + entries + buckets / 8)
    }

    /// A table of `count` elements of `stride` bytes from `ZeroedMemory.allocateTable` (no
    /// header; a large one is pages of its own): the decoders' object tables.
    @inline(__always)
    static func table(_ count: Int, stride: Int) -> Int {
        let (bytes, overflow) = count.multipliedReportingOverflow(by: max(stride, 1))
        return overflow || bytes > Int.max / 4 ? Int.max / 2 : chunk(bytes)
    }

    /// A `decodeLater` request kept until every object exists: its closure's context and its
    /// entry in the queue.
    static let deferredAssignment = 128

    /// A class instance of `instanceSize` bytes.
    @inline(__always)
    static func instance(_ instanceSize: Int) -> Int {
        chunk(instanceSize)
    }
}
