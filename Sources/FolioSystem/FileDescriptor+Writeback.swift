#if os(Linux)
import CFolioShims
public import SystemPackage

extension FileDescriptor {
    /// Starts writing `length` bytes from `offset` back to disk without waiting
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`): a long write that calls this as it goes leaves
    /// little for its final `fsync`. A hint: failures are ignored.
    public func startWriteback(offset: Int64, length: Int64) {
        _ = cfolio_start_writeback(rawValue, offset, length)
    }
}
#endif
