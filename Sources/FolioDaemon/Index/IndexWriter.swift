import Folio
import FolioSystem
import Foundation
import GRDB
import Logging
import SystemPackage

/// The index's writes, each inside the caller's transaction: listing a folder, bringing one path
/// in line with the disk, moving and removing. Every write reports to `changes` what live queries
/// need to hear.
struct IndexWriter {
    let types: IndexTypes
    /// The drive replica: its files are indexed as downloaded and current.
    let driveRoot: String?
    /// The sync states of the drive's items (nil: none are kept).
    var states: UbiquitousStates?
    let logger: Logger
    /// Lists each entry's extended attributes as it reads the folder (for the tags).
    var scanner = {
        var scanner = DirectoryScanner()
        scanner.readsAttributeNames = true
        return scanner
    }()
    /// What the index leaves out.
    let exclusions = IndexExclusions()
    /// The names' trigram index, told of every name written, changed and removed.
    let names: NameTrigrams

    // MARK: Folders

    /// One folder as read from the disk, before the index is brought in line with it: what
    /// `read(folder:)` gives `apply(_:id:_:changes:)`, on any thread.
    struct FolderListing: Sendable {
        var path: String
        var entries: [DirectoryScanner.Entry]
        /// Whether every entry was read.
        var complete: Bool
        /// Why the folder itself could not be read, if it could not.
        var failure: DirectoryScanner.Skip?
        /// The rows of `entries`, all of them (before the index's exclusions).
        var records: [IndexRecord]
    }

    /// Lists `folder` (row `id`) on disk and makes its children in the index exactly what is there:
    /// new entries inserted (new folders unlisted, for the crawl), changed ones updated (a folder
    /// whose time changed unlisted again), vanished ones removed with what was under them. The
    /// folder is marked listed in the same transaction. Returns the number of entries read.
    @discardableResult
    func list(folder path: String, id: Int64, _ db: Database, changes: inout IndexChanges) throws -> Int {
        try apply(read(folder: path), id: id, db, changes: &changes)
    }

    /// Reads `folder` from the disk: its entries, their status and their rows. Touches no
    /// database, so the crawl reads the next folders while it writes this one (`FolderReadAhead`).
    /// With `expecting` (the folder's row's device and inode, as its parent's listing found it),
    /// a path that leads elsewhere by now — a name on the way swapped for a link — reads as the
    /// folder gone: the index never records what a link leads to under the folder's name.
    func read(folder path: String, expecting identity: (device: UInt64, inode: UInt64)? = nil) -> FolderListing {
        var entries: [DirectoryScanner.Entry] = []
        var failure: DirectoryScanner.Skip?
        let complete = scanner.list(
            path, expecting: identity, visit: { entries.append($0) },
            skipped: { skippedPath, reason in
                if skippedPath == path { failure = reason } else { logger.notice("not indexed", metadata: ["path": "\(skippedPath)", "reason": "\(reason)"]) }
            })
        let records = IndexRecord.records(of: entries, types: types, driveRoot: driveRoot)
        return FolderListing(path: path, entries: entries, complete: complete, failure: failure, records: records)
    }

    /// A folder's rows ready to write, its failure and the index's exclusions dealt with: written
    /// whole, or (a folder bigger than a crawl step's budget) a budget at a time across steps.
    struct FolderRows: Sendable {
        var path: String
        var id: Int64
        /// Whether every entry was read (only then are the rows not in `records` removed).
        var complete: Bool
        var records: [IndexRecord]
        /// How many of `records` are written.
        var written = 0
        /// Whether all are written (and the folder marked listed).
        var done: Bool { written == records.count }
    }

    /// Brings the children of folder row `id` in line with `listing` (see `list(folder:id:_:changes:)`).
    /// Returns the number of entries read.
    func apply(_ listing: FolderListing, id: Int64, _ db: Database, changes: inout IndexChanges) throws -> Int {
        guard var rows = try rows(of: listing, id: id, db, changes: &changes) else { return 0 }
        try write(&rows, count: rows.records.count, db, changes: &changes)
        return listing.entries.count
    }

