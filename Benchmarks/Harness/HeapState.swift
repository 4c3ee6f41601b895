// Benchmarks/Harness/HeapState.swift - the heap every timed run starts from (`--heap`)

import Foundation

/// The state glibc's heap is in when a timed run starts: the same for every row and every run.
///
/// A run's result is freed after its check, and glibc then holds that memory as free heap.
/// Whether it kept it or gave it back to the system depended on what happened to be freed in
/// between: it gives back the free top of the heap once that passes its trim threshold (a
/// threshold glibc moves as blocks of its own mapping are freed) and a free of 64 KiB or more
/// comes along. A run on given-back memory takes a page fault for every 4 KiB it touches again.
/// A decode of 1M grid-state slots took 886 faults on a kept heap and 40,100 on a given-back
/// one, 0.16 s against 0.27–0.41 s (throwaway driver, six decodes each); in one suite run the samples of
/// the decode and of its floor each fell in those two groups (floor: 142–158 and 261–273 ms),
/// and the medians said more about the mix than about the code.
enum HeapState: String, CaseIterable, Codable, Sendable {
    /// Freed memory stays with the process, as in one that keeps decoding and encoding graphs:
    /// the times are the code's own. The default.
    case warm
    /// Every timed run starts with the free heap given back to the system, as a process's first
    /// decode finds it: the times include the page faults, the same for any code that allocates
    /// as much.
    case cold

    /// Sets glibc up for this state, once, in the process that times (not in a memory probe's
    /// child, whose peak must be what the operation needs under glibc's own settings), before
    /// the suite's thread first allocates.
    ///
    /// Both states make every thread allocate from glibc's main arena. The suite runs on a
    /// thread of its own (for the stack NSKeyedArchiver needs), and such a thread would get an
    /// arena of its own, built of 64 MiB mappings that glibc unmaps as soon as one is all free,
    /// whatever the thresholds below say. A freed 1M-slot graph often left whole mappings free:
    /// before this, the `warm` decode took 1,397, about 13,000 or about 30,000 page faults from
    /// one run to the next (146–153, 199–210 or 272–281 ms), and its floor 0, 13,000 or 29,400
    /// (180–214, 252–283 or 322 ms), in one `--only gridstate` run; in the main arena, 1,397 in
    /// every decode after the first (151–178 ms but one run) and 0 in every floor run (133–146 ms).
    ///
    /// Both states also fix glibc's two thresholds, which it otherwise moves as blocks of its
    /// own mapping are freed. `warm` never gives free heap back and serves blocks of up to
    /// 32 MiB from the heap (the most glibc's moving threshold would reach), so that a row's
    /// large arrays are not pages mapped afresh either. `cold` keeps glibc's starting values,
    /// 128 KiB each: the top of the heap goes back to the system as soon as a free reaches it.
    func prepare() throws(UsageError) {
        let functions = try GlibcHeap.functions()
        let (trimThreshold, mmapThreshold): (Int32, Int32) = self == .warm ? (.max, 32 << 20) : (128 << 10, 128 << 10)
        guard functions.mallopt(GlibcHeap.arenaLimit, 1) == 1,
            functions.mallopt(GlibcHeap.trimThreshold, trimThreshold) == 1,
            functions.mallopt(GlibcHeap.mmapThreshold, mmapThreshold) == 1
        else {
            throw UsageError(message: "--heap \(rawValue): glibc's mallopt refused the settings")
        }
    }

    /// Brings the heap to this state; untimed, before every timed run and pilot run.
    ///
    /// First it finishes the freeing the last run's check (or setup, or another row) began.
    /// glibc keeps freed small blocks in "fast bins" and merges them only when a later request
    /// of 1 KiB or more arrives, whoever makes it. After a checked graph of 1M grid states is
    /// freed, that is 2.25 million blocks, and merging them took 100-150 ms of the next timed
    /// run, whichever row it was: gridstore's encode samples in one run split into 177-254 ms
    /// and 311-341 ms. One such request here, untimed, does that merge for every row alike.
    ///
    /// `cold` then gives back what is left: the merge returned the top (the settling block,
    /// freed, reaches it), and `malloc_trim` returns the free pages below it.
    ///
    /// The request goes through glibc's `malloc` and `free` looked up by name: called directly,
    /// the optimizer removed the pair as dead code (a block only ever freed), and the release
    /// build settled nothing.
    func settle() {
        guard let functions = try? GlibcHeap.functions() else { return }
        functions.free(functions.malloc(Self.settlingRequest))
        if self == .cold {
            _ = functions.mallocTrim(0)
        }
    }

    /// Gives the free pages of the heap back to the system (`malloc_trim(0)`), if glibc's
    /// malloc is there. A memory probe's child does so after setting up: pages its setup freed
    /// would otherwise be reused by the measured operation without raising the peak.
    static func giveBackFreePages() {
        if let functions = try? GlibcHeap.functions() { _ = functions.mallocTrim(0) }
    }

    /// Large enough to be served outside the fast bins (which is what triggers the merge),
    /// small enough not to be its own mapping.
    static let settlingRequest = 4096
}

/// glibc's heap controls, which the Glibc module does not import (`<malloc.h>`), looked up by
/// name in the running process.
private enum GlibcHeap {
    /// `M_TRIM_THRESHOLD`, `M_MMAP_THRESHOLD` and `M_ARENA_MAX` of `<malloc.h>`.
    static let trimThreshold: Int32 = -1
    static let mmapThreshold: Int32 = -3
    static let arenaLimit: Int32 = -8

    struct Functions {
        var mallopt: @convention(c) (Int32, Int32) -> Int32
        var mallocTrim: @convention(c) (Int) -> Int32
        var malloc: @convention(c) (Int) -> UnsafeMutableRawPointer?
        var free: @convention(c) (UnsafeMutableRawPointer?) -> Void
    }

    static func functions() throws(UsageError) -> Functions {
        // RTLD_DEFAULT: every object the process has loaded, glibc's libc among them.
        let everywhere = UnsafeMutableRawPointer(bitPattern: 0)
        guard let mallopt = dlsym(everywhere, "mallopt"), let mallocTrim = dlsym(everywhere, "malloc_trim"),
            let malloc = dlsym(everywhere, "malloc"), let free = dlsym(everywhere, "free")
        else {
            throw UsageError(message: "--heap needs glibc's malloc (mallopt and malloc_trim were not found)")
        }
        return Functions(
            mallopt: unsafeBitCast(mallopt, to: (@convention(c) (Int32, Int32) -> Int32).self),
            mallocTrim: unsafeBitCast(mallocTrim, to: (@convention(c) (Int) -> Int32).self),
            malloc: unsafeBitCast(malloc, to: (@convention(c) (Int) -> UnsafeMutableRawPointer?).self),
            free: unsafeBitCast(free, to: (@convention(c) (UnsafeMutableRawPointer?) -> Void).self)
        )
    }
}
