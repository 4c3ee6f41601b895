// Sources/GridStore/GridStateDataSource.swift - the shared store of grid states (the seed's sharedDataSource)

import Foundation
import GraphArchive

/// The app's grid states, kept in one place: the seed's `[UAViewControllerState sharedDataSource]`.
///
/// It holds an array of ``GridState`` records in which one record may fill many slots, loads it
/// from its archive file at launch and saves it back atomically, and can save by itself when
/// the process is asked to end (see ``saveOnTermination(report:)``):
///
/// ```swift
/// let store = GridStateDataSource.shared
/// try store.load()                      // launch: a missing file is an empty store
/// store.saveOnTermination()             // SIGTERM, SIGINT, SIGHUP or exit() saves changes
/// store.update { states in
///     states.append(GridState(name: "Sunset", color: 0xFF8800, date: "2024-06-01T18:00:00Z"))
/// }
/// try store.save()                      // or leave it to the termination save
/// ```
///
/// Every method may be called from any thread or task. The records are not `Sendable` (they are
/// mutable classes, shared between slots), so they are reached only inside ``read(_:)`` and
/// ``update(_:)``, under the store's lock: keep no reference to a record past those closures.
public final class GridStateDataSource: Sendable {
    /// The store the app uses, on ``ArchiveLocation/defaultArchivePath(environment:homeDirectory:)``.
    public static let shared = GridStateDataSource(archivePath: ArchiveLocation.defaultArchivePath())

    private struct Contents {
        var states: [GridState] = []
        var archivePath: String
        var compression: ArchiveCompression = .none
        var format = GridStateArchive.Format.gridstore
        /// Bumped by every change; compared with `savedChange` to know what is unsaved.
        var change = 0
        var savedChange = 0
        var lockTimeout = ArchiveLock.defaultTimeout
        var decodingOptions = GraphUnarchiver.Options()
    }

    /// A `Locked`, not a `Mutex`, so ThreadSanitizer sees the locking (see `Locked`).
    private let contents: Locked<Contents>
    /// Held for a whole save, so saves write their snapshots to disk in the order they took them.
    /// An `NSLock` for the reason in `Locked`; there is no value to guard (ThreadSanitizer still
    /// reported the empty value of a `Locked<Void>` as raced).
    private let saving = NSLock()
    /// The archive's lock between processes, from ``lockArchive()`` to ``unlockArchive()``.
    private let heldLock = Locked<ArchiveLock?>(nil)

    /// A store that loads from and saves to `archivePath`, empty until ``load()``.
    public init(archivePath: String) {
        contents = Locked(Contents(archivePath: archivePath))
    }

    // MARK: - Settings

    /// The archive file that ``load()`` reads and ``save()`` replaces.
    public var archivePath: String {
        get { contents.withLock { $0.archivePath } }
        set { contents.withLock { $0.archivePath = newValue } }
    }

    /// How ``save()`` compresses the archive. Default: ``/GraphArchive/ArchiveCompression/none``.
    /// Keyed archives are never compressed.
    public var compression: ArchiveCompression {
        get { contents.withLock { $0.compression } }
        set { contents.withLock { $0.compression = newValue } }
    }

    /// The format ``save()`` writes: gridstore (the default) or an `NSKeyedArchiver` archive the
    /// iOS app reads (see ``GridStateArchive/Format/keyedPlist``). ``load()`` reads either.
    public var format: GridStateArchive.Format {
        get { contents.withLock { $0.format } }
        set { contents.withLock { $0.format = newValue } }
    }

    // MARK: - Records

    /// Number of slots (records, counting a shared record once per slot).
    public var count: Int {
        contents.withLock { $0.states.count }
    }

    /// Whether the records changed since they were last loaded or saved.
    public var hasUnsavedChanges: Bool {
        contents.withLock { $0.change != $0.savedChange }
    }

    /// Runs `body` with the records, under the store's lock.
    public func read<Result: Sendable, Failure: Error>(
        _ body: ([GridState]) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withContents { (contents) throws(Failure) -> Result in try body(contents.states) }
    }

    /// Runs `body` with the records to change them, under the store's lock; counts as a change.
    public func update<Result: Sendable, Failure: Error>(
        _ body: (inout [GridState]) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withContents { (contents) throws(Failure) -> Result in
            contents.change += 1
            return try body(&contents.states)
        }
    }

