import Folio
import Foundation
import GRDB
import Logging
import Synchronization
import UniformTypes

/// The extraction pass: once names and types are in, each document's text is read (by the
/// sandboxed ``TextExtractionWorker``, on its own queue) and written to `contents`, a batch at a
/// time, for rows unchanged meanwhile. A file the worker fails on is marked (`content_state` 2,
/// with the reason) and not tried again until it changes; one whose type has no text is marked
/// as having none. Live queries hear the documents whose text was read.
extension MetadataIndex {
    /// How many documents one extraction step reads, at most.
    static let extractionBatch = 32

    /// This process's executable, when it is `folio-tool` (whose `extract-worker` command reads text).
    static let ownExecutable: String? = {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), (path as NSString).lastPathComponent == "folio-tool" else {
            return nil
        }
        return path
    }()

    /// Starts reading pending documents' text, unless a crawl, a typing step or an extraction step
    /// is under way. On the index queue.
    func scheduleExtraction() {
        dispatchPrecondition(condition: .onQueue(work))
        guard extractor != nil, !extracting, !typing, !crawling, !stopped else { return }
        extracting = true
        work.async { [self] in extractionStep() }
    }

    private func extractionStep() {
        guard !stopped, !crawling, !typing, let extractor else {
            extracting = false
            return
        }
        let batch: [IndexRecord]
        do {
            batch = try pool.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT \(IndexRecord.columns) FROM items WHERE content_state = 1 AND type_pending = 0 ORDER BY id LIMIT ?",
                    arguments: [Self.extractionBatch]
                ).map(IndexRecord.init(row:))
            }
        } catch {
            logger.error("the extraction pass could not read the index", metadata: ["error": "\(error)"])
            extracting = false
            return
        }
        guard !batch.isEmpty else {
            extracting = false
            return
        }
        contentWork.async { [self] in
            // Empty documents, those of types without text, hidden ones and those in folders
            // excluded for their text are marked as having none; the rest go to the worker at once.
            // (A document written since is read again: the row changes and the write skips it.)
            var read: [(IndexRecord, Result<String?, TextExtractionWorker.Failure>)] = []
            var documents: [(record: IndexRecord, format: TextExtractor.Format)] = []
            let roots = rootPaths.withLock { $0 } ?? []
            for record in batch {
                if record.size > 0, writer.exclusions.readsText(record.path, roots: roots), let type = UTType(record.type), let format = TextExtractor.format(of: type) {
                    documents.append((record, format))
                } else {
                    read.append((record, .success(nil)))
                }
            }
            // Past a file that stalled or crashed its worker, the rest of that worker's run waits
            // for the next step.
            let texts = extractor.texts(of: documents.map { ($0.record.path, $0.format) })
            for (document, text) in zip(documents, texts) {
                if let text { read.append((document.record, text.map { $0 })) }
            }
            work.async { [self, read] in applyContents(read) }
        }
    }

    /// The document's text as the content index holds it (nil when none was read).
    func storedText(of id: Int64, _ db: Database) -> MetadataValue? {
        (try? String.fetchOne(db, sql: "SELECT text FROM contents WHERE rowid = ?", arguments: [id])).flatMap { $0 }.map { .string($0) }
    }

    /// Whether `record` satisfies `predicate`, its text read from the content index only when the
    /// predicate searches it.
    func matches(_ predicate: MetadataPredicate, _ record: IndexRecord, _ db: Database) -> Bool {
        let facts = record.facts
        // Read once, however many comparisons search it.
        var text: MetadataValue??
        return predicate.evaluate { attribute in
            guard attribute == .textContent else { return facts.value(attribute) }
            if text == nil { text = .some(storedText(of: record.id, db)) }
            return text!
        }
    }

    /// The full-text query a result's relevance is measured against: what `predicate` looks for
    /// in `kMDItemTextContent` (any of it); nil when it looks for no text.
    static func relevanceQuery(_ predicate: MetadataPredicate) -> String? {
        let searches = predicate.textSearches.compactMap(TextWords.ftsQuery)
        return searches.isEmpty ? nil : searches.joined(separator: " OR ")
    }

    /// How well the record's text matches `query` (``relevanceQuery(_:)``), 0 to 1 (Apple's
    /// `NSMetadataQueryResultContentRelevanceAttribute`): SQLite's bm25 score `s` as
    /// `s / (1 + s)`. Nil when the text has none of it.
    func relevance(of record: IndexRecord, matching query: String, _ db: Database) -> Double? {
        guard let bm25 = try? Double.fetchOne(
                db.cachedStatement(sql: "SELECT bm25(contents) FROM contents WHERE contents MATCH ? AND rowid = ?"), arguments: [query, record.id])
        else { return nil }
        let score = max(0, -bm25)
        return score / (1 + score)
    }

    /// Writes the texts read, for rows unchanged since, then goes on.
    private func applyContents(_ read: [(IndexRecord, Result<String?, TextExtractionWorker.Failure>)]) {
        guard !stopped else { return }
        var changes = IndexChanges()
        do {
            try write { db in
                for (before, result) in read {
                    guard let record = try writer.record(at: before.path, db), record.id == before.id, !record.contentDiffers(from: before) else { continue }
                    try db.cachedStatement(sql: "DELETE FROM contents WHERE rowid = ?").execute(arguments: [record.id])
                    switch result {
                    case .success(let text?):
                        try db.cachedStatement(sql: "INSERT INTO contents (rowid, text) VALUES (?, ?)").execute(arguments: [record.id, text])
                        try db.cachedStatement(sql: "UPDATE items SET content_state = 0, content_error = NULL WHERE id = ?").execute(arguments: [record.id])
                        changes.wrote(record)
                    case .success(nil):
                        try db.cachedStatement(sql: "UPDATE items SET content_state = NULL, content_error = NULL WHERE id = ?").execute(arguments: [record.id])
                    case .failure(let failure):
                        logger.notice("no text read", metadata: ["path": "\(record.path)", "reason": "\(failure)"])
                        try db.cachedStatement(sql: "UPDATE items SET content_state = 2, content_error = ? WHERE id = ?")
                            .execute(arguments: [failure.description, record.id])
                    }
                }
            }
        } catch {
            logger.error("the extraction pass could not write texts", metadata: ["error": "\(error)"])
        }
        publish(changes)
        extracting = false
        scheduleExtraction()
    }
}
