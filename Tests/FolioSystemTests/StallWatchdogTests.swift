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
    /// A thread of its own stands in for a shared pool (blocking the real ones would stall the
    /// other tests of this process; a private dispatch queue would share the global pool, whose
    /// stalls under the suite's load are not this test's): blocked for 1.6 s, it is reported once,
    /// naming the blocked thread; a pool that keeps running is not.
    @Test func aBlockedPoolIsReportedWithItsThreads() async throws {
        // The suite's own watchdog may take every thread's stack with gdb at the moment this one
        // reads the threads' states, and then every thread shows stopped by the debugger
        // (`ptrace_stop`): that attempt tells nothing, and is made again (at most three in all).
        for attempt in 1...3 {
            let threads = try await reportOfABlockedPool()
            if attempt < 3, threads.contains("watchdog-block t ptrace_stop") { continue }
            // Each thread with its state and wait: the blocker sleeping.
            #expect(threads.split(separator: "\n").contains { $0.contains("watchdog-block") && $0.contains("nanosleep") }, "\(threads)")
            return
        }
    }

    /// A private watchdog over two threads, one blocked for 1.6 s: checks that the stall was
    /// reported once, for that thread's pool alone, and returns the report's threads. (Stacks
    /// through gdb are left out here: gdb stops the whole process, which would stall the other
    /// tests' pools.)
    private func reportOfABlockedPool() async throws -> String {
        let blocked = WorkerThread(name: "watchdog-blocked")
        let free = WorkerThread(name: "watchdog-free")
        // Both threads running and the blocker in its sleep before the watchdog starts: under the
        // suite's load a thread can be slower than the limit to start, and its pool was then
        // reported before the blocker began (its thread not yet named, nothing yet asleep).
        await withCheckedContinuation { continuation in free.async { continuation.resume() } }
        await withCheckedContinuation { continuation in
            blocked.async {
                try? "watchdog-block".write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                continuation.resume()
                usleep(1_600_000)
            }
        }
        let watchdog = StallWatchdog(
            pools: [
                .init(name: "blocked queue") { blocked.async($0) },
                .init(name: "free queue") { free.async($0) },
            ], limit: 0.5, announces: false, stacks: false)
        watchdog.start()
        #expect(await eventually(10) { !watchdog.stalls(since: 0).isEmpty })
        // Once the blocker ends, the heartbeats queued behind it run, then this marker; then check
        // that this one stall was reported once, and nothing of the free pool.
        await withCheckedContinuation { continuation in blocked.async { continuation.resume() } }
        let stalls = watchdog.stalls(since: 0)
        #expect(stalls.count == 1, "\(stalls.map { "\($0.pool) \($0.seconds) s" })")
        #expect(stalls.first?.pool == "blocked queue")
        #expect((stalls.first?.seconds ?? 0) > 0.5)
        return stalls.first?.threads ?? ""
    }
}

/// A thread that runs the closures given to it one after another (a serial queue that shares no
/// pool with anything else).
private final class WorkerThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var work: [@Sendable () -> Void] = []

    init(name: String) {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while work.isEmpty { condition.wait() }
                let next = work.removeFirst()
                condition.unlock()
                next()
            }
        }
        thread.name = name
        thread.start()
    }

    func async(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        work.append(body)
        condition.signal()
        condition.unlock()
    }
}
