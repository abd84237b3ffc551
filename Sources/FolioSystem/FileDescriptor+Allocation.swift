#if os(Linux)
import CFolioShims
public import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

extension FileDescriptor {
    /// Gives the file `length` bytes with their blocks reserved (`fallocate(2)`, mode 0): what is
    /// written into them later cannot run out of space. False, changing nothing, where the file
    /// system cannot reserve blocks (glibc's `posix_fallocate` would write zeros there instead).
    ///
    /// - Throws: `Errno` for any other failure (`ENOSPC`: the disk cannot hold `length` bytes).
    public func reserve(length: Int64) throws(Errno) -> Bool {
        while cfolio_fallocate(rawValue, 0, 0, length) != 0 {
            switch errno {
            case EINTR: continue
            case EOPNOTSUPP, ENOSYS: return false
            default: throw Errno(rawValue: errno)
            }
        }
        return true
    }

    /// Whether the file lives in memory (on tmpfs), where its pages are all it has: no blocks
    /// behind them, no writeback.
    public var isInMemory: Bool {
        cfolio_in_memory(rawValue) == 1
    }
}
#endif
