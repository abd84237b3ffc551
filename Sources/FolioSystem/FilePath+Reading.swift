#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import SystemPackage

extension FilePath {
    /// Reads the whole file with plain `open`/`read` calls, refusing files larger than `maximumSize`.
    ///
    /// - Returns: the bytes, or nil when the file is larger than `maximumSize`.
    /// - Throws: the `Errno` of a failed `open` or `read` (`.noSuchFileOrDirectory` when absent).
    public func readBytes(maximumSize: Int) throws(Errno) -> [UInt8]? {
        let fd = try valueOrErrno { self.physical.withPlatformString { open($0, O_RDONLY | O_CLOEXEC) } }
        defer { _ = close(fd) }
        // Read until end of file, growing the buffer; sizes from stat are only hints (procfs says 0).
        var bytes = [UInt8](repeating: 0, count: Swift.min(64 << 10, maximumSize + 1))
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count <= maximumSize else { return nil }
                bytes.append(contentsOf: repeatElement(0, count: Swift.min(bytes.count, maximumSize + 1 - bytes.count)))
            }
            let filled = count
            let n = try bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in try valueOrErrno { read(fd, buffer.baseAddress! + filled, buffer.count - filled) } }
            }.get()
            if n == 0 { break }
            count += n
        }
        guard count <= maximumSize else { return nil }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Reads at most `limit` bytes from the start of the regular file at this path, opened without
    /// following a symbolic link and without blocking (a FIFO or a device swapped in is refused,
    /// never waited on), and checked to be a regular file once open.
    ///
    /// - Throws: the `Errno` of a failed `open` or `read`; `.invalidArgument` for anything but a
    ///   regular file.
    public func readRegularFilePrefix(limit: Int) throws(Errno) -> [UInt8] {
        let fd = try valueOrErrno { self.physical.withPlatformString { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) } }
        defer { _ = close(fd) }
        var status = Glibc.stat()
        guard Glibc.fstat(fd, &status) == 0 else { throw Errno(rawValue: errno) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .invalidArgument }
        var bytes = [UInt8](repeating: 0, count: Swift.min(limit, Swift.max(Int(status.st_size), 0) + 1))
        var count = 0
        while count < bytes.count {
            let filled = count
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw Errno(rawValue: errno) }
            if n == 0 { break }
            count += n
        }
        bytes.removeSubrange(count...)
        return bytes
    }
}
