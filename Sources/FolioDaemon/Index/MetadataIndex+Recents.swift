import Folio
import FolioSystem
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import GRDB
import Logging

extension MetadataIndex {
    /// How many recents are kept (the oldest go).
    static let recentsKept = 1000

    /// Records that `path` was opened, created or modified now (by `app`, or the user's tools),
    /// in the recents and in GTK's list, where GTK apps see it.
    func recordUse(_ path: String, event: String, app: String?, source: String = "folio", at date: Date = Date()) throws {
        dispatchPrecondition(condition: .onQueue(work))
        defer { if source == "folio" { writeRecentlyUsed(path, app: app, at: date) } }
        do {
            var changes = IndexChanges()
            try write { db in
                try db.execute(
                    sql: """
                        INSERT INTO recents (path, used, event, app, source) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT(path) DO UPDATE SET used = max(used, excluded.used), event = excluded.event,
                        app = coalesce(excluded.app, app), source = excluded.source
                        """,
                    arguments: [path, date.timeIntervalSince1970, event, app, source])
                try db.execute(
                    sql: "DELETE FROM recents WHERE path NOT IN (SELECT path FROM recents ORDER BY used DESC LIMIT ?)", arguments: [Self.recentsKept])
                try db.execute(sql: "UPDATE items SET last_used = ? WHERE path = ?", arguments: [date.timeIntervalSince1970, path])
                if let record = try writer.record(at: path, db) { changes.wrote(record) }
            }
            publish(changes)
        }
    }

    /// Adds the use to GTK's `recently-used.xbel` (read, changed, written whole through a
    /// temporary file). A list that does not read is left alone, with the reason logged.
    private func writeRecentlyUsed(_ path: String, app: String?, at date: Date) {
        let mimeType = (try? pool.read { db in try writer.record(at: path, db) }).flatMap { UTType($0.type)?.preferredMIMEType }
            ?? UTType.types(tag: (path as NSString).pathExtension, tagClass: .filenameExtension, conformingTo: nil).first?.preferredMIMEType
            ?? "application/octet-stream"
        let use = RecentlyUsedList.Use(
            path: path, mimeType: mimeType, application: app ?? "Folio", exec: "'folio open \(app.map { "--app \($0) " } ?? "")%u'", date: date)
        let existing = FileManager.default.contents(atPath: recentlyUsedPath).map(Array.init) ?? []
        do {
            let bytes = try RecentlyUsedList.recording(use, in: existing)
            // The user's alone, as GTK keeps it; whole or not at all.
            let temporary = recentlyUsedPath + ".folio-\(getpid())"
            guard FileManager.default.createFile(atPath: temporary, contents: Data(bytes), attributes: [.posixPermissions: 0o600]),
                rename(temporary, recentlyUsedPath) == 0
            else {
                unlink(temporary)
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: recentlyUsedPath])
            }
            writtenRecentlyUsed = try? FileStatus(atPath: recentlyUsedPath)
        } catch {
            logger.warning("GTK's recents were not written", metadata: ["path": "\(recentlyUsedPath)", "reason": "\(error)"])
        }
    }

    /// Reads GTK's `recently-used.xbel` into the recents (on the index queue). A list that does not
    /// parse is refused whole, with the reason logged; the recents keep what they had.
    func importRecentlyUsed() {
        // The index's own write: its uses are stored already.
        if let written = writtenRecentlyUsed, (try? FileStatus(atPath: recentlyUsedPath)) == written { return }
        guard let data = FileManager.default.contents(atPath: recentlyUsedPath) else { return }
        let list: RecentlyUsedList
        do {
            list = try RecentlyUsedList(bytes: Array(data))
        } catch {
            logger.warning("GTK's recents were not read", metadata: ["path": "\(recentlyUsedPath)", "reason": "\(error)"])
            return
        }
        var changes = IndexChanges()
        do {
            try write { db in
                for entry in list.entries.prefix(Self.recentsKept) {
                    let used = entry.date.timeIntervalSince1970
                    try db.execute(
                        sql: """
                            INSERT INTO recents (path, used, event, app, source) VALUES (?, ?, 'opened', ?, 'gtk')
                            ON CONFLICT(path) DO UPDATE SET used = excluded.used, event = excluded.event, app = excluded.app,
                            source = excluded.source WHERE excluded.used > used
                            """,
                        arguments: [entry.path, used, entry.application])
                    try db.execute(
                        sql: "UPDATE items SET last_used = ? WHERE path = ? AND (last_used IS NULL OR last_used < ?)", arguments: [used, entry.path, used])
                    if db.changesCount > 0, let record = try writer.record(at: entry.path, db) { changes.wrote(record) }
                }
                try db.execute(
                    sql: "DELETE FROM recents WHERE path NOT IN (SELECT path FROM recents ORDER BY used DESC LIMIT ?)", arguments: [Self.recentsKept])
            }
        } catch {
            logger.error("GTK's recents could not be stored", metadata: ["error": "\(error)"])
        }
        publish(changes)
    }

    /// The most recently used items, newest first: path, date, event, app, source, and what the
    /// index knows of the item (nil when it is not indexed or gone).
    func recents(limit: Int) throws -> [(path: String, used: Double, event: String, app: String?, source: String, record: IndexRecord?)] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT path, used, event, app, source FROM recents ORDER BY used DESC LIMIT ?", arguments: [limit]).map {
                row in
                let path: String = row[0]
                return (path, row[1], row[2], row[3], row[4], try writer.record(at: path, db))
            }
        }
    }

    /// The favorite folders, highest rank first.
    func favorites() throws -> [(path: String, rank: Int64)] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT path, rank FROM favorites ORDER BY rank DESC").map { ($0[0], $0[1]) }
        }
    }

    /// Adds a favorite at the top (or moves it there).
    func addFavorite(_ path: String) throws {
        try setFavorite(path) { db in ((try Int64.fetchOne(db, sql: "SELECT max(rank) FROM favorites")) ?? 0) + 1 }
    }

    /// Removes a favorite; false when it was not one.
    func removeFavorite(_ path: String) throws -> Bool {
        var removed = false
        try setFavorite(path) { db in
            removed = try Int.fetchOne(db, sql: "SELECT count(*) FROM favorites WHERE path = ?", arguments: [path]) ?? 0 > 0
            return nil
        }
        return removed
    }

    private func setFavorite(_ path: String, rank: (Database) throws -> Int64?) throws {
        dispatchPrecondition(condition: .onQueue(work))
        do {
            var changes = IndexChanges()
            try write { db in
                let value = try rank(db)
                if let value {
                    try db.execute(sql: "INSERT OR REPLACE INTO favorites (path, rank) VALUES (?, ?)", arguments: [path, value])
                } else {
                    try db.execute(sql: "DELETE FROM favorites WHERE path = ?", arguments: [path])
                }
                try db.execute(sql: "UPDATE items SET favorite_rank = ? WHERE path = ?", arguments: [value, path])
                if let record = try writer.record(at: path, db) { changes.wrote(record) }
            }
            publish(changes)
        }
    }
}
