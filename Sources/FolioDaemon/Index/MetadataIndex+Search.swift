import Folio
import Foundation
import GRDB

/// One result of a search: the item, and where its text matched, the passage around the match
/// (the matched words between U+0002 and U+0003).
struct SearchHit: Sendable {
    var record: IndexRecord
    var snippet: String?
}

extension MetadataIndex {
    /// How many of the most recently used items a name search looks through, whatever the text.
    static let recentCandidates = 2000
    /// How many of the documents whose text matches are ranked, at most, for a search everywhere.
    static let rankedWindow = 2000

    /// Items whose name contains `text` (case and diacritics aside): names starting with it first,
    /// then the recently used, then shorter names; `allowed` filters what the asker may see.
    ///
    /// The work is bounded by `limit`, not by how many names match: the candidates are the first
    /// names in order that start with the text, the recently used items, and the first names the
    /// trigram index finds containing it (text of one or two characters, too short for trigrams,
    /// finds only the names that start with it), each source capped. Where more names match than
    /// the caps hold, the best of those found are returned.
    func search(_ text: String, limit: Int, allowed: (String) -> Bool) throws -> [IndexRecord] {
        try search(text, content: false, folders: [], limit: limit, allowed: allowed).map(\.record)
    }

    /// A search of names and, with `content`, of the documents' text: the names as
    /// ``search(_:limit:allowed:)`` finds them, then the documents whose text holds words beginning
    /// with each of the text's words, best first by bm25, each with its snippet. `folders` (none:
    /// everywhere) keeps the items inside them.
    func search(_ text: String, content: Bool, folders: [String], limit: Int, allowed: (String) -> Bool) throws -> [SearchHit] {
        dispatchPrecondition(condition: .onQueue(work))
        applyStitched()
        func visible(_ path: String) -> Bool {
            guard allowed(path) else { return false }
            return folders.isEmpty || folders.contains { folder in path == folder || path.hasPrefix(folder == "/" ? "/" : folder + "/") }
        }
        let cap = limit * 4 + 100
        return try pool.read { db in
            var hits: [SearchHit] = []
            for candidate in try nameCandidates(MetadataFacts.searchFold(text), cap: cap, db) where hits.count < limit {
                if visible(candidate.record.path) { hits.append(SearchHit(record: candidate.record, snippet: nil)) }
            }
            guard content, let query = Self.wordsQuery(text) else { return hits }
            // Where the asker sees only some folders, every match is ranked; elsewhere the newest
            // matches are, so that a common word costs what a rare one does.
            let ranked = try textMatches(query, cap: cap, window: folders.isEmpty ? Self.rankedWindow : nil, db)
            let named = Set(hits.map(\.record.id))
            let records = try records(ids: ranked.filter { !named.contains($0) }, db)
            for id in ranked where hits.count < limit {
                guard let record = records[id], visible(record.path) else { continue }
                hits.append(SearchHit(record: record, snippet: nil))
            }
            // Passages only for what is returned, read here from the stored text: FTS5's own
            // snippet() evaluates the query again for each row (7 ms for a common word).
            let matched = Set(ranked)
            let words = TextWords.words(of: text)
            let stored = try db.cachedStatement(sql: "SELECT text FROM contents WHERE rowid = ?")
            for index in hits.indices where matched.contains(hits[index].record.id) {
                guard let text = try String.fetchOne(stored, arguments: [hits[index].record.id]) else { continue }
                hits[index].snippet = TextWords.snippet(of: text, words: words)
            }
            return hits
        }
    }

