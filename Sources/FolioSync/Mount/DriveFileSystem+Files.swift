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

/// The mount's files: opened in the replica (a placeholder downloaded first), read and written by
/// the kernel itself with passthrough or through these calls, reported changed when closed.
extension DriveFileSystem {
    /// Flags of an open the replica's file gets: the caller's, without those the kernel handled.
    private static func openFlags(_ flags: UInt32) -> CInt {
        (CInt(bitPattern: flags) & ~(O_CREAT | O_EXCL | O_NOCTTY)) | O_CLOEXEC | O_NOFOLLOW
    }

    /// Whether an open with `flags` writes the file over whole (it needs no old bytes).
    private static func truncates(_ flags: UInt32) -> Bool {
        CInt(bitPattern: flags) & O_TRUNC != 0 && CInt(bitPattern: flags) & O_ACCMODE != O_RDONLY
    }

    func open(_ request: FUSERequest) throws(CErrno) {
        guard let open = request.argument(fuse_open_in.self) else { throw CErrno(EINVAL) }
        let path = try path(of: request)
        let item = try item(path).get()
        let download = item.placeholder && !Self.truncates(open.flags)
        let opener = heldOpener(path, request)
        guard download || opener != nil else { return try openNow(path, open.flags, request) }
        // Opened to read: served from the file as it arrives, not once it is whole.
        let streamed = download && CInt(bitPattern: open.flags) & O_ACCMODE == O_RDONLY ? Int64(item.status.st_size) : nil
        afterWaiting(path, request, downloading: download, streaming: streamed, writesAgainst: opener) { (request) throws(CErrno) in
            try self.openNow(path, open.flags, request)
        }
    }

    /// Opens the replica's file at `path` for `request`, nothing left to wait for: a placeholder
    /// only when it is written over whole (an empty file of its name replaces it).
    private func openNow(_ path: String, _ flags: UInt32, _ request: FUSERequest) throws(CErrno) {
        let item = try item(path).get()
        if item.placeholder {
            // Evicted again while the opener waited: it would read nothing.
            guard Self.truncates(flags) else { throw CErrno(EIO) }
            try replacePlaceholder(path, mode: item.status.st_mode & 0o7777)
        } else if CInt(bitPattern: flags) & O_ACCMODE != O_RDONLY {
            keepVersion(path, item.status)
        }
        try openFile(path, flags, request)
    }

    /// The process opening `path` in `request` when another process's coordinated write holds the
    /// file now (the open then waits for it to end), else nil.
    private func heldOpener(_ path: String, _ request: FUSERequest) -> pid_t? {
        // Any process's first (no client is process 0): most opens find none, and read no more.
        guard let arbiter, arbiter.writeHolds(visible(path), against: 0) else { return nil }
        // FUSE names the caller by its thread; the arbiter knows processes.
        let opener = ProcessStatusFile.process(ofThread: pid_t(bitPattern: request.header.pid))
        return arbiter.writeHolds(visible(path), against: opener) ? opener : nil
    }

    private func openFile(_ path: String, _ flags: UInt32, _ request: FUSERequest) throws(CErrno) {
        let file = openat(replica, Self.relative(path), Self.openFlags(flags))
        guard file >= 0 else { throw CErrno.last }
        if CInt(bitPattern: flags) & O_ACCMODE != O_RDONLY { state.withLock { $0.writing[UInt64(file)] = path } }
        replyOpened(request, file)
    }

