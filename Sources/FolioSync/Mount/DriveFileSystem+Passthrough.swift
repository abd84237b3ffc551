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

/// Passthrough: the kernel reads and writes an open file's replica file itself, one backing file a
/// file shared by its opens.
extension DriveFileSystem {
    /// The backing id of the file open as `file` (registered at its first open, shared by every
    /// open of the same file: the kernel takes one backing file a file), or nil when passthrough
    /// is off or refused, or the shared backing file cannot write and `writes` is asked.
    func passthroughBacking(_ file: CInt, writes: Bool) -> CInt? {
        guard state.withLock({ $0.passthrough }) else { return nil }
        var status = stat()
        guard fstat(file, &status) == 0 else { return nil }
        let key = Backing.Key(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        let shared = state.withLock { state -> CInt?? in
            guard var backing = state.backings[key] else { return .none }
            guard backing.writes || !writes else { return .some(nil) }
            backing.opens += 1
            state.backings[key] = backing
            state.backingOfHandle[UInt64(file)] = key
            return .some(backing.id)
        }
        if let shared { return shared }
        // Opened again for reading and writing when it can be, so that every later open can share it.
        let reopened = Glibc.open("/proc/self/fd/\(file)", O_RDWR | O_CLOEXEC)
        let backingFile = reopened >= 0 ? reopened : dup(file)
        guard backingFile >= 0 else { return nil }
        let id = cfolio_fuse_backing_open(channel.device, backingFile)
        guard id > 0 else {
            let reason = "\(Errno(rawValue: errno))"
            close(backingFile)
            let first = state.withLock { state -> Bool in
                defer { state.passthrough = false }
                return state.passthroughRefused == nil
            }
            if first {
                state.withLock { $0.passthroughRefused = reason }
                logger.notice("the kernel refused passthrough: files are read through Folio", metadata: ["error": "\(reason)"])
            }
            return nil
        }
        let won = state.withLock { state -> Bool in
            // Another thread registered the same file meanwhile: its backing is the one.
            guard state.backings[key] == nil else { return false }
            state.backings[key] = Backing(id: id, file: backingFile, writes: reopened >= 0 || writes, opens: 1)
            state.backingOfHandle[UInt64(file)] = key
            return true
        }
        guard won else {
            _ = cfolio_fuse_backing_close(channel.device, id)
            close(backingFile)
            return passthroughBacking(file, writes: writes)
        }
        return id
    }

    /// Ends the handle's share of its file's backing: the last one closes it.
    func releaseBacking(_ handle: UInt64) {
        let ended = state.withLock { state -> Backing? in
            guard let key = state.backingOfHandle.removeValue(forKey: handle), var backing = state.backings[key] else { return nil }
            backing.opens -= 1
            state.backings[key] = backing.opens > 0 ? backing : nil
            return backing.opens > 0 ? nil : backing
        }
        if let ended {
            _ = cfolio_fuse_backing_close(channel.device, ended.id)
            close(ended.file)
        }
    }
}