    /// The trigram index's query for names that may contain `folded`: every trigram of it, each
    /// quoted, all required. The index keeps no positions (`v15-name-trigrams`), so a name with
    /// the trigrams apart matches too, and the search checks each name. Not `LIKE`, whose `_`
    /// and `%` in the text are wildcards: text such as `bi_vu` leaves LIKE no three characters
    /// without one, and it then reads every row (40 ms at 134,000 names). Nil for text shorter
    /// than a trigram.
    static func substringQuery(_ folded: String) -> String? {
        let scalars = Array(folded.unicodeScalars)
        guard scalars.count >= 3 else { return nil }
        var trigrams: [String] = []
        var seen = Set<String>()
        for start in 0...(scalars.count - 3) {
            var trigram = String.UnicodeScalarView()
            trigram.append(contentsOf: scalars[start..<start + 3])
            let text = String(trigram)
            if seen.insert(text).inserted { trigrams.append("\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"") }
        }
        return trigrams.joined(separator: " AND ")
    }

    /// The FTS5 query for words each beginning a word of the text, in any order; nil for text
    /// without words of two characters or more. A single letter is left out: no prefix index
    /// holds it, and FTS5 would merge the lists of every word beginning with it (a search as you
    /// type starts with one).
    static func wordsQuery(_ text: String) -> String? {
        let words = TextWords.words(of: text).filter { $0.count >= 2 }
        guard !words.isEmpty else { return nil }
        return words.map { "\"" + $0 + "\"*" }.joined(separator: " ")
    }

    private struct NameCandidate {
        var record: IndexRecord
        var prefix: Bool
        var length: Int
    }

    /// The name search's candidates, best first (see ``search(_:limit:allowed:)``).
    private func nameCandidates(_ folded: String, cap: Int, _ db: Database) throws -> [NameCandidate] {
        var found: [Int64: NameCandidate] = [:]
        func collect(_ sql: String, _ arguments: StatementArguments) throws {
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try rows.next() {
                let fold: String = row[IndexRecord.columnCount]
                // The folded name decides (the recently used are not matched by SQL at all).
                guard fold.contains(folded) else { continue }
                let record = IndexRecord(row: row)
                found[record.id] = NameCandidate(record: record, prefix: fold.hasPrefix(folded), length: record.name.count)
            }
        }
        let columns = IndexRecord.columns + ", fold"
        try collect(
            "SELECT \(columns) FROM items WHERE fold >= ? AND fold < ? AND parent IS NOT NULL ORDER BY fold LIMIT ?",
            [folded, folded + "\u{10FFFF}", cap])
        try collect(
            "SELECT \(columns) FROM items WHERE last_used IS NOT NULL AND parent IS NOT NULL ORDER BY last_used DESC LIMIT ?",
            [Self.recentCandidates])
        if let query = Self.substringQuery(folded) {
            // The index's rows in its order, each name checked as it comes, until `cap` hold the
            // text: the cap counts names found, not the index's candidates.
            try collect(
                """
                SELECT \(columns) FROM (SELECT rowid AS hit FROM items_fts WHERE items_fts MATCH ?) CROSS JOIN items ON items.id = hit
                WHERE instr(fold, ?) > 0 AND parent IS NOT NULL LIMIT ?
                """,
                [query, folded, cap])
        }
        return found.values.sorted { a, b in
            if a.prefix != b.prefix { return a.prefix }
            if a.record.lastUsed != b.record.lastUsed { return (a.record.lastUsed ?? -.infinity) > (b.record.lastUsed ?? -.infinity) }
            if a.length != b.length { return a.length < b.length }
            return a.record.name < b.record.name
        }
    }

    /// The row ids of the documents whose text matches `query`, best first (bm25), at most `cap`;
    /// with a `window`, where more documents match, only the `window` last indexed are ranked
    /// (bm25 reads each ranked row's length: 230 ms for a word in all of 100,000 documents).
    private func textMatches(_ query: String, cap: Int, window: Int?, _ db: Database) throws -> [Int64] {
        let boundary = try window.flatMap { window in
            try Int64.fetchOne(
                db, sql: "SELECT rowid FROM contents WHERE contents MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?", arguments: [query, window - 1])
        }
        if let boundary {
            return try Int64.fetchAll(
                db, sql: "SELECT rowid FROM contents WHERE contents MATCH ? AND rowid >= ? ORDER BY rank LIMIT ?", arguments: [query, boundary, cap])
        }
        return try Int64.fetchAll(db, sql: "SELECT rowid FROM contents WHERE contents MATCH ? ORDER BY rank LIMIT ?", arguments: [query, cap])
    }

    /// The rows of `ids`, by id.
    private func records(ids: [Int64], _ db: Database) throws -> [Int64: IndexRecord] {
        var records: [Int64: IndexRecord] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT \(IndexRecord.columns) FROM items WHERE id IN (\(chunk.map { _ in "?" }.joined(separator: ", ")))",
                arguments: StatementArguments(Array(chunk)))
            while let row = try rows.next() {
                let record = IndexRecord(row: row)
                records[record.id] = record
            }
        }
        return records
    }
}
