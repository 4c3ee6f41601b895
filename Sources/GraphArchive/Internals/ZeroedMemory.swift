// Sources/GraphArchive/Internals/ZeroedMemory.swift - zero-filled blocks for large tables

internal import CPages

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Zero-filled memory for the engine's large tables (the encoder's identity table, the
/// decoders' object tables), and the page-level advice for large buffers (`adviseHugePages`):
/// the library's calls on pages.
///
/// A block of `mappedMinimum` bytes or more is pages of its own from `mmap`: zero until written,
/// resident only once touched, and returned to the system the moment it is freed. From
/// `malloc`, a block that size may come from the heap instead (glibc does so after a program
/// frees a large block), where each outgrown table would stay resident as free heap: saving
/// 1M grid-state slots peaked 9 MB higher in the benchmark harness's child process than alone.
enum ZeroedMemory {
    static let mappedMinimum = 1 << 20
    /// The huge pages `adviseHugePages` asks for (Linux's transparent huge pages on x86-64 and
    /// most arm64).
    static let hugePageBytes = 2 << 20
    #if canImport(Glibc) || canImport(Musl)
    /// The system's page size, asked once.
    private static let pageBytes = Int(sysconf(Int32(_SC_PAGESIZE)))
    #endif

    /// - Parameter onHugePage: Whether a block of at least a huge page starts on one, so that
    ///   `adviseHugePages` covers it from its start (not past its last whole huge page).
    private static func allocate(byteCount: Int, onHugePage: Bool = false) -> UnsafeMutableRawPointer {
        #if canImport(Glibc) || canImport(Musl)
        if byteCount >= mappedMinimum {
            #if os(Linux)
            if onHugePage && byteCount >= hugePageBytes { return mapOnHugePage(byteCount: byteCount) }
            #endif
            let memory = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let memory, memory != MAP_FAILED else { fatalError("out of memory mapping \(byteCount) bytes") }
            return memory
        }
        #endif
        guard let memory = calloc(1, max(byteCount, 1)) else {
            fatalError("out of memory allocating \(byteCount) bytes")
        }
        return memory
    }

