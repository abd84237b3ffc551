public import SystemPackage
import CFolioShims
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension ResolvedItem {
    /// How deep a copied folder may go.
    static let maximumCopyDepth = 256

    /// Copies this item — a regular file, a folder with everything in it, or a symbolic link (the
    /// link itself) — to `name` in
    /// `folder`, through descriptors only: the source is read from what this descriptor is, each
    /// entry below it is opened from its folder's descriptor without following a link (a link is
    /// copied as a link), and every copy is made with `O_EXCL` in its folder's descriptor. A name
    /// swapped anywhere meanwhile cannot make it read or write anything else. Each copy keeps its
    /// original's mode and `user.` attributes (tags), not its identity: it is a new document.
    /// Returns the copy.
    ///
    /// - Throws: `Errno.fileExists` when `name` is taken in `folder`; `.notSupported` for an item
    ///   that is neither a file, a folder nor a link.
    public func copy(into folder: ResolvedItem, named name: String) throws(Errno) -> ResolvedItem {
        guard exists, folder.exists else { throw .noSuchFileOrDirectory }
        guard Self.isPlainName(name) else { throw .invalidArgument }
        let permissions = mode_t(status.mode & 0o7777)
        switch status.kind {
        case .regular:
            let source = try open(.readOnly)
            defer { try? source.close() }
            try Self.copyFile(source.rawValue, into: folder.descriptor.rawValue, named: name, mode: permissions)
        case .directory:
            let source = try valueOrErrno { cfolio_reopen(descriptor.rawValue, O_RDONLY | O_DIRECTORY) }
            defer { close(source) }
            try Self.copyFolder(source, into: folder.descriptor.rawValue, named: name, mode: permissions, depth: 0)
        case .symbolicLink:
            // The link itself (its descriptor is the link's: read with an empty name).
            try Self.copyLink(readingAt: descriptor.rawValue, "", into: folder.descriptor.rawValue, named: name)
        default:
            throw .notSupported
        }
        return try Self.entry(name, in: folder)
    }

    /// Moves this item to `name` in `folder` (`renameat2` with `RENAME_NOREPLACE`, from the
    /// descriptor of the folder it was found in), and checks that what moved is this item; if a
    /// name was swapped meanwhile, it is moved back and nothing else happens. Across file systems,
    /// a ``copy(into:named:)`` and then the removal of this item, found again by its inode.
    /// Returns the moved item.
    public func move(into folder: ResolvedItem, named name: String) throws(Errno) -> ResolvedItem {
        guard exists, folder.exists, path != "/" else { throw .noSuchFileOrDirectory }
        guard Self.isPlainName(name) else { throw .invalidArgument }
        let (from, oldName) = try Self.holder(of: self)
        let moved = cfolio_renameat2(from.descriptor.rawValue, oldName, folder.descriptor.rawValue, name, 1)
        if moved != 0 {
            let code = Errno(rawValue: errno)
            guard code == .improperLink else { throw code }
            let copied = try copy(into: folder, named: name)
            try Self.remove(oldName, in: from.descriptor.rawValue, device: status.device, inode: status.inode)
            return copied
        }
        let landed = try Self.entry(name, in: folder)
        guard landed.status.device == status.device, landed.status.inode == status.inode else {
            // Something else was at the old name when it moved: it goes back.
            _ = cfolio_renameat2(folder.descriptor.rawValue, name, from.descriptor.rawValue, oldName, 1)
            throw .resourceBusy
        }
        return landed
    }

    /// The folder an item is in, as a descriptor that holds it under `name` now (checked by
    /// device and inode).
    static func holder(of item: ResolvedItem) throws(Errno) -> (folder: ResolvedItem, name: String) {
        let slash = item.path.utf8.lastIndex(of: UInt8(ascii: "/"))!
        let parentPath = slash == item.path.utf8.startIndex ? "/" : String(item.path[..<slash])
        let name = String(item.path[item.path.index(after: slash)...])
        let folder: ResolvedItem
        do { folder = try resolve(parentPath) } catch { throw .noSuchFileOrDirectory }
        var held = stat()
        _ = try valueOrErrno { fstatat(folder.descriptor.rawValue, name, &held, AT_SYMLINK_NOFOLLOW) }
        guard UInt64(held.st_dev) == item.status.device, UInt64(held.st_ino) == item.status.inode else { throw .resourceBusy }
        return (folder, name)
    }

    /// The entry `name` of `folder`, opened without following a link.
    private static func entry(_ name: String, in folder: ResolvedItem) throws(Errno) -> ResolvedItem {
        do { return try folder.entry(name) } catch {
            if case .system(let code) = error { throw code }
            throw .noSuchFileOrDirectory
        }
    }

    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }

    /// Copies the open file `source` to a new `name` in the folder `folder`.
    private static func copyFile(_ source: Int32, into folder: Int32, named name: String, mode: mode_t) throws(Errno) {
        let target = try valueOrErrno { openat(folder, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode) }
        defer { close(target) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(source, &buffer, buffer.count)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw Errno(rawValue: errno)
            }
            var written = 0
            while written < count {
                let wrote = buffer[written..<count].withUnsafeBytes { Glibc.write(target, $0.baseAddress, $0.count) }
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw Errno(rawValue: errno)
                }
                written += wrote
            }
        }
        copyUserAttributes(from: source, to: target)
        _ = fchmod(target, mode)
    }

    /// Makes `name` in `folder` a symbolic link to where the link `link` in `source` points.
    private static func copyLink(readingAt source: Int32, _ link: String, into folder: Int32, named name: String) throws(Errno) {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = try valueOrErrno { readlinkat(source, link, &buffer, buffer.count - 1) }
        buffer[count] = 0
        _ = try valueOrErrno { symlinkat(buffer, folder, name) }
    }

    /// Copies the `user.` extended attributes of the open `source` to the open `target` (tags among
    /// them), except a document's identity: a copy is a new document.
    private static func copyUserAttributes(from source: Int32, to target: Int32) {
        var names = [CChar](repeating: 0, count: 4096)
        let length = flistxattr(source, &names, names.count)
        guard length > 0 else { return }
        var value = [UInt8](repeating: 0, count: 65536)
        for name in names[0..<length].split(separator: 0).map({ String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) })
        where name.hasPrefix("user.") && name != "user.folio.id" {
            let size = fgetxattr(source, name, &value, value.count)
            if size >= 0 { _ = fsetxattr(target, name, value, size, 0) }
        }
    }

    /// Copies the open folder `source` and everything in it to a new `name` in `folder`.
    private static func copyFolder(_ source: Int32, into folder: Int32, named name: String, mode: mode_t, depth: Int) throws(Errno) {
        guard depth < maximumCopyDepth else { throw .tooManySymbolicLinkLevels }
        _ = try valueOrErrno { mkdirat(folder, name, 0o700) }
        let target = try valueOrErrno { openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        defer { close(target) }
        try forEachEntry(in: source) { (child, entry) throws(Errno) in
            let permissions = entry.st_mode & 0o7777
            switch entry.st_mode & S_IFMT {
            case S_IFREG:
                let file = try valueOrErrno { openat(source, child, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
                defer { close(file) }
                try copyFile(file, into: target, named: child, mode: permissions)
            case S_IFDIR:
                let inner = try valueOrErrno { openat(source, child, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
                defer { close(inner) }
                try copyFolder(inner, into: target, named: child, mode: permissions, depth: depth + 1)
            case S_IFLNK:
                try copyLink(readingAt: source, child, into: target, named: child)
            default:
                break  // devices, FIFOs and sockets are not documents
            }
        }
        copyUserAttributes(from: source, to: target)
        _ = fchmod(target, mode)
    }

    /// Removes `name` from the folder `folder` if it is still the inode given (a folder with
    /// everything in it, each entry removed from its folder's descriptor).
    private static func remove(_ name: String, in folder: Int32, device: UInt64, inode: UInt64) throws(Errno) {
        var entry = stat()
        _ = try valueOrErrno { fstatat(folder, name, &entry, AT_SYMLINK_NOFOLLOW) }
        guard UInt64(entry.st_dev) == device, UInt64(entry.st_ino) == inode else { throw .resourceBusy }
        try removeEntry(name, in: folder, isFolder: entry.st_mode & S_IFMT == S_IFDIR, depth: 0)
    }

    private static func removeEntry(_ name: String, in folder: Int32, isFolder: Bool, depth: Int) throws(Errno) {
        if isFolder {
            guard depth < maximumCopyDepth else { throw .tooManySymbolicLinkLevels }
            let inner = try valueOrErrno { openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            defer { close(inner) }
            try forEachEntry(in: inner) { (child, entry) throws(Errno) in
                try removeEntry(child, in: inner, isFolder: entry.st_mode & S_IFMT == S_IFDIR, depth: depth + 1)
            }
        }
        _ = try valueOrErrno { unlinkat(folder, name, isFolder ? AT_REMOVEDIR : 0) }
    }

    /// Calls `body` with each entry of the open folder `folder` (`.` and `..` left out) and its
    /// status, links not followed; an entry gone meanwhile is skipped.
    private static func forEachEntry(in folder: Int32, _ body: (String, stat) throws(Errno) -> Void) throws(Errno) {
        let listing = try valueOrErrno { fcntl(folder, F_DUPFD_CLOEXEC, 0) }
        guard let stream = fdopendir(listing) else {
            close(listing)
            throw Errno(rawValue: errno)
        }
        defer { closedir(stream) }
        while let record = readdir(stream) {
            let child = DirectoryRecord.name(record)
            if child == "." || child == ".." { continue }
            var entry = stat()
            guard fstatat(folder, child, &entry, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            try body(child, entry)
        }
    }
}
