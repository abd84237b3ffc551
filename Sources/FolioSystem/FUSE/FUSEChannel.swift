#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
import Synchronization
public import SystemPackage

/// A FUSE mount and its channel: `/dev/fuse` opened and mounted at a folder, requests read from it
/// and replies written to it. The file system behind it is the caller's (``FUSEServer``).
///
/// Mounting: as root (or with `CAP_SYS_ADMIN`), `mount(2)` of type `fuse.<subtype>` with the open
/// device; otherwise `fusermount3` (Debian's `fuse3`), which mounts the device it opens and sends
/// it back over a Unix socket (`_FUSE_COMMFD`), as libfuse does. The device is close-on-exec, so
/// no child keeps the mount alive: when this process ends, the kernel aborts the connection and
/// every access to the mount fails with `ENOTCONN` until it is unmounted (``detachStale(at:)``).
public final class FUSEChannel: Sendable {
    /// The mounted `/dev/fuse`.
    public let device: CInt
    /// Where it is mounted.
    public let mountpoint: String
    /// Whether `fusermount3` mounted it (and so must unmount it).
    private let unprivileged: Bool
    /// Set by ``stop()``: readers return instead of waiting for more requests.
    private let stopping = Atomic<Bool>(false)

    /// The largest write the kernel sends in one request; a request is at most this and a page.
    public static let maximumWrite = 128 * 1024
    /// The size of the buffer a request is read into.
    public static let requestBufferSize = maximumWrite + 4096

    /// Mounts a new FUSE file system at `mountpoint` (a folder) named `name` in `/proc/mounts`.
    ///
    /// - Throws: ``FUSEMountError`` with a sentence naming what is missing (no `/dev/fuse`, no
    ///   `fusermount3`, a refused mount).
    public init(mountingAt mountpoint: String, name: String) throws(FUSEMountError) {
        self.mountpoint = mountpoint
        let options = "rootmode=40000,user_id=\(getuid()),group_id=\(getgid()),default_permissions"
        if geteuid() == 0 {
            let device = open("/dev/fuse", O_RDWR | O_CLOEXEC)
            guard device >= 0 else { throw FUSEMountError("cannot open /dev/fuse: \(Errno(rawValue: errno))") }
            guard Glibc.mount(name, mountpoint, "fuse." + name, UInt(MS_NOSUID | MS_NODEV), "fd=\(device),\(options)") == 0 else {
                let failure = Errno(rawValue: errno)
                close(device)
                throw FUSEMountError("mount of \(mountpoint) refused: \(failure)")
            }
            self.device = device
            unprivileged = false
        } else {
            device = try Self.mountWithFusermount(mountpoint, name: name)
            unprivileged = true
        }
        // Readers wait in `poll`, so that ``stop()`` reaches them.
        _ = fcntl(device, F_SETFL, fcntl(device, F_GETFL) | O_NONBLOCK)
    }

    private static func mountWithFusermount(_ mountpoint: String, name: String) throws(FUSEMountError) -> CInt {
        guard let fusermount = ExecutableSearch.locate("fusermount3") else {
            throw FUSEMountError("fusermount3 is not installed (Debian: apt install fuse3), and only root can mount without it")
        }
        var ends: [CInt] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw FUSEMountError("socketpair: \(Errno(rawValue: errno))")
        }
        defer { close(ends[0]) }
        // Its complaint, for the error (a few lines at most).
        var complaint: [CInt] = [-1, -1]
        guard pipe(&complaint) == 0 else { throw FUSEMountError("pipe: \(Errno(rawValue: errno))") }
        for end in complaint { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { close(complaint[0]) }
        let options = "rw,nosuid,nodev,fsname=\(name),subtype=\(name),default_permissions"
        let child = SpawnedProcess(
            [fusermount, "-o", options, "--", mountpoint], environment: ["_FUSE_COMMFD": "3", "PATH": "/usr/bin:/bin"], errors: complaint[1],
            passing: [(ends[1], 3)])
        close(ends[1])
        close(complaint[1])
        guard let child else { throw FUSEMountError("cannot start \(fusermount)") }
        // Ten seconds for it to mount: a fusermount3 stuck in its mount is killed, not waited for.
        var deadline = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(ends[0], SOL_SOCKET, SO_RCVTIMEO, &deadline, socklen_t(MemoryLayout<timeval>.size))
        let device = cfolio_receive_fd(ends[0])
        if device < 0, errno == EAGAIN || errno == EWOULDBLOCK { kill(child.pid, SIGKILL) }
        let status = child.wait()
        guard device >= 0 else {
            var bytes = [UInt8](repeating: 0, count: 1024)
            let count = max(0, Glibc.read(complaint[0], &bytes, bytes.count))
            let said = String(decoding: bytes[0..<count], as: UTF8.self).split(separator: "\n").joined(separator: "; ")
            throw FUSEMountError("fusermount3 did not mount \(mountpoint) (exit \(status))" + (said.isEmpty ? "" : ": \(said)"))
        }
        return device
    }

    /// Reads one request into `buffer` (at least ``requestBufferSize`` bytes), waiting for one:
    /// its length, or nil once the file system is unmounted or ``stop()`` was called.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int? {
        while true {
            if stopping.load(ordering: .relaxed) { return nil }
            let count = Glibc.read(device, buffer.baseAddress, buffer.count)
            if count > 0 { return count }
            if count == 0 { return nil }
            switch errno {
            case EAGAIN:
                // Nothing yet: wait, a quarter second at most between looks at `stopping`.
                var waiting = pollfd(fd: device, events: Int16(POLLIN), revents: 0)
                _ = poll(&waiting, 1, 250)
            // Interrupted, or a request the kernel took back before it was read.
            case EINTR, ENOENT: continue
            case ENODEV: return nil
            default: throw Errno(rawValue: errno)
            }
        }
    }

    /// Writes one reply (or notification). A reply to a request that was interrupted meanwhile
    /// (`ENOENT`) is dropped, as the protocol says.
    public func write(_ bytes: UnsafeRawBufferPointer) {
        while Glibc.write(device, bytes.baseAddress, bytes.count) < 0 && errno == EINTR {}
    }

    /// Unmounts, lazily: files still open keep working until closed; then the kernel ends the
    /// connection and ``read(into:)`` returns nil. The device is closed when this object goes.
    public func unmount() {
        Self.detach(mountpoint, unprivileged: unprivileged)
    }

    /// Makes ``read(into:)`` return nil within a quarter second, in every thread; once they have,
    /// releasing this object closes the device, which ends the connection (any file still open
    /// through a lazily unmounted mount then fails).
    public func stop() {
        stopping.store(true, ordering: .relaxed)
    }

    deinit { close(device) }

    /// Unmounts, lazily, the FUSE mount at `mountpoint` that a process left when it ended (its
    /// accesses fail with `ENOTCONN`). The caller knows it is one: a `stat` of it can still
    /// succeed from the kernel's cache.
    public static func detachStale(at mountpoint: String) {
        detach(mountpoint, unprivileged: geteuid() != 0)
    }

    private static func detach(_ mountpoint: String, unprivileged: Bool) {
        if !unprivileged {
            _ = umount2(mountpoint, Int32(MNT_DETACH))
        } else if let fusermount = ExecutableSearch.locate("fusermount3") {
            SpawnedProcess.run([fusermount, "-u", "-z", "--", mountpoint])
        }
    }
}

/// Why a FUSE mount could not be made, in one sentence.
public struct FUSEMountError: Error, CustomStringConvertible {
    /// The sentence.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
