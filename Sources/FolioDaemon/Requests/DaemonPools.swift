import NIOCore
import NIOPosix
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The daemon's threads for work that blocks (docs/architecture.md, "Threads"). The event loops only
/// parse, route and answer from memory; anything that touches a file, SQLite or waits runs here.
///
/// Two pools, so that long work cannot hold up short work: `quick` for a few syscalls on paths an
/// app names (access checks, grants, the picker's bookkeeping), `slow` for walks and reads whose
/// length the request decides (bookmark resolution over a tree, content sniffing, the picker's
/// coordinated copies). Each request runs on the pool its handler declares (`RequestPlacement`).
final class DaemonPools: Sendable {
    /// Short blocking work: a handful of syscalls or one SQLite statement.
    let quick: NIOThreadPool
    /// Long blocking work: walks, reads of whole files, coordinated copies.
    let slow: NIOThreadPool

    /// Starts both pools, each with one thread per core (at least two).
    init(threads: Int = max(2, System.coreCount)) {
        quick = NIOThreadPool(numberOfThreads: threads)
        slow = NIOThreadPool(numberOfThreads: threads)
        quick.start()
        slow.start()
    }

    /// The pool for `placement` (nil for work that stays on the event loop).
    func pool(for placement: RequestPlacement) -> NIOThreadPool? {
        switch placement {
        case .eventLoop: nil
        case .quick: quick
        case .slow: slow
        }
    }

    /// Runs `work` on the pool for `placement`, without a result (clean-up after a connection, say).
    func submit(_ placement: RequestPlacement, _ work: @escaping @Sendable () -> Void) {
        guard let pool = pool(for: placement) else { return work() }
        pool.submit { state in
            guard case .active = state else { return }
            Self.yieldToEventLoops(placement)
            work()
        }
    }

    /// Runs `work` on the pool for `placement` and completes the future on `eventLoop`.
    func run<T: Sendable>(_ placement: RequestPlacement, on eventLoop: any EventLoop, _ work: @escaping @Sendable () -> T) -> EventLoopFuture<T> {
        guard let pool = pool(for: placement) else { return eventLoop.makeSucceededFuture(work()) }
        return pool.runIfActive(eventLoop: eventLoop) {
            Self.yieldToEventLoops(placement)
            return work()
        }
    }

    /// The slow pool's threads run at a lower priority (nice 10), once per thread: on a machine
    /// whose cores they fill, a woken event loop (and the quick pool) gets a core at once rather
    /// than after their time slices, so long work cannot stretch everyone's coordinations.
    private static func yieldToEventLoops(_ placement: RequestPlacement) {
        guard placement == .slow, lowered.currentValue == nil else { return }
        lowered.currentValue = Lowered()
        // On Linux the nice value is per thread, and 0 names the calling thread.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
    }

    /// Marks a thread whose priority was lowered already.
    private final class Lowered: Sendable {}
    private static let lowered = ThreadSpecificVariable<Lowered>()

    /// Stops both pools once the work already queued has run.
    func shutdown() async {
        try? await quick.shutdownGracefully()
        try? await slow.shutdownGracefully()
    }
}

/// Where a request's handler runs. Declared once per request, with its route (`RequestRoute`), so a
/// handler that may block can never run on an event loop by accident.
enum RequestPlacement: Sendable, Equatable {
    /// Answers from memory: parsing, the arbiter's lock table, the type registry.
    case eventLoop
    /// A few syscalls on paths a client named, or one SQLite statement.
    case quick
    /// Work whose length the request decides: walks, whole-file reads, coordinated copies.
    case slow
}
