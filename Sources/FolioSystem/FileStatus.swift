#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
public import SystemPackage

/// The parts of `stat` the document system needs, read with one raw `stat`/`lstat` call.
///
/// Foundation's per-URL resource values cost 20–35 times as much on Linux; hot paths use this.
public struct FileStatus: Sendable, Hashable {
    /// What kind of file system object this is.
    public enum Kind: Sendable, Hashable {
        case regular, directory, symbolicLink, blockDevice, characterDevice, fifo, socket, other
    }

    /// The object's kind.
    public var kind: Kind
    /// Size in bytes.
    public var size: Int64
    /// Inode number.
    public var inode: UInt64
    /// Device identifier.
    public var device: UInt64
    /// Modification time, seconds since 1970.
    public var modificationTime: Double
    /// Status change time (content, attributes, links or mode), seconds since 1970.
    public var changeTime: Double
    /// Permission bits.
    public var mode: UInt32
    /// The number of hard links to the object.
    public var linkCount: UInt64

    /// Reads the status of the object at `path`.
    ///
    /// - Parameter followSymlinks: `stat` (true) or `lstat` (false).
    /// - Throws: `Errno`, for example `.noSuchFileOrDirectory`.
    ///
    /// The corresponding C functions are `stat` and `lstat`.
    public init(path: FilePath, followSymlinks: Bool = false) throws(Errno) {
        var st = stat()
        _ = try valueOrErrno { path.physical.withPlatformString { followSymlinks ? stat($0, &st) : lstat($0, &st) } }
        self.init(st)
    }

    /// Reads the status of the object at `path` given as a string (no `FilePath` is built: for
    /// paths checked often or long, whose `FilePath` form costs a copy and a scan).
    ///
    /// - Parameter followSymlinks: `stat` (true) or `lstat` (false).
    public init(atPath path: String, followSymlinks: Bool = false) throws(Errno) {
        var st = stat()
        _ = try valueOrErrno { PathRedirect.physical(path).withCString { followSymlinks ? stat($0, &st) : lstat($0, &st) } }
        self.init(st)
    }

    /// Reads the status of `name` in the open directory `directory`, not following a symbolic link
    /// (`fstatat` with `AT_SYMLINK_NOFOLLOW`): no path is built, so depth does not matter.
    public init(in directory: FileDescriptor, name: UnsafePointer<CChar>) throws(Errno) {
        var st = stat()
        _ = try valueOrErrno { fstatat(directory.rawValue, name, &st, AT_SYMLINK_NOFOLLOW) }
        self.init(st)
    }

    /// Reads the status of the open file `descriptor` (`fstat`): what was opened, whatever the path
    /// now names.
    public init(of descriptor: FileDescriptor) throws(Errno) {
        var st = stat()
        _ = try valueOrErrno { fstat(descriptor.rawValue, &st) }
        self.init(st)
    }

    init(_ st: stat) {
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        case S_IFBLK: kind = .blockDevice
        case S_IFCHR: kind = .characterDevice
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        size = Int64(st.st_size)
        inode = UInt64(st.st_ino)
        device = UInt64(st.st_dev)
        modificationTime = Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
        changeTime = Double(st.st_ctim.tv_sec) + Double(st.st_ctim.tv_nsec) / 1e9
        mode = UInt32(st.st_mode & 0o7777)
        linkCount = UInt64(st.st_nlink)
    }

    /// The canonical absolute path of `path`: every symbolic link, `.` and `..` resolved by the
    /// kernel (`realpath(3)`).
    ///
    /// - Throws: `Errno`, for example `.noSuchFileOrDirectory` when a component is missing.
    public static func canonicalPath(_ path: String) throws(Errno) -> String {
        guard let resolved = realpath(path, nil) else { throw Errno(rawValue: errno) }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
