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

    /// The rest of a folder bigger than a crawl step (on the index queue): written a step's budget
    /// at a time, so that a folder of 100,000 entries holds up events, stitched writes and requests
    /// for one step at a time, not for all of it. Dropped when a change touches the folder, which
    /// then stays unlisted and is read again (see `dropCrawlState(touching:)`).
    private var carried: IndexWriter.FolderRows?

    /// The crawl's reads in flight (on the index queue): the last query's unlisted folders, read
    /// ahead of the steps that write them. Dropped by any change to the index, since a listing
    /// read before it may be stale: the folders are still unlisted, and are read again.
    private var readAhead: FolderReadAhead?

    private(set) var watcher: InotifyWatcher?
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
    /// Where the status's counts are read: off the index queue.
    let statusWork = DispatchQueue(label: "folio.index.status")
    /// The last counts a status read, and when.
    let lastCounts = Mutex<(at: ContinuousClock.Instant, items: Int, roots: [WireValue])?>(nil)
    /// The sandboxed text extractor; nil when this process cannot run one.
    let extractor: TextExtractionWorkers?
    private var crawlStarted: ContinuousClock.Instant?
    /// GTK's recents list as the index last wrote it (on the index queue): the inotify event of
    /// that write finds its own uses already stored, and the list is not read again for them.
    var writtenRecentlyUsed: FileStatus?
    private var crawled = 0
    /// `crawled` when the crawl began.
    private var crawledBefore = 0
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

    /// The index in `pool`, of the folders of `paths`, with its names' trigram index `names`;
    /// `driveStates` tells how the drive's items stand with the server.
    init(
        pool: DatabasePool, names: NameTrigrams, paths: FolioPaths, driveStates: any DriveStateSource, watchesFileSystem: Bool = true,
        stepDelay: Duration = .zero,
        extractorExecutable: String? = MetadataIndex.ownExecutable, logger: Logger
    ) {
        self.pool = pool
        self.paths = paths
        self.logger = logger
        self.watchesFileSystem = watchesFileSystem
        self.stepDelay = stepDelay
        states = UbiquitousStates(driveRoot: paths.driveDirectory, source: driveStates)
        writer = IndexWriter(types: IndexTypes(), driveRoot: paths.driveDirectory, states: states, logger: logger, names: names)
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
            // Before any write that names a name: the names' index in step with the rows.
            pool.writeWithoutTransaction { db in writer.names.check(db) }
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
            readAhead?.stop()
            watcher?.stop()
            watcher = nil
        }
        contentWork.sync { extractor?.stop() }
        writer.names.close(within: 10)
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
        if removed { dropCrawlState(touching: folder) }
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
        dropCrawlState(touching: nil)
        try write { db in
            try db.execute(sql: "DELETE FROM items")
            writer.names.note(.clear)
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
            var sequence: Int64?
            do {
                try db.inTransaction {
                    result = try body(db)
                    sequence = try writer.names.numberTransaction(db)
                    return .commit
                }
            } catch {
                writer.names.rolledBack()
                throw error
            }
            writer.names.committed(sequence)
            return result!
        }
    }

    // MARK: Crawling

    func scheduleCrawl() {
        guard !crawling, !stopped else { return }
        crawling = true
        crawlStarted = .now
        crawledBefore = crawled
        work.async { [self] in crawlStep() }
    }

    /// Lists unlisted folders, up to the budget, in one transaction: the folders read ahead of
    /// it (`FolderReadAhead`) and ready, or the next part of a folder bigger than a step. A step
    /// never waits for the disk inside its transaction: when the next folder is not read yet
    /// (100 ms), the step ends and the queue's other work runs before the next one.
    private func crawlStep() {
        guard !stopped else { return }
        if carried == nil, readAhead == nil {
            let folders: [(id: Int64, path: String, identity: (device: UInt64, inode: UInt64)?)]
            do {
                folders = try pool.read { db in
                    try Row.fetchAll(
                        db.cachedStatement(sql: "SELECT id, path, device, inode FROM items WHERE kind = 1 AND listed = 0 ORDER BY id LIMIT \(Self.crawlFolders)")
                    ).map { row in
                        let device = UInt64(bitPattern: row[2] as Int64? ?? 0), inode = UInt64(bitPattern: row[3] as Int64? ?? 0)
                        return (row[0], row[1], inode == 0 ? nil : (device, inode))
                    }
                }
            } catch {
                logger.error("a crawl step failed; retrying", metadata: ["error": "\(error)"])
                work.asyncAfter(deadline: .now() + 1) { [self] in crawlStep() }
                return
            }
            guard !folders.isEmpty else { return finishCrawl() }
            readAhead = FolderReadAhead(folders: folders, writer: writer, watcher: watcher, aheadEntries: Self.crawlBudget)
        }
        if carried == nil, let reader = readAhead, !reader.waitForNext(within: 0.1) {
            // Not read yet: the queue's other work runs, then the step looks again (a reader that
            // gave up leaves its folders unlisted, for a new query).
            if reader.isFinished {
                reader.stop()
                readAhead = nil
            }
            work.async { [self] in crawlStep() }
            return
        }
        var changes = IndexChanges()
        changes.recording = live.count > 0
        do {
            let reader = readAhead
            let (carry, listed) = try write { db -> (IndexWriter.FolderRows?, Int) in
                if var rows = carried {
                    let before = rows.written
                    try writer.write(&rows, count: Self.crawlBudget, db, changes: &changes)
                    return (rows.done ? nil : rows, rows.written - before)
                }
                var budget = 0
                // A folder not read yet is waited for briefly (at most 50 ms a step): fewer,
                // bigger transactions, each flushing one segment of trigrams.
                let patience = ContinuousClock.now + .milliseconds(50)
                func nextListing() -> (id: Int64, listing: IndexWriter.FolderListing)? {
                    guard let reader else { return nil }
                    if let next = reader.takeNext() { return next }
                    let left = (patience - .now).seconds
                    guard left > 0, reader.waitForNext(within: left) else { return nil }
                    return reader.takeNext()
                }
                while budget < Self.crawlBudget, let (id, listing) = nextListing() {
                    guard var rows = try writer.rows(of: listing, id: id, db, changes: &changes) else { continue }
                    try writer.write(&rows, count: Self.crawlBudget, db, changes: &changes)
                    budget += max(rows.written, 1)
                    if !rows.done { return (rows, budget) }
                }
                return (nil, budget)
            }
            carried = carry
            crawled += listed
        } catch {
            // What this step took from the reader is not written: read those folders again.
            logger.error("a crawl step failed; retrying", metadata: ["error": "\(error)"])
            dropCrawlState(touching: nil)
            work.asyncAfter(deadline: .now() + 1) { [self] in crawlStep() }
            return
        }
        if let readAhead, readAhead.isFinished {
            readAhead.stop()
            self.readAhead = nil
        }
        publish(changes)
        if stepDelay > .zero {
            work.asyncAfter(deadline: .now() + stepDelay.seconds) { [self] in crawlStep() }
        } else {
            work.async { [self] in crawlStep() }
        }
    }

    /// No folder is left to list: the typing pass follows.
    private func finishCrawl() {
        crawling = false
        if let crawlStarted, crawled > crawledBefore {
            // The first crawl since the daemon started is news; the short ones that follow changes
            // on disk are routine (seen 91 times a second in a drive test's log).
            logger.log(
                level: crawledBefore == 0 ? .info : .debug, "index crawl finished",
                metadata: ["entries": "\(crawled - crawledBefore)", "seconds": "\((ContinuousClock.now - crawlStarted).seconds)"])
        }
        crawlStarted = nil
        scheduleTyping()
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
        for operation in operations {
            switch operation {
            case .refresh(let path): dropCrawlState(touching: path)
            case .move(let from, let to):
                dropCrawlState(touching: from)
                dropCrawlState(touching: to)
            }
        }
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

    /// Before a change to the index other than the crawl's: drops the folders read ahead, and
    /// the rest of a folder being written across steps when `path` is in it, is it or holds it
    /// (`nil`: whatever the path). Their listings may be stale or their rows moved; the folders
    /// are still unlisted, so the crawl reads them again and writes what differs.
    func dropCrawlState(touching path: String?) {
        dispatchPrecondition(condition: .onQueue(work))
        readAhead?.stop()
        readAhead = nil
        guard let carried else { return }
        if let path, !CoordinationPath.isSelfOrDescendant(path, of: carried.path), !CoordinationPath.isSelfOrDescendant(carried.path, of: path) { return }
        self.carried = nil
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
            dropCrawlState(touching: nil)
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
}
