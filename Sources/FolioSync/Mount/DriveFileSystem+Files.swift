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
}
