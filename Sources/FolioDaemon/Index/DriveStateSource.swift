import Folio
import GRDB

/// Where the index learns how the drive's items stand with the server: whether the server has
/// their content, whether a pin keeps them downloaded, why the last pass deferred them (the
/// ubiquitous-item keys and Folio's pinned key). The daemon's drive journal answers
/// (``DriveJournalStates``); the index owns no table of the drive's and reads none.
///
/// The index asks inside its own transaction, `db`, on the database the journal shares, so a row
/// is written with the journal as that transaction sees it.
protocol DriveStateSource: Sendable {
    /// The states of `records`, in order: nil for an item the drive does not sync (outside the
    /// replica, the replica's own files, what is neither a file nor a folder). None is
    /// downloading: that is the index's to add (``UbiquitousStates``).
    func states(of records: [IndexRecord], _ db: Database) throws -> [UbiquitousSyncState?]
}
