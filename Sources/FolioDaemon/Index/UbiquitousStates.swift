import Folio
import GRDB
import Synchronization

/// The sync state of the drive's items in the index (columns `uploaded`, `downloading`, `pinned`
/// and `sync_error`): what the drive's journal says (``DriveStateSource``), learnt whenever a
/// drive item's row is written, and for every drive row by ``MetadataIndex/refreshDriveStates(downloading:)``
/// after the daemon's passes, pins and downloads; and what is being downloaded now, which the
/// daemon tells.
final class UbiquitousStates: Sendable {
    /// The drive replica.
    let driveRoot: String
    /// What the drive's journal says of each item.
    let source: any DriveStateSource
    private let downloading = Mutex<Set<String>>([])
    private let percents = Mutex<[String: Double]>([:])

    init(driveRoot: String, source: any DriveStateSource) {
        self.driveRoot = driveRoot
        self.source = source
    }

    /// The paths being downloaded now.
    var downloadingPaths: Set<String> {
        get { downloading.withLock { $0 } }
        set { downloading.withLock { $0 = newValue } }
    }

    /// The files being downloaded now, with how far each is (0…100): a pass's downloads and
    /// materializations, whoever asked for them. Each is downloading.
    var downloadPercents: [String: Double] {
        get { percents.withLock { $0 } }
        set { percents.withLock { $0 = newValue } }
    }

    /// The states of `records`, in order (nil for what the drive does not sync), read in the
    /// index's transaction `db`.
    func states(of records: [IndexRecord], _ db: Database) throws -> [UbiquitousSyncState?] {
        var states = try source.states(of: records, db)
        let downloading = downloadingPaths, percents = downloadPercents
        guard !downloading.isEmpty || !percents.isEmpty else { return states }
        for index in states.indices where states[index] != nil {
            let path = records[index].path
            states[index]?.percentDownloaded = percents[path]
            states[index]?.isDownloading = downloading.contains(path) || percents[path] != nil
        }
        return states
    }

    /// The state of `record` (nil when the drive does not sync it).
    func state(of record: IndexRecord, _ db: Database) throws -> UbiquitousSyncState? {
        try states(of: [record], db)[0]
    }
}
