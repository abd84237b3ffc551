import Folio
import Foundation
import GRDB

extension MetadataIndex {
    /// Leaves `folder` out of the index from now on: everything in it (its rows go), or with
    /// `textOnly` only its documents' text (the texts go; names stay searchable).
    func exclude(_ folder: String, textOnly: Bool) throws {
        dispatchPrecondition(condition: .onQueue(work))
        dropCrawlState(touching: folder)
        var changes = IndexChanges()
        try write { db in
            try writer.exclusions.set(textOnly ? .text : .everything, for: folder, db)
            let range = "(path = ? OR (path >= ? AND path < ?))"
            let arguments: StatementArguments = [folder, folder + "/", folder + "0"]
            if textOnly {
                try db.execute(sql: "DELETE FROM contents WHERE rowid IN (SELECT id FROM items WHERE \(range) AND content_state IS NOT NULL)", arguments: arguments)
                try db.execute(sql: "UPDATE items SET content_state = NULL, content_error = NULL WHERE \(range) AND content_state IS NOT NULL", arguments: arguments)
            } else {
                try writer.removeTree(folder, db, changes: &changes)
            }
        }
        if !textOnly { unwatch(folder) }
        publish(changes)
    }

    /// Indexes `folder` again as its parent is (everything in it, text included); false when the
    /// user had not excluded it.
    func include(_ folder: String) throws -> Bool {
        dispatchPrecondition(condition: .onQueue(work))
        dropCrawlState(touching: folder)
        var changes = IndexChanges()
        let kind = try write { db -> IndexExclusions.Kind? in
            guard let kind = writer.exclusions.kind(of: folder), kind != .contents else { return nil }
            try writer.exclusions.set(nil, for: folder, db)
            if kind == .text {
                try db.execute(
                    sql: """
                        UPDATE items SET content_state = 1 WHERE (path = ? OR (path >= ? AND path < ?)) AND kind = 0
                        AND download_status IS NOT 'NSMetadataUbiquitousItemDownloadingStatusNotDownloaded'
                        """,
                    arguments: [folder, folder + "/", folder + "0"])
            } else {
                // Its row comes back unlisted, under its parent's, and the crawl lists it.
                try writer.refresh(folder, db, changes: &changes)
            }
            return kind
        }
        publish(changes)
        if kind == .everything { scheduleCrawl() } else if kind == .text { scheduleExtraction() }
        return kind != nil
    }
}
