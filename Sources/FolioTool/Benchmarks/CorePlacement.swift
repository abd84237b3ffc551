import CFolioShims
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Where a round-trip benchmark's processes run. On a virtual machine a wake-up that crosses cores
/// costs several times one that stays on a core (measured here: a raw ping-pong takes 8–9 µs on one
/// core and 35–50 µs across two), and the scheduler picks either from one block to the next, so a
/// ratio taken with the placement left free says more about the scheduler than about the code.
/// The benchmark measures each placement on purpose and reports them apart.
enum CorePlacement: String, CaseIterable {
    /// The scheduler decides (what an app gets).
    case free
    /// The client, the daemon and the echo process on one core.
    case sameCore = "same core"
    /// The client on one core; the daemon and the echo process on another.
    case crossCore = "cross core"

    /// The placements this machine can show: all three with two or more cores, else `free`.
    static var available: [CorePlacement] {
        sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 ? allCases : [.free]
    }

    /// Pins this process's threads and every thread of `servers` as the placement says.
    func apply(servers: [pid_t]) {
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        let client: [Int], server: [Int]
        switch self {
        case .free: (client, server) = (Array(0..<cores), Array(0..<cores))
        case .sameCore: (client, server) = ([0], [0])
        case .crossCore: (client, server) = ([0], [1])
        }
        Self.pin(process: getpid(), to: client)
        for pid in servers { Self.pin(process: pid, to: server) }
    }

    /// Sets the affinity of every thread of `process` (threads started later inherit their
    /// creator's).
    private static func pin(process: pid_t, to cores: [Int]) {
        let mask = cores.filter { $0 < 64 }.reduce(UInt64(0)) { $0 | (1 << UInt64($1)) }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task")) ?? []
        for thread in threads.compactMap({ pid_t($0) }) { _ = cfolio_set_affinity(thread, mask) }
    }
}
