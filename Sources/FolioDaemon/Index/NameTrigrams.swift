import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GRDB
import Logging
import Synchronization

/// The names' trigram index (substring search over folded names): a database file of its own
/// beside the index's, written on a thread of its own, so that the two costliest writes of a
/// crawl — the rows with their b-tree indexes, and every name's trigrams — run on two cores.
/// With both in one database the crawl's single writer did both: the trigrams were a sixth of a
/// crawl of `/usr` (`folio bench index`).
///
/// Every reading connection of the index's pool attaches the file as `names`, so `items_fts`
/// there is this index (FTS5, trigrams, contentless: rows are the items' ids; the main database
/// has had none since migration `v16-name-trigrams-apart`). A name search checks each name it is
/// given, so a name written a moment after its row is only found a moment later.
///
/// In step with the rows: the index's writer notes each change to a row's folded name inside its
/// transaction (``note(_:)``), numbers that transaction in the same transaction
/// (``numberTransaction(_:)``, table `name_trigrams`) and hands the changes over once it committed
/// (``committed(_:)``). This thread writes them in that order, each batch with the number it
/// reached (`applied`). At start the two numbers are compared (``check(_:)``); when they differ —
/// killed between the two commits, the file lost, an index from before the file — the trigrams
/// are made again from the rows, as the rows stand in one snapshot; batches numbered up to that
/// snapshot's are then skipped. A contentless index must be told the old value of each row it
/// deletes, so it is never written out of step: after a failed write it stops until the next start.
final class NameTrigrams: Sendable {
    /// A change to the names' index.
    enum Change: Sendable {
        case insert(id: Int64, fold: String)
        case delete(id: Int64, fold: String)
        /// Every name forgotten (the index is rebuilt).
        case clear
    }

    /// The name the file is attached under on the index's reading connections.
    static let schema = "names"

    private let queue: DatabaseQueue
    private let indexPath: String
    private let logger: Logger
    /// Where the batches are written, in order.
    private let work = DispatchQueue(label: "folio.index.names", qos: .utility)
    /// Batches handed over and not yet written.
    private let inFlight = DispatchGroup()
    private let state = Mutex(State())

    private struct State {
        /// The changes of the index's transaction under way.
        var buffer: [Change] = []
        /// Changes handed over and not yet written.
        var pending = 0
        /// The last batch written (or the rebuild's snapshot).
        var applied: Int64?
        /// A write failed: nothing more is written until the next start rebuilds.
        var broken = false
    }

