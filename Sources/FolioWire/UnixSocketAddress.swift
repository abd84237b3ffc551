#if canImport(Glibc)
@preconcurrency public import Glibc
#elseif canImport(Musl)
@preconcurrency public import Musl
#endif

/// The address of a Unix stream socket at a path (`sockaddr_un`), for `connect` and `bind`.
public enum UnixSocketAddress {
    /// Calls `body` with the address of the socket at `path`; nil when the path does not fit in
    /// `sun_path` (108 bytes with its terminator on Linux).
    public static func with<Result>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Connects `fd` to the socket at `path` (`connect(2)`): 0, or -1 with `errno` set
    /// (`ENAMETOOLONG` when the path does not fit).
    public static func connect(_ fd: Int32, to path: String) -> Int32 {
        guard let result = with(path, { Glibc.connect(fd, $0, $1) }) else {
            errno = ENAMETOOLONG
            return -1
        }
        return result
    }

    /// Binds `fd` to `path` (`bind(2)`): 0, or -1 with `errno` set (`ENAMETOOLONG` when the path
    /// does not fit).
    public static func bind(_ fd: Int32, to path: String) -> Int32 {
        guard let result = with(path, { Glibc.bind(fd, $0, $1) }) else {
            errno = ENAMETOOLONG
            return -1
        }
        return result
    }
}
