#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
import Folio
import FolioSystem
import Logging

/// The kernel caches the mount's names and attributes; the sync engine changes the replica beneath
/// (a download, an eviction, a file renamed on the server). An inotify watch on each folder the
/// kernel knows reports those changes, and the kernel is told to forget what it cached of each
/// name and item concerned (`FUSE_NOTIFY_INVAL_ENTRY`, `FUSE_NOTIFY_INVAL_INODE`), so every program
/// sees the change at once, not when the cache would have expired.
///
/// The notifications are written from the watcher's own thread, never from a request's: the
/// kernel takes the folder's lock to apply one, which a request in that folder may hold until it
/// is answered.
extension DriveFileSystem {
    /// Starts watching the folder at `path` (relative to the replica) for changes beneath.
    func watchBeneath(_ path: String) {
        guard let watcher else { return }
        _ = watcher.watch(path.isEmpty ? replicaPath : replicaPath + "/" + path)
    }

    /// Tells the kernel to forget what `events` (in the replica beneath) made stale.
    func forgetStale(_ events: [InotifyWatcher.Event]) {
        for event in events {
            switch event {
            case .created(let path), .deleted(let path), .movedIn(let path), .movedOut(let path): forgetName(path)
            case .modified(let path): forgetName(path, entry: false)
            case .moved(let from, let to):
                forgetName(from)
                forgetName(to)
            case .overflow: logger.notice("the drive's mount lost track of changes beneath it: names refresh within a second")
            }
        }
    }

    /// `path` (beneath) changed: the kernel forgets the name in its folder (unless `entry` is
    /// false) and the item's cached attributes and data. A stub's change is its document's.
    private func forgetName(_ path: String, entry: Bool = true) {
        guard path.hasPrefix(replicaPath + "/") else { return }
        var relative = String(path.dropFirst(replicaPath.count + 1))
        let name = String(relative.split(separator: "/").last ?? "")
        if PlaceholderStub.isStubName(name) { relative = PlaceholderStub.documentName(ofStub: relative) }
        let parts = relative.split(separator: "/").map(String.init)
        guard let last = parts.last, let folder = nodes.node(at: parts.dropLast()) else { return }
        if entry {
            notify(FUSE_NOTIFY_INVAL_ENTRY, fuse_notify_inval_entry_out(parent: folder, namelen: UInt32(last.utf8.count), flags: 0), name: last)
            // The folder's listing, which the kernel keeps too.
            notify(FUSE_NOTIFY_INVAL_INODE, fuse_notify_inval_inode_out(ino: folder, off: 0, len: 0))
        }
        if let item = nodes.node(at: parts) { notify(FUSE_NOTIFY_INVAL_INODE, fuse_notify_inval_inode_out(ino: item, off: 0, len: 0)) }
    }

    /// Writes one notification to the kernel (its errors, such as a name it does not hold, ignored).
    private func notify<T>(_ code: fuse_notify_code, _ value: T, name: String? = nil) {
        let headerSize = MemoryLayout<fuse_out_header>.size, valueSize = MemoryLayout<T>.size
        let nameBytes: [UInt8] = name.map { Array($0.utf8) + [0] } ?? []
        withUnsafeTemporaryAllocation(byteCount: headerSize + valueSize + nameBytes.count, alignment: 8) { buffer in
            buffer.storeBytes(of: fuse_out_header(len: UInt32(buffer.count), error: Int32(code.rawValue), unique: 0), as: fuse_out_header.self)
            buffer.storeBytes(of: value, toByteOffset: headerSize, as: T.self)
            for (offset, byte) in nameBytes.enumerated() { buffer[headerSize + valueSize + offset] = byte }
            channel.write(UnsafeRawBufferPointer(buffer))
        }
    }
}
