import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where an item was and how to recognise it after a rename: its identity, device and inode. Bookmarks
/// and grants both carry one.
package struct ItemReference: Sendable, Equatable {
    package var path: String
    package var identity: String
    package var device: UInt64
    package var inode: UInt64

    package init(path: String, identity: String, device: UInt64, inode: UInt64) {
        self.path = path
        self.identity = identity
        self.device = device
        self.inode = inode
    }
}

/// Finds a bookmark's (or grant's) item: where it was, or — after a rename or move within its file system — by
/// its inode (which a rename keeps), confirmed by its identity attribute, searching outward from its
/// old folder with a bounded budget; and, for an item that was also saved by rename (a new inode),
/// by its identity attribute in its old folder.
package enum BookmarkResolver {
    /// How many directory entries a search may look at.
    static let budget = 50_000

    /// The item's path now, and whether that differs from the bookmark's (stale).
    ///
    /// The recorded inode is looked for first, anywhere the search reaches: the identity attribute
    /// alone is bytes a copy carries (`cp -a`), so a new inode bearing it is the document only once
    /// the recorded inode holding it was not found (``DocumentIdentity/isSameDocument(_:device:inode:)``).
    package static func locate(_ bookmark: ItemReference, at expected: String) -> (path: String, stale: Bool)? {
        if matches(expected, bookmark, sameInode: true) { return (expected, expected != bookmark.path) }
        var visited = Set<String>()
        var remaining = budget
        var start = (expected as NSString).deletingLastPathComponent
        while !start.isEmpty {
            if let found = search(from: start, bookmark, &visited, &remaining, byInode: true) { return (found, true) }
            if remaining <= 0 || start == "/" { break }
            let parent = (start as NSString).deletingLastPathComponent
            guard sameDevice(parent, bookmark.device) else { break }
            start = parent
        }
        // On a new inode: stale, so the app makes a bookmark that records it (and the next
        // resolution does not search again).
        if matches(expected, bookmark) { return (expected, true) }
        var again = Set<String>()
        var small = 4096
        if let found = search(from: (expected as NSString).deletingLastPathComponent, bookmark, &again, &small, byInode: false, depth: 1) {
            return (found, true)
        }
        return nil
    }

    /// Whether the item at `path` bears the bookmark's identity (with `sameInode`, on the inode the
    /// bookmark recorded).
    package static func matches(_ path: String, _ bookmark: ItemReference, sameInode: Bool = false) -> Bool {
        guard let status = try? FileStatus(path: FilePath(path)), status.device == bookmark.device else { return false }
        if sameInode && status.inode != bookmark.inode { return false }
        if bookmark.identity.hasPrefix("inode-") {
            return status.inode == bookmark.inode && identity(of: path) == nil
                && DocumentIdentity.inodeForm(bookmark.identity, namesItemAt: path, status: status, followSymlinks: false)
        }
        return identity(of: path) == bookmark.identity
    }

    private static func identity(of path: String) -> String? {
        guard let bytes = try? FilePath(path).extendedAttribute(named: DocumentIdentity.attribute) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func sameDevice(_ path: String, _ device: UInt64) -> Bool {
        (try? FileStatus(path: FilePath(path)))?.device == device
    }

    /// Breadth-first from `root` (skipping folders searched already and other file systems).
    private static func search(
        from root: String, _ bookmark: ItemReference, _ visited: inout Set<String>, _ remaining: inout Int, byInode: Bool,
        depth: Int = .max
    ) -> String? {
        var queue: [(String, Int)] = [(root, 0)]
        while !queue.isEmpty, remaining > 0 {
            let (directory, level) = queue.removeFirst()
            guard visited.insert(directory).inserted, let stream = opendir(directory) else { continue }
            defer { closedir(stream) }
            while let entry = readdir(stream), remaining > 0 {
                remaining -= 1
                let name = DirectoryRecord.name(entry)
                if name == "." || name == ".." { continue }
                let path = directory == "/" ? "/" + name : directory + "/" + name
                let candidate = byInode ? UInt64(entry.pointee.d_ino) == bookmark.inode : true
                if candidate, matches(path, bookmark) { return path }
                if entry.pointee.d_type == UInt8(DT_DIR), level + 1 < depth, !visited.contains(path) {
                    queue.append((path, level + 1))
                }
            }
        }
        return nil
    }
}
