#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
import Folio
import GRDB
import FolioSystem
import Foundation
import Synchronization

/// Extended attributes through the mount: the replica's own, and two of Folio's that any program
/// can read (`getfattr -d`, a file manager's column) but none can set: `user.folio.status` and,
/// while a download runs, `user.folio.progress`. Folio's other attributes (a document's identity,
/// which its versions and bookmarks follow) pass through when named, unlisted.
extension DriveFileSystem {
    static let statusAttribute = "user.folio.status"
    static let progressAttribute = "user.folio.progress"

    /// Whether `name` is one of the attributes the mount makes (never set by a program).
    static func isMade(_ name: String) -> Bool { name == statusAttribute || name == progressAttribute }

    /// Folio's attributes of the item at `path`, by name. The status, first that holds:
    /// downloading (for an open here), error (the last pass set it aside), conflict (versions that
    /// lost to another device's wait to be resolved), cloud (a placeholder), uploading (changed
    /// here, the server does not have it yet), pinned (kept downloaded), local.
    func folioAttributes(_ path: String, _ item: Item) -> [(String, String)] {
        if let progress = state.withLock({ $0.downloading[path]?.progress }) {
            let percent = Int((progress.fractionCompleted * 100).rounded(.down))
            return [(Self.statusAttribute, "downloading"), (Self.progressAttribute, String(min(100, max(0, percent))))]
        }
        let kind: SyncJournal.ReplicaItem
        switch item.status.st_mode & S_IFMT {
        case S_IFDIR: kind = .folder
        case S_IFREG where item.placeholder: kind = .placeholder
        case S_IFREG:
            let modified = Double(item.status.st_mtim.tv_sec) + Double(item.status.st_mtim.tv_nsec) / 1e9
            kind = .file(device: UInt64(item.status.st_dev), inode: UInt64(item.status.st_ino), size: Int64(item.status.st_size), modified: modified)
        default: return [(Self.statusAttribute, "local")]
        }
        // The journal, read on this (the mount's own) thread: one indexed lookup.
        let synced = journal.flatMap { journal in try? journal.database.read { db in try journal.itemStates(of: [(path, kind)], db).first ?? nil } }
        let conflicted = kind != .folder && !item.placeholder && hasUnresolvedConflicts(path)
        return [(Self.statusAttribute, Self.status(synced, placeholder: item.placeholder, conflicted: conflicted))]
    }

    /// Whether the document at `path` has conflict versions not marked resolved.
    private func hasUnresolvedConflicts(_ path: String) -> Bool {
        guard let records = try? versions?.versions(ofItemAt: replicaPath + "/" + path).records else { return false }
        return records.contains { $0.isConflict && !$0.isResolved }
    }

    /// The status an item shows, from its state in the journal.
    static func status(_ synced: UbiquitousSyncState?, placeholder: Bool, conflicted: Bool = false) -> String {
        if synced?.error != nil { return "error" }
        if conflicted { return "conflict" }
        if placeholder { return "cloud" }
        if let synced, !synced.isUploaded { return "uploading" }
        if synced?.isPinned == true { return "pinned" }
        return "local"
    }

    /// The size-or-value reply the protocol wants: the size alone when asked for 0 bytes, the bytes
    /// when they fit, `ERANGE` when not.
    private func replyValue(_ request: FUSERequest, _ value: [UInt8], asked: UInt32) throws(CErrno) {
        if asked == 0 {
            channel.reply(request.header.unique, fuse_getxattr_out(size: UInt32(value.count), padding: 0))
        } else {
            guard value.count <= Int(asked) else { throw CErrno(ERANGE) }
            value.withUnsafeBytes { channel.reply(request.header.unique, payload: $0) }
        }
    }

    func getExtendedAttribute(_ request: FUSERequest, into buffer: UnsafeMutableRawBufferPointer) throws(CErrno) {
        guard let get = request.argument(fuse_getxattr_in.self), let (name, _) = request.name(at: MemoryLayout<fuse_getxattr_in>.size) else {
            throw CErrno(EINVAL)
        }
        let path = try path(of: request)
        let item = try item(path).get()
        if Self.isMade(name) {
            // Worked out only when asked for (an app reading a document's identity needs none of it).
            guard let value = folioAttributes(path, item).first(where: { $0.0 == name })?.1 else { throw CErrno(ENODATA) }
            return try replyValue(request, Array(value.utf8), asked: get.size)
        }
        guard !item.placeholder else { throw CErrno(ENODATA) }
        let count = lgetxattr(replicaPath + "/" + path, name, buffer.baseAddress, min(buffer.count, get.size == 0 ? 0 : Int(get.size)))
        guard count >= 0 else { throw CErrno.last }
        if get.size == 0 {
            channel.reply(request.header.unique, fuse_getxattr_out(size: UInt32(count), padding: 0))
        } else {
            channel.reply(request.header.unique, payload: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    func listExtendedAttributes(_ request: FUSERequest, into buffer: UnsafeMutableRawBufferPointer) throws(CErrno) {
        guard let get = request.argument(fuse_getxattr_in.self) else { throw CErrno(EINVAL) }
        let path = try path(of: request)
        let item = try item(path).get()
        var names: [UInt8] = []
        for (name, _) in folioAttributes(path, item) { names += Array(name.utf8) + [0] }
        if !item.placeholder {
            let count = llistxattr(replicaPath + "/" + path, buffer.baseAddress, buffer.count)
            guard count >= 0 else { throw CErrno.last }
            // The replica's own, Folio's private ones (say, a tag's bookkeeping) left out.
            for name in UnsafeRawBufferPointer(rebasing: buffer[0..<count]).split(separator: 0) where !name.starts(with: Array("user.folio.".utf8)) {
                names += Array(name) + [0]
            }
        }
        try replyValue(request, names, asked: get.size)
    }

    func setExtendedAttribute(_ request: FUSERequest) throws(CErrno) {
        guard let set = request.argument(fuse_setxattr_in.self) else { throw CErrno(EINVAL) }
        // Without FUSE_SETXATTR_EXT the arguments are the older, shorter form (size and flags).
        let argumentsSize = MemoryLayout<UInt32>.size * 2
        guard let (name, end) = request.name(at: argumentsSize), let value = request.bytes(at: end, count: Int(set.size)) else { throw CErrno(EINVAL) }
        guard !Self.isMade(name) else { throw CErrno(EPERM) }
        let path = try path(of: request)
        guard try !item(path).get().placeholder else { throw CErrno(EPERM) }
        guard lsetxattr(replicaPath + "/" + path, name, value.baseAddress, value.count, CInt(bitPattern: set.flags)) == 0 else { throw CErrno.last }
        channel.reply(request.header.unique)
    }

    func removeExtendedAttribute(_ request: FUSERequest) throws(CErrno) {
        guard let (name, _) = request.name(at: 0) else { throw CErrno(EINVAL) }
        guard !Self.isMade(name) else { throw CErrno(EPERM) }
        let path = try path(of: request)
        guard try !item(path).get().placeholder else { throw CErrno(ENODATA) }
        guard lremovexattr(replicaPath + "/" + path, name) == 0 else { throw CErrno.last }
        channel.reply(request.header.unique)
    }
}
