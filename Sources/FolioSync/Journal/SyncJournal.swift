import Foundation
package import GRDB

/// The sync journal of one domain, in the daemon's database (migration `v4-sync`): the base of
/// every path both sides last agreed on (the tombstones deletions are judged against), the
/// server's marker as last seen (its epoch and generation, which tell a restored or replaced
/// server from the one synced before), and the transfers whose outcome no base records yet
/// (`v6-unfinished-uploads`, with their contents' hashes since `v8-transfer-hashes`). This type
/// defines its tables; the daemon's `IndexStore` runs the migrations, in the database's one order.
package struct SyncJournal: Sendable {
    /// What the journal knows of the server's marker.
    struct MarkerState: Equatable, Sendable {
        var epoch: String
        var generation: Int64
        /// The token last written into the replica's marker file (a replica restored from an
        /// earlier copy carries an older one).
        var replicaToken: String?
    }

    let database: any DatabaseWriter
    let domain: String

    /// The journal of `domain` in `database` (migrated by its owner).
    package init(database: any DatabaseWriter, domain: String) {
        self.database = database
        self.domain = domain
    }

    /// Migration `v4-sync`: the domains' marker states and the bases.
    package static func createTables(_ db: Database) throws {
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

    /// Migration `v5-placeholders`: which bases are placeholders, the replica marker's token, the
    /// shared conflict manifests seen, the pinned paths (kept
    /// downloaded, with everything below them; the empty path pins the whole drive), and why each
    /// path was deferred by the last pass that tried it.
    package static func addPlaceholderTables(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE sync_base ADD COLUMN placeholder INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE sync_domains ADD COLUMN replica_token TEXT;
                CREATE TABLE sync_pins (
                    domain TEXT NOT NULL,
                    path BLOB NOT NULL,
                    PRIMARY KEY (domain, path)
                ) WITHOUT ROWID;
                CREATE TABLE sync_conflicts_seen (
                    domain TEXT NOT NULL,
                    name TEXT NOT NULL,
                    path BLOB,
                    PRIMARY KEY (domain, name)
                ) WITHOUT ROWID;
                CREATE TABLE sync_errors (
                    domain TEXT NOT NULL,
                    path BLOB NOT NULL,
                    reason TEXT NOT NULL,
                    PRIMARY KEY (domain, path)
                ) WITHOUT ROWID;
                """)
    }

    /// Migration `v6-unfinished-uploads`: uploads sent (or about to be) without a success, by path,
    /// with the local file's fingerprint then. A server that writes in place keeps what arrived of a
    /// cut request under the file's name; this tells that start of the device's own file from
    /// another device's change after a restart too.
    package static func addUnfinishedUploadsTable(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_unfinished (
                    domain TEXT NOT NULL,
                    path BLOB NOT NULL,
                    device INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    modified REAL NOT NULL,
                    PRIMARY KEY (domain, path)
                ) WITHOUT ROWID;
                """)
    }

    /// Migration `v8-transfer-hashes`: the SHA-256 of the content each unfinished transfer sent or
    /// placed, and which of the two it is (downloads are recorded too since then), so that a pass
    /// after a crash knows the server's content for this device's own.
    package static func addTransferHashes(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE sync_unfinished ADD COLUMN hash TEXT;
                ALTER TABLE sync_unfinished ADD COLUMN placed INTEGER NOT NULL DEFAULT 0;
                """)
    }

    /// Migration `v10-set-aside`: how many passes in a row tried the same action on a deferred
    /// path, which action (a digest), and until when passes leave it aside.
    package static func addSetAside(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE sync_errors ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE sync_errors ADD COLUMN action TEXT NOT NULL DEFAULT '';
                ALTER TABLE sync_errors ADD COLUMN retry_after REAL;
                """)
    }

    /// The marker state, or nil when this domain never synced (or its journal was reset).
    func marker() async throws -> MarkerState? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT epoch, generation, replica_token FROM sync_domains WHERE domain = ?", arguments: [domain]).map {
                MarkerState(epoch: $0["epoch"], generation: $0["generation"], replicaToken: $0["replica_token"])
            }
        }
    }

    /// Every base entry.
    func base() async throws -> [SyncPath: BaseEntry] {
        try await database.read { db in
            var result: [SyncPath: BaseEntry] = [:]
            result.reserveCapacity(try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_base WHERE domain = ?", arguments: [domain]) ?? 0)
            // Columns read by position, not by name: a name is looked up in the row at every read,
            // ten times a path.
            let rows = try Row.fetchCursor(
                db, sql: "SELECT path, is_folder, identifier, version, hash, device, inode, size, modified, placeholder FROM sync_base WHERE domain = ?",
                arguments: [domain])
            while let row = try rows.next() {
                let path: Data = row[0]
                var fingerprint: LocalFingerprint?
                if let device: Int64 = row[5], let inode: Int64 = row[6], let size: Int64 = row[7], let modified: Double = row[8] {
                    fingerprint = LocalFingerprint(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: size, modified: modified)
                }
                result[SyncPath(String(decoding: path, as: UTF8.self))] = BaseEntry(
                    isFolder: row[1], identifier: row[2], version: row[3], hash: row[4], fingerprint: fingerprint, isPlaceholder: row[9])
            }
            return result
        }
    }

    /// Records new bases (nil: the path's base is dropped) and, when given, the marker state and the
    /// unfinished transfers (all of them: those not given are forgotten), in one transaction.
    func record(_ changes: [(SyncPath, BaseEntry?)], marker: MarkerState? = nil, unfinished: [SyncPath: UnfinishedTransfer]? = nil) async throws {
        try await database.write { db in
            if let unfinished { try Self.replaceUnfinished(unfinished, domain: domain, db) }
            // Cached statements: GRDB's `execute(sql:)` parses its SQL at every call, once per file of a pass.
            for (path, entry) in changes {
                let key = Data(path.bytes)
                guard let entry else {
                    try db.cachedStatement(sql: "DELETE FROM sync_base WHERE domain = ? AND path = ?").execute(arguments: [domain, key])
                    continue
                }
                try db.cachedStatement(
                    sql: """
                        INSERT OR REPLACE INTO sync_base (domain, path, is_folder, identifier, version, hash, device, inode, size, modified, placeholder)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(
                    arguments: [
                        domain, key, entry.isFolder, entry.identifier, entry.version, entry.hash,
                        entry.fingerprint.map { Int64(bitPattern: $0.device) }, entry.fingerprint.map { Int64(bitPattern: $0.inode) },
                        entry.fingerprint?.size, entry.fingerprint?.modified, entry.isPlaceholder,
                    ])
            }
            if let marker {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_domains (domain, epoch, generation, replica_token) VALUES (?, ?, ?, ?)",
                    arguments: [domain, marker.epoch, marker.generation, marker.replicaToken])
            }
        }
    }

    /// The transfers recorded as unfinished.
    func unfinishedTransfers() async throws -> [SyncPath: UnfinishedTransfer] {
        try await database.read { db in
            var result: [SyncPath: UnfinishedTransfer] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT path, device, inode, size, modified, hash, placed FROM sync_unfinished WHERE domain = ?", arguments: [domain]) {
                let path: Data = row["path"], device: Int64 = row["device"], inode: Int64 = row["inode"]
                let fingerprint = LocalFingerprint(device: UInt64(bitPattern: device), inode: UInt64(bitPattern: inode), size: row["size"], modified: row["modified"])
                result[SyncPath(String(decoding: path, as: UTF8.self))] = UnfinishedTransfer(fingerprint: fingerprint, hash: row["hash"], isDownload: row["placed"])
            }
            return result
        }
    }

    /// Records the transfers unfinished now, in place of those recorded (the notes a pass moves
    /// from its log, ``UnfinishedNoteLog``).
    func setUnfinished(_ unfinished: [SyncPath: UnfinishedTransfer]) async throws {
        try await database.write { db in try Self.replaceUnfinished(unfinished, domain: domain, db) }
    }

    /// Where the notes written during a pass are logged before they join the journal: beside its database.
    var noteLogPath: String {
        URL(fileURLWithPath: database.path).deletingLastPathComponent().path + "/sync-unfinished-\(domain).log"
    }

    private static func replaceUnfinished(_ unfinished: [SyncPath: UnfinishedTransfer], domain: String, _ db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_unfinished WHERE domain = ?", arguments: [domain])
        for (path, transfer) in unfinished { try insertUnfinished(path, transfer, domain: domain, db) }
    }

    private static func insertUnfinished(_ path: SyncPath, _ transfer: UnfinishedTransfer, domain: String, _ db: Database) throws {
        let fingerprint = transfer.fingerprint
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_unfinished (domain, path, device, inode, size, modified, hash, placed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
            .execute(arguments: [
                domain, Data(path.bytes), Int64(bitPattern: fingerprint.device), Int64(bitPattern: fingerprint.inode), fingerprint.size, fingerprint.modified,
                transfer.hash, transfer.isDownload,
            ])
    }

    /// Forgets what the domain synced (its bases, marker state and errors; its pins stay, and so
    /// do its unfinished transfers: the server may still hold part of them).
    func reset() async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM sync_base WHERE domain = ?", arguments: [domain])
            try db.execute(sql: "DELETE FROM sync_domains WHERE domain = ?", arguments: [domain])
            try db.execute(sql: "DELETE FROM sync_errors WHERE domain = ?", arguments: [domain])
        }
    }

    // MARK: Pins and errors

    /// The pinned paths.
    func pins() async throws -> Set<SyncPath> {
        try await database.read { db in
            let rows = try Data.fetchAll(db, sql: "SELECT path FROM sync_pins WHERE domain = ?", arguments: [domain])
            return Set(rows.map { SyncPath(String(decoding: $0, as: UTF8.self)) })
        }
    }

    /// Pins (or with `pinned` false, unpins) `paths`.
    func setPinned(_ paths: [SyncPath], _ pinned: Bool) async throws {
        try await database.write { db in
            for path in paths {
                try db.execute(
                    sql: pinned ? "INSERT OR IGNORE INTO sync_pins (domain, path) VALUES (?, ?)" : "DELETE FROM sync_pins WHERE domain = ? AND path = ?",
                    arguments: [domain, Data(path.bytes)])
            }
        }
    }

    /// The shared conflict manifests this device made, took in (with the document's path) or
    /// refused (without).
    func conflictsSeen() async throws -> [String: SyncPath?] {
        try await database.read { db in
            var result: [String: SyncPath?] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, path FROM sync_conflicts_seen WHERE domain = ?", arguments: [domain]) {
                let path: Data? = row["path"]
                result[row["name"]] = path.map { SyncPath(String(decoding: $0, as: UTF8.self)) }
            }
            return result
        }
    }

    func markConflictSeen(_ name: String, path: SyncPath?) async throws {
        try await database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_conflicts_seen (domain, name, path) VALUES (?, ?, ?)", arguments: [domain, name, path.map { Data($0.bytes) }])
        }
    }

    func forgetConflictSeen(_ name: String) async throws {
        try await database.write { db in try db.execute(sql: "DELETE FROM sync_conflicts_seen WHERE domain = ? AND name = ?", arguments: [domain, name]) }
    }

    /// Why each path was not synced, as the last passes left it.
    func errors() async throws -> [SyncPath: SyncFailure] {
        try await database.read { db in
            var result: [SyncPath: SyncFailure] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT path, reason, attempts, action, retry_after FROM sync_errors WHERE domain = ?", arguments: [domain]) {
                let path: Data = row["path"]
                let retryAfter: Double? = row["retry_after"]
                result[SyncPath(String(decoding: path, as: UTF8.self))] = SyncFailure(
                    reason: row["reason"], attempts: row["attempts"], action: row["action"], retryAfter: retryAfter.map(Date.init(timeIntervalSince1970:)))
            }
            return result
        }
    }

    /// Records a pass's failures, replacing those of the passes before: each of `failed` (the
    /// path, why, and for a refusal the digest of the action tried) counts one more attempt when
    /// the server refused the same action the time before (else its first), and from the
    /// ``SyncFailure/setAsideAfter``th on it is set aside until `now` plus a wait that doubles
    /// each time (a minute, then two, … at most an hour); a transient failure (no digest) is
    /// never set aside. Those in `kept` (set aside, so not tried) stay as they are; every other
    /// path has no error any more.
    func recordErrors(failed: [SyncPath: (reason: String, action: String?)], kept: Set<SyncPath>, now: Date = Date()) async throws {
        try await database.write { db in
            var previous: [Data: (attempts: Int, action: String)] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT path, attempts, action FROM sync_errors WHERE domain = ?", arguments: [domain]) {
                previous[row["path"]] = (row["attempts"], row["action"])
            }
            for key in previous.keys where !kept.contains(SyncPath(String(decoding: key, as: UTF8.self))) {
                try db.execute(sql: "DELETE FROM sync_errors WHERE domain = ? AND path = ?", arguments: [domain, key])
            }
            for (path, failure) in failed {
                let key = Data(path.bytes)
                let action = failure.action ?? ""
                let attempts = previous[key].map { !action.isEmpty && $0.action == action ? $0.attempts + 1 : 1 } ?? 1
                let retryAfter = action.isEmpty ? nil : SyncFailure.setAsideWait(attempts).map { now.timeIntervalSince1970 + $0 }
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_errors (domain, path, reason, attempts, action, retry_after) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [domain, key, failure.reason, attempts, action, retryAfter])
            }
        }
    }

}