    /// Answers an open with the replica's `file`: served by the kernel from the replica (passthrough)
    /// when the mount has it, else through this process's reads and writes.
    func replyOpened(_ request: FUSERequest, _ file: CInt, entry: fuse_entry_out? = nil) {
        var answer = fuse_open_out()
        answer.fh = UInt64(file)
        let writes = fcntl(file, F_GETFL) & O_ACCMODE != O_RDONLY
        switch passthroughBacking(file, writes: writes) {
        case .some(let backing):
            answer.open_flags |= CFOLIO_FOPEN_PASSTHROUGH
            answer.padding = UInt32(bitPattern: backing)  // backing_id, in protocol 7.40
        case nil where state.withLock({ $0.passthrough }):
            // The kernel refuses an open of a file it reads through the page cache while others of
            // the same file are passthrough (and the reverse): this one bypasses the cache instead.
            answer.open_flags |= UInt32(FOPEN_DIRECT_IO)
        case nil: break
        }
        if let entry { channel.reply(request.header.unique, entry, answer) } else { channel.reply(request.header.unique, answer) }
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

    /// Answers `request` with `then` once nothing holds it back: the placeholder at `path`
    /// downloaded (`downloading`: one download a path, however many wait for it), and the
    /// coordinated writes of other processes than `opener` to the file ended (waited for at most
    /// ``writeWait``: then `EBUSY`). With `streaming` (an open to read, of a file of that size),
    /// the open is answered as soon as the file's first bytes are written, with the file as it
    /// arrives (``readArriving(_:_:_:)``), where the provider reports them. The request's thread
    /// goes on serving meanwhile, and a signal to the waiting process ends its wait with `EINTR`
    /// while the download goes on. `then` gets a copy of the request (the thread's buffer is
    /// reused at once).
    func afterWaiting(
        _ path: String, _ request: FUSERequest, downloading: Bool, streaming size: Int64? = nil, writesAgainst opener: pid_t?,
        then: @escaping @Sendable (FUSERequest) throws(CErrno) -> Void
    ) {
        let unique = request.header.unique, header = request.header, body = Array(request.body)
        let download = state.withLock { state -> (task: Task<Void, any Error>, arriving: ArrivingContents)? in
            state.waiting[unique] = path
            guard downloading else { return nil }
            if let running = state.downloading[path] { return (running.task, running.arriving) }
            let progress = Progress(totalUnitCount: 0)
            let arriving = ArrivingContents()
            let task = Task {
                defer { self.state.withLock { _ = $0.downloading.removeValue(forKey: path) } }
                do {
                    try await self.materialize(path, progress, arriving)
                    arriving.end(failed: false)
                } catch {
                    arriving.end(failed: true)
                    throw error
                }
            }
            state.downloading[path] = (progress, arriving, task)
            return (task, arriving)
        }
        Task {
            var failure: CErrno?
            if let opener, let arbiter, await !arbiter.afterWrites(to: self.visible(path), against: opener, deadline: Self.writeWait) {
                self.logger.notice("a program's open waited too long for a coordinated write", metadata: ["path": "\(path)"])
                failure = CErrno(EBUSY)
            }
            if failure == nil, let size, size > 0, let arriving = download?.arriving, await self.openArriving(unique, arriving, size: size) { return }
            do { try await download?.task.value } catch {
                self.logger.notice("a download for a program's open failed", metadata: ["path": "\(path)", "error": "\(error)"])
                failure = failure ?? CErrno(EIO)
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
        guard request.argument(fuse_create_in.self) != nil else { throw CErrno(EINVAL) }
        let (_, path, _) = try childPath(request, at: MemoryLayout<fuse_create_in>.size, making: true)
        // Opening a file that is there: it waits for other processes' coordinated writes as an open does.
        guard (try? item(path).get()) != nil, let opener = heldOpener(path, request) else { return try createNow(request) }
        afterWaiting(path, request, downloading: false, writesAgainst: opener) { (request) throws(CErrno) in try self.createNow(request) }
    }

    private func createNow(_ request: FUSERequest) throws(CErrno) {
        guard let create = request.argument(fuse_create_in.self) else { throw CErrno(EINVAL) }
        let (name, path, _) = try childPath(request, at: MemoryLayout<fuse_create_in>.size, making: true)
        let flags = CInt(bitPattern: create.flags)
        let existing = try? item(path).get()
        if existing?.placeholder == true {
            // Made over a document that is not here: refused unless it is written over whole.
            if flags & O_EXCL != 0 || flags & O_TRUNC == 0 { throw CErrno(EEXIST) }
            try replacePlaceholder(path, mode: mode_t(create.mode) & 0o7777)
        } else if let existing, flags & O_EXCL == 0 {
            keepVersion(path, existing.status)
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
        if let arriving = state.withLock({ $0.arrivingFiles[read.fh] }), try !readArriving(request, read, arriving) { return }
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
            releaseBacking(release.fh)
            state.withLock { _ = $0.arrivingFiles.removeValue(forKey: release.fh) }
            let written = state.withLock { $0.writing.removeValue(forKey: release.fh) }
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
}
