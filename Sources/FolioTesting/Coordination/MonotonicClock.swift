#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds: one clock for every process on the machine, so events logged by
/// several processes can be ordered.
package enum MonotonicClock {
    package static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