    #if os(Linux)
    /// Pages of `byteCount` bytes of their own starting on a huge page boundary: mapped with a
    /// huge page's worth of room, less a page, and the room either side unmapped again, so
    /// that `deallocate(_:byteCount:)` unmaps the block as it does any other.
    private static func mapOnHugePage(byteCount: Int) -> UnsafeMutableRawPointer {
        let page = pageBytes
        let room = hugePageBytes - page
        let memory = mmap(nil, byteCount + room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let memory, memory != MAP_FAILED else { fatalError("out of memory mapping \(byteCount) bytes") }
        let address = UInt(bitPattern: memory)
        let head = Int((address + UInt(hugePageBytes - 1)) & ~UInt(hugePageBytes - 1) - address)
        let blockEnd = head + (byteCount + page - 1) / page * page
        if head > 0 { munmap(memory, head) }
        if head < room { munmap(memory + blockEnd, room - head) }
        return memory + head
    }
    #endif

    /// Frees a block `allocate(byteCount:)` returned, given the same size.
    private static func deallocate(_ memory: UnsafeMutableRawPointer, byteCount: Int) {
        #if canImport(Glibc) || canImport(Musl)
        if byteCount >= mappedMinimum {
            munmap(memory, byteCount)
            return
        }
        #endif
        free(memory)
    }

    /// Gives the whole pages of `memory[range]`, a block of `count` values, back to the system
    /// when the block is mapped (its contents there become zero); otherwise does nothing. For a
    /// table being moved into a larger one: the part already copied need not stay resident
    /// while the rest is copied.
    static func discard<T>(_ memory: UnsafeMutablePointer<T>, count: Int, range: Range<Int>) {
        #if canImport(Glibc) || canImport(Musl)
        let stride = MemoryLayout<T>.stride
        guard count * stride >= mappedMinimum else { return }
        let page = pageBytes
        // The block starts on a page: round the start up and the end down to whole pages.
        let start = (range.lowerBound * stride + page - 1) / page * page
        let end = range.upperBound * stride / page * page
        if end > start { madvise(UnsafeMutableRawPointer(memory) + start, end - start, MADV_DONTNEED) }
        #endif
    }

    /// A block of `count` values from `allocate(_:count:)` or `allocateTable(_:count:)` grown
    /// to `newCount` in place or moved by remapping its pages: the values kept, the rest zero
    /// until written. A table that doubles keeps the pages it had instead of faulting in (and
    /// zeroing) a whole new table while the old one is read. Nil when the block is not mapped
    /// (too small) or cannot be remapped: the caller allocates and copies instead. The advice
    /// on `pages` is given again for the whole block.
    static func extend<T>(
        _ memory: UnsafeMutablePointer<T>,
        count: Int,
        to newCount: Int,
        pages: PageSize = .huge
    ) -> UnsafeMutablePointer<T>? {
        #if os(Linux)
        let stride = MemoryLayout<T>.stride
        guard count * stride >= mappedMinimum, newCount > count else { return nil }
        let old = UnsafeMutableRawPointer(memory)
        guard let moved = gridstore_remap_growing(old, count * stride, newCount * stride), moved != MAP_FAILED else {
            return nil
        }
        advise(mapping: moved, byteCount: newCount * stride, pages: pages)
        return moved.bindMemory(to: T.self, capacity: newCount)
        #else
        return nil
        #endif
    }

    /// `extend(_:count:to:)`, or when the block cannot grow so, a new one from
    /// `allocateTable(_:count:)` with the values copied (the old one freed).
    static func resize<T>(_ memory: UnsafeMutablePointer<T>, count: Int, to newCount: Int) -> UnsafeMutablePointer<T> {
        if let extended = extend(memory, count: count, to: newCount) { return extended }
        let larger = allocateTable(T.self, count: newCount)
        larger.update(from: memory, count: count)
        deallocate(memory, count: count)
        return larger
    }

    /// Pages of `byteCount` bytes of their own, zero and not resident until touched; nil when
    /// the address space cannot hold them (under `RLIMIT_AS`). Free them with `unmap`.
    static func map(byteCount: Int) -> UnsafeMutableRawPointer? {
        #if canImport(Glibc) || canImport(Musl)
        let memory = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let memory, memory != MAP_FAILED else { return nil }
        return memory
        #else
        return calloc(1, byteCount)
        #endif
    }

    /// `map(byteCount:)` for a buffer that grows by remapping (`growMapping`) and whose pages
    /// a `PagePopulator` makes resident ahead of its writer: advised onto base pages whole
    /// (`advise(mapping:byteCount:pages:)`), so that it stays one mapping.
    ///
    /// Base pages, not huge ones, because the populator must stay ahead of the writer. On a VM
    /// whose host takes back the guest's free memory, a huge page freed a few seconds earlier
    /// cost 2–3.7 ms/MB to make resident again, a 4 KiB page about 0.4 ms/MB: the populator
    /// fell behind the writer, which then faulted the rest in itself. A writer going front to
    /// back gains little from huge pages otherwise (its TLB misses are one per page, in order).
    /// Encoding 10M grid-state slots (388 MB) took 0.87 s with base pages, 1.05–1.12 s with
    /// huge ones.
    static func mapGrowable(byteCount: Int) -> UnsafeMutableRawPointer? {
        guard let memory = map(byteCount: byteCount) else { return nil }
        advise(mapping: memory, byteCount: byteCount, pages: .base)
        return memory
    }

    /// Frees pages `map(byteCount:)` returned, given the same size.
    static func unmap(_ memory: UnsafeMutableRawPointer, byteCount: Int) {
        #if canImport(Glibc) || canImport(Musl)
        munmap(memory, byteCount)
        #else
        free(memory)
        #endif
    }

    /// A mapping of `newByteCount` bytes of its own holding the first `keeping` bytes of
    /// `memory`, a block of `byteCount` bytes, its pages asked to be huge: `memory` grown by
    /// remapping when it is a mapping (`isMapping`) the system can move, else a new mapping the
    /// bytes are copied to, the old block freed (with `free` when it is not a mapping). For a
    /// buffer doubling as it is written: each growth moves page table entries, not bytes, and
    /// leaves nothing of the old block behind. Nil when the address space cannot hold it.
    static func growMapping(
        _ memory: UnsafeMutableRawPointer,
        byteCount: Int,
        isMapping: Bool,
        keeping: Int,
        to newByteCount: Int
    ) -> UnsafeMutableRawPointer? {
        let bytes = memory.assumingMemoryBound(to: UInt8.self)
        if isMapping, let grown = extend(bytes, count: byteCount, to: newByteCount, pages: .base) {
            return UnsafeMutableRawPointer(grown)
        }
        guard let larger = mapGrowable(byteCount: newByteCount) else { return nil }
        larger.copyMemory(from: memory, byteCount: keeping)
        if isMapping { unmap(memory, byteCount: byteCount) } else { free(memory) }
        return larger
    }

    /// Gives back the pages of a mapping of `byteCount` bytes from `map(byteCount:)` or
    /// `growMapping` past its first `keeping` bytes, and returns the size the mapping now has
    /// (free it with `unmap` given that size). Where blocks are not mappings, nothing is given
    /// back.
    static func trimMapping(_ memory: UnsafeMutableRawPointer, byteCount: Int, keeping: Int) -> Int {
        #if canImport(Glibc) || canImport(Musl)
        let kept = (max(keeping, 1) + pageBytes - 1) / pageBytes * pageBytes
        guard kept < byteCount else { return byteCount }
        munmap(memory + kept, byteCount - kept)
        return kept
        #else
        return byteCount
        #endif
    }

    /// Gives back the whole pages of `range` in a block from `map(byteCount:)` (its contents
    /// there become zero), and returns the range given back, relative to `memory`. A huge page
    /// partly given back is split by the kernel, and only the part given back leaves: a payload
    /// given back as it is decoded then holds what is ahead of the decoder and less than a
    /// page behind it, not up to 2 MiB of each.
    static func discardPages(_ memory: UnsafeMutableRawPointer, range: Range<Int>) -> Range<Int> {
        #if canImport(Glibc) || canImport(Musl)
        let page = pageBytes
        let address = Int(bitPattern: UInt(bitPattern: memory))
        let start = (address + range.lowerBound + page - 1) / page * page
        let end = (address + range.upperBound) / page * page
        guard end > start else { return range.lowerBound..<range.lowerBound }
        madvise(memory + (start - address), end - start, MADV_DONTNEED)
        return (start - address)..<(end - address)
        #else
        return range.lowerBound..<range.lowerBound
        #endif
    }

    /// Makes the pages `range` of `memory` touches resident and writable, zero, as a write
    /// would (madvise(MADV_POPULATE_WRITE)), so that a later write into them takes no fault.
    /// False when the system cannot (Linux before 5.14, other systems) or the pages are not
    /// mapped: the writer then faults them in itself.
    static func populatePages(_ memory: UnsafeMutableRawPointer, range: Range<Int>) -> Bool {
        #if os(Linux)
        guard !range.isEmpty else { return true }
        let page = pageBytes
        let address = Int(bitPattern: UInt(bitPattern: memory))
        let start = (address + range.lowerBound) / page * page
        let end = (address + range.upperBound + page - 1) / page * page
        return gridstore_populate_writable(memory + (start - address), end - start) == 0
        #else
        return false
        #endif
    }

    /// The offset, relative to `memory`, of the start of the huge page that holds the byte at
    /// `offset` (at or before it).
    static func hugePageStart(of offset: Int, in memory: UnsafeRawPointer) -> Int {
        let address = Int(bitPattern: UInt(bitPattern: memory)) + offset
        return offset - (address & (hugePageBytes - 1))
    }

    /// The pages a mapping is asked to be backed by.
    enum PageSize {
        /// Huge pages (see `adviseHugePages(_:byteCount:)`): for tables looked up at random.
        case huge
        /// The system's base pages, whatever the transparent huge page setting: for a buffer
        /// populated ahead of its writer (see `mapGrowable(byteCount:)`).
        case base
    }

    /// Advice on `pages` for a whole mapping of its own (from `map`, `allocateTable` or
    /// `extend`): it covers every page of it, so that it stays one mapping. Advice on part of a
    /// mapping splits it in two, and `mremap` refuses (EFAULT) to move a range that spans two:
    /// the next growth would copy the block instead of remapping it.
    static func advise(mapping memory: UnsafeMutableRawPointer, byteCount: Int, pages: PageSize) {
        #if os(Linux)
        madvise(memory, byteCount, pages == .huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)
        #endif
    }

    /// Asks the kernel to back the whole 2 MiB pages of a large block with huge pages (Linux's
    /// transparent huge pages, when set to `madvise`; elsewhere nothing happens).
    ///
    /// For an output buffer of up to `ByteWriter.largeCapacity`, a heap block written front to
    /// back and kept whole (a larger one is a mapping on base pages, see `mapGrowable`): one
    /// fault per 2 MiB instead of per 4 KiB. On the 2-core VM the suite runs on, a fault costs
    /// a few microseconds, and the 38.6 MB output of 1M grid-state slots took 9,400 of them. For the
    /// tables of `allocateTable`, looked up at random: one TLB entry covers 2 MiB. The encoder's
    /// identity table is touched all over anyway, so this makes it resident no larger (a zstd
    /// save of 1M slots peaked 20.6–21.0 MB above the graph with it, 20.7 MB without), now that
    /// it is sized ahead of a reference array instead of grown through every smaller size.
    static func adviseHugePages(_ memory: UnsafeMutableRawPointer, byteCount: Int) {
        #if os(Linux)
        let hugePage = UInt(hugePageBytes)
        let start = (UInt(bitPattern: memory) + hugePage - 1) & ~(hugePage - 1)
        let end = (UInt(bitPattern: memory) + UInt(byteCount)) & ~(hugePage - 1)
        guard end > start, let first = UnsafeMutableRawPointer(bitPattern: start) else { return }
        madvise(first, Int(end - start), MADV_HUGEPAGE)
        #endif
    }

    /// `count` zeroed values of `type`.
    static func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        allocate(byteCount: count * MemoryLayout<T>.stride).bindMemory(to: T.self, capacity: count)
    }

    /// `allocate(_:count:)` for a table looked up at random (the encoder's identity table, the
    /// decoders' object tables): a large one is asked to be backed by huge pages. On 4 KiB
    /// pages nearly every lookup of a large table also missed the TLB, and page walks (costly
    /// in a VM) do not overlap the way cache misses do; and a table made afresh for each
    /// archive took a page fault per 4 KiB (1,465 for a decoder's 6 MB table of 750,000
    /// objects). Free it with `deallocate(_:count:)`.
    ///
    /// A table of a huge page or more starts on one, so that no 4 KiB pages, a fault each,
    /// precede its first huge page.
    static func allocateTable<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let byteCount = count * MemoryLayout<T>.stride
        let memory = allocate(byteCount: byteCount, onHugePage: true)
        if byteCount >= mappedMinimum { advise(mapping: memory, byteCount: byteCount, pages: .huge) }
        return memory.bindMemory(to: T.self, capacity: count)
    }

    /// Frees a block `allocate(_:count:)` or `allocateTable(_:count:)` returned, given the same count.
    static func deallocate<T>(_ memory: UnsafeMutablePointer<T>, count: Int) {
        deallocate(memory, byteCount: count * MemoryLayout<T>.stride)
    }
}
