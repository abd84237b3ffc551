#if os(Linux)
import CFolioShims
public import SystemPackage

extension FileDescriptor {
    /// The kind of whole-file open-file-description lock.
    public enum LockKind: Sendable {
        /// A shared lock: many readers may hold it at once.
        case shared
        /// An exclusive lock: one holder, no shared holders.
        case exclusive

        var cValue: Int16 { self == .shared ? cfolio_lock_read() : cfolio_lock_write() }
    }

    /// Tries to take an open-file-description lock on the whole file without waiting.
    ///
    /// OFD locks belong to the open file description, not the process, so two descriptors opened
    /// separately in one process exclude each other, and closing an unrelated descriptor of the same
    /// file does not drop the lock (unlike classic POSIX record locks).
    ///
    /// - Returns: true if the lock was taken, false if another description holds a conflicting one.
    ///
    /// The corresponding C call is `fcntl(fd, F_OFD_SETLK, …)`.
    public func tryLock(_ kind: LockKind) throws(Errno) -> Bool {
        do {
            _ = try valueOrErrno { cfolio_ofd_setlk(rawValue, kind.cValue, 0) }
            return true
        } catch .resourceTemporarilyUnavailable, .permissionDenied {
            return false
        }
    }

    /// Takes an open-file-description lock on the whole file, blocking until it is free.
    ///
    /// Blocks the calling thread: never call it from the cooperative thread pool.
    ///
    /// The corresponding C call is `fcntl(fd, F_OFD_SETLKW, …)`.
    public func lock(_ kind: LockKind) throws(Errno) {
        _ = try valueOrErrno { cfolio_ofd_setlk(rawValue, kind.cValue, 1) }
    }

    /// Releases this description's lock on the file.
    ///
    /// The corresponding C call is `fcntl(fd, F_OFD_SETLK, F_UNLCK)`.
    public func unlock() throws(Errno) {
        _ = try valueOrErrno { cfolio_ofd_setlk(rawValue, cfolio_lock_unlock(), 0) }
    }
}
#endif
