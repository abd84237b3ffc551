import Foundation
import GRDB

/// The sync journal of one domain, in the daemon's database (migration `v4-sync`): the base of
/// every path both sides last agreed on (the tombstones deletions are judged against), and the
/// server's marker as last seen (its epoch and generation, which tell a restored or replaced
/// server from the one synced before).
struct SyncJournal: Sendable {
    /// What the journal knows of the server's marker.
    struct MarkerState: Equatable, Sendable {
        var epoch: String
        var generation: Int64
    }

    let database: any DatabaseWriter
    let domain: String

    init(database: any DatabaseWriter, domain: String) {
        self.database = database
        self.domain = domain
    }

    /// The journal of `domain` in the database at `path` (created and migrated when needed).
    init(path: String, domain: String) throws {
        let pool = try DatabasePool(path: path)
        try IndexStore.migrator.migrate(pool)
        self.init(database: pool, domain: domain)
    }

    static func createTables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_domains (
                    domain TEXT PRIMARY KEY,
                    epoch TEXT NOT NULL,
                    generation INTEGER NOT NULL
                );
                CREATE TABLE sync_base (
                    domain TEXT NOT NULL,
                    path BLOB NOT NULL,
                    is_folder INTEGER NOT NULL,
                    identifier TEXT NOT NULL,
                    version BLOB NOT NULL,
                    hash TEXT,
                    device INTEGER,
                    inode INTEGER,
                    size INTEGER,
                    modified REAL,
                    PRIMARY KEY (domain, path)
                ) WITHOUT ROWID;
                """)
    }

    /// The marker state, or nil when this domain never synced (or its journal was reset).
    func marker() throws -> MarkerState? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT epoch, generation FROM sync_domains WHERE domain = ?", arguments: [domain]).map {
                MarkerState(epoch: $0["epoch"], generation: $0["generation"])
            }
        }
    }

    /// Every base entry.
    func base() throws -> [SyncPath: BaseEntry] {
        try database.read { db in
            var result: [SyncPath: BaseEntry] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM sync_base WHERE domain = ?", arguments: [domain])
            while let row = try rows.next() {
                let path: Data = row["path"]
                var fingerprint: LocalFingerprint?
                if let device: Int64 = row["device"], let inode: Int64 = row["inode"], let size: Int64 = row["size"], let modified: Double = row["modified"] {
                    fingerprint = LocalFingerprint(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: size, modified: modified)
                }
                result[SyncPath(String(decoding: path, as: UTF8.self))] = BaseEntry(
                    isFolder: row["is_folder"], identifier: row["identifier"], version: row["version"], hash: row["hash"], fingerprint: fingerprint)
            }
            return result
        }
    }

    /// Records new bases (nil: the path's base is dropped) and, when given, the marker state, in one transaction.
    func record(_ changes: [(SyncPath, BaseEntry?)], marker: MarkerState? = nil) throws {
        try database.write { db in
            for (path, entry) in changes {
                let key = Data(path.bytes)
                guard let entry else {
                    try db.execute(sql: "DELETE FROM sync_base WHERE domain = ? AND path = ?", arguments: [domain, key])
                    continue
                }
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO sync_base (domain, path, is_folder, identifier, version, hash, device, inode, size, modified)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        domain, key, entry.isFolder, entry.identifier, entry.version, entry.hash,
                        entry.fingerprint.map { Int64(bitPattern: $0.device) }, entry.fingerprint.map { Int64(bitPattern: $0.inode) },
                        entry.fingerprint?.size, entry.fingerprint?.modified,
                    ])
            }
            if let marker {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_domains (domain, epoch, generation) VALUES (?, ?, ?)",
                    arguments: [domain, marker.epoch, marker.generation])
            }
        }
    }

    /// Forgets everything about the domain (its bases and marker state).
    func reset() throws {
        try database.write { db in
            try db.execute(sql: "DELETE FROM sync_base WHERE domain = ?", arguments: [domain])
            try db.execute(sql: "DELETE FROM sync_domains WHERE domain = ?", arguments: [domain])
        }
    }
}
