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
        let fd = try valueOrErrno { self.withPlatformString { open($0, O_RDONLY | O_CLOEXEC) } }
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
}
