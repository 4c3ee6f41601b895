// Sources/GridStore/GridStateDataSource+Termination.swift - saving when the process is asked to end

import Foundation
import GraphArchive
import Synchronization

extension GridStateDataSource {
    /// What happened when the store saved because the process was ending.
    public enum TerminationSave: Sendable {
        /// The process is exiting normally (`exit()` or the end of `main`).
        case exiting
        /// The process received this signal (SIGTERM, SIGINT or SIGHUP).
        case signal(Int32)
    }

    /// Saves unsaved changes when the process is asked to end: the Linux equivalent of the
    /// seed app archiving its states in `applicationWillResignActive:`.
    ///
    /// After this call, a normal exit (`exit()` or the end of `main`) and the signals SIGTERM,
    /// SIGINT and SIGHUP first save the store if it has unsaved changes (``hasUnsavedChanges``).
    /// After a signal the process then ends as that signal asks, so the parent still sees
    /// "terminated by SIGTERM"; if a save failed, it exits with status 1 instead, so that the
    /// usual ending never hides a lost save. An unchanged store is not written, so a process that ends before
    /// its ``load()`` finished cannot replace the archive with an empty one.
    ///
    /// It installs the process's handlers for those three signals (replacing earlier ones) and
    /// unblocks them in the calling thread, so call it early, from the main thread. Calling it
    /// again (or for several stores) is harmless: every registered store is saved.
    ///
    /// - Parameter report: Called after each termination save with the number of records saved
    ///   or the error. Default (`nil`): errors go to standard error, where a user will see them.
    public func saveOnTermination(report: (@Sendable (TerminationSave, Result<Int, any Error>) -> Void)? = nil) {
        TerminationSaver.register(self, report: report ?? TerminationSaver.reportErrors)
    }
}

/// Process-wide machinery behind ``GridStateDataSource/saveOnTermination(report:)``.
///
/// Signals are handled with the self-pipe method: the handler only writes the signal number to a
/// pipe (one async-signal-safe `write`), and a dedicated thread reads it and does the saving, in
/// ordinary code that may take locks and allocate. This works whichever thread the kernel picks
/// for the signal, which `sigwait` (every thread must block the signal) and Dispatch signal
/// sources (the same on Linux) cannot promise in a process that already runs threads.
enum TerminationSaver {
    typealias Report = @Sendable (GridStateDataSource.TerminationSave, Result<Int, any Error>) -> Void

    /// The signals that ask a process to end.
    static let signals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    private struct Registration: Sendable {
        let store: GridStateDataSource
        let report: Report
    }

    private static let registrations = Locked<[Registration]>([])
    /// Written once, before any handler is installed, then read by the signal handler.
    private static let pipeWriteEnd = Atomic<Int32>(-1)
    private static let installed = Locked(false)

    static func register(_ store: GridStateDataSource, report: @escaping Report) {
        registrations.withLock { list in
            if !list.contains(where: { $0.store === store }) {
                list.append(Registration(store: store, report: report))
            }
        }
        installOnce()
    }

    /// The default report: errors to standard error, successes silently.
    static func reportErrors(_ reason: GridStateDataSource.TerminationSave, _ result: Result<Int, any Error>) {
        if case .failure(let error) = result {
            FileHandle.standardError.write(Data("gridstore: error: could not save on exit: \(error)\n".utf8))
        }
    }

    /// Saves every registered store that has unsaved changes; false if any save failed.
    @discardableResult
    static func saveAll(_ reason: GridStateDataSource.TerminationSave) -> Bool {
        var allSaved = true
        for registration in registrations.withLock({ $0 }) where registration.store.hasUnsavedChanges {
            do {
                try registration.store.save()
                registration.report(reason, .success(registration.store.count))
            } catch {
                registration.report(reason, .failure(error))
                allSaved = false
            }
        }
        return allSaved
    }

    private static func installOnce() {
        let isNew = installed.withLock { installed in
            defer { installed = true }
            return !installed
        }
        guard isNew else { return }

        atexit { TerminationSaver.saveAll(.exiting) }

        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            // Without a pipe only the exit save works; say so rather than fail silently.
            FileHandle.standardError.write(Data("gridstore: warning: cannot watch for signals: no pipe\n".utf8))
            return
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        pipeWriteEnd.store(ends[1], ordering: .sequentiallyConsistent)
        // A parent may have started us with these signals blocked (posix_spawn from a Dispatch
        // worker thread passes its mask on); asking to handle them means wanting them delivered.
        // Threads started from here on, the watcher included, inherit the unblocked mask.
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
        let readEnd = ends[0]
        Thread.detachNewThread {
            TerminationSaver.watch(readEnd)
        }
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                // Async-signal-safe only: an atomic load and write(2), keeping errno as it was.
                let savedErrno = errno
                var byte = UInt8(truncatingIfNeeded: signal)
                _ = write(TerminationSaver.pipeWriteEnd.load(ordering: .relaxed), &byte, 1)
                errno = savedErrno
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
    }

    /// The watcher thread: waits for a signal number, saves, then ends the process by that signal.
    private static func watch(_ readEnd: Int32) {
        var byte: UInt8 = 0
        while true {
            let count = read(readEnd, &byte, 1)
            if count == 1 { break }
            if count < 0 && errno == EINTR { continue }
            return  // the pipe broke: nothing more to watch
        }
        let signal = Int32(byte)
        guard saveAll(.signal(signal)) else {
            // Ending by the signal would look like the usual, saved ending: a failed save ends
            // with status 1, its error already reported. _exit: the exit save must not run again.
            _exit(1)
        }
        // Restore the default action and deliver the signal again, so the process ends the way
        // the sender asked (exit status 128 + signal in shells).
        Foundation.signal(signal, SIG_DFL)
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, signal)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        raise(signal)
        _exit(128 + signal)
    }
}
