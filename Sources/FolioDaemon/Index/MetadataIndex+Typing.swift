import Folio
import Foundation
import GRDB
import Logging
import UniformTypes

/// The typing pass: after the crawl has made every name searchable, the items whose names leave
/// their types to their content (`type_pending`) are typed as `UTType.contentType(ofItemAt:)`
/// types them, so the index's `kMDItemContentType` is what `folio types of` says. A step reads a
/// batch's first bytes on its own queue, then writes the types on the index queue, for rows that
/// did not change meanwhile; an item that changes later is typed again.
extension MetadataIndex {
    /// How many items one typing step looks at, at most.
    static let typingBatch = 256
    /// How long one step reads files, at most (a slow disk makes smaller steps).
    static let typingBudget: Duration = .milliseconds(200)

    /// Starts typing the pending items, unless a crawl or a typing step is under way (the crawl
    /// starts it again when it ends). On the index queue.
    func scheduleTyping() {
        dispatchPrecondition(condition: .onQueue(work))
        guard !typing, !crawling, !stopped else { return }
        typing = true
        work.async { [self] in typeStep() }
    }

    /// Reads the next batch of pending items and types them on the typing queue.
    private func typeStep() {
        guard !stopped, !crawling else {
            typing = false
            return
        }
        let batch: [IndexRecord]
        do {
            batch = try pool.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT \(IndexRecord.columns) FROM items WHERE type_pending = 1 ORDER BY id LIMIT ?", arguments: [Self.typingBatch]
                ).map(IndexRecord.init(row:))
            }
        } catch {
            logger.error("the typing pass could not read the index", metadata: ["error": "\(error)"])
            typing = false
            return
        }
        guard !batch.isEmpty else {
            typing = false
            scheduleExtraction()
            return
        }
        typeWork.async { [self] in
            let clock = ContinuousClock()
            let started = clock.now
            var typed: [(IndexRecord, String?)] = []
            for record in batch {
                if !typed.isEmpty, clock.now - started > Self.typingBudget { break }
                // Gone or unreadable: nil, and the row keeps its type (an event removes a gone one).
                typed.append((record, try? UTType.contentType(ofItemAt: URL(fileURLWithPath: record.path)).type.identifier))
            }
            work.async { [self, typed] in applyTypes(typed) }
        }
    }

    /// Writes the types found, for rows unchanged since they were read, then goes on.
    private func applyTypes(_ typed: [(IndexRecord, String?)]) {
        guard !stopped else { return }
        var changes = IndexChanges()
        do {
            try write { db in
                for (read, type) in typed {
                    guard var record = try writer.record(at: read.path, db), record.id == read.id, record.typePending, record.size == read.size,
                        record.modified == read.modified, record.inode == read.inode
                    else { continue }
                    record.typePending = false
                    let changed = type != nil && type != record.type
                    if let type, changed {
                        record.type = type
                        writer.types.note([type])
                    }
                    // A new type may read the text differently: it is read again.
                    try db.cachedStatement(sql: "UPDATE items SET type = ?, type_pending = 0, content_state = CASE WHEN ? THEN 1 ELSE content_state END WHERE id = ?")
                        .execute(arguments: [record.type, changed && record.hasContent, record.id])
                    if changed { changes.wrote(record) }
                }
            }
        } catch {
            logger.error("the typing pass could not write types", metadata: ["error": "\(error)"])
        }
        publish(changes)
        typing = false
        scheduleTyping()
    }
}
