#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SystemPackage

/// Runs `body` until it stops failing with `EINTR`, turning `-1` into a thrown `Errno`.
@inline(__always)
func valueOrErrno<I: FixedWidthInteger>(retryOnInterrupt: Bool = true, _ body: () -> I) throws(Errno) -> I {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Errno(rawValue: errno)
        if retryOnInterrupt && code == .interrupted { continue }
        throw code
    }
}
