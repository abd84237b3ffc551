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

/// Files read while they arrive: a program's first byte comes when the server's does, not when
/// the whole file is here.
extension DriveFileSystem {
    /// Answers the open `unique` with the file `arriving` writes, once its first bytes are there
    /// (bypassing the page cache: the file grows). False when it cannot be (the provider does not
    /// report, the download ended first, or its file is gone; or the kernel could not map such a
    /// file): the open then waits for the whole.
    func openArriving(_ unique: UInt64, _ arriving: ArrivingContents, size: Int64) async -> Bool {
        guard state.withLock({ $0.mapsUncachedFiles }) else { return false }
        let first = await arriving.wait(for: 1)
        guard !first.ended, let partial = first.path else { return false }
        let file = (try? await SyncFileWork.run { Glibc.open(partial, O_RDONLY | O_CLOEXEC) }) ?? -1
        guard file >= 0 else { return false }
        let answered = state.withLock { state -> Bool in
            guard state.waiting.removeValue(forKey: unique) != nil else { return false }
            state.arrivingFiles[UInt64(file)] = (arriving, size)
            return true
        }
        guard answered else {
            close(file)
            return true
        }
        var answer = fuse_open_out()
        answer.fh = UInt64(file)
        answer.open_flags = UInt32(FOPEN_DIRECT_IO)
        channel.reply(unique, answer)
        return true
    }

    /// Serves a read of a file that is arriving: now when its bytes are there (true: the caller
    /// reads them), else later, from a task, once they are (`EIO` if the download fails first).
    func readArriving(_ request: FUSERequest, _ read: fuse_read_in, _ file: (arriving: ArrivingContents, size: Int64)) throws(CErrno) -> Bool {
        let end = min(Int64(read.offset) + Int64(read.size), file.size)
        let now = file.arriving.now
        if now.written >= end { return true }
        if now.ended {
            guard !now.failed else { throw CErrno(EIO) }
            return true
        }
        let unique = request.header.unique, handle = CInt(truncatingIfNeeded: read.fh)
        state.withLock { $0.waiting[unique] = "" }
        Task {
            let arrived = await file.arriving.wait(for: end)
            guard self.state.withLock({ $0.waiting.removeValue(forKey: unique) }) != nil else { return }
            guard arrived.written >= end || !arrived.failed else { return self.channel.reply(unique, error: EIO) }
            _ = try? await SyncFileWork.run {
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(read.size), alignment: 16)
                defer { buffer.deallocate() }
                let count = pread(handle, buffer.baseAddress, buffer.count, off_t(read.offset))
                guard count >= 0 else { return self.channel.reply(unique, error: errno) }
                self.channel.reply(unique, payload: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }
        return false
    }
}
