import CFolioShims
import GRDB
import GRDBSQLite

/// Names in the order Finder and file managers show them: folded (case and diacritics ignored)
/// and with runs of digits compared as numbers, so “Chapter 2” comes before “Chapter 10”.
///
/// The comparison is C (`cfolio_natural_compare`), registered on every connection as the SQLite
/// collation `folio_natural` so that a page of a 100,000-entry folder sorts inside SQLite; the
/// schema never names it, so other tools can still open the database.
enum NaturalNameOrder {
    /// The collation's name in SQL (`ORDER BY fold COLLATE folio_natural`).
    static let collation = "folio_natural"

    /// Registers the collation on `db` (from the pool's `prepareDatabase`).
    static func register(_ db: Database) throws {
        let code = sqlite3_create_collation_v2(db.sqliteConnection, collation, SQLITE_UTF8, nil, cfolio_natural_compare, nil)
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot register the collation \(collation)")
        }
    }

    /// The same order in memory, on folded names: negative, zero or positive.
    static func compare(_ a: String, _ b: String) -> Int32 {
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in cfolio_natural_compare(nil, Int32(x.count), x.baseAddress, Int32(y.count), y.baseAddress) }
        }
    }
}
