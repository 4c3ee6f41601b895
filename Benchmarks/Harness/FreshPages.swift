// Benchmarks/Harness/FreshPages.swift - new pages a timed run maps, touched just before it (`--pretouch`)

import Foundation

/// Before a timed run, maps, touches and unmaps as much new memory as the row's last run took
/// from the system, untimed, so that the pages the run then maps cost what the guest kernel
/// charges for them (a fault and zeroing), not what the VM's host adds.
///
/// This machine is a virtual machine whose balloon device reports free memory to the host
/// (free page reporting), which takes those pages back: the next touch of such a page faults in
/// the host as well. A C test mapped, touched and unmapped 600 MB five times: touching it again
/// at once ran at 12 GB/s, but after a 5 s pause at 0.45–0.53 GB/s, every time. In the suite a
/// row's memory has been free for seconds when the row next runs (the peers run in between), so
/// every page a run mapped afresh paid the host, and how many had been taken back varied: at
/// 10M grid-state slots, encode took 599–1,220 ms in one run. Memory freed just now is reused
/// first and has not been reported yet.
///
/// A row's need is its last run's resident peak over its start (`VmHWM` after `clear_refs`, as
/// the memory probes read it): in a `warm` heap that is the memory no earlier run left in the
/// process, whatever maps it (glibc, the engine's own page blocks, a peer). The first run of a
/// row (its warm-up, or a slow peer's last pilot) finds the machine as it is.
enum FreshPages {
    /// Touches and gives back `byteCount` bytes of new memory (at most half of what the system
    /// says is available), then sets the resident peak to the current size; returns the
    /// resident size the run starts from, nil where the peak cannot be reset (then the run's
    /// need is not measured).
    static func prepare(_ byteCount: Int) -> Int? {
        let available = ProcFile.bytes("MemAvailable", in: "/proc/meminfo") ?? 0
        Self.touch(min(byteCount, available / 2))
        guard MemoryProbe.resetPeak() else { return nil }
        return MemoryProbe.residentBytes()
    }

    /// The memory the run that started at resident size `start` took: its peak over `start`.
    static func taken(since start: Int?) -> Int {
        guard let start, let peak = MemoryProbe.peakBytes() else { return 0 }
        return max(0, peak - start)
    }

    /// Maps `byteCount` bytes as the engine maps a large block (transparent huge pages where
    /// the system gives them on request), writes a byte on every page and unmaps them.
    private static func touch(_ byteCount: Int) {
        let pageSize = 4096
        guard byteCount >= pageSize,
            let memory = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            memory != MAP_FAILED
        else { return }
        madvise(memory, byteCount, MADV_HUGEPAGE)
        for offset in stride(from: 0, to: byteCount, by: pageSize) {
            memory.storeBytes(of: 1, toByteOffset: offset, as: UInt8.self)
        }
        munmap(memory, byteCount)
    }
}