    /// The rows `listing` gives folder row `id`; nil when the folder is gone (its rows removed).
    func rows(of listing: FolderListing, id: Int64, _ db: Database, changes: inout IndexChanges) throws -> FolderRows? {
        let path = listing.path
        var entries = listing.entries
        if !listing.complete, case .unreadableFolder(let error)? = listing.failure {
            if error == .noSuchFileOrDirectory || error == .notDirectory {
                try removeTree(path, db, changes: &changes)
                return nil
            }
            // Unreadable (permissions): what was indexed below it can no longer be vouched for.
            logger.notice("not indexed", metadata: ["path": "\(path)", "reason": "\(listing.failure!)"])
            if entries.isEmpty { try removeChildren(of: id, db, changes: &changes) }
        }
        try leaveOutExcluded(&entries, of: path, db)
        // The rows read with the folder, unless the exclusions left entries out (rare): a
        // placeholder's row depends on which names are there.
        let records = entries.count == listing.entries.count ? listing.records : IndexRecord.records(of: entries, types: types, driveRoot: driveRoot)
        return FolderRows(path: path, id: id, complete: listing.complete, records: records)
    }

    /// Writes the next `count` of `rows` (inserted, or updated where they changed); after the
    /// last, removes the children that are not in `rows` (when the folder was read whole) and
    /// marks the folder listed, in the same transaction.
    func write(_ rows: inout FolderRows, count: Int, _ db: Database, changes: inout IndexChanges) throws {
        var existing: [String: IndexRecord] = [:]
        // Statements run once per folder are cached: preparing them anew was a sixth of a crawl.
        let cursor = try Row.fetchCursor(db.cachedStatement(sql: "SELECT \(IndexRecord.columns) FROM items WHERE parent = ?"), arguments: [rows.id])
        while let row = try cursor.next() {
            let record = IndexRecord(row: row)
            existing[record.name] = record
        }
        let range = rows.written..<min(rows.written + count, rows.records.count)
        let batch = rows.records[range]
        let syncStates = try holdsDriveItems(rows.path) ? states.map { try $0.states(of: Array(batch), db) } : nil
        // Looked up once a folder: GRDB's cache hashes the statement's text at every look-up.
        // Most folders hold no favorite and no recent document: their rows are inserted without
        // looking each path up in those tables (two look-ups a row, a twelfth of a crawl).
        let remembered = try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM favorites WHERE path > ?1 AND path < ?2) OR EXISTS (SELECT 1 FROM recents WHERE path > ?1 AND path < ?2)
                    """), arguments: [rows.path + "/", rows.path + "0"]) ?? true
        let insertion = remembered ? try db.cachedStatement(sql: Self.insertion) : nil
        // The other rows are inserted many at a time (`insertTogether`).
        var fresh: [IndexRecord] = []
        for (offset, listed) in batch.enumerated() {
            var record = listed
            record.sync = syncStates?[offset] ?? nil
            if let old = existing.removeValue(forKey: record.name) {
                record.keepContentType(of: old)
                guard record.differs(from: old) else { continue }
                record.id = old.id
                record.lastUsed = old.lastUsed
                record.favoriteRank = old.favoriteRank
                if old.kind != record.kind { try removeChildren(of: old.id, db, changes: &changes) }
                let relist = record.kind == .directory && (old.kind != .directory || old.modified != record.modified)
                try update(record, relist: relist, old: old, db)
                changes.syncStateChanged(record.path, from: old.sync, to: record.sync)
            } else if !remembered {
                fresh.append(record)
                if fresh.count == Self.rowsTogether { try insertTogether(&fresh, parent: rows.id, db, changes: &changes) }
                continue
            } else {
                record.id = try insert(record, parent: rows.id, db, insertion)
            }
            changes.wrote(record)
        }
        try insertTogether(&fresh, parent: rows.id, db, changes: &changes)
        rows.written = range.upperBound
        guard rows.done else { return }
        if rows.complete {
            // Written in earlier steps: not vanished.
            for record in rows.records[..<range.lowerBound] { existing.removeValue(forKey: record.name) }
            for old in existing.values { try removeTree(old.path, db, changes: &changes) }
        }
        try db.cachedStatement(sql: "UPDATE items SET listed = 1 WHERE id = ?").execute(arguments: [rows.id])
    }

    /// Drops the entries of folder `path` the index leaves out, noting first whether the folder
    /// holds a marker file (which keeps all of them out, the folder itself in).
    private func leaveOutExcluded(_ entries: inout [DirectoryScanner.Entry], of path: String, _ db: Database) throws {
        let marked = entries.contains { IndexExclusions.markers.contains($0.name) }
        let kind = exclusions.kind(of: path)
        if marked, kind == nil {
            try exclusions.set(.contents, for: path, db)
        } else if !marked, kind == .contents {
            try exclusions.set(nil, for: path, db)
        }
        if exclusions.excludesEntries(of: path) {
            entries.removeAll()
        } else if !exclusions.isEmpty {
            // Only then: the entries are the listing's, shared, and would be copied.
            entries.removeAll { exclusions.excludesEntry($0.path) }
        }
    }

    // MARK: Paths

    /// Brings the row of `path` in line with the disk: removed when the file went, updated or
    /// inserted (under its parent's row) when it is there. A path whose folder is not indexed is
    /// left alone. Returns whether anything changed.
    func refresh(_ path: String, _ db: Database, changes: inout IndexChanges) throws {
        // A placeholder's events are its document's: the document's row stands for both.
        let path = PlaceholderStub.isStubName((path as NSString).lastPathComponent) ? PlaceholderStub.documentName(ofStub: path) : path
        let old = try record(at: path, db)
        let name = (path as NSString).lastPathComponent
        // A marker file come or gone: its folder is listed again, its entries in or out with it.
        if IndexExclusions.markers.contains(name), let folder = CoordinationPath.ancestors(of: path).first {
            try db.execute(sql: "UPDATE items SET listed = 0 WHERE path = ? AND kind = 1", arguments: [folder])
        }
        if exclusions.excludes(path) {
            if old != nil { try removeTree(path, db, changes: &changes) }
            return
        }
        var record: IndexRecord
        if let status = try? FileStatus(path: FilePath(path)) {
            record = IndexRecord(path: path, name: name, status: status, types: types, driveRoot: driveRoot)
        } else if let status = try? FileStatus(path: FilePath(path + PlaceholderStub.suffix)),
            let promised = IndexRecord.promised(stubPath: path + PlaceholderStub.suffix, name: name + PlaceholderStub.suffix, status: status, types: types)
        {
            record = promised
        } else {
            if old != nil { try removeTree(path, db, changes: &changes) }
            return
        }
        record.sync = try states?.state(of: record, db)
        if let old {
            record.keepContentType(of: old)
            guard record.differs(from: old) else { return }
            record.id = old.id
            record.lastUsed = old.lastUsed
            record.favoriteRank = old.favoriteRank
            if old.kind != record.kind { try removeChildren(of: old.id, db, changes: &changes) }
            try update(record, relist: record.kind == .directory && (old.kind != .directory || old.modified != record.modified), old: old, db)
            changes.syncStateChanged(path, from: old.sync, to: record.sync)
        } else {
            guard let parent = try folderID(containing: path, db) else { return }
            record.id = try insert(record, parent: parent, db)
        }
        changes.wrote(record)
    }

    /// Records a move: the row (and everything under it) takes the new path and keeps its identity.
    /// A file moved over an existing one (a save by rename) leaves the existing row in place,
    /// refreshed, so the document keeps its identity. A move out of the indexed folders removes;
    /// a move in from elsewhere inserts.
    func move(from: String, to: String, _ db: Database, changes: inout IndexChanges) throws {
        // Placeholders: a stub moved is its document refreshed; a document moved away from beside
        // its new stub (an eviction) stays, as the placeholder, and keeps its identity.
        if PlaceholderStub.isStubName((from as NSString).lastPathComponent) || PlaceholderStub.isStubName((to as NSString).lastPathComponent)
            || access(PathRedirect.physical(from + PlaceholderStub.suffix), F_OK) == 0
        {
            try refresh(from, db, changes: &changes)
            try refresh(to, db, changes: &changes)
            return
        }
        guard let source = try record(at: from, db) else {
            try refresh(to, db, changes: &changes)
            return
        }
        let target = try record(at: to, db)
        let parent = try folderID(containing: to, db)
        if parent == nil || exclusions.excludes(to) || (target != nil && source.kind != .directory) {
            try removeTree(from, db, changes: &changes)
            try refresh(to, db, changes: &changes)
            return
        }
        if target != nil { try removeTree(to, db, changes: &changes) }
        let name = (to as NSString).lastPathComponent
        try db.execute(
            sql: "UPDATE items SET path = ? || substr(path, ?) WHERE path >= ? AND path < ?",
            arguments: [to, from.unicodeScalars.count + 1, from + "/", from + "0"])
        // Recents and favorites follow.
        for table in ["recents", "favorites"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE path = ? OR (path >= ? AND path < ?)", arguments: [to, to + "/", to + "0"])
            try db.execute(
                sql: "UPDATE \(table) SET path = ? || substr(path, ?) WHERE path = ? OR (path >= ? AND path < ?)",
                arguments: [to, from.unicodeScalars.count + 1, from, from + "/", from + "0"])
        }
        let fold = MetadataFacts.searchFold(name)
        if let old = try String.fetchOne(db.cachedStatement(sql: "SELECT fold FROM items WHERE id = ?"), arguments: [source.id]) {
            names.note(.delete(id: source.id, fold: old))
        }
        // A new name may not say what the old one said of the type: the row is typed again.
        try db.execute(
            sql: "UPDATE items SET path = ?, name = ?, fold = ?, parent = ?, type_pending = CASE WHEN name = ? THEN type_pending ELSE 1 END WHERE id = ?",
            arguments: [to, name, fold, parent, name, source.id])
        names.note(.insert(id: source.id, fold: fold))
        changes.removedTree(from)
        let moved = try Row.fetchCursor(
            db, sql: "SELECT \(IndexRecord.columns) FROM items WHERE path = ? OR (path >= ? AND path < ?)", arguments: [to, to + "/", to + "0"])
        while let row = try moved.next() { changes.wrote(IndexRecord(row: row)) }
        try refresh(to, db, changes: &changes)
    }

    /// Removes the row of `path` and every row under it.
    func removeTree(_ path: String, _ db: Database, changes: inout IndexChanges) throws {
        let range = "path = ? OR (path >= ? AND path < ?)"
        let arguments: StatementArguments = [path, path + "/", path + "0"]
        let gone = try Row.fetchCursor(db, sql: "SELECT id, fold FROM items WHERE \(range)", arguments: arguments)
        while let row = try gone.next() { names.note(.delete(id: row[0], fold: row[1])) }
        try db.execute(sql: "DELETE FROM contents WHERE rowid IN (SELECT id FROM items WHERE (\(range)) AND content_state IS NOT NULL)", arguments: arguments)
        try db.execute(sql: "DELETE FROM items WHERE \(range)", arguments: arguments)
        if db.changesCount > 0 { changes.removedTree(path) }
    }

    private func removeChildren(of id: Int64, _ db: Database, changes: inout IndexChanges) throws {
        let children = try String.fetchAll(db.cachedStatement(sql: "SELECT path FROM items WHERE parent = ?"), arguments: [id])
        for child in children { try removeTree(child, db, changes: &changes) }
    }

    // MARK: Rows

    func record(at path: String, _ db: Database) throws -> IndexRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(IndexRecord.columns) FROM items WHERE path = ?"), arguments: [path]).map(IndexRecord.init(row:))
    }

    /// The row id of the folder `path` is in, when the index has that folder.
    private func folderID(containing path: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT id FROM items WHERE path = ? AND kind = 1"), arguments: [CoordinationPath.ancestors(of: path).first ?? "/"])
    }

    /// Whether the children of `folder` may be drive items (whose sync states are looked up).
    private func holdsDriveItems(_ folder: String) -> Bool {
        guard let driveRoot else { return false }
        return folder == driveRoot || folder.hasPrefix(driveRoot + "/")
    }

    /// A row's insertion; a folder starts unlisted.
    private static let insertion = """
        INSERT INTO items (parent, path, name, fold, kind, size, modified, type, tags, device, inode, download_status,
            uploaded, downloading, pinned, sync_error, download_percent, type_pending, content_state, listed, favorite_rank, last_used)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, 0,
            (SELECT rank FROM favorites WHERE path = ?2), (SELECT used FROM recents WHERE path = ?2))
        """

    /// Binds a row's nineteen values in the insertions' order (`parent` … `content_state`),
    /// the first at `start`.
    private func bind(_ record: IndexRecord, fold: String, parent: Int64?, to values: DirectBindings, from start: Int32) {
        values.bind(start, parent)
        values.bind(start + 1, record.path)
        values.bind(start + 2, record.name)
        values.bind(start + 3, fold)
        values.bind(start + 4, Int64(IndexWire.kindCode(record.kind)))
        values.bind(start + 5, record.size)
        values.bind(start + 6, record.modified)
        values.bind(start + 7, record.type)
        values.bind(start + 8, record.tags)
        values.bind(start + 9, Int64(bitPattern: record.device))
        values.bind(start + 10, Int64(bitPattern: record.inode))
        values.bind(start + 11, record.downloadStatus)
        values.bind(start + 12, record.sync?.isUploaded)
        values.bind(start + 13, record.sync?.isDownloading)
        values.bind(start + 14, record.sync?.isPinned)
        values.bind(start + 15, record.sync?.error)
        values.bind(start + 16, record.sync?.percentDownloaded)
        values.bind(start + 17, record.typePending)
        values.bind(start + 18, record.hasContent ? Int64(1) : nil)
    }

    /// How many rows `insertTogether` inserts with one statement.
    static let rowsTogether = 64

    /// The statement inserting `count` rows that are neither favorites nor recently used, their
    /// ids given: twenty values a row.
    private static func insertion(of count: Int) -> String {
        let row = "(" + Array(repeating: "?", count: 20).joined(separator: ", ") + ", 0)"
        // OR FAIL: a statement that failed partway is not undone on its own (the transaction is
        // rolled back whole), so SQLite keeps no statement journal, which for a statement of many
        // rows copied every index page it touched to a temporary file first.
        return """
            INSERT OR FAIL INTO items (id, parent, path, name, fold, kind, size, modified, type, tags, device, inode, download_status,
                uploaded, downloading, pinned, sync_error, download_percent, type_pending, content_state, listed)
            VALUES \(Array(repeating: row, count: count).joined(separator: ", "))
            """
    }

    /// Inserts `records` (new children of folder row `parent`, none a favorite or recently used)
    /// with one statement, ids following the highest, and empties it. One statement for many
    /// rows opens and closes the table's and its eight indexes' cursors once: done a row at a time,
    /// that was a fifth of a crawl's writes.
    private func insertTogether(_ records: inout [IndexRecord], parent: Int64, _ db: Database, changes: inout IndexChanges) throws {
        guard !records.isEmpty else { return }
        let first = (try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(id) FROM items")) ?? 0) + 1
        let values = DirectBindings(try db.cachedStatement(sql: Self.insertion(of: records.count)))
        var folds: [String] = []
        folds.reserveCapacity(records.count)
        for (offset, record) in records.enumerated() {
            let fold = MetadataFacts.searchFold(record.name)
            folds.append(fold)
            let base = Int32(offset * 20)
            values.bind(base + 1, first + Int64(offset))
            bind(record, fold: fold, parent: parent, to: values, from: base + 2)
        }
        try values.run(db)
        for (offset, var record) in records.enumerated() {
            record.id = first + Int64(offset)
            names.note(.insert(id: record.id, fold: folds[offset]))
            changes.wrote(record)
        }
        records.removeAll(keepingCapacity: true)
    }

    /// Inserts a row (with `statement`, the connection's `insertion`, when the caller has it); a
    /// folder starts unlisted. Returns its id.
    func insert(_ record: IndexRecord, parent: Int64?, _ db: Database, _ statement: Statement? = nil) throws -> Int64 {
        let statement = try statement ?? db.cachedStatement(sql: Self.insertion)
        let fold = MetadataFacts.searchFold(record.name)
        // Bound directly: run for every row a crawl writes (see `DirectBindings`).
        let row = DirectBindings(statement)
        bind(record, fold: fold, parent: parent, to: row, from: 1)
        try row.run(db)
        let id = db.lastInsertedRowID
        names.note(.insert(id: id, fold: fold))
        return id
    }

    /// Rewrites a changed row; its text waits for extraction again when its content or type
    /// changed (`old`: the row as it was).
    private func update(_ record: IndexRecord, relist: Bool, old: IndexRecord, _ db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                UPDATE items SET kind = ?, size = ?, modified = ?, type = ?, type_pending = ?, tags = ?, device = ?, inode = ?, download_status = ?,
                listed = CASE WHEN ? THEN 0 ELSE listed END, content_state = CASE WHEN ? THEN ? ELSE content_state END WHERE id = ?
                """)
        let contentChanged = !record.hasContent || record.contentDiffers(from: old)
        try statement.execute(arguments: [
            IndexWire.kindCode(record.kind), record.size, record.modified, record.type, record.typePending, record.tags, Int64(bitPattern: record.device),
            Int64(bitPattern: record.inode), record.downloadStatus, relist, contentChanged, record.hasContent ? 1 : nil, record.id,
        ])
        // Text there was, and the item has none now (it became a folder, a placeholder).
        if !record.hasContent, old.hasContent { try db.cachedStatement(sql: "DELETE FROM contents WHERE rowid = ?").execute(arguments: [record.id]) }
        try updateSyncState(record, db)
    }

    /// Writes the row's sync state columns.
    func updateSyncState(_ record: IndexRecord, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE items SET uploaded = ?, downloading = ?, pinned = ?, sync_error = ?, download_percent = ? WHERE id = ?").execute(arguments: [
            record.sync?.isUploaded, record.sync?.isDownloading, record.sync?.isPinned, record.sync?.error, record.sync?.percentDownloaded, record.id,
        ])
    }
}
