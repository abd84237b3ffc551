import CFolioShims
public import SystemPackage

/// What tells a file from a later one that the file system gave the same device and inode (ext4
/// reuses a deleted file's inode at once): its birth time (`statx`) and its inode generation
/// (`FS_IOC_GETVERSION`), which changes when the inode is reused.
public enum FileIncarnation {
    /// The item's mark: `b` and its birth time in nanoseconds, then `g` and its inode generation,
    /// each when the file system keeps it; nil when it keeps neither (or the item cannot be read).
    /// Both, where there are both: a birth time is taken from the kernel's coarse clock (a tick of
    /// a few milliseconds), so a file made within the same tick as a deleted one can share it,
    /// while ext4 draws each new inode's generation at random.
    ///
    /// - Parameter followSymlinks: whether a final symbolic link is followed (both are then the
    ///   target's; a link's own generation cannot be read).
    public static func mark(ofItemAt path: String, followSymlinks: Bool = false) -> String? {
        if followSymlinks {
            // Both from the item a link leads to.
            guard let target = try? FileStatus.canonicalPath(path) else { return nil }
            return mark(ofItemAt: target, followSymlinks: false)
        }
        var mark = ""
        var nanoseconds: Int64 = 0
        if cfolio_birth_time(path, 0, &nanoseconds) == 0 { mark += "b\(nanoseconds)" }
        var generation: UInt64 = 0
        if cfolio_inode_generation(path, &generation) == 0 { mark += "g\(generation)" }
        return mark.isEmpty ? nil : mark
    }

    /// The mark of the item open as `descriptor` (an `O_PATH` descriptor among others): the item
    /// itself, whatever its path names now.
    public static func mark(of descriptor: FileDescriptor) -> String? {
        var mark = ""
        var nanoseconds: Int64 = 0
        if cfolio_birth_time("/proc/self/fd/\(descriptor.rawValue)", 1, &nanoseconds) == 0 { mark += "b\(nanoseconds)" }
        var generation: UInt64 = 0
        if cfolio_inode_generation_of(descriptor.rawValue, &generation) == 0 { mark += "g\(generation)" }
        return mark.isEmpty ? nil : mark
    }
}
