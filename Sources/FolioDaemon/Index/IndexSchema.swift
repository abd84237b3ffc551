import GRDB

/// The metadata index's tables (migration `v3-index`).
///
/// `items` has one row per file or folder under the indexed roots. A row's `id` is the item's
/// identity in the index: it follows renames and moves (inotify's paired move events, coordinated
/// moves) and survives saves by rename (same path, new inode), so tags, favorites and last-used
/// dates stay with the document. `device` and `inode` tell a replaced file from a changed one; they
/// are not indexed, which would cost every crawl.
///
/// `fold` is the name folded for case- and diacritic-insensitive comparison, and `items_fts`
/// indexes it by trigrams for substring search (since migration `v16-name-trigrams-apart`, in a
/// database of its own: ``NameTrigrams``). `IndexWriter` keeps `items_fts` in step with explicit
/// changes, not triggers: a trigger makes every row its own statement savepoint, at which FTS5
/// flushes a segment, which made a crawl four times slower.
///
/// A folder's `listed` is 1 only when its children in the index are exactly those on disk as of
/// its last listing; the crawl lists the folders with `listed = 0`, each in the same transaction
/// that writes its children, so a crash never leaves a folder marked listed with children missing.
enum IndexSchema {
    static func create(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE items (
                    id INTEGER PRIMARY KEY,
                    parent INTEGER,
                    path TEXT NOT NULL UNIQUE,
                    name TEXT NOT NULL,
                    fold TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    size INTEGER NOT NULL,
                    modified REAL NOT NULL,
                    type TEXT NOT NULL,
                    tags TEXT,
                    device INTEGER NOT NULL,
                    inode INTEGER NOT NULL,
                    listed INTEGER NOT NULL DEFAULT 0,
                    favorite_rank INTEGER,
                    last_used REAL,
                    provider TEXT,
                    download_status TEXT,
                    downloading INTEGER,
                    uploaded INTEGER,
                    uploading INTEGER,
                    percent_downloaded REAL,
                    percent_uploaded REAL,
                    conflict INTEGER NOT NULL DEFAULT 0,
                    external INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX items_parent ON items(parent);
                CREATE INDEX items_size ON items(size);
                CREATE INDEX items_modified ON items(modified);
                CREATE INDEX items_type ON items(type);
                CREATE INDEX items_unlisted ON items(id) WHERE kind = 1 AND listed = 0;
                CREATE INDEX items_last_used ON items(last_used) WHERE last_used IS NOT NULL;
                CREATE INDEX items_favorite ON items(favorite_rank) WHERE favorite_rank IS NOT NULL;
                CREATE VIRTUAL TABLE items_fts USING fts5(fold, content='items', content_rowid='id', tokenize='trigram');
                CREATE TABLE roots (
                    path TEXT PRIMARY KEY,
                    origin TEXT NOT NULL,
                    added REAL NOT NULL
                );
                CREATE TABLE recents (
                    path TEXT PRIMARY KEY,
                    used REAL NOT NULL,
                    event TEXT NOT NULL,
                    app TEXT,
                    source TEXT NOT NULL
                );
                CREATE INDEX recents_used ON recents(used);
                CREATE TABLE favorites (
                    path TEXT PRIMARY KEY,
                    rank INTEGER NOT NULL
                );
                """)
    }

    /// Migration `v7-drive-states`: a drive item's pinned flag and last sync error, beside the
    /// `uploaded` and `downloading` columns `v3-index` made for them (see ``UbiquitousStates``).
    static func addDriveStateColumns(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE items ADD COLUMN pinned INTEGER; ALTER TABLE items ADD COLUMN sync_error TEXT;")
    }

    /// Migration `v11-download-percent`: how far a drive item's download is, while it runs.
    static func addDownloadPercentColumn(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE items ADD COLUMN download_percent REAL")
    }

    /// Migration `v9-name-prefixes`: the folded names in order, so that a search of one or two
    /// characters (too short for the trigram index) finds the names starting with them at once
    /// rather than scanning every row (95 ms p50 at a million rows, seen by the browser page's
    /// search as you type).
    static func addNamePrefixIndex(_ db: Database) throws {
        try db.execute(sql: "CREATE INDEX items_fold ON items(fold)")
    }

    /// Migration `v12-content-types`: which rows' types wait for their content (`type_pending`),
    /// and the typing pass's to-do list (a partial index, holding only those rows). Every regular
    /// file, folder with an extension and special file indexed before is typed again: the index
    /// read only extensions then.
    static func addPendingTypeColumn(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE items ADD COLUMN type_pending INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX items_type_pending ON items(id) WHERE type_pending = 1;
                UPDATE items SET type_pending = 1 WHERE kind != 2 AND (kind != 1 OR name GLOB '?*.?*');
                """)
    }

    /// Migration `v13-text-content`: each document's text (`contents`, FTS5: words folded for case
    /// and diacritics, prefix indexes of two and three characters, row id the item's), and where
    /// a row stands with it (`content_state`: 1 waits for extraction, 0 read, 2 failed until the
    /// file changes, NULL no text). Every regular file indexed before waits.
    static func addTextContent(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE VIRTUAL TABLE contents USING fts5(text, tokenize = 'unicode61 remove_diacritics 2', prefix = '2 3');
                ALTER TABLE items ADD COLUMN content_state INTEGER;
                ALTER TABLE items ADD COLUMN content_error TEXT;
                CREATE INDEX items_content_pending ON items(id) WHERE content_state = 1;
                UPDATE items SET content_state = 1 WHERE kind = 0 AND download_status IS NOT 'NSMetadataUbiquitousItemDownloadingStatusNotDownloaded';
                """)
    }

    /// Migration `v15-name-trigrams`: the names' trigram index keeps which rows hold each trigram
    /// and nothing more (`detail=none`: no positions; `columnsize=0`: no row sizes, which only
    /// ranking reads). A name search asks for the rows holding every trigram of the text and
    /// checks each name itself (`MetadataIndex.substringQuery`), so the positions decided nothing
    /// the check does not; without them each crawled row costs the index less to write and merge.
    /// An existing database's index is made again from its rows.
    static func makeNameTrigrams(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TABLE IF EXISTS items_fts;
                CREATE VIRTUAL TABLE items_fts USING fts5(fold, content='items', content_rowid='id', tokenize='trigram', detail=none, columnsize=0);
                INSERT INTO items_fts(items_fts) VALUES ('rebuild');
                """)
    }

    /// Migration `v16-name-trigrams-apart`: the names' trigram index leaves this database for a
    /// file of its own, written on a thread of its own (``NameTrigrams``); `name_trigrams` numbers
    /// the transactions that change names, so the two files are known to be in step. The
    /// daemon's next start makes the new file's index from the rows.
    static func moveNameTrigramsApart(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TABLE IF EXISTS items_fts;
                CREATE TABLE name_trigrams (sequence INTEGER NOT NULL);
                INSERT INTO name_trigrams (sequence) VALUES (0);
                """)
    }

    /// Migration `v14-exclusions`: folders left out of the index (`IndexExclusions`): the user's,
    /// whole or for their text, and those holding a marker file.
    static func addExclusions(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE exclusions (path TEXT PRIMARY KEY, kind INTEGER NOT NULL)")
    }
}
