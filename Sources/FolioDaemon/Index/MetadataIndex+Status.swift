import Dispatch
import Folio
import GRDB
import Synchronization

/// The index's status (`index.status`): what it holds, from the database, and what it is doing,
/// from memory.
extension MetadataIndex {
    /// The rows in the index and under each root: read whole (`fresh`), or while a crawl runs
    /// taken from the last status when it is under a second old. Each is a scan of every row
    /// (60 ms at a million), which a script asking for the status to see a crawl end repeats.
    private func counts(_ db: Database, fresh: Bool) throws -> (items: Int, roots: [WireValue]) {
        let now = ContinuousClock.now
        if !fresh, let last = lastCounts.withLock({ $0 }), now - last.at < .seconds(1) { return (last.items, last.roots) }
        let items = try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0
        var roots: [WireValue] = []
        for row in try Row.fetchAll(db, sql: "SELECT path, origin FROM roots ORDER BY path") {
            let path: String = row[0]
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE path >= ? AND path < ?", arguments: [path + "/", path + "0"]) ?? 0
            roots.append(["path": .string(path), "origin": .string(row[1]), "items": .int(Int64(count))])
        }
        lastCounts.withLock { $0 = (now, items, roots) }
        return (items, roots)
    }

    /// What the index's status says from memory, taken on the index's queue.
    struct StatusSnapshot: Sendable {
        var crawling: Bool
        var watches: Int
        var unwrittenNames: Int
    }

    /// What the index is doing, for `status(_:)`.
    func statusSnapshot() -> StatusSnapshot {
        dispatchPrecondition(condition: .onQueue(work))
        return StatusSnapshot(crawling: crawling, watches: watcher?.watchCount ?? 0, unwrittenNames: writer.names.pending)
    }

    /// What the index holds and is doing: `snapshot` with the counts read from the database (on `statusWork`, or
    /// any queue but the cooperative pool and the event loops).
    func status(_ snapshot: StatusSnapshot) throws -> WireValue {
        let crawlingNow = snapshot.crawling
        let watches = snapshot.watches
        let unwrittenNames = snapshot.unwrittenNames
        return try pool.read { db in
            let pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE kind = 1 AND listed = 0") ?? 0
            let untyped = try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE type_pending = 1") ?? 0
            let unread = extractor == nil ? 0 : try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE content_state = 1") ?? 0
            let (items, roots) = try counts(db, fresh: !(crawlingNow || pending > 0 || unwrittenNames > 0))
            return [
                "state": .string(crawlingNow || pending > 0 || unwrittenNames > 0 ? "crawling" : untyped > 0 ? "typing" : unread > 0 ? "extracting" : "idle"),
                "items": .int(Int64(items)), "pending_folders": .int(Int64(pending)), "pending_names": .int(Int64(unwrittenNames)),
                "pending_types": .int(Int64(untyped)),
                "pending_contents": .int(Int64(unread)), "watched_folders": .int(Int64(watches)), "roots": .array(roots),
                "queries": .int(Int64(live.count)),
                "exclusions": .array(writer.exclusions.all.map { ["path": .string($0.path), "kind": .string($0.kind.name)] }),
            ]
        }
    }
}
