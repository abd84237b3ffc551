#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// Which processes hold a file open, read from `/proc/<pid>/fd` (Linux; the processes this user
/// may inspect — its own, or all of them for root). Eviction asks it: content still open in an app
/// is not taken away (Apple refuses with `nonEvictable`, EBUSY).
public enum ProcOpenFiles {
    /// A process holding the file.
    public struct Holder: Sendable, Equatable {
        public var pid: Int32
        /// The process's command name (`/proc/<pid>/comm`).
        public var name: String
    }

    /// The other processes with a descriptor on the file identified by `device` and `inode`.
    public static func holders(device: UInt64, inode: UInt64) -> [Holder] {
        var result: [Holder] = []
        let own = getpid()
        for name in DirectoryRecord.names(in: "/proc") {
            guard let pid = Int32(name), pid != own else { continue }
            let folder = "/proc/\(name)/fd"
            for descriptor in DirectoryRecord.names(in: folder) {
                var status = stat()
                guard stat(folder + "/" + descriptor, &status) == 0, UInt64(status.st_dev) == device, UInt64(status.st_ino) == inode else { continue }
                result.append(Holder(pid: pid, name: command(of: name)))
                break
            }
        }
        return result
    }

    private static func command(of pid: String) -> String {
        let descriptor = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "?" }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        guard count > 0 else { return "?" }
        return String(decoding: buffer[..<count], as: UTF8.self).trimmingSuffix()
    }
}

extension String {
    fileprivate func trimmingSuffix() -> String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == " " { text = text.dropLast() }
        return String(text)
    }
}
