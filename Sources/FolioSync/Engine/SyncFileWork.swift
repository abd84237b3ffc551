import NIOPosix

/// The sync engine's file work — scanning the replica, hashing, copying and flushing files — runs
/// on NIO's pool for blocking work, never on Swift's cooperative pool, whose few threads (one per
/// core) every task of the process shares. The `folio drive` commands use it too, for what opens
/// the drive (its configuration, its secret, whose key may need a `secret-tool` run).
package enum SyncFileWork {
    /// Runs `body` on the blocking pool and returns its result.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await NIOThreadPool.singleton.runIfActive(body)
    }
}
