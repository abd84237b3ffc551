import Folio
import FolioDaemon
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import GRDB
import Testing

/// The notes of unfinished transfers written from the engine's file-work threads, many at once
/// (``UnfinishedNoteWriter``): each is in the journal when its call returns, and a transaction that
/// fails fails every note it held, none left waiting.
@Suite("Unfinished-transfer notes", .elasticPool)
struct UnfinishedNoteWriterTests {
    /// Runs `body` on a thread of its own (the writer blocks, as file work does) and returns its result.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    static func note(_ index: Int) -> UnfinishedTransfer {
        UnfinishedTransfer(
            fingerprint: LocalFingerprint(device: 3, inode: UInt64(100 + index), size: Int64(index), modified: 1000.25), hash: "hash \(index)",
            isDownload: index.isMultiple(of: 2))
    }

    /// Writes notes `0..<count` at once, each from a thread of its own; each one's error, if any.
    static func writeAtOnce(_ writer: UnfinishedNoteWriter, _ count: Int, path: @escaping @Sendable (Int) -> SyncPath) async -> [String?] {
        await withTaskGroup(of: String?.self) { group in
            for index in 0..<count {
                group.addTask {
                    await onThread {
                        do {
                            try writer.write(path(index), note(index))
                            return nil
                        } catch {
                            return "\(index): \(error)"
                        }
                    }
                }
            }
            return await group.reduce(into: [String?]()) { $0.append($1) }
        }
    }

    @Test func notesWrittenAtOnceFromManyThreadsAreAllInTheJournal() async throws {
        let home = try TemporaryDirectory("unfinished-notes")
        let journal = try SyncJournal(path: home.child("index.sqlite").path, domain: DriveSync.domain)
        let writer = UnfinishedNoteWriter(journal: journal)
        let failures = await Self.writeAtOnce(writer, 64) { SyncPath("folder/file \($0).txt") }.compactMap { $0 }
        #expect(failures.isEmpty)
        let recorded = try await journal.unfinishedTransfers()
        #expect(recorded.count == 64)
        for index in 0..<64 {
            #expect(recorded[SyncPath("folder/file \(index).txt")] == Self.note(index))
        }
        // A later note of a path replaces the earlier one.
        let later = UnfinishedTransfer(fingerprint: LocalFingerprint(device: 3, inode: 999, size: 1, modified: 2), hash: "later")
        try await Self.onThread { Result { try writer.write(SyncPath("folder/file 5.txt"), later) } }.get()
        #expect(try await journal.unfinishedTransfers()[SyncPath("folder/file 5.txt")] == later)
    }

    @Test func aFailedTransactionFailsEachOfItsNotes() async throws {
        let home = try TemporaryDirectory("unfinished-notes-failing")
        let store = try IndexStore(path: home.child("index.sqlite").path)
        let journal = SyncJournal(database: store.pool, domain: DriveSync.domain)
        try await store.pool.write { db in try db.execute(sql: "DROP TABLE sync_unfinished") }
        let writer = UnfinishedNoteWriter(journal: journal)
        let outcomes = await Self.writeAtOnce(writer, 16) { SyncPath("file \($0)") }
        #expect(outcomes.count == 16)
        #expect(outcomes.allSatisfy { $0?.contains("sync_unfinished") == true }, "\(outcomes)")
    }
}
