import Folio
import Foundation
import GRDB
import Synchronization

/// The sync state of the drive's items in the index (columns `uploaded`, `downloading`, `pinned`
/// and `sync_error`), read from the drive's journal, which lives in the same database: whenever a
/// drive item's row is written, and for every drive row by ``MetadataIndex/refreshDriveStates()``
/// after the daemon's passes, pins and downloads. What is downloading now is the daemon's to tell.
final class UbiquitousStates: Sendable {
    /// The drive replica.
    let driveRoot: String
    /// The journal domain of the user's drive (``DriveSync``'s).
    static let domain = "drive"
    private let downloading = Mutex<Set<String>>([])

    init(driveRoot: String) {
        self.driveRoot = driveRoot
    }

    /// The paths being downloaded now.
    var downloadingPaths: Set<String> {
        get { downloading.withLock { $0 } }
        set { downloading.withLock { $0 = newValue } }
    }

    /// What the journal says of the drive as a whole, read once per index operation: its pins
    /// (the empty path pins the whole drive) and the last error of each deferred path. Both are
    /// small; the bases are looked up one by one.
    struct Journal {
        var pins: Set<Data>
        var errors: [Data: String]
    }

    func journal(_ db: Database) throws -> Journal {
        let pins = try Data.fetchAll(db, sql: "SELECT path FROM sync_pins WHERE domain = ?", arguments: [Self.domain])
        var errors: [Data: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT path, reason FROM sync_errors WHERE domain = ?", arguments: [Self.domain]) {
            errors[row["path"]] = row["reason"]
        }
        return Journal(pins: Set(pins), errors: errors)
    }

    /// The state of the item `record` stands for: nil outside the drive, for the replica's own
    /// files, and for what is neither a file nor a folder (nothing the drive syncs). `journal` is
    /// read when first needed (and kept for the caller's next items).
    ///
    /// Uploaded: the journal has a base for it that the item still matches (a folder, a
    /// placeholder, or a file whose device, inode, size and date are the base's). A file touched
    /// without a change counts as not uploaded until the next pass has compared its content.
    func state(of record: IndexRecord, journal: inout Journal?, _ db: Database) throws -> UbiquitousSyncState? {
        guard record.kind == .regular || record.kind == .directory, record.path.hasPrefix(driveRoot + "/") else { return nil }
        let relative = String(record.path.dropFirst(driveRoot.count + 1))
        let components = relative.split(separator: "/", omittingEmptySubsequences: false)
        guard !components.contains(where: { LocalReplica.isPrivate(String($0)) }) else { return nil }
        if journal == nil { journal = try self.journal(db) }
        let key = Data(relative.utf8)
        let base = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT is_folder, device, inode, size, modified, placeholder FROM sync_base WHERE domain = ? AND path = ?"),
            arguments: [Self.domain, key])
        var uploaded = false
        if let base {
            let isFolder: Bool = base["is_folder"], isPlaceholder: Bool = base["placeholder"]
            if record.kind == .directory {
                uploaded = isFolder
            } else if record.downloadStatus == NSMetadataUbiquitousItemDownloadingStatusNotDownloaded {
                uploaded = isPlaceholder
            } else if !isFolder, !isPlaceholder, let device: Int64 = base["device"], let inode: Int64 = base["inode"], let size: Int64 = base["size"],
                let modified: Double = base["modified"]
            {
                uploaded = UInt64(bitPattern: device) == record.device && UInt64(bitPattern: inode) == record.inode && size == record.size
                    && modified == record.modified
            }
        }
        // Pinned: a pin on the item, a folder above it, or the whole drive (the empty path).
        var pinned = journal!.pins.contains(Data())
        if !pinned, !journal!.pins.isEmpty {
            var prefix = ""
            for component in components where !pinned {
                prefix = prefix.isEmpty ? String(component) : prefix + "/" + component
                pinned = journal!.pins.contains(Data(prefix.utf8))
            }
        }
        return UbiquitousSyncState(isUploaded: uploaded, isDownloading: downloadingPaths.contains(record.path), isPinned: pinned, error: journal!.errors[key])
    }
}
