import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The watchdog the whole suite runs with: a pool whose heartbeat is late is reported, once per
/// stall, with what every thread was doing.
@Suite("Stall watchdog", .elasticPool)
struct StallWatchdogTests {
    /// A private serial queue stands in for a shared pool (blocking the real ones would stall the
    /// other tests of this process): blocked for 1.6 s, it is reported once, naming the blocked
    /// thread; a queue that keeps running is not.
    @Test func aBlockedPoolIsReportedWithItsThreads() async throws {
        let blocked = DispatchQueue(label: "watchdog-test-blocked")
        let free = DispatchQueue(label: "watchdog-test-free")
        let watchdog = StallWatchdog(
            pools: [
                .init(name: "blocked queue") { blocked.async(execute: $0) },
                .init(name: "free queue") { free.async(execute: $0) },
            ], limit: 0.5, announces: false, stacks: false)
        watchdog.start()
        let done = DispatchSemaphore(value: 0)
        blocked.async {
            try? "watchdog-block".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
            usleep(1_600_000)
            done.signal()
        }
        #expect(await eventually(10) { !watchdog.stalls(since: 0).isEmpty })
        // Once the blocker ends, the queue's heartbeats run again; wait for that, then check that
        // this one stall was reported once, and nothing of the free queue.
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "watchdog-test-wait").async {
                done.wait()
                continuation.resume()
            }
        }
        let marker = DispatchSemaphore(value: 0)
        blocked.async { marker.signal() }
        #expect(marker.wait(timeout: .now() + 5) == .success)
        let stalls = watchdog.stalls(since: 0)
        #expect(stalls.count == 1)
        #expect(stalls.first?.pool == "blocked queue")
        #expect((stalls.first?.seconds ?? 0) > 0.5)
        // Each thread with its state and wait: the blocker sleeping. (Stacks through gdb are left
        // out here: gdb stops the whole process, which would stall the other tests' pools.)
        let threads = stalls.first?.threads ?? ""
        #expect(threads.split(separator: "\n").contains { $0.contains("watchdog-block") && $0.contains("nanosleep") }, "\(threads)")
    }
}