    /// Replaces every record with `states`.
    public func replaceAll(with states: sending [GridState]) {
        update { $0 = states }
    }

    /// Adds `states` after the current records.
    public func append(contentsOf states: sending [GridState]) {
        update { $0.append(contentsOf: states) }
    }

    /// The one way into the locked contents.
    ///
    /// Going through a closure parameter (rather than capturing values in `withLock`'s closure
    /// directly) lets region-based isolation accept records that were created outside the lock.
    private func withContents<Result: Sendable, Failure: Error>(
        _ body: (inout Contents) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try contents.withLock { (contents) throws(Failure) -> Result in try body(&contents) }
    }

    // MARK: - Loading and saving

    /// Replaces the records with those archived in ``archivePath``: the app's load at launch.
    ///
    /// A missing file is an empty store (the first launch). A file that cannot be read as an
    /// archive of grid states throws and leaves the records and the file as they were: a damaged
    /// archive is never silently replaced by an empty one. Loading takes no lock: the archive
    /// is always one whole file (see ``save()``).
    ///
    /// - Returns: whether an archive file was found.
    /// - Throws: ``/GraphArchive/GraphArchiveError`` for an unreadable, damaged or foreign file.
    @discardableResult
    public func load() throws -> Bool {
        // Under the save lock, so a save in flight cannot land between reading and marking clean.
        try saving.withLock { try loadWhileSaving() }
    }

    /// Archives the records to ``archivePath`` in ``format`` atomically: afterwards the file
    /// holds either its previous archive or the whole new one, never a mix, whatever else fails.
    /// Missing folders are created.
    ///
    /// The records are encoded under the store's lock (a consistent snapshot, even while other
    /// tasks change them) and written after it is released, holding the archive's lock between
    /// processes (``/GraphArchive/ArchiveLock``) for the write: the one this store holds (``lockArchive()``),
    /// or one taken for the write, waiting up to ``lockTimeout`` for another process's
    /// read-modify-write to end. The save replaces the archive with these records, whatever the
    /// file held; to add to what another process saved, use ``updateArchive(_:)``. Concurrent
    /// saves write in turn.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` (`.ioError`, `.compressionUnavailable`,
    ///   `.locked`, …); the file is then left as it was.
    public func save() throws {
        try saving.withLock { try saveWhileSaving() }
    }

    /// The limits ``load()`` and ``updateArchive(_:)`` decode the archive with, the memory
    /// budget among them (``/GraphArchive/GraphUnarchiver/Options/maximumMemoryBytes``, by
    /// default derived from the machine): an archive that needs more fails to load with
    /// `.limitExceeded`, and the store keeps its records.
    public var decodingOptions: GraphUnarchiver.Options {
        get { contents.withLock { $0.decodingOptions } }
        set { contents.withLock { $0.decodingOptions = newValue } }
    }

    // MARK: - Between processes

    /// How long a save, ``updateArchive(_:)`` and ``lockArchive()`` wait for another process
    /// to release the archive's lock before they throw `.locked`; zero: not at all. Default:
    /// ``/GraphArchive/ArchiveLock/defaultTimeout`` (10 seconds).
    public var lockTimeout: Duration {
        get { contents.withLock { $0.lockTimeout } }
        set { contents.withLock { $0.lockTimeout = newValue } }
    }

    /// Whether this store holds its archive's lock (``lockArchive()``).
    public var holdsArchiveLock: Bool {
        heldLock.withLock { $0?.isLocked ?? false }
    }

    /// Loads the archive, lets `body` change the records, and saves them, holding the archive's
    /// lock between processes throughout: the read-modify-write that loses nothing when several
    /// processes (or stores) add to one archive at once. Each waits its turn, so two processes
    /// that each append 1,000 records to a 1,000-record archive leave 3,000.
    ///
    /// The records this store held are replaced by the archive's before `body` runs (a missing
    /// archive is empty, a damaged one throws before `body` runs).
    ///
    /// - Returns: what `body` returns.
    /// - Throws: ``/GraphArchive/GraphArchiveError`` `.locked` if another process holds the
    ///   lock past ``lockTimeout``; what ``load()``, `body` and ``save()`` throw. The archive
    ///   is then as it was.
    public func updateArchive<Result: Sendable>(_ body: (inout [GridState]) throws -> Result) throws -> Result {
        try saving.withLock {
            try withArchiveLockWhileSaving(archivePath) { () throws -> Result in
                try loadWhileSaving()
                let result = try update(body)
                try saveWhileSaving()
                return result
            }
        }
    }

