// Sources/GraphArchive/Files/TemporaryFileCleanup.swift - temporary files removed when a signal ends the process

import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The temporary files of the saves in progress, removed by a signal handler when SIGTERM,
/// SIGINT or SIGHUP ends the process in the middle of a save.
///
/// A signal whose action is the default one ends the process at once, with no chance for a save
/// to remove its temporary file (3 to 100 MB of a half-written archive). So when a save starts
/// and a signal's action is still the default, a handler is installed for it that unlinks the
/// registered temporary files, restores the default action and raises the signal again: the
/// process still ends by that signal, as its parent expects. A signal the program handles or
/// ignores is left alone: its handler decides (`GridStateDataSource.saveOnTermination` saves
/// first and lets the save in progress finish); a temporary file a killed save leaves anyway is
/// removed by the next save in the folder (see `AtomicFile`).
///
/// The handler may only call async-signal-safe functions and read memory that is never freed:
/// the paths live in fixed slots allocated once, each with a state a save moves from free to
/// being written to published and back; the handler copies a published path and unlinks the
/// copy only if the slot was not changed meanwhile.
enum TemporaryFileCleanup {
    /// The signals that ask a process to end, which a terminal or a service manager sends.
    static let signals: [Int32] = [SIGTERM, SIGINT, SIGHUP]
    /// Saves that can be in progress at once and still have their temporary file removed.
    static let slotCount = 64
    /// Room for one path and its terminating NUL (PATH_MAX).
    static let pathCapacity = 4096

    private static let free = 0
    private static let writing = 1

    /// Per slot: `free`, `writing`, or a generation number (even, from 2) while published.
    private static let states = InlineArray<64, Atomic<Int>> { _ in Atomic(0) }
    private static let generation = Atomic<Int>(2)
    /// `slotCount` paths of `pathCapacity` bytes, then the handler's copy of one: allocated
    /// once, before any handler is installed, and never freed.
    private static let paths = SignalSafePaths(slotCount: slotCount, slotCapacity: pathCapacity)
    private static let installed = Locked<Set<Int32>>([])

    /// Registers `path` (a temporary file being written) for removal if a signal ends the
    /// process, installing the handler where a signal's action is the default; returns the
    /// slot to pass to ``unregister(_:)``, or nil if every slot is taken or the path is too long
    /// (then only the next save's cleanup removes it).
    static func register(_ path: String) -> Int? {
        // Globals are made on first use: make these now, never inside the handler.
        _ = states[0].load(ordering: .relaxed)
        _ = generation.load(ordering: .relaxed)
        _ = paths
        installHandlers()
        let bytes = Array(path.utf8CString)
        guard bytes.count <= pathCapacity else { return nil }
        for slot in 0..<slotCount {
            guard states[slot].compareExchange(expected: free, desired: writing, ordering: .acquiring).exchanged
            else { continue }
            paths.store(bytes, in: slot)
            let published = generation.wrappingAdd(2, ordering: .relaxed).newValue
            states[slot].store(published, ordering: .releasing)
            return slot
        }
        return nil
    }

    /// Ends the registration of `slot` (the file was renamed or removed).
    static func unregister(_ slot: Int?) {
        guard let slot else { return }
        states[slot].store(free, ordering: .releasing)
    }

    /// Installs the handler for each of ``signals`` whose action is the default, once per signal
    /// for the life of the process (it then acts as the default does, after unlinking), and
    /// unblocks those signals in the calling thread.
    private static func installHandlers() {
        installed.withLock { installed in
            for signal in signals where !installed.contains(signal) {
                var current = sigaction()
                guard sigaction(signal, nil, &current) == 0 else { continue }
                // A nil handler is SIG_DFL; a handler or SIG_IGN (1) is the program's choice.
                guard current.__sigaction_handler.sa_handler == nil, current.sa_flags & SA_SIGINFO == 0 else {
                    continue
                }
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { signal in TemporaryFileCleanup.handle(signal) }
                sigemptyset(&action.sa_mask)
                action.sa_flags = 0
                if sigaction(signal, &action, nil) == 0 { installed.insert(signal) }
            }
        }
        // A parent may have started the process with these signals blocked (posix_spawn from a
        // Dispatch worker thread passes its mask on): then a SIGTERM would wait until the save
        // ended, which is not what its default action asks. Unblock them in the saving thread.
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in installed.withLock({ $0 }) { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    }

    /// The signal handler: async-signal-safe calls only (unlink, sigaction, raise).
    private static func handle(_ signal: Int32) {
        let savedErrno = errno
        for slot in 0..<slotCount {
            let before = states[slot].load(ordering: .acquiring)
            guard before > writing else { continue }
            paths.copyToScratch(slot)
            // Unlink only a path no save changed while it was copied.
            if states[slot].load(ordering: .acquiring) == before { paths.unlinkScratch() }
        }
        // End the process as the signal's default action would: the signal is blocked while
        // this handler runs, so it is delivered again as soon as the handler returns.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&action.sa_mask)
        sigaction(signal, &action, nil)
        raise(signal)
        errno = savedErrno
    }
}
