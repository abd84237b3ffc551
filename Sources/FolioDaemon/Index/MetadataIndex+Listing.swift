import Folio
import FolioSystem
import Foundation
import GRDB
import SystemPackage

extension MetadataIndex {
    /// How a folder's listing is ordered.
    enum ListingOrder: String, Sendable, CaseIterable {
        case name, date, size, kind

        /// The SQL ordering, folders first, then by the key, then by name as Finder orders names.
        func sql(descending: Bool) -> String {
            let natural = "fold COLLATE \(NaturalNameOrder.collation)"
            let direction = descending ? "DESC" : "ASC"
            let key =
                switch self {
                case .name: "\(natural) \(direction), name \(direction)"
                case .date: "modified \(direction), \(natural), name"
                case .size: "size \(direction), \(natural), name"
                case .kind: "type \(direction), \(natural), name"
                }
            return "kind = 1 DESC, " + key
        }

        /// The same ordering in memory (for folders the index does not hold).
        func precedes(_ a: IndexRecord, _ b: IndexRecord, descending: Bool) -> Bool {
            if (a.kind == .directory) != (b.kind == .directory) { return a.kind == .directory }
            func byName() -> Bool {
                let order = NaturalNameOrder.compare(MetadataFacts.searchFold(a.name), MetadataFacts.searchFold(b.name))
                return order == 0 ? a.name < b.name : order < 0
            }
            let ascending: Bool
            switch self {
            case .name: return descending ? !byName() && a.name != b.name : byName()
            case .date: ascending = a.modified == b.modified ? byName() : a.modified < b.modified
            case .size: ascending = a.size == b.size ? byName() : a.size < b.size
            case .kind: ascending = a.type == b.type ? byName() : a.type < b.type
            }
            return descending ? !ascending : ascending
        }
    }

    /// One page of the children of `folder` from the index (hidden ones too when `hidden`), and how
    /// many there are; nil when the
    /// index does not hold `folder` as listed (not indexed, or not crawled yet).
    func children(
        of folder: String, order: ListingOrder, descending: Bool, hidden: Bool, offset: Int, limit: Int
    ) throws -> (total: Int, items: [IndexRecord])? {
        dispatchPrecondition(condition: .onQueue(work))
        applyStitched()
        return try pool.read { db in
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM items WHERE path = ? AND kind = 1 AND listed = 1", arguments: [folder])
            else { return nil }
            // Names starting with a dot are hidden, as in every file manager, unless asked for.
            let visible = hidden ? "" : " AND substr(name, 1, 1) <> '.'"
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE parent = ?" + visible, arguments: [id]) ?? 0
            let items = try Row.fetchAll(
                db, sql: "SELECT \(IndexRecord.columns) FROM items WHERE parent = ?\(visible) ORDER BY \(order.sql(descending: descending)) LIMIT ? OFFSET ?",
                arguments: [id, limit, offset]
            ).map(IndexRecord.init(row:))
            return (total, items)
        }
    }

    /// The items tagged `tag`, by name.
    func tagged(_ tag: String, limit: Int) throws -> [IndexRecord] {
        dispatchPrecondition(condition: .onQueue(work))
        applyStitched()
        return try pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(IndexRecord.columns) FROM items WHERE instr(tags, ?) > 0 ORDER BY fold COLLATE \(NaturalNameOrder.collation), name LIMIT ?",
                arguments: ["\n" + tag + "\n", limit]
            ).map(IndexRecord.init(row:))
        }
    }

    /// Every tag in the index with how many items carry it, most used first.
    func tagCounts() throws -> [(tag: String, count: Int)] {
        dispatchPrecondition(condition: .onQueue(work))
        applyStitched()
        var counts: [String: Int] = [:]
        try pool.read { db in
            let rows = try String.fetchCursor(db, sql: "SELECT tags FROM items WHERE tags IS NOT NULL")
            while let tags = try rows.next() {
                for tag in IndexRecord.decode(tags: tags) { counts[tag, default: 0] += 1 }
            }
        }
        return counts.sorted { $0.value == $1.value ? $0.key < $1.key : $0.value > $1.value }.map { ($0.key, $0.value) }
    }

    /// The indexed roots, with where each came from (`user`, `containers`, `drive`).
    func roots() throws -> [(path: String, origin: String)] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT path, origin FROM roots ORDER BY origin, path").map { ($0[0], $0[1]) }
        }
    }

    /// The drive items' states with the server (nil outside the drive), from the drive's journal:
    /// for records read from disk rather than from the index. Any thread.
    func driveStates(of records: [IndexRecord]) throws -> [UbiquitousSyncState?] {
        try pool.read { db in try states.states(of: records, db) }
    }

    /// Runs `work` on the index's queue and returns its result (for callers in Swift concurrency).
    func perform<T: Sendable>(_ work: @escaping @Sendable (MetadataIndex) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            self.work.async { continuation.resume(with: Result { try work(self) }) }
        }
    }
}
