@testable import FolioDaemon
import FolioTestTraits
import GRDB
import Testing

/// Values bound straight to SQLite (`DirectBindings`, the crawl's insertions) come back as bound:
/// text of every kind (empty, multi-byte, long), numbers, flags and nulls; a
/// failing statement throws SQLite's words and leaves the statement usable. Runs under
/// AddressSanitizer too (`scripts/test`).
@Suite("Values bound straight to SQLite", .elasticPool)
struct DirectBindingsTests {
    @Test func valuesComeBackAsBound() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, text TEXT, number INTEGER, real REAL, flag INTEGER)")
            let insert = try db.cachedStatement(sql: "INSERT INTO t (id, text, number, real, flag) VALUES (?, ?, ?, ?, ?)")
            let texts: [String?] = ["", "plain", "Größe – 文字 🗂", String(repeating: "long ", count: 2000), nil]
            for (index, text) in texts.enumerated() {
                let values = DirectBindings(insert)
                values.bind(1, Int64(index + 1))
                values.bind(2, text)
                values.bind(3, index % 2 == 0 ? Int64(-index) : nil)
                values.bind(4, index % 3 == 0 ? Double(index) + 0.5 : nil)
                values.bind(5, index % 2 == 0 ? true : nil as Bool?)
                try values.run(db)
            }
            let rows = try Row.fetchAll(db, sql: "SELECT text, number, real, flag FROM t ORDER BY id")
            #expect(rows.count == texts.count)
            for (index, row) in rows.enumerated() {
                #expect(row[0] as String? == texts[index], "text \(index)")
                #expect(row[1] as Int64? == (index % 2 == 0 ? Int64(-index) : nil))
                #expect(row[2] as Double? == (index % 3 == 0 ? Double(index) + 0.5 : nil))
                #expect(row[3] as Int64? == (index % 2 == 0 ? 1 : nil))
            }
            // A row bound after a failed one: the failure is SQLite's, the statement still runs.
            let duplicate = DirectBindings(insert)
            duplicate.bind(1, Int64(1))
            #expect(throws: DatabaseError.self) { try duplicate.run(db) }
            let next = DirectBindings(insert)
            next.bind(1, Int64(100))
            next.bind(2, "after")
            try next.run(db)
            #expect(try String.fetchOne(db, sql: "SELECT text FROM t WHERE id = 100") == "after")
            // Bindings of an earlier run do not leak into the next.
            #expect(try Int64.fetchOne(db, sql: "SELECT number FROM t WHERE id = 100") == nil)
        }
    }
}
