import Folio
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The log of unfinished-transfer notes a pass writes from its file work (``UnfinishedNoteLog``):
/// every note written at once from many threads reads back whole, and a record a crash cut short,
/// or bytes that are not records, end what is read without a trap.
@Suite("Unfinished-transfer note log", .elasticPool)
struct UnfinishedNoteLogTests {
    /// Runs `body` on a thread of its own (the log's writes block, as file work does).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    static func note(_ index: Int) -> UnfinishedTransfer {
        UnfinishedTransfer(
            fingerprint: LocalFingerprint(device: 3, inode: UInt64(100 + index), size: Int64(index), modified: 1000.25 + Double(index)),
            hash: index.isMultiple(of: 3) ? nil : "hash \(index)", isDownload: index.isMultiple(of: 2))
    }

    @Test func notesWrittenAtOnceFromManyThreadsReadBackWhole() async throws {
        let home = try TemporaryDirectory("note-log")
        let log = UnfinishedNoteLog(path: home.child("notes.log").path)
        #expect(try UnfinishedNoteLog.read(log.path).isEmpty)
        #expect(!log.holdsNotes)
        let failures = await withTaskGroup(of: String?.self) { group in
            for index in 0..<64 {
                group.addTask {
                    await Self.onThread {
                        do {
                            try log.write(SyncPath("folder/näme \(index).txt"), Self.note(index))
                            return nil
                        } catch {
                            return "\(index): \(error)"
                        }
                    }
                }
            }
            return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        #expect(failures.isEmpty)
        #expect(log.holdsNotes)
        let read = try UnfinishedNoteLog.read(log.path)
        #expect(read.count == 64)
        let byPath = Dictionary(read, uniquingKeysWith: { _, later in later })
        for index in 0..<64 {
            #expect(byPath[SyncPath("folder/näme \(index).txt")] == Self.note(index))
        }
        try log.empty()
        #expect(!log.holdsNotes)
        // Written again after it was emptied (the descriptor stays open): from the start.
        try log.write(SyncPath("again"), Self.note(1))
        #expect(try UnfinishedNoteLog.read(log.path).map(\.0) == [SyncPath("again")])
    }

    /// A pass of a restarted process moves the notes a killed one left in the log into the journal,
    /// except one whose transfer's base was recorded since (the base has its fingerprint), and
    /// empties the log.
    @Test func aPassMovesTheLogsNotesIntoTheJournalSaveThoseItsBasesRecord() async throws {
        let backend = try SyncBackend(.memory)
        let device = try await backend.device("note-log")
        try device.write("kept.txt", "kept")
        try device.write("sent.txt", "sent")
        #expect(try await device.settle().deferred.isEmpty)
        let base = try await device.journal.base()
        let sent = try #require(base[SyncPath("sent.txt")]?.fingerprint)
        // Left by a pass killed once its end wrote the journal, before it emptied the log: the note
        // of the upload the base of sent.txt records, and one of an earlier transfer of kept.txt.
        let log = UnfinishedNoteLog(path: device.journal.noteLogPath)
        try log.write(SyncPath("sent.txt"), UnfinishedTransfer(fingerprint: sent, hash: base[SyncPath("sent.txt")]?.hash))
        let earlier = UnfinishedTransfer(fingerprint: LocalFingerprint(device: 1, inode: 2, size: 3, modified: 4), hash: "earlier", isDownload: true)
        try log.write(SyncPath("kept.txt"), earlier)
        let restarted = SyncEngine(provider: await device.engine.provider, replica: LocalReplica(root: device.root), journal: device.journal, versions: device.versions)
        let report = try await restarted.sync()
        #expect(report.uploaded == 0 && report.downloaded == 0)
        let unfinished = try await device.journal.unfinishedTransfers()
        #expect(unfinished == [SyncPath("kept.txt"): earlier])
        #expect(!log.holdsNotes)
    }

    @Test func aRecordCutShortOrBytesThatAreNotRecordsEndTheLog() throws {
        let records = (0..<3).map { UnfinishedNoteLog.record(SyncPath("file \($0)"), Self.note($0)) }
        let whole = records.flatMap { $0 }
        #expect(UnfinishedNoteLog.parse(whole).map(\.1) == (0..<3).map(Self.note))
        // Cut anywhere in the last record: the first two read.
        for cut in 1..<records[2].count {
            #expect(UnfinishedNoteLog.parse(Array(whole.dropLast(cut))).count == 2)
        }
        // A byte changed in the second record's body: only the first reads.
        var changed = whole
        changed[records[0].count + 20] ^= 0x40
        #expect(UnfinishedNoteLog.parse(changed).count == 1)
        // A length that claims more than is there, or too little to be a record.
        #expect(UnfinishedNoteLog.parse([0xFF, 0xFF, 0xFF, 0xFF] + Array(repeating: 0, count: 40)).isEmpty)
        #expect(UnfinishedNoteLog.parse([1, 0, 0, 0] + Array(repeating: 0, count: 9)).isEmpty)
        #expect(UnfinishedNoteLog.parse([]).isEmpty)
        #expect(UnfinishedNoteLog.parse(Array("not a log at all, just text".utf8)).isEmpty)
    }
}
