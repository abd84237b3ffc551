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

/// The mount's operations, each the replica's own call beneath (docs/architecture.md, "The drive
/// mount"). Placeholders answer as their documents; a name of Folio's own is never found, listed
/// or made.
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
                return afterDownloading(path, request) { (request) throws(CErrno) in try self.setAttributes(request) }
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

    func openDirectory(_ request: FUSERequest) throws(CErrno) {
        let path = try path(of: request)
        let folder = openat(replica, Self.relative(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard folder >= 0 else { throw CErrno.last }
        // The listing keeps its own descriptor of the folder, for the entries' `fstatat`.
        let reading = dup(folder)
        guard reading >= 0, let stream = fdopendir(reading) else {
            let failure = CErrno.last
            if reading >= 0 { close(reading) }
            close(folder)
            throw failure
        }
        defer { closedir(stream) }
        var entries: [DirectoryEntry] = [
            DirectoryEntry(name: ".", inode: 1, type: UInt32(DT_DIR)), DirectoryEntry(name: "..", inode: 1, type: UInt32(DT_DIR)),
        ]
        var stubs: [DirectoryEntry] = []
        let stubSuffix = PlaceholderStub.suffix.utf8.count
        while let record = readdir(stream) {
            let name = withUnsafeBytes(of: record.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            let entry = DirectoryEntry(name: name, inode: UInt64(record.pointee.d_ino), type: UInt32(record.pointee.d_type))
            if PlaceholderStub.isStubName(name) {
                stubs.append(DirectoryEntry(name: String(name.utf8.dropLast(stubSuffix))!, inode: entry.inode, type: UInt32(DT_REG), placeholder: true))
            } else if !Self.isHidden(name, inRoot: path.isEmpty) {
                entries.append(entry)
            }
        }
        if !stubs.isEmpty {
            // A stub beside its own document is left by an interrupted download: the document shows.
            let real = Set(entries.map(\.name))
            entries += stubs.filter { !real.contains($0.name) && !$0.name.isEmpty }
        }
        let listing = Listing(folder: folder, entries: entries)
        let handle = state.withLock { state in
            let handle = state.nextListing
            state.nextListing += 1
            state.listings[handle] = listing
            return handle
        }
        var answer = fuse_open_out()
        answer.fh = handle
        // The kernel keeps the listing (a change beneath makes it forget it; see coherence).
        answer.open_flags = UInt32(FOPEN_CACHE_DIR | FOPEN_KEEP_CACHE)
        channel.reply(request.header.unique, answer)
    }

    /// READDIR, and READDIRPLUS (`plus`): each entry with its attributes, so that a program
    /// stat'ing a folder's entries finds them in the kernel's cache (one request for many entries,
    /// not one an entry). An entry given with its node counts as a lookup, so only those that fit.
    func readDirectory(_ request: FUSERequest, into buffer: UnsafeMutableRawBufferPointer, plus: Bool) throws(CErrno) {
        guard let read = request.argument(fuse_read_in.self) else { throw CErrno(EINVAL) }
        guard let listing = state.withLock({ $0.listings[read.fh] }) else { throw CErrno(EBADF) }
        let folder = plus ? try path(of: request) : ""
        let limit = min(Int(read.size), buffer.count)
        let entrySize = plus ? MemoryLayout<fuse_entry_out>.size : 0
        let headerSize = entrySize + MemoryLayout<fuse_dirent>.size
        // Which entries fit, then their attributes, then their nodes in one step.
        var used = 0
        let first = Int(read.offset)
        var end = first
        while end < listing.entries.count {
            let size = (headerSize + listing.entries[end].name.utf8.count + 7) & ~7
            guard used + size <= limit else { break }
            used += size
            end += 1
        }
        var statuses: [stat?] = []
        var ids: [UInt64] = []
        if plus {
            statuses = listing.entries[first..<end].map { status(of: $0, in: listing, folder: folder) }
            ids = nodes.remember(zip(listing.entries[first..<end], statuses).compactMap { $1 == nil ? nil : $0.name }, in: request.header.nodeid)
            for (entry, status) in zip(listing.entries[first..<end], statuses) where status.map({ $0.st_mode & S_IFMT == S_IFDIR }) ?? false {
                watchBeneath(Self.child(entry.name, of: folder))
            }
        }
        used = 0
        var given = 0
        for index in first..<end {
            let entry = listing.entries[index]
            let name = entry.name.utf8
            let size = (headerSize + name.count + 7) & ~7
            if plus {
                var answer = fuse_entry_out()
                if let status = statuses[index - first] {
                    answer.nodeid = ids[given]
                    given += 1
                    answer.entry_valid = Self.cacheSeconds
                    answer.attr_valid = Self.cacheSeconds
                    answer.attr = Self.attributes(status)
                }
                buffer.storeBytes(of: answer, toByteOffset: used, as: fuse_entry_out.self)
            }
            var record = fuse_dirent()
            record.ino = entry.inode
            record.off = UInt64(index + 1)
            record.namelen = UInt32(name.count)
            record.type = entry.type
            buffer.storeBytes(of: record, toByteOffset: used + entrySize, as: fuse_dirent.self)
            let nameStart = used + headerSize
            _ = UnsafeMutableRawBufferPointer(rebasing: buffer[nameStart..<(nameStart + name.count)]).copyBytes(from: name)
            UnsafeMutableRawBufferPointer(rebasing: buffer[(nameStart + name.count)..<(used + size)]).initializeMemory(as: UInt8.self, repeating: 0)
            used += size
        }
        channel.reply(request.header.unique, payload: UnsafeRawBufferPointer(rebasing: buffer[0..<used]))
    }

    /// The status of `entry` of `listing` as the mount shows it; nil for `.`, `..` and a name gone.
    private func status(of entry: DirectoryEntry, in listing: Listing, folder: String) -> stat? {
        guard entry.name != ".", entry.name != ".." else { return nil }
        var status = stat()
        if !entry.placeholder, fstatat(listing.folder, entry.name, &status, AT_SYMLINK_NOFOLLOW) == 0 { return status }
        return placeholder(Self.child(entry.name, of: folder))?.status
    }

    func releaseDirectory(_ request: FUSERequest) {
        if let release = request.argument(fuse_release_in.self) { state.withLock { _ = $0.listings.removeValue(forKey: release.fh) } }
        channel.reply(request.header.unique)
    }

    /// Flags of an open the replica's file gets: the caller's, without those the kernel handled.
    private static func openFlags(_ flags: UInt32) -> CInt {
        (CInt(bitPattern: flags) & ~(O_CREAT | O_EXCL | O_NOCTTY)) | O_CLOEXEC | O_NOFOLLOW
    }

    func open(_ request: FUSERequest) throws(CErrno) {
        guard let open = request.argument(fuse_open_in.self) else { throw CErrno(EINVAL) }
        let path = try path(of: request)
        let item = try item(path).get()
        if item.placeholder {
            // Opened to be written over whole: no need for the old bytes.
            if CInt(bitPattern: open.flags) & O_TRUNC != 0, CInt(bitPattern: open.flags) & O_ACCMODE != O_RDONLY {
                try replacePlaceholder(path, mode: item.status.st_mode & 0o7777)
            } else {
                return afterDownloading(path, request) { (request) throws(CErrno) in try self.openFile(path, open.flags, request) }
            }
        }
        try openFile(path, open.flags, request)
    }

    private func openFile(_ path: String, _ flags: UInt32, _ request: FUSERequest) throws(CErrno) {
        let file = openat(replica, Self.relative(path), Self.openFlags(flags))
        guard file >= 0 else { throw CErrno.last }
        if CInt(bitPattern: flags) & O_ACCMODE != O_RDONLY { state.withLock { $0.writing[UInt64(file)] = path } }
        replyOpened(request, file)
    }

    /// Answers an open with the replica's `file`: served by the kernel from it (passthrough) when
    /// the mount has it, else through this process's reads and writes.
    func replyOpened(_ request: FUSERequest, _ file: CInt, entry: fuse_entry_out? = nil) {
        var answer = fuse_open_out()
        answer.fh = UInt64(file)
        let backing = passthroughBacking(file)
        if backing > 0 {
            answer.open_flags |= CFOLIO_FOPEN_PASSTHROUGH
            answer.padding = UInt32(bitPattern: backing)  // backing_id, in protocol 7.40
        }
        // The id is kept until the file's release: the opener takes its backing file after this
        // reply, in its own time.
        if backing > 0 { state.withLock { $0.backings[UInt64(file)] = backing } }
        if let entry { channel.reply(request.header.unique, entry, answer) } else { channel.reply(request.header.unique, answer) }
    }

    /// `file` registered as a backing file, or 0 when passthrough is off or refused.
    private func passthroughBacking(_ file: CInt) -> CInt {
        guard state.withLock({ $0.passthrough }) else { return 0 }
        let backing = cfolio_fuse_backing_open(channel.device, file)
        guard backing <= 0 else { return backing }
        let reason = "\(Errno(rawValue: errno))"
        let first = state.withLock { state -> Bool in
            defer { state.passthrough = false }
            return state.passthroughRefused == nil
        }
        if first {
            state.withLock { $0.passthroughRefused = reason }
            logger.notice("the kernel refused passthrough: files are read through Folio", metadata: ["error": "\(reason)"])
        }
        return 0
    }

    /// Makes the placeholder at `path` an empty file of the document's name (to be written over)
    /// and removes its stub: the sync engine then sends what is written, as it does for any
    /// program's file written over a placeholder.
    func replacePlaceholder(_ path: String, mode: mode_t) throws(CErrno) {
        let file = openat(replica, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard file >= 0 else { throw CErrno.last }
        close(file)
        if unlinkat(replica, path + PlaceholderStub.suffix, 0) != 0, errno != ENOENT { throw CErrno.last }
    }

    /// Answers `request` with `then` once the placeholder at `path` is downloaded (one download a
    /// path, however many wait for it): the request's thread goes on serving meanwhile, and a
    /// signal to the waiting process ends its wait with `EINTR` while the download goes on. `then`
    /// gets a copy of the request (the thread's buffer is reused at once).
    func afterDownloading(_ path: String, _ request: FUSERequest, then: @escaping @Sendable (FUSERequest) throws(CErrno) -> Void) {
        let unique = request.header.unique, header = request.header, body = Array(request.body)
        let download = state.withLock { state -> Task<Void, any Error> in
            state.waiting[unique] = path
            if let running = state.downloading[path] { return running.task }
            let progress = Progress(totalUnitCount: 0)
            let task = Task {
                defer { self.state.withLock { _ = $0.downloading.removeValue(forKey: path) } }
                try await self.materialize(path, progress)
            }
            state.downloading[path] = (progress, task)
            return task
        }
        Task {
            var failure: CErrno?
            do { try await download.value } catch {
                self.logger.notice("a download for a program's open failed", metadata: ["path": "\(path)", "error": "\(error)"])
                failure = CErrno(EIO)
            }
            guard self.state.withLock({ $0.waiting.removeValue(forKey: unique) }) != nil else { return }
            if let failure {
                self.channel.reply(unique, error: failure.code)
                return
            }
            _ = try? await SyncFileWork.run {
                body.withUnsafeBytes { bytes in
                    do throws(CErrno) { try then(FUSERequest(header: header, body: bytes)) } catch { self.channel.reply(unique, error: error.code) }
                }
            }
        }
    }

    func create(_ request: FUSERequest) throws(CErrno) {
        guard let create = request.argument(fuse_create_in.self) else { throw CErrno(EINVAL) }
        let (name, path, _) = try childPath(request, at: MemoryLayout<fuse_create_in>.size, making: true)
        let flags = CInt(bitPattern: create.flags)
        if (try? item(path).get())?.placeholder == true {
            // Made over a document that is not here: refused unless it is written over whole.
            if flags & O_EXCL != 0 || flags & O_TRUNC == 0 { throw CErrno(EEXIST) }
            try replacePlaceholder(path, mode: mode_t(create.mode) & 0o7777)
        }
        let file = openat(replica, path, (flags & ~O_NOCTTY) | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode_t(create.mode) & 0o7777)
        guard file >= 0 else { throw CErrno.last }
        var status = stat()
        guard fstat(file, &status) == 0 else {
            let failure = CErrno.last
            close(file)
            throw failure
        }
        state.withLock { $0.writing[UInt64(file)] = path }
        replyOpened(request, file, entry: entry(name, in: request.header.nodeid, Item(status: status, placeholder: false)))
    }

    func read(_ request: FUSERequest, into buffer: UnsafeMutableRawBufferPointer) throws(CErrno) {
        guard let read = request.argument(fuse_read_in.self) else { throw CErrno(EINVAL) }
        readsServed.add(1, ordering: .relaxed)
        let count = pread(CInt(truncatingIfNeeded: read.fh), buffer.baseAddress, min(Int(read.size), buffer.count), off_t(read.offset))
        guard count >= 0 else { throw CErrno.last }
        channel.reply(request.header.unique, payload: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    func write(_ request: FUSERequest) throws(CErrno) {
        guard let write = request.argument(fuse_write_in.self),
            let bytes = request.bytes(at: MemoryLayout<fuse_write_in>.size, count: Int(write.size))
        else { throw CErrno(EINVAL) }
        let count = pwrite(CInt(truncatingIfNeeded: write.fh), bytes.baseAddress, bytes.count, off_t(write.offset))
        guard count >= 0 else { throw CErrno.last }
        channel.reply(request.header.unique, fuse_write_out(size: UInt32(count), padding: 0))
    }

    func release(_ request: FUSERequest) {
        if let release = request.argument(fuse_release_in.self) {
            let (backing, written) = state.withLock { ($0.backings.removeValue(forKey: release.fh), $0.writing.removeValue(forKey: release.fh)) }
            if let backing { _ = cfolio_fuse_backing_close(channel.device, backing) }
            close(CInt(truncatingIfNeeded: release.fh))
            // Sent once the writer is done with it.
            if let written { changed(written) }
        }
        channel.reply(request.header.unique)
    }

    func synchronize(_ request: FUSERequest) throws(CErrno) {
        guard let sync = request.argument(fuse_fsync_in.self) else { throw CErrno(EINVAL) }
        let file = CInt(truncatingIfNeeded: sync.fh)
        guard (sync.fsync_flags & 1 != 0 ? fdatasync(file) : fsync(file)) == 0 else { throw CErrno.last }
        channel.reply(request.header.unique)
    }

    func allocate(_ request: FUSERequest) throws(CErrno) {
        guard let allocate = request.argument(fuse_fallocate_in.self) else { throw CErrno(EINVAL) }
        guard cfolio_fallocate(CInt(truncatingIfNeeded: allocate.fh), CInt(bitPattern: allocate.mode), Int64(allocate.offset), Int64(allocate.length)) == 0 else {
            throw CErrno.last
        }
        channel.reply(request.header.unique)
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