    /// Makes the file and its tables when missing, private like the index's (before the index's
    /// pool opens, whose readers attach it).
    static func prepare(path: String) throws {
        let created = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if created >= 0 { Glibc.close(created) }
        for file in [path, path + "-wal", path + "-shm"] where access(file, F_OK) == 0 { chmod(file, 0o600) }
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            guard try !db.tableExists("applied") else { return }
            try db.execute(sql: "PRAGMA page_size = \(IndexStore.pageSize)")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE items_fts USING fts5(fold, content='', tokenize='trigram', detail=none, columnsize=0);
                    CREATE TABLE applied (sequence INTEGER NOT NULL);
                    """)
        }
        try queue.close()
    }

    /// Opens the names' index at `path` (made by `prepare(path:)`, which `IndexStore` runs), for
    /// the index at `indexPath`.
    init(path: String, indexPath: String, logger: Logger) throws {
        var configuration = Configuration()
        configuration.label = "folio.index.names"
        configuration.busyMode = .timeout(30)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 8192")
        }
        queue = try DatabaseQueue(path: path, configuration: configuration)
        self.indexPath = indexPath
        self.logger = logger
    }

    // MARK: The index's writer

    /// Notes a change of the transaction under way.
    func note(_ change: Change) {
        state.withLock { $0.buffer.append(change) }
    }

    /// Numbers the transaction under way when it changed names (inside it, on `db`): the number
    /// its changes are written with.
    func numberTransaction(_ db: Database) throws -> Int64? {
        guard state.withLock({ !$0.buffer.isEmpty }) else { return nil }
        return try Int64.fetchOne(db, sql: "UPDATE name_trigrams SET sequence = sequence + 1 RETURNING sequence")
    }

    /// Hands over the changes of the transaction that just committed as number `sequence`.
    func committed(_ sequence: Int64?) {
        let changes = state.withLock { state in
            defer { state.buffer = [] }
            // No number: the transaction changed no name (`numberTransaction`).
            guard sequence != nil else { return [Change]() }
            state.pending += state.buffer.count
            return state.buffer
        }
        guard let sequence, !changes.isEmpty else { return }
        inFlight.enter()
        work.async { [self] in
            defer { inFlight.leave() }
            write(changes, as: sequence)
        }
    }

    /// Forgets the changes of a transaction that rolled back.
    func rolledBack() {
        state.withLock { $0.buffer = [] }
    }

    /// Changes handed over and not yet written.
    var pending: Int { state.withLock { $0.pending } }

    /// Waits at most `seconds` for every change handed over to be written; whether they were.
    func waitUntilWritten(within seconds: Double) -> Bool {
        inFlight.wait(timeout: .now() + seconds) == .success
    }

    // MARK: This thread

    private func write(_ changes: [Change], as sequence: Int64) {
        defer { state.withLock { $0.pending -= changes.count } }
        let skip = state.withLock { state in state.broken || (state.applied.map { sequence <= $0 } ?? false) }
        guard !skip else { return }
        do {
            try queue.inDatabase { db in
                try db.inTransaction(.deferred) {
                    let insertion = try db.cachedStatement(sql: "INSERT INTO items_fts(rowid, fold) VALUES (?, ?)")
                    let deletion = try db.cachedStatement(sql: "INSERT INTO items_fts(items_fts, rowid, fold) VALUES ('delete', ?, ?)")
                    for change in changes {
                        switch change {
                        case .insert(let id, let fold):
                            let insert = DirectBindings(insertion)
                            insert.bind(1, id)
                            insert.bind(2, fold)
                            try insert.run(db)
                        case .delete(let id, let fold):
                            let delete = DirectBindings(deletion)
                            delete.bind(1, id)
                            delete.bind(2, fold)
                            try delete.run(db)
                        case .clear:
                            try db.execute(sql: "INSERT INTO items_fts(items_fts) VALUES ('delete-all')")
                        }
                    }
                    try Self.setApplied(sequence, db)
                    return .commit
                }
            }
            state.withLock { $0.applied = sequence }
        } catch {
            state.withLock { $0.broken = true }
            logger.error(
                "the names' index could not be written; name search misses changes until the daemon starts again", metadata: ["error": "\(error)"])
        }
    }

    private static func setApplied(_ sequence: Int64, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM applied")
        try db.execute(sql: "INSERT INTO applied (sequence) VALUES (?)", arguments: [sequence])
    }

    // MARK: Start

    /// Compares the names' index with the index's rows (`db`: a connection of the index, on its
    /// queue, before any write) and, when they are out of step, makes it again from the rows on
    /// this thread.
    /// A failure to compare leaves the names' index unwritten until the next start.
    func check(_ db: Database) {
        let sequence: Int64
        let applied: Int64?
        do {
            sequence = try Int64.fetchOne(db, sql: "SELECT sequence FROM name_trigrams") ?? 0
            applied = try queue.read { db in try Int64.fetchOne(db, sql: "SELECT sequence FROM applied") }
        } catch {
            state.withLock { $0.broken = true }
            logger.error("the names' index could not be checked; name search misses changes until the daemon starts again", metadata: ["error": "\(error)"])
            return
        }
        state.withLock { $0.applied = applied }
        guard applied != sequence else { return }
        logger.notice(
            "making the names' index again from the index's rows",
            metadata: ["index": "\(sequence)", "names": "\(applied.map(String.init) ?? "never made")"])
        inFlight.enter()
        state.withLock { $0.pending += 1 }
        work.async { [self] in
            defer {
                state.withLock { $0.pending -= 1 }
                inFlight.leave()
            }
            rebuild()
        }
    }

    /// Every row's name, as the rows stand in one snapshot of the index's database, and that
    /// snapshot's number: batches up to it are already in.
    private func rebuild() {
        do {
            let snapshot = try queue.inDatabase { db -> Int64 in
                try db.execute(sql: "ATTACH DATABASE ? AS indexed", arguments: [indexPath])
                defer { try? db.execute(sql: "DETACH DATABASE indexed") }
                var snapshot: Int64 = 0
                // Deferred: the index's database is only read, and its writer never waits.
                try db.inTransaction(.deferred) {
                    snapshot = try Int64.fetchOne(db, sql: "SELECT sequence FROM indexed.name_trigrams") ?? 0
                    try db.execute(sql: "INSERT INTO items_fts(items_fts) VALUES ('delete-all')")
                    try db.execute(sql: "INSERT INTO items_fts(rowid, fold) SELECT id, fold FROM indexed.items")
                    try Self.setApplied(snapshot, db)
                    return .commit
                }
                return snapshot
            }
            state.withLock {
                $0.applied = snapshot
                $0.broken = false
            }
        } catch {
            state.withLock { $0.broken = true }
            logger.error("the names' index could not be made; name search finds nothing new until the daemon starts again", metadata: ["error": "\(error)"])
        }
    }

    /// Writes what is handed over (waiting at most `seconds`) and closes the file; a write still
    /// under way after that is left to end with the process (the next start makes the index again).
    func close(within seconds: Double) {
        guard waitUntilWritten(within: seconds) else {
            logger.warning("the names' index was left with changes unwritten; it is made again at the next start")
            return
        }
        work.sync { try? queue.close() }
    }
}
