#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
import Folio
import FolioSystem
import Foundation
import Logging
import Synchronization
import SystemPackage

/// The mount's names and attributes — lookups, attributes, folders made and removed, renames,
/// links — each the replica's own call beneath (docs/architecture.md, "Files on demand: the drive's
/// mount"); folders' listings and files are in `+Directories` and `+Files`. Placeholders answer as
/// their documents; a name of Folio's own is never found, listed or made.
extension DriveFileSystem {
    /// The path of the request's node, or `ENOENT` once forgotten.
    func path(of request: FUSERequest) throws(CErrno) -> String {
        guard let path = nodes.path(request.header.nodeid) else { throw CErrno(ENOENT) }
        return path
    }

    /// The path for the name a request gives in its node's folder (at `offset` of its body),
    /// refused as `ENOENT` (`EPERM` with `making`) when it is one of Folio's own.
    func childPath(_ request: FUSERequest, at offset: Int = 0, making: Bool = false) throws(CErrno) -> (name: String, path: String, end: Int) {
        guard let (name, end) = request.name(at: offset), !name.isEmpty, !name.contains("/") else { throw CErrno(EINVAL) }
        let folder = try path(of: request)
        guard !Self.isHidden(name, inRoot: folder.isEmpty) else { throw CErrno(making ? EPERM : ENOENT) }
        return (name, Self.child(name, of: folder), end)
    }

    func lookup(_ request: FUSERequest) throws(CErrno) {
        let (name, path, _) = try childPath(request)
        let item = try item(path).get()
        channel.reply(request.header.unique, entry(name, in: request.header.nodeid, item))
    }

    func getAttributes(_ request: FUSERequest) throws(CErrno) {
        let item = try item(try path(of: request)).get()
        replyAttributes(request, item.status)
    }

    private func replyAttributes(_ request: FUSERequest, _ status: stat) {
        var answer = fuse_attr_out()
        answer.attr_valid = Self.cacheSeconds
        answer.attr = Self.attributes(status)
        channel.reply(request.header.unique, answer)
    }