    /// Takes the archive's lock between processes and keeps it until ``unlockArchive()``, the
    /// store's end or the process's: for a program that loads at launch and saves at exit
    /// (``saveOnTermination(report:)``), so that no other process that takes the lock (another
    /// such program, ``updateArchive(_:)``, a save, `gridstore save`) writes the archive in
    /// between and has its records dropped by this one's save. Others wait for it up to their
    /// own timeout, then fail with `.locked`. Taking a lock already held does nothing.
    ///
    /// - Throws: ``/GraphArchive/GraphArchiveError`` `.locked` after ``lockTimeout``, `.ioError`
    ///   if the lock file cannot be created.
    public func lockArchive() throws {
        try saving.withLock {
            let path = archivePath
            if holdsLock(on: path) { return }
            let lock = try GridStateArchive.lock(path, timeout: lockTimeout)
            heldLock.withLock { $0 = lock }
        }
    }

    /// Releases the lock ``lockArchive()`` took; does nothing if none is held.
    public func unlockArchive() {
        saving.withLock {
            heldLock.withLock { held in
                held?.unlock()
                held = nil
            }
        }
    }

    /// Runs `body` holding the archive's lock between processes: the one this store holds, or
    /// one taken for the call (waiting up to ``lockTimeout``). For writing the archive some
    /// other way, in turn with the store's saves and with other processes.
    public func withArchiveLock<Result>(_ body: () throws -> Result) throws -> Result {
        try saving.withLock { try withArchiveLockWhileSaving(archivePath, body) }
    }

    // MARK: - Under the save lock

    @discardableResult
    private func loadWhileSaving() throws -> Bool {
        let (path, options) = contents.withLock { ($0.archivePath, $0.decodingOptions) }
        let states: [GridState]
        let found: Bool
        do {
            states = try GridStateArchive.readStates(fromFile: path, options: options)
            found = true
        } catch let error as GraphArchiveError where error.code == .fileNotFound {
            states = []
            found = false
        }
        withContents { contents in
            contents.states = states
            contents.change += 1
            contents.savedChange = contents.change
        }
        return found
    }

    private func saveWhileSaving() throws {
        // Encode under the lock (a consistent snapshot), write outside it.
        let (archive, change, path, format) = try contents.withLock { contents in
            let compression = contents.format == .gridstore ? contents.compression : .none
            let archive = try GridStateArchive.archive(contents.states, compression: compression)
            return (archive, contents.change, contents.archivePath, contents.format)
        }
        try withArchiveLockWhileSaving(path) { try GridStateArchive.write(archive, toFile: path, format: format) }
        contents.withLock { contents in
            contents.savedChange = max(contents.savedChange, change)
        }
    }

    /// Whether the lock this store holds is the one of the archive at `path` (by its lock file,
    /// so another spelling of the path, or a link to it, counts).
    private func holdsLock(on path: String) -> Bool {
        guard let held = heldLock.withLock({ $0 }), held.isLocked else { return false }
        return held.archivePath == path || held.lockFilePath == (try? ArchiveLock.lockFilePath(forArchive: path))
    }

    /// Runs `body` under the lock this store holds on `path`, or under one taken for it and held
    /// (so that saves inside `body` use it) until `body` ends.
    private func withArchiveLockWhileSaving<Result>(_ path: String, _ body: () throws -> Result) throws -> Result {
        if holdsLock(on: path) { return try body() }
        let lock = try GridStateArchive.lock(path, timeout: lockTimeout)
        let previous = heldLock.withLock { held in
            defer { held = lock }
            return held
        }
        defer {
            lock.unlock()
            heldLock.withLock { $0 = previous }
        }
        return try body()
    }

    /// Saves only if there are unsaved changes.
    ///
    /// - Returns: whether it saved.
    @discardableResult
    public func saveIfChanged() throws -> Bool {
        guard hasUnsavedChanges else { return false }
        try save()
        return true
    }
}
