import Folio
import FolioSystem
import Foundation
import GRDB
import Logging
import Synchronization
import SystemPackage

/// The daemon's metadata index: a crawl of the indexed roots into the `items` table, an inotify
/// watch on every indexed folder, coordinated writes stitched in as they end, and the live
/// queries fed from each transaction's changes.
///
/// Every change to the index runs on one serial queue, in bounded steps: a crawl step lists up to
/// `crawlBudget` entries in one transaction and queues the next step behind whatever arrived
/// meanwhile (file system events, stitched writes, queries), so a long crawl never holds up a
/// live update for more than one step. The crawl's to-do list is the database itself (folders with
/// `listed = 0`), so memory stays bounded by one step and a restart resumes where it stopped.
final class MetadataIndex: @unchecked Sendable {
    let pool: DatabasePool
    let logger: Logger
    let paths: FolioPaths
    /// Every index change runs here.
    let work = DispatchQueue(label: "folio.index")
    let writer: IndexWriter
    /// The sync states of the drive's items.
    let states: UbiquitousStates
    let live: LiveQueries
    /// How many entries one crawl transaction lists at most (whole folders, so a big folder may
    /// exceed it). Each commit flushes an FTS5 segment of the names' trigrams, so bigger steps crawl
    /// faster (4,000: 5.8 s for 200k files here, 16,000: 4.1 s); an event or a stitched write waits
    /// for at most one step (about 0.3 s here).
    static let crawlBudget = 16000

    /// How many folders one crawl transaction lists at most: enough that a tree of small folders
    /// (`/usr`: 9 entries a folder) also fills a step's budget (with 256, `/usr` took 60 commits).
    static let crawlFolders = 4096

    private var watcher: InotifyWatcher?
    private(set) var crawling = false
    /// Whether a typing step is under way (``scheduleTyping()``).
    var typing = false
    /// Where the typing pass reads files' first bytes: off the index queue, so events and queries
    /// never wait for a disk.
    let typeWork = DispatchQueue(label: "folio.index.types", qos: .utility)
    /// Whether an extraction step is under way (``scheduleExtraction()``).
    var extracting = false
    /// Where documents' text is read (through the sandboxed worker): off the index queue.
    let contentWork = DispatchQueue(label: "folio.index.contents", qos: .utility)
    /// The sandboxed text extractor; nil when this process cannot run one.
    let extractor: TextExtractionWorkers?
    private var crawlStarted: ContinuousClock.Instant?
    private var crawled = 0
    private(set) var stopped = false
    private let stitched = Mutex<[CoordinatedChange]>([])
    /// The indexed roots, as last read (nil before the index started): stitching skips writes
    /// outside them.
    let rootPaths = Mutex<[String]?>(nil)
    /// Whether the file system is watched (tests switch it off to show stitching alone).
    private let watchesFileSystem: Bool
    private let stepDelay: Duration
    /// Told of each drive item whose state with the server changed, with the ubiquity keys that
    /// changed (the daemon tells the item's presenters: `presentedItemDidChangeUbiquityAttributes`).
    private let ubiquityListener = Mutex<(@Sendable (String, [String]) -> Void)?>(nil)

    /// Sets who hears of drive items' changed ubiquity keys (the daemon's arbiter).
    func onUbiquityChange(_ listener: @escaping @Sendable (String, [String]) -> Void) {
        ubiquityListener.withLock { $0 = listener }
    }

    /// The index in `pool`, of the folders of `paths`; `driveStates` tells how the drive's items
    /// stand with the server.
    init(
        pool: DatabasePool, paths: FolioPaths, driveStates: any DriveStateSource, watchesFileSystem: Bool = true, stepDelay: Duration = .zero,
        extractorExecutable: String? = MetadataIndex.ownExecutable, logger: Logger
    ) {
        self.pool = pool
        self.paths = paths
        self.logger = logger
        self.watchesFileSystem = watchesFileSystem
        self.stepDelay = stepDelay
        states = UbiquitousStates(driveRoot: paths.driveDirectory, source: driveStates)
        writer = IndexWriter(types: IndexTypes(), driveRoot: paths.driveDirectory, states: states, logger: logger)
        live = LiveQueries(logger: logger)
        extractor = extractorExecutable.map { TextExtractionWorkers(executable: $0) }
    }

