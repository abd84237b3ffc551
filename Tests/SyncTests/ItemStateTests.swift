import Folio
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import GRDB
import Testing

/// What the journal tells the daemon's index of each drive item (`SyncJournal.itemStates`):
/// uploaded while the item still matches its base, pinned under a pin, the last error of a
/// deferred path; nothing for the replica's own files.
@Suite("Drive item states", .elasticPool)
struct ItemStateTests {
    @Test func statesFollowTheBasesPinsAndErrors() async throws {
        let home = try TemporaryDirectory("item-states")
        let journal = try SyncJournal(path: home.child("index.sqlite").path, domain: DriveSync.domain)
        let synced = LocalFingerprint(device: 7, inode: 42, size: 5, modified: 1000.5)
        try await journal.record([
            (SyncPath("Notes"), BaseEntry(isFolder: true, identifier: "n", version: Data("1".utf8))),
            (SyncPath("Notes/a.txt"), BaseEntry(isFolder: false, identifier: "a", version: Data("1".utf8), hash: "h", fingerprint: synced)),
            (SyncPath("cloud.pdf"), BaseEntry(isFolder: false, identifier: "c", version: Data("1".utf8), isPlaceholder: true)),
        ])
        try await journal.setPinned([SyncPath("Notes")], true)
        try await journal.recordErrors(failed: [SyncPath("new.txt"): ("the server answered 507", "upload")], kept: [])
        let file = SyncJournal.ReplicaItem.file(device: 7, inode: 42, size: 5, modified: 1000.5)
        let touched = SyncJournal.ReplicaItem.file(device: 7, inode: 42, size: 5, modified: 1001)
        let items: [(path: String, item: SyncJournal.ReplicaItem)] = [
            ("Notes", .folder),
            ("Notes/a.txt", file),
            // Touched: not uploaded until a pass has compared its content.
            ("Notes/a.txt", touched),
            ("cloud.pdf", .placeholder),
            // A file written where the base is a placeholder: new content, not uploaded.
            ("cloud.pdf", file),
            // A folder where the base is a file.
            ("Notes/a.txt", .folder),
            ("new.txt", file),
            (".folio-replica", file),
            ("Notes/b.txt.folio-cloud", file),
            (".folio-staging/x", file),
        ]
        let states = try await journal.database.read { db in try journal.itemStates(of: items, db) }
        #expect(
            states == [
                UbiquitousSyncState(isUploaded: true, isPinned: true),
                UbiquitousSyncState(isUploaded: true, isPinned: true),
                UbiquitousSyncState(isUploaded: false, isPinned: true),
                UbiquitousSyncState(isUploaded: true),
                UbiquitousSyncState(isUploaded: false),
                UbiquitousSyncState(isUploaded: false, isPinned: true),
                UbiquitousSyncState(isUploaded: false, error: "the server answered 507"),
                nil, nil, nil,
            ])

        // A pin on the whole drive (the empty path) covers everything.
        try await journal.setPinned([.root], true)
        let pinned = try await journal.database.read { db in try journal.itemStates(of: [("new.txt", file), ("cloud.pdf", .placeholder)], db) }
        #expect(pinned == [UbiquitousSyncState(isUploaded: false, isPinned: true, error: "the server answered 507"), UbiquitousSyncState(isUploaded: true, isPinned: true)])
    }
}
