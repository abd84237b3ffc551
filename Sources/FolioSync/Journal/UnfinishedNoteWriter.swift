import Foundation

/// Writes the journal's notes of unfinished transfers (``UnfinishedTransfer``) from threads made
/// for blocking work (the engine's file work, or the provider's where a download lands), in the same
/// job as the work each note must come before (a download's placement, an upload's snapshot), and a transaction for all the notes that wait together (a
/// group commit): the first caller to find no transaction under way writes every note waiting,
/// its own among them, while the others wait for it on their threads.
///
/// A note written from the cooperative pool went through the engine's actor, a task of its own and
/// the database's queue, then back, and only then could its file be placed, in another job. Written
/// here, it goes with that work wherever it runs: a download's placement runs where the provider
/// finishes the file (``FetchLanding``), on a thread the engine does not choose.
final class UnfinishedNoteWriter: @unchecked Sendable {
    /// How long a note may wait for the transactions before its own (the database's own waits are
    /// shorter): a note not written by then fails, and so does the work it comes before.
    static let deadline: TimeInterval = 120

    /// One note and, once its transaction has ended, how it ended.
    private final class Note {
        let path: SyncPath
        let transfer: UnfinishedTransfer
        var outcome: Result<Void, any Error>?
        init(path: SyncPath, transfer: UnfinishedTransfer) {
            self.path = path
            self.transfer = transfer
        }
    }

    private let journal: SyncJournal
    private let condition = NSCondition()
    /// Notes no transaction has taken yet (guarded by `condition`).
    private var waiting: [Note] = []
    /// Whether a transaction is writing notes now (guarded by `condition`).
    private var writing = false

    init(journal: SyncJournal) {
        self.journal = journal
    }

    /// Writes the note, returning once its transaction has committed. Blocks: call it from a
    /// thread for blocking work (``SyncFileWork``, a provider's), never from the cooperative pool.
    /// - Throws: the transaction's error, or a timeout after ``deadline``.
    func write(_ path: SyncPath, _ transfer: UnfinishedTransfer) throws {
        let note = Note(path: path, transfer: transfer)
        let deadline = Date().addingTimeInterval(Self.deadline)
        condition.lock()
        defer { condition.unlock() }
        waiting.append(note)
        while note.outcome == nil {
            if !writing {
                writing = true
                let batch = waiting
                waiting.removeAll()
                condition.unlock()
                let outcome = Result { try journal.noteUnfinished(batch.map { ($0.path, $0.transfer) }) }
                condition.lock()
                for written in batch { written.outcome = outcome }
                writing = false
                condition.broadcast()
            } else if !condition.wait(until: deadline) {
                // Still waiting: taken by no transaction (it goes), or by one still under way (its
                // outcome is nobody's now, and the work after it is not done).
                waiting.removeAll { $0 === note }
                throw CocoaError(
                    .fileWriteUnknown,
                    userInfo: [NSLocalizedDescriptionKey: "the journal did not record a transfer of \(path) within \(Int(Self.deadline)) s"])
            }
        }
        try note.outcome!.get()
    }
}
