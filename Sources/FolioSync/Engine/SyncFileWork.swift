import NIOPosix

/// The sync engine's file work — scanning the replica, hashing, copying and flushing files — runs
/// on a pool of its own for blocking work, never on Swift's cooperative pool, whose few threads (one
/// per core) every task of the process shares. The pool has a thread for each transfer the engine
/// runs at once: most of its work waits on the disk (a download's flush, a snapshot's copy), and
/// a pool of one thread per core (NIO's shared one) queued one transfer's flush behind another's.
/// The `folio drive` commands use it too, for what opens the drive (its configuration, its secret,
/// whose key may need a `secret-tool` run).
package enum SyncFileWork {
    /// The threads: one per transfer at once (``SyncEngine/defaultConcurrency``).
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: SyncEngine.defaultConcurrency)
        pool.start()
        return pool
    }()

    /// Runs `body` on the pool and returns its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }
}
