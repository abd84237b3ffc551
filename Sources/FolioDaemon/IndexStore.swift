import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioSync
import FolioSystem
package import GRDB

/// The daemon's SQLite database (`$XDG_STATE_HOME/folio/index.sqlite`, WAL mode), opened and
/// migrated at start-up. It holds the grants, the metadata index, recents and favorites, and the
/// sync journal (whose tables `FolioSync` defines; the migrations' order is this store's).
package final class IndexStore: Sendable {
    /// The process's one pool on the database.
    package let pool: DatabasePool

    /// Opens the database at `path` (its folder must exist), creating and migrating it as needed.
    package init(path: String) throws {
        // Grants, recents, document names and the journal: the owner's alone, whatever the umask.
        // SQLite gives the `-wal` and `-shm` files the database's mode; older ones are set too.
        let created = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if created >= 0 { close(created) }
        for file in [path, path + "-wal", path + "-shm"] where access(file, F_OK) == 0 {
            guard chmod(file, 0o600) == 0 else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: file, NSLocalizedDescriptionKey: "cannot make \(file) private"])
            }
        }
        var status = stat()
        if stat(path, &status) == 0, status.st_size == 0 { try Self.setPageSize(path) }
        // The names' trigram index, a file of its own (`NameTrigrams`): there before a reader
        // attaches it.
        let names = FolioPaths.namesDatabase(besideIndex: path)
        try NameTrigrams.prepare(path: names)
        var configuration = Configuration()
        configuration.label = "folio.index"
        // The `folio drive` commands write the sync journal beside the daemon: a writer waits for
        // the other's transaction rather than failing.
        configuration.busyMode = .timeout(30)
        configuration.prepareDatabase { db in
            try NaturalNameOrder.register(db)
            // The writer crawls: a larger page cache keeps the index b-trees in memory (64 MiB at
            // most; readers keep SQLite's default).
            if !db.configuration.readonly {
                try db.execute(sql: "PRAGMA cache_size = -65536")
                // Checkpoints every 32 MiB of log rather than 4: a crawl's commits rewrite the same
                // index pages, and each checkpoint copied them all to the database again.
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 8192")
            } else {
                // Readers only: a writer's transactions (IMMEDIATE) would lock it against its own
                // writer's.
                try db.execute(sql: "ATTACH DATABASE ? AS \(NameTrigrams.schema)", arguments: [names])
            }
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try Self.migrator.migrate(pool)
    }

    /// A new database's page size: 8 KiB rather than SQLite's 4, which makes a crawl's inserts
    /// into the name indexes about a sixth cheaper (fewer, shallower b-tree pages). A database's
    /// page size is fixed by its first write and cannot change in WAL mode, so it is set here,
    /// before the pool opens the empty file.
    static let pageSize = 8192

    private static func setPageSize(_ path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = \(pageSize)")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        try queue.close()
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-meta") { db in
            try db.create(table: "meta") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
            try db.execute(sql: "INSERT INTO meta (key, value) VALUES ('schema', '1')")
        }
        migrator.registerMigration("v2-grants") { db in
            try GrantStore.createTable(db)
            try db.execute(sql: "UPDATE meta SET value = '2' WHERE key = 'schema'")
        }
        migrator.registerMigration("v3-index") { db in
            try IndexSchema.create(db)
            try db.execute(sql: "UPDATE meta SET value = '3' WHERE key = 'schema'")
        }
        migrator.registerMigration("v4-sync") { db in
            try SyncJournal.createTables(db)
            try db.execute(sql: "UPDATE meta SET value = '4' WHERE key = 'schema'")
        }
        migrator.registerMigration("v5-placeholders") { db in
            try SyncJournal.addPlaceholderTables(db)
            try db.execute(sql: "UPDATE meta SET value = '5' WHERE key = 'schema'")
        }
        migrator.registerMigration("v6-unfinished-uploads") { db in
            try SyncJournal.addUnfinishedUploadsTable(db)
            try db.execute(sql: "UPDATE meta SET value = '6' WHERE key = 'schema'")
        }
        migrator.registerMigration("v7-drive-states") { db in
            try IndexSchema.addDriveStateColumns(db)
            try db.execute(sql: "UPDATE meta SET value = '7' WHERE key = 'schema'")
        }
        migrator.registerMigration("v8-transfer-hashes") { db in
            try SyncJournal.addTransferHashes(db)
            try db.execute(sql: "UPDATE meta SET value = '8' WHERE key = 'schema'")
        }
        migrator.registerMigration("v9-name-prefixes") { db in
            try IndexSchema.addNamePrefixIndex(db)
            try db.execute(sql: "UPDATE meta SET value = '9' WHERE key = 'schema'")
        }
        migrator.registerMigration("v10-set-aside") { db in
            try SyncJournal.addSetAside(db)
            try db.execute(sql: "UPDATE meta SET value = '10' WHERE key = 'schema'")
        }
        migrator.registerMigration("v11-download-percent") { db in
            try IndexSchema.addDownloadPercentColumn(db)
            try db.execute(sql: "UPDATE meta SET value = '11' WHERE key = 'schema'")
        }
        migrator.registerMigration("v12-content-types") { db in
            try IndexSchema.addPendingTypeColumn(db)
            try db.execute(sql: "UPDATE meta SET value = '12' WHERE key = 'schema'")
        }
        migrator.registerMigration("v13-text-content") { db in
            try IndexSchema.addTextContent(db)
            try db.execute(sql: "UPDATE meta SET value = '13' WHERE key = 'schema'")
        }
        migrator.registerMigration("v14-exclusions") { db in
            try IndexSchema.addExclusions(db)
            try db.execute(sql: "UPDATE meta SET value = '14' WHERE key = 'schema'")
        }
        migrator.registerMigration("v15-name-trigrams") { db in
            try IndexSchema.makeNameTrigrams(db)
            try db.execute(sql: "UPDATE meta SET value = '15' WHERE key = 'schema'")
        }
        migrator.registerMigration("v16-name-trigrams-apart") { db in
            try IndexSchema.moveNameTrigramsApart(db)
            try db.execute(sql: "UPDATE meta SET value = '16' WHERE key = 'schema'")
        }
        return migrator
    }

    /// The schema version recorded in the database.
    func schemaVersion() throws -> String? {
        try pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'schema'") }
    }
}
