package import Folio
import Foundation
package import GRDB

extension SyncJournal {
    /// What an item of the replica is on disk, as ``itemStates(of:_:)`` compares it with its base.
    package enum ReplicaItem: Sendable, Equatable {
        /// A folder.
        case folder
        /// A placeholder: its stub is here, its content is on the server.
        case placeholder
        /// A file, with what identifies its content without reading it.
        case file(device: UInt64, inode: UInt64, size: Int64, modified: Double)
    }

    /// How items of the replica stand with the server, as the journal has it in `db`: a
    /// transaction of the caller's on the journal's database (the daemon's index reads them while
    /// it writes its rows). For each of `items` (a path relative to the replica, and what is
    /// there), in order: nil for the replica's own files (its marker, staging, uploads in flight,
    /// stubs), which the drive does not sync as content; else its state, never downloading (what is
    /// being downloaded now is the caller's to know):
    ///
    /// - uploaded: the journal has a base for it that the item still matches (a folder, a
    ///   placeholder, or a file whose device, inode, size and date are the base's). A file touched
    ///   without a change counts as not uploaded until the next pass has compared its content.
    /// - pinned: a pin on it, on a folder above it, or on the whole drive (the empty path).
    /// - error: why the last pass that tried it deferred it.
    ///
    /// The pins and errors (both small) are read once per call, when the first item needs them;
    /// the bases item by item.
    package func itemStates(of items: [(path: String, item: ReplicaItem)], _ db: Database) throws -> [UbiquitousSyncState?] {
        var drive: (pins: Set<Data>, errors: [Data: String])?
        return try items.map { path, item -> UbiquitousSyncState? in
            let components = path.split(separator: "/", omittingEmptySubsequences: false)
            guard !components.contains(where: { LocalReplica.isPrivate(String($0)) }) else { return nil }
            if drive == nil { drive = try (pinnedPaths(db), deferredPaths(db)) }
            let (pins, errors) = drive!
            let key = Data(path.utf8)
            let base = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT is_folder, device, inode, size, modified, placeholder FROM sync_base WHERE domain = ? AND path = ?"),
                arguments: [domain, key])
            var uploaded = false
            if let base {
                let isFolder: Bool = base["is_folder"], isPlaceholder: Bool = base["placeholder"]
                switch item {
                case .folder:
                    uploaded = isFolder
                case .placeholder:
                    uploaded = isPlaceholder
                case .file(let device, let inode, let size, let modified):
                    if !isFolder, !isPlaceholder, let baseDevice: Int64 = base["device"], let baseInode: Int64 = base["inode"],
                        let baseSize: Int64 = base["size"], let baseModified: Double = base["modified"]
                    {
                        uploaded = UInt64(bitPattern: baseDevice) == device && UInt64(bitPattern: baseInode) == inode && baseSize == size
                            && baseModified == modified
                    }
                }
            }
            var pinned = pins.contains(Data())
            if !pinned, !pins.isEmpty {
                var prefix = ""
                for component in components where !pinned {
                    prefix = prefix.isEmpty ? String(component) : prefix + "/" + component
                    pinned = pins.contains(Data(prefix.utf8))
                }
            }
            return UbiquitousSyncState(isUploaded: uploaded, isPinned: pinned, error: errors[key])
        }
    }

    /// The pinned paths, as stored (bytes), read in `db`.
    private func pinnedPaths(_ db: Database) throws -> Set<Data> {
        Set(try Data.fetchAll(db, sql: "SELECT path FROM sync_pins WHERE domain = ?", arguments: [domain]))
    }

    /// Why each deferred path was deferred, by path as stored (bytes), read in `db`.
    private func deferredPaths(_ db: Database) throws -> [Data: String] {
        var errors: [Data: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT path, reason FROM sync_errors WHERE domain = ?", arguments: [domain]) {
            errors[row["path"]] = row["reason"]
        }
        return errors
    }
}
