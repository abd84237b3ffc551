import NIOPosix

/// The sync engine's file work — scanning the replica, hashing, copying and flushing files — runs
/// on NIO's pool for blocking work, never on Swift's cooperative pool, whose few threads (one per
/// core) every task of the process shares.
enum SyncFileWork {
    /// Runs `body` on the blocking pool and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}
