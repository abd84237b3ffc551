import Folio
import FolioSync
import FolioSystem
import GRDB

/// The drive's journal as the index's ``DriveStateSource``: a record in the drive's replica is
/// looked up by its path in the replica, as a folder, a placeholder or a file
/// (`SyncJournal.itemStates(of:_:)`).
struct DriveJournalStates: DriveStateSource {
    /// The drive replica.
    let driveRoot: String
    let journal: SyncJournal

    /// The states of the drive in the folders of `paths`, whose journal is in `database` (the
    /// index's pool).
    init(paths: FolioPaths, database: any DatabaseWriter) {
        driveRoot = paths.driveDirectory
        journal = SyncJournal(database: database, domain: DriveSync.domain)
    }

    func states(of records: [IndexRecord], _ db: Database) throws -> [UbiquitousSyncState?] {
        var items: [(path: String, item: SyncJournal.ReplicaItem)] = []
        var positions: [Int] = []
        for (position, record) in records.enumerated() where record.path.hasPrefix(driveRoot + "/") {
            let item: SyncJournal.ReplicaItem
            switch record.kind {
            case .directory: item = .folder
            case .regular where record.downloadStatus == NSMetadataUbiquitousItemDownloadingStatusNotDownloaded: item = .placeholder
            case .regular: item = .file(device: record.device, inode: record.inode, size: record.size, modified: record.modified)
            default: continue
            }
            items.append((String(record.path.dropFirst(driveRoot.count + 1)), item))
            positions.append(position)
        }
        var states = [UbiquitousSyncState?](repeating: nil, count: records.count)
        guard !items.isEmpty else { return states }
        for (position, state) in zip(positions, try journal.itemStates(of: items, db)) { states[position] = state }
        return states
    }
}