    // MARK: Life

    /// Adds the default roots (app containers, the Drive), starts watching and resumes or verifies
    /// the crawl: folders left unlisted by a crash are listed; the rest are listed again, which
    /// rewrites only what changed while the daemon was not running.
    func start() {
        work.async { [self] in
            if watchesFileSystem {
                do {
                    let watcher = try InotifyWatcher(logger: logger)
                    self.watcher = watcher
                    watcher.deliver(on: work) { [weak self] events in
                        guard let self else { return false }
                        handle(events)
                        return true
                    }
                } catch {
                    logger.error("the index cannot watch the file system; it is updated by crawls and coordinated writes only", metadata: ["error": "\(error)"])
                }
            }
            do {
                try write { db in
                    for (path, origin) in [(paths.containersDirectory, "containers"), (paths.driveDirectory, "drive")] {
                        try db.execute(
                            sql: "INSERT OR IGNORE INTO roots (path, origin, added) VALUES (?, ?, ?)",
                            arguments: [path, origin, Date().timeIntervalSince1970])
                    }
                    writer.types.note(try String.fetchAll(db, sql: "SELECT DISTINCT type FROM items"))
                    try writer.exclusions.load(db)
                    let roots = try String.fetchAll(db, sql: "SELECT path FROM roots")
                    rootPaths.withLock { $0 = roots }
                    var changes = IndexChanges()
                    for root in roots { try ensureRoot(root, db, changes: &changes) }
                    // Everything is checked again after a restart; only differences are written.
                    try db.execute(sql: "UPDATE items SET listed = 0 WHERE kind = 1 AND listed = 1")
                }
            } catch {
                logger.error("the index could not start its crawl", metadata: ["error": "\(error)"])
            }
            // GTK's recents, now and whenever the list is rewritten.
            if (try? FileStatus(path: FilePath(paths.dataHome)))?.kind == .directory { watcher?.watch(paths.dataHome) }
            importRecentlyUsed()
            scheduleCrawl()
        }
    }

    /// Where GTK keeps its recents.
    var recentlyUsedPath: String { paths.dataHome + "/recently-used.xbel" }

    func stop() {
        work.sync {
            stopped = true
            watcher?.stop()
            watcher = nil
        }
        contentWork.sync { extractor?.stop() }
    }

    // MARK: Roots

