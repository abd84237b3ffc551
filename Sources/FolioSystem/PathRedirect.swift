import Synchronization
import SystemPackage

/// Folders this process reaches somewhere else than at their path: the drive's folder, covered
/// by the drive's FUSE mount, which the daemon (the replica's owner) reaches beneath the mount,
/// where the replica is a plain folder with its stubs. Every other program sees the mount.
///
/// The raw helpers of this module that name a file by path (``DirectoryScanner``, ``FileStatus``,
/// inotify watches, extended attributes, ``FilePath/readBytes(maximumSize:)``) go through it, so
/// the daemon's index, coordination watches and drive checks keep seeing the replica as it is.
/// Nothing is redirected until something is registered (apps and commands never do).
public enum PathRedirect {
    private static let table = Mutex<[(folder: String, target: String)]>([])
    private static let active = Atomic<Bool>(false)

    /// Paths at or below `folder` are reached at `target` from now on.
    public static func redirect(_ folder: String, to target: String) {
        table.withLock { table in
            table.removeAll { $0.folder == folder }
            table.append((folder, target))
            active.store(true, ordering: .releasing)
        }
    }

    /// Paths at or below `folder` are reached at their own paths again.
    public static func remove(_ folder: String) {
        table.withLock { table in
            table.removeAll { $0.folder == folder }
            active.store(!table.isEmpty, ordering: .releasing)
        }
    }

    /// Whether anything is redirected (a check that costs one atomic load).
    public static var isActive: Bool { active.load(ordering: .acquiring) }

    /// Where this process reaches `path`.
    public static func physical(_ path: String) -> String {
        guard active.load(ordering: .acquiring) else { return path }
        return table.withLock { table in
            for (folder, target) in table where path.hasPrefix(folder) {
                let rest = path.utf8.dropFirst(folder.utf8.count)
                if rest.isEmpty || rest.first == UInt8(ascii: "/") { return target + String(Substring(rest)) }
            }
            return path
        }
    }
}

extension FilePath {
    /// This path where the process reaches it (``PathRedirect``).
    var physical: FilePath { PathRedirect.isActive ? FilePath(PathRedirect.physical(string)) : self }
}
