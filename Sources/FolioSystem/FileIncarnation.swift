import CFolioShims

/// What tells a file from a later one that the file system gave the same device and inode (ext4
/// reuses a deleted file's inode at once): its birth time (`statx`), or, where the file system
/// records none, its inode generation (`FS_IOC_GETVERSION`), which changes when the inode is reused.
public enum FileIncarnation {
    /// The item's mark: `b` and its birth time in nanoseconds, or `g` and its inode generation;
    /// nil when the file system keeps neither (or the item cannot be read).
    ///
    /// - Parameter followSymlinks: whether a final symbolic link is followed for the birth time
    ///   (the generation is read only from an item that is not a link).
    public static func mark(ofItemAt path: String, followSymlinks: Bool = false) -> String? {
        var nanoseconds: Int64 = 0
        if cfolio_birth_time(path, followSymlinks ? 1 : 0, &nanoseconds) == 0 { return "b\(nanoseconds)" }
        var generation: UInt64 = 0
        if cfolio_inode_generation(path, &generation) == 0 {
            return "g\(generation)"
        }
        return nil
    }
}
