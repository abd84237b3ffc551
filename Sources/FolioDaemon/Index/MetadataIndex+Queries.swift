import Folio
import FolioSystem
import Foundation
import GRDB
import SystemPackage

extension MetadataIndex {
    /// How many results one gathering event carries.
    static let gatherBatch = 2000
    /// A scope with fewer rows than this is walked by path whatever the predicate.
    static let smallScope = 5000

    /// Starts a live query for `sink`: replies to request `requestID` with whether the index covers
    /// the scopes (every folder in them crawled; if not, the client searches by itself), then sends
    /// the results in `gathering` events, a `finished` event, and `update` events from then on.
    func startQuery(_ spec: IndexQuerySpec, requestID: Int64?, sink: any QueryEventSink) {
        work.async { [self] in
            applyStitched()
            let reply = { (result: WireValue) in
                if let requestID { sink.write([WireFrame.result(.int(requestID), result)]) }
            }
            do {
                guard try covers(spec.folders) else {
                    reply(["covered": false])
                    return
                }
                let query = LiveQueries.Query(spec: spec, sink: sink)
                live.add(query, for: sink)
                reply(["covered": true])
                var batch: [WireValue] = []
                var total = 0
                try gather(spec.predicate, in: spec.folders) { record in
                    query.members.insert(record.path)
                    batch.append(IndexWire.encode(record.facts))
                    total += 1
                    if batch.count == Self.gatherBatch {
                        sink.write([Self.queryEvent(spec.id, "gathering", batch)])
                        batch.removeAll()
                    }
                }
                sink.write([Self.queryEvent(spec.id, "gathering", batch), Self.queryEvent(spec.id, "finished", [], count: total)])
            } catch {
                live.remove(spec.id, of: sink)
                if let requestID {
                    sink.write([WireFrame.error(.int(requestID), code: "index", message: "the index could not run the query: \(error)")])
                }
            }
        }
    }

    func stopQuery(_ id: Int64, sink: any QueryEventSink) {
        work.async { [self] in live.remove(id, of: sink) }
    }

    func sessionClosed(_ sink: any QueryEventSink) {
        work.async { [self] in live.removeAll(of: sink) }
    }

    private static func queryEvent(_ id: Int64, _ phase: String, _ items: [WireValue], count: Int? = nil) -> WireValue {
        var event: [String: WireValue] = ["event": "query", "query": .int(id), "phase": .string(phase), "items": .array(items)]
        if let count { event["count"] = .int(Int64(count)) }
        return .object(event)
    }

    /// Whether every folder is inside a root and crawled through.
    func covers(_ folders: [String]) throws -> Bool {
        try pool.read { db in
            let roots = try String.fetchAll(db, sql: "SELECT path FROM roots")
            for folder in folders {
                guard roots.contains(where: { CoordinationPath.isSelfOrDescendant(folder, of: $0) }) else { return false }
                guard let row = try Row.fetchOne(db, sql: "SELECT kind, listed FROM items WHERE path = ?", arguments: [folder]) else {
                    // Not there: covered only when it is not on disk either.
                    if (try? FileStatus(path: FilePath(folder))) != nil { return false }
                    continue
                }
                guard row[0] as Int == 1, row[1] as Int == 1 else { return row[0] as Int != 1 }
                // `+path`: through the (small) index of unlisted folders, not the scope's paths.
                let unlisted = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM items WHERE kind = 1 AND listed = 0 AND +path >= ? AND +path < ?",
                    arguments: [folder + "/", folder + "0"]) ?? 0
                if unlisted > 0 { return false }
            }
            return true
        }
    }

    /// The rows under `folders` that satisfy `predicate`: narrowed in SQL, decided by evaluating
    /// the predicate on each candidate.
    func gather(_ predicate: MetadataPredicate, in folders: [String], limit: Int? = nil, each: (IndexRecord) throws -> Void) throws {
        try pool.read { db in
            let compiler = PredicateCompiler(typesConforming: writer.types.conforming(to:))
            let clause = compiler.compile(predicate)
            if let clause, clause.exact, clause.sql == "0" { return }
            // A scope of many rows with a condition: let the condition's index drive (`+path` keeps
            // SQLite from walking the scope by path), else the scope's path range.
            let large = try clause != nil && folders.contains { folder in
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM (SELECT 1 FROM items WHERE path >= ? AND path < ? LIMIT ?)",
                    arguments: [folder + "/", folder + "0", Self.smallScope]) == Self.smallScope
            }
            let column = large ? "+path" : "path"
            var conditions = ["(" + folders.map { _ in "(\(column) >= ? AND \(column) < ?)" }.joined(separator: " OR ") + ")"]
            var arguments: [(any DatabaseValueConvertible)?] = folders.flatMap { [$0 + "/", $0 + "0"] as [(any DatabaseValueConvertible)?] }
            if let clause {
                conditions.append("(" + clause.sql + ")")
                arguments += clause.arguments
            }
            let sql = "SELECT \(IndexRecord.columns) FROM items WHERE " + conditions.joined(separator: " AND ")
            let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
            var found = 0
            let relevanceQuery = Self.relevanceQuery(predicate)
            while let row = try rows.next() {
                var record = IndexRecord(row: row)
                if clause?.exact != true {
                    guard matches(predicate, record, db) else { continue }
                }
                if let relevanceQuery { record.relevance = relevance(of: record, matching: relevanceQuery, db) }
                try each(record)
                found += 1
                if let limit, found >= limit { return }
            }
        }
    }

    /// What the index knows of the item at `path`.
    func item(at path: String) throws -> IndexRecord? {
        dispatchPrecondition(condition: .onQueue(work))
        applyStitched()
        return try pool.read { db in try writer.record(at: path, db) }
    }
}
