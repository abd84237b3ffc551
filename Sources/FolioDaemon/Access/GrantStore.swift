import Folio
import FolioSystem
import Foundation
import GRDB
import Synchronization
import SystemPackage

/// The grants, in the daemon's database (table `grants`) with a copy in memory for the access
/// checks. Session grants are dropped when their connection ends and when the daemon starts.
final class GrantStore: Sendable {
    private let pool: DatabasePool
    private let grants: Mutex<[Int64: Grant]>

    init(pool: DatabasePool) throws {
        self.pool = pool
        let loaded = try pool.write { db -> [Grant] in
            try db.execute(sql: "DELETE FROM grants WHERE persistent = 0")
            return try Row.fetchAll(db, sql: "SELECT * FROM grants").compactMap(Self.grant(from:))
        }
        grants = Mutex(Dictionary(uniqueKeysWithValues: loaded.map { ($0.id, $0) }))
    }

    static func createTable(_ db: Database) throws {
        try db.create(table: "grants") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("app", .text).notNull().indexed()
            t.column("identity", .text).notNull().indexed()
            t.column("device", .integer).notNull()
            t.column("inode", .integer).notNull()
            t.column("path", .text).notNull()
            t.column("provider", .text).notNull().defaults(to: "local")
            t.column("write", .boolean).notNull()
            t.column("persistent", .boolean).notNull()
            t.column("folder", .boolean).notNull()
            t.column("source", .text).notNull()
            t.column("created", .double).notNull()
            t.column("session", .integer)
        }
    }

    private static func grant(from row: Row) -> Grant? {
        guard let source = Grant.Source(rawValue: row["source"]) else { return nil }
        let device: Int64 = row["device"]
        let inode: Int64 = row["inode"]
        let session: Int64? = row["session"]
        return Grant(
            id: row["id"], app: row["app"],
            reference: ItemReference(path: row["path"], identity: row["identity"], device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode)),
            provider: row["provider"], allowsWriting: row["write"], isPersistent: row["persistent"], isFolder: row["folder"], source: source,
            created: Date(timeIntervalSince1970: row["created"]), session: session.map { UInt32($0) })
    }

    /// The grants of `app` (all apps when nil).
    func grants(of app: String?) -> [Grant] {
        grants.withLock { all in all.values.filter { app == nil || $0.app == app }.sorted { $0.id < $1.id } }
    }

    /// Adds a grant, or widens the one `app` already has for the same item (read to read-write,
    /// session to persistent). Returns the grant as stored.
    @discardableResult
    func add(
        app: String, reference: ItemReference, write: Bool, persistent: Bool, folder: Bool, source: Grant.Source, session: UInt32?
    ) throws -> Grant {
        if var existing = grants(of: app).first(where: { $0.reference.identity == reference.identity && $0.isFolder == folder }) {
            existing.allowsWriting = existing.allowsWriting || write
            if persistent && !existing.isPersistent {
                existing.isPersistent = true
                existing.session = nil
            }
            existing.reference = reference
            try save(existing)
            return existing
        }
        let now = Date()
        let id = try pool.write { db -> Int64 in
            try db.execute(
                sql: """
                    INSERT INTO grants (app, identity, device, inode, path, provider, write, persistent, folder, source, created, session)
                    VALUES (?, ?, ?, ?, ?, 'local', ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    app, reference.identity, Int64(bitPattern: reference.device), Int64(bitPattern: reference.inode), reference.path, write,
                    persistent, folder, source.rawValue, now.timeIntervalSince1970, persistent ? nil : session.map { Int64($0) },
                ])
            return db.lastInsertedRowID
        }
        let grant = Grant(
            id: id, app: app, reference: reference, provider: "local", allowsWriting: write, isPersistent: persistent, isFolder: folder,
            source: source, created: now, session: persistent ? nil : session)
        grants.withLock { $0[id] = grant }
        return grant
    }

    /// Stores a changed grant (a new path, wider access).
    func save(_ grant: Grant) throws {
        try pool.write { db in
            try db.execute(
                sql: "UPDATE grants SET path = ?, device = ?, inode = ?, write = ?, persistent = ?, session = ? WHERE id = ?",
                arguments: [
                    grant.path, Int64(bitPattern: grant.reference.device), Int64(bitPattern: grant.reference.inode), grant.allowsWriting,
                    grant.isPersistent, grant.session.map { Int64($0) }, grant.id,
                ])
        }
        grants.withLock { $0[grant.id] = grant }
    }

    /// Records where a grant's item is now, and which inode holds it (found after a rename outside
    /// Folio, or a save that replaced the inode).
    func relocate(_ grant: Grant, to item: ResolvedItem) {
        guard item.exists, grant.path != item.path || grant.reference.device != item.status.device || grant.reference.inode != item.status.inode
        else { return }
        var moved = grant
        moved.reference.path = item.path
        moved.reference.device = item.status.device
        moved.reference.inode = item.status.inode
        try? save(moved)
    }

    /// Records where a grant's item is now (found by a search for it at `path`).
    func relocate(_ grant: Grant, to path: String) {
        guard let item = try? ResolvedItem.resolve(path) else { return }
        relocate(grant, to: item)
    }

    /// Removes grants; returns those removed.
    @discardableResult
    func revoke(where predicate: (Grant) -> Bool) throws -> [Grant] {
        let doomed = grants(of: nil).filter(predicate)
        guard !doomed.isEmpty else { return [] }
        try pool.write { db in
            for grant in doomed { try db.execute(sql: "DELETE FROM grants WHERE id = ?", arguments: [grant.id]) }
        }
        grants.withLock { all in for grant in doomed { all[grant.id] = nil } }
        return doomed
    }

    /// The connection `session` ended: its session grants go.
    func sessionEnded(_ session: UInt32) {
        _ = try? revoke { !$0.isPersistent && $0.session == session }
    }
}
