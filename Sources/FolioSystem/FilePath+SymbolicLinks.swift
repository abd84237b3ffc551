#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif
public import SystemPackage

extension FilePath {
    /// The target of the symbolic link at this path (`readlink(2)`), or nil when it is not a link or
    /// cannot be read.
    public func symbolicLinkTarget() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = withPlatformString { readlink($0, &buffer, buffer.count - 1) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
