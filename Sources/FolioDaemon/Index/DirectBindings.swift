import GRDB
import GRDBSQLite

/// Runs a prepared statement with its values bound straight to SQLite, for the statements a crawl
/// runs for every row: GRDB's `StatementArguments` boxes each value in an existential and copies
/// it into an array of `DatabaseValue`s before binding it, which was an eighth of the crawl
/// writer's samples (`folio bench index`, perf). Values not bound are NULL.
///
/// The statement must be one of the connection's own (`db.cachedStatement(sql:)`) and used only
/// on the connection's queue; GRDB resets and binds it again before any use of its own.
struct DirectBindings {
    private let handle: OpaquePointer
    private let statement: Statement

    /// Clears what an earlier run bound to `statement`.
    init(_ statement: Statement) {
        self.statement = statement
        handle = statement.sqliteStatement
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// SQLite copies the text at once (`SQLITE_TRANSIENT`), so the string may go after the call.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self) }

    func bind(_ index: Int32, _ value: Int64?) {
        guard let value else { return }
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Double?) {
        guard let value else { return }
        sqlite3_bind_double(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Bool?) {
        guard let value else { return }
        sqlite3_bind_int64(handle, index, value ? 1 : 0)
    }

    func bind(_ index: Int32, _ value: String?) {
        guard var value else { return }
        _ = value.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { text in
                if let base = text.baseAddress {
                    sqlite3_bind_text(handle, index, base, Int32(text.count), Self.transient)
                } else {
                    sqlite3_bind_text(handle, index, "", 0, nil)
                }
            }
        }
    }

    /// Runs the statement to its end (it returns no rows) and leaves it reset.
    func run(_ db: Database) throws {
        let code = sqlite3_step(handle)
        defer { sqlite3_reset(handle) }
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)), sql: statement.sql)
        }
    }
}