    /// Indexes `folder` (and everything under it) from now on. On the index queue, as every method
    /// that reads or changes the index.
    func addRoot(_ folder: String) throws {
        dispatchPrecondition(condition: .onQueue(work))
        try write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO roots (path, origin, added) VALUES (?, 'user', ?)", arguments: [folder, Date().timeIntervalSince1970])
            try noteRoots(db)
            var changes = IndexChanges()
            try ensureRoot(folder, db, changes: &changes)
        }
        scheduleCrawl()
    }

    /// Stops indexing `folder`; its rows go. False when it is not a root the user added.
    func removeRoot(_ folder: String) throws -> Bool {
        dispatchPrecondition(condition: .onQueue(work))
        var changes = IndexChanges()
        let removed = try write { db -> Bool in
            try db.execute(sql: "DELETE FROM roots WHERE path = ? AND origin = 'user'", arguments: [folder])
            guard db.changesCount > 0 else { return false }
            try noteRoots(db)
            try writer.removeTree(folder, db, changes: &changes)
            return true
        }
        unwatch(folder)
        publish(changes)
        return removed
    }

    /// Stops watching `folder` and every folder under it.
    func unwatch(_ folder: String) {
        guard let watcher else { return }
        for watched in watcher.watchedDirectories where CoordinationPath.isSelfOrDescendant(watched, of: folder) { watcher.unwatch(watched) }
    }

    /// The root's own row: inserted (unlisted) when missing.
    private func ensureRoot(_ root: String, _ db: Database, changes: inout IndexChanges) throws {
        guard try writer.record(at: root, db) == nil else { return }
        guard let status = try? FileStatus(path: FilePath(root), followSymlinks: true), status.kind == .directory else { return }
        var record = IndexRecord(path: root, name: (root as NSString).lastPathComponent, status: status, types: writer.types)
        record.kind = .directory
        record.id = try writer.insert(record, parent: nil, db)
        changes.wrote(record)
    }

    /// Forgets every row and crawls again from the roots.
    func rebuild() throws {
        dispatchPrecondition(condition: .onQueue(work))
        try write { db in
            try db.execute(sql: "DELETE FROM items")
            try db.execute(sql: "INSERT INTO items_fts(items_fts) VALUES ('delete-all')")
            try db.execute(sql: "DELETE FROM contents")
            var changes = IndexChanges()
            for root in try String.fetchAll(db, sql: "SELECT path FROM roots") { try ensureRoot(root, db, changes: &changes) }
        }
        crawled = 0
        scheduleCrawl()
    }

    /// One transaction of the index's, without waiting for the disk: a crash keeps every
    /// committed transaction (WAL), and a power cut may lose the last ones, which the next start's
    /// listing redoes. The connection's setting is put back for the grants, which wait.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            let previous = try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? 2
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            defer { try? db.execute(sql: "PRAGMA synchronous = \(previous)") }
            var result: T?
            try db.inTransaction {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    // MARK: Crawling

    func scheduleCrawl() {
        guard !crawling, !stopped else { return }
        crawling = true
        crawlStarted = .now
        work.async { [self] in crawlStep() }
    }

    /// Lists unlisted folders, up to the budget, in one transaction.
    private func crawlStep() {
        guard !stopped else { return }
        var changes = IndexChanges()
        changes.recording = live.count > 0
        let more: Bool
        do {
            more = try write { db -> Bool in
                let folders = try Row.fetchAll(db.cachedStatement(sql: "SELECT id, path FROM items WHERE kind = 1 AND listed = 0 ORDER BY id LIMIT \(Self.crawlFolders)"))
                var budget = 0
                // Each folder is watched (one that cannot be, the watcher logs why, is checked at
                // the next crawl), then read, ahead of this loop's writes.
                let reader = FolderReadAhead(folders: folders.map { $0[1] }, writer: writer, watcher: watcher, aheadEntries: Self.crawlBudget)
                defer { reader.stop() }
                for (index, folder) in folders.enumerated() {
                    budget += try writer.apply(reader.listing(at: index), id: folder[0], db, changes: &changes)
                    if budget >= Self.crawlBudget { break }
                }
                crawled += budget
                return !folders.isEmpty
            }
        } catch {
            logger.error("a crawl step failed; retrying", metadata: ["error": "\(error)"])
            work.asyncAfter(deadline: .now() + 1) { [self] in crawlStep() }
            return
        }
        publish(changes)
        if more, stepDelay > .zero {
            work.asyncAfter(deadline: .now() + stepDelay.seconds) { [self] in crawlStep() }
        } else if more {
            work.async { [self] in crawlStep() }
        } else {
            crawling = false
            if let crawlStarted {
                logger.info("index crawl finished", metadata: ["entries": "\(crawled)", "seconds": "\((ContinuousClock.now - crawlStarted).seconds)"])
            }
            crawlStarted = nil
            scheduleTyping()
        }
    }

    // MARK: Changes

    /// A coordinated write ended (called under the arbiter's lock): recorded now, applied on the
    /// index queue; anything that reads the index first applies what is recorded.
    func stitch(_ change: CoordinatedChange) {
        // A write outside every root changes nothing here: it costs no transaction.
        guard covers(change) else { return }
        let first = stitched.withLock { pending in
            pending.append(change)
            return pending.count == 1
        }
        if first { work.async { [self] in applyStitched() } }
    }

    /// Whether `change` touches an indexed root (inside one, or above one); true until the roots
    /// are known.
    private func covers(_ change: CoordinatedChange) -> Bool {
        guard let roots = rootPaths.withLock({ $0 }) else { return true }
        func touches(_ path: String) -> Bool {
            roots.contains { CoordinationPath.isSelfOrDescendant(path, of: $0) || CoordinationPath.isSelfOrDescendant($0, of: path) }
        }
        switch change {
        case .wrote(let path): return touches(path)
        case .moved(let from, let to): return touches(from) || touches(to)
        }
    }

    /// Reads the roots again (on the index queue, after they changed).
    private func noteRoots(_ db: Database) throws {
        let roots = try String.fetchAll(db, sql: "SELECT path FROM roots")
        rootPaths.withLock { $0 = roots }
    }

    /// Applies the stitched writes (on the index queue).
    func applyStitched() {
        let pending = stitched.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        guard !pending.isEmpty, !stopped else { return }
        apply(pending.map { change in
            switch change {
            case .wrote(let path): .refresh(path)
            case .moved(let from, let to): .move(from: from, to: to)
            }
        })
    }

    enum Operation {
        case refresh(String)
        case move(from: String, to: String)
    }

    private func apply(_ operations: [Operation]) {
        var changes = IndexChanges()
        do {
            try write { db in
                for operation in operations {
                    switch operation {
                    case .refresh(let path): try writer.refresh(path, db, changes: &changes)
                    case .move(let from, let to):
                        try writer.move(from: from, to: to, db, changes: &changes)
                    }
                }
            }
        } catch {
            logger.error("an index update failed", metadata: ["error": "\(error)"])
        }
        // Moved folders keep their watches under their new names; new folders wait for the crawl.
        if let watcher {
            for record in changes.written.values where record.kind == .directory { watcher.watch(record.path) }
        }
        publish(changes)
        scheduleCrawl()
    }

    /// Handles a batch on the index queue; returns once it is applied, so the watcher reads the
    /// kernel's queue only as fast as the index keeps up (past that, the kernel's queue overflows
    /// and everything is listed again).
    private func handle(_ events: [InotifyWatcher.Event]) {
        guard !stopped else { return }
        var operations: [Operation] = []
        var recentsChanged = false
        var overflowed = false
        for event in events {
            switch event {
            case .overflow:
                overflowed = true
            case .moved(let from, let to) where to == recentlyUsedPath:
                // GTK rewrites its list by renaming a new file over it.
                recentsChanged = true
                operations.append(.refresh(from))
            case .moved(let from, let to):
                operations.append(.move(from: from, to: to))
            case .created(let path), .modified(let path), .deleted(let path), .movedIn(let path), .movedOut(let path):
                if path == recentlyUsedPath {
                    recentsChanged = true
                } else {
                    operations.append(.refresh(path))
                }
            }
        }
        if !operations.isEmpty { apply(operations) }
        if overflowed {
            logger.warning("inotify queue overflow: every indexed folder is listed again")
            do {
                try write { db in try db.execute(sql: "UPDATE items SET listed = 0 WHERE kind = 1") }
            } catch {
                logger.error("could not mark the index for a rescan", metadata: ["error": "\(error)"])
            }
            scheduleCrawl()
        }
        if recentsChanged { importRecentlyUsed() }
    }

    /// Brings the sync state of every drive item in line with the drive's journal (through
    /// ``DriveStateSource``) and with `downloading` (the paths being downloaded now; nil: as last
    /// told), in one transaction; live queries hear the items whose state changed. Called after
    /// each of the daemon's passes and around its downloads; a pass run by another process (`folio
    /// drive sync` with no daemon running) shows at the next.
    func refreshDriveStates(downloading: Set<String>? = nil) {
        refreshDriveStates(only: nil) { states in
            if let downloading { states.downloadingPaths = downloading }
        }
    }

    /// Brings the rows of the files being downloaded up to date with how far each is (`percents`,
    /// 0…100, by path), and those of `ended` (downloads that ended since the last call): only
    /// those rows are read and written, so a pass's downloads can be shown as they go.
    func refreshDownloads(_ percents: [String: Double], ended: Set<String>) {
        refreshDriveStates(only: Set(percents.keys).union(ended)) { states in states.downloadPercents = percents }
    }

    /// Sets what the daemon told (`update`), then rewrites the drive rows (all of them, or those
    /// at `only`) whose state changed, and tells who listens.
    private func refreshDriveStates(only: Set<String>?, update: @escaping @Sendable (UbiquitousStates) -> Void) {
        work.async { [self] in
            guard !stopped else { return }
            update(states)
            var changes = IndexChanges()
            do {
                try write { db in
                    let root = states.driveRoot
                    let records: [IndexRecord]
                    if let only {
                        records = try only.sorted().compactMap { try writer.record(at: $0, db) }
                    } else {
                        let rows = try Row.fetchAll(
                            db, sql: "SELECT \(IndexRecord.columns) FROM items WHERE path >= ? AND path < ?", arguments: [root + "/", root + "0"])
                        records = rows.map(IndexRecord.init(row:))
                    }
                    for (row, state) in zip(records, try states.states(of: records, db)) where state != row.sync {
                        var record = row
                        record.sync = state
                        try writer.updateSyncState(record, db)
                        changes.wrote(record)
                        changes.syncStateChanged(record.path, from: row.sync, to: state)
                    }
                }
            } catch {
                logger.error("could not bring the drive's sync states up to date", metadata: ["error": "\(error)"])
            }
            publish(changes)
        }
    }

    /// Hands a transaction's changes to the live queries, and the drive items' changed ubiquity
    /// keys to who hears them (presenters, through the daemon's arbiter), whichever write found
    /// them: a state refresh after a pass, or a file's row rewritten after an event (a pass can
    /// finish before the event of the write it sent is read, and only the row's rewrite then
    /// finds the item uploaded).
    func publish(_ changes: IndexChanges) {
        if !changes.ubiquity.isEmpty, let listener = ubiquityListener.withLock({ $0 }) {
            for (path, keys) in changes.ubiquity { listener(path, keys) }
        }
        guard !changes.isEmpty else { return }
        live.apply(changes, on: self)
    }

    /// Simulates a lost-events report (tests).
    func simulateOverflow() {
        work.async { [self] in handle([.overflow]) }
    }

    // MARK: Status

    /// What the index holds and is doing.
    func status() throws -> WireValue {
        dispatchPrecondition(condition: .onQueue(work))
        let crawlingNow = crawling
        let watches = watcher?.watchCount ?? 0
        return try pool.read { db in
            let items = try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0
            let pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE kind = 1 AND listed = 0") ?? 0
            let untyped = try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE type_pending = 1") ?? 0
            let unread = extractor == nil ? 0 : try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE content_state = 1") ?? 0
            var roots: [WireValue] = []
            for row in try Row.fetchAll(db, sql: "SELECT path, origin FROM roots ORDER BY path") {
                let path: String = row[0]
                let count = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM items WHERE path >= ? AND path < ?", arguments: [path + "/", path + "0"]) ?? 0
                roots.append(["path": .string(path), "origin": .string(row[1]), "items": .int(Int64(count))])
            }
            return [
                "state": .string(crawlingNow || pending > 0 ? "crawling" : untyped > 0 ? "typing" : unread > 0 ? "extracting" : "idle"),
                "items": .int(Int64(items)), "pending_folders": .int(Int64(pending)), "pending_types": .int(Int64(untyped)),
                "pending_contents": .int(Int64(unread)), "watched_folders": .int(Int64(watches)), "roots": .array(roots),
                "queries": .int(Int64(live.count)),
                "exclusions": .array(writer.exclusions.all.map { ["path": .string($0.path), "kind": .string($0.kind.name)] }),
            ]
        }
    }
}