    func setAttributes(_ request: FUSERequest) throws(CErrno) {
        guard let change = request.argument(fuse_setattr_in.self) else { throw CErrno(EINVAL) }
        let path = try path(of: request)
        var item = try item(path).get()
        if item.placeholder {
            // A change to a document that is not here: its size set to nothing makes it an empty
            // file (written over, as any program would); anything else waits for it to arrive.
            guard change.valid & UInt32(FATTR_SIZE) != 0, change.size == 0 else {
                return afterWaiting(path, request, downloading: true, writesAgainst: nil) { (request) throws(CErrno) in try self.setAttributes(request) }
            }
            try replacePlaceholder(path, mode: FileCreationMask.fileMode)
            item = try self.item(path).get()
        }
        let target = Self.relative(path)
        if change.valid & UInt32(FATTR_MODE) != 0, fchmodat(replica, target, change.mode & 0o7777, 0) != 0 { throw CErrno.last }
        if change.valid & UInt32(FATTR_UID | FATTR_GID) != 0 {
            let owner = change.valid & UInt32(FATTR_UID) != 0 ? change.uid : UInt32.max
            let group = change.valid & UInt32(FATTR_GID) != 0 ? change.gid : UInt32.max
            if fchownat(replica, target, owner, group, AT_SYMLINK_NOFOLLOW) != 0 { throw CErrno.last }
        }
        if change.valid & UInt32(FATTR_SIZE) != 0 {
            if !item.placeholder, change.size != item.status.st_size { keepVersion(path, item.status) }
            if change.valid & UInt32(FATTR_FH) != 0 {
                if ftruncate(CInt(truncatingIfNeeded: change.fh), off_t(change.size)) != 0 { throw CErrno.last }
            } else {
                let file = openat(replica, target, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
                guard file >= 0 else { throw CErrno.last }
                defer { close(file) }
                if ftruncate(file, off_t(change.size)) != 0 { throw CErrno.last }
            }
        }
        if change.valid & UInt32(FATTR_ATIME | FATTR_MTIME) != 0 {
            func time(_ set: Int32, _ now: Int32, _ seconds: UInt64, _ nanoseconds: UInt32) -> timespec {
                if change.valid & UInt32(now) != 0 { return timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1) }
                if change.valid & UInt32(set) != 0 { return timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds)) }
                return timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
            }
            let times = [
                time(FATTR_ATIME, FATTR_ATIME_NOW, change.atime, change.atimensec), time(FATTR_MTIME, FATTR_MTIME_NOW, change.mtime, change.mtimensec),
            ]
            if utimensat(replica, target, times, AT_SYMLINK_NOFOLLOW) != 0 { throw CErrno.last }
        }
        changed(path)
        replyAttributes(request, try self.item(path).get().status)
    }

    func makeDirectory(_ request: FUSERequest) throws(CErrno) {
        guard let make = request.argument(fuse_mkdir_in.self) else { throw CErrno(EINVAL) }
        let (name, path, _) = try childPath(request, at: MemoryLayout<fuse_mkdir_in>.size, making: true)
        if placeholder(path) != nil { throw CErrno(EEXIST) }
        guard mkdirat(replica, path, mode_t(make.mode) & 0o7777) == 0 else { throw CErrno.last }
        // The kernel applied the caller's umask; this process's own must not narrow it further.
        _ = fchmodat(replica, path, mode_t(make.mode) & 0o7777, 0)
        changed(path)
        channel.reply(request.header.unique, entry(name, in: request.header.nodeid, try item(path).get()))
    }

    func remove(_ request: FUSERequest, folder: Bool) throws(CErrno) {
        let (name, path, _) = try childPath(request)
        if unlinkat(replica, path, folder ? AT_REMOVEDIR : 0) != 0 {
            // Removing a placeholder removes its stub: the document is deleted, as in the replica.
            guard errno == ENOENT, !folder, unlinkat(replica, path + PlaceholderStub.suffix, 0) == 0 else { throw CErrno.last }
        }
        nodes.removed(name, in: request.header.nodeid)
        changed(path)
        channel.reply(request.header.unique)
    }

    func rename(_ request: FUSERequest, flags: UInt32?) throws(CErrno) {
        let argumentsSize = flags == nil ? MemoryLayout<fuse_rename_in>.size : MemoryLayout<fuse_rename2_in>.size
        guard let newParent = request.argument(UInt64.self) else { throw CErrno(EINVAL) }
        let (name, path, end) = try childPath(request, at: argumentsSize, making: true)
        guard let newFolder = nodes.path(newParent) else { throw CErrno(ENOENT) }
        guard let (newName, _) = request.name(at: end), !newName.isEmpty, !newName.contains("/") else { throw CErrno(EINVAL) }
        guard !Self.isHidden(newName, inRoot: newFolder.isEmpty) else { throw CErrno(EPERM) }
        let newPath = Self.child(newName, of: newFolder)
        let flags = flags ?? 0
        let exchange = flags & 2 != 0, noReplace = flags & 1 != 0  // RENAME_EXCHANGE, RENAME_NOREPLACE
        let source = try item(path).get()
        let target = item(newPath)
        if exchange, (try? target.get()) == nil { throw CErrno(ENOENT) }
        if exchange, source.placeholder || (try? target.get())?.placeholder == true { throw CErrno(EINVAL) }
        if noReplace, (try? target.get()) != nil { throw CErrno(EEXIST) }
        if source.placeholder {
            // The stub moves, and with it the document it stands for.
            if (try? target.get())?.placeholder == false, unlinkat(replica, newPath, 0) != 0 { throw CErrno.last }
            guard cfolio_renameat2(replica, path + PlaceholderStub.suffix, replica, newPath + PlaceholderStub.suffix, 0) == 0 else { throw CErrno.last }
        } else {
            // Written over by the move (an editor's save): what it held is kept, and the document
            // keeps its identity (its versions and bookmarks follow it).
            if !exchange, let replaced = try? target.get(), !replaced.placeholder {
                keepVersion(newPath, replaced.status)
                inheritIdentity(of: newPath, to: path)
            }
            guard cfolio_renameat2(replica, path, replica, newPath, flags) == 0 else { throw CErrno.last }
            // A placeholder that was there is replaced: its stub goes too.
            if !exchange, (try? target.get())?.placeholder == true { _ = unlinkat(replica, newPath + PlaceholderStub.suffix, 0) }
        }
        nodes.moved(name, in: request.header.nodeid, to: newName, in: newParent, exchanged: exchange)
        changed(path)
        changed(newPath)
        channel.reply(request.header.unique)
    }

    func makeSymbolicLink(_ request: FUSERequest) throws(CErrno) {
        let (name, path, end) = try childPath(request, making: true)
        guard let (target, _) = request.name(at: end) else { throw CErrno(EINVAL) }
        if placeholder(path) != nil { throw CErrno(EEXIST) }
        guard symlinkat(target, replica, path) == 0 else { throw CErrno.last }
        changed(path)
        channel.reply(request.header.unique, entry(name, in: request.header.nodeid, try item(path).get()))
    }

    func readLink(_ request: FUSERequest, into buffer: UnsafeMutableRawBufferPointer) throws(CErrno) {
        let count = readlinkat(replica, Self.relative(try path(of: request)), buffer.baseAddress!, buffer.count)
        guard count >= 0 else { throw CErrno.last }
        channel.reply(request.header.unique, payload: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    func link(_ request: FUSERequest) throws(CErrno) {
        guard let link = request.argument(fuse_link_in.self), let source = nodes.path(link.oldnodeid) else { throw CErrno(ENOENT) }
        let (name, path, _) = try childPath(request, at: MemoryLayout<fuse_link_in>.size, making: true)
        if placeholder(path) != nil { throw CErrno(EEXIST) }
        guard linkat(replica, source, replica, path, 0) == 0 else { throw CErrno(errno == ENOENT && placeholder(source) != nil ? EPERM : errno) }
        changed(path)
        channel.reply(request.header.unique, entry(name, in: request.header.nodeid, try item(path).get()))
    }

    func fileSystemStatus(_ request: FUSERequest) throws(CErrno) {
        var status = statvfs()
        guard fstatvfs(replica, &status) == 0 else { throw CErrno.last }
        var answer = fuse_statfs_out()
        answer.st.blocks = UInt64(status.f_blocks)
        answer.st.bfree = UInt64(status.f_bfree)
        answer.st.bavail = UInt64(status.f_bavail)
        answer.st.files = UInt64(status.f_files)
        answer.st.ffree = UInt64(status.f_ffree)
        answer.st.bsize = UInt32(status.f_bsize)
        answer.st.frsize = UInt32(status.f_frsize)
        answer.st.namelen = UInt32(status.f_namemax)
        channel.reply(request.header.unique, answer)
    }
}

extension DriveFileSystem {
    /// Gives the file at `path` the document identity of the one at `replaced` (which it is about
    /// to replace), unless it has one of its own.
    func inheritIdentity(of replaced: String, to path: String) {
        let name = DocumentIdentity.attribute
        var value = [UInt8](repeating: 0, count: 256)
        let source = replicaPath + "/" + path
        guard lgetxattr(source, name, nil, 0) < 0, errno == ENODATA else { return }
        let count = lgetxattr(replicaPath + "/" + replaced, name, &value, value.count)
        guard count > 0 else { return }
        _ = lsetxattr(source, name, value, count, 0)
    }
}
