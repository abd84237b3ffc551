import NIOPosix

/// The providers' blocking file work — creating, writing and removing a download's file — runs on
/// a pool of its own, never on Swift's cooperative pool, whose few threads (one per core) every
/// task of the process shares: creating a file waited there for the file system (on a journal-less
/// ext4 with many recent deletions, most of a small file's download). A thread for each of the
/// sixteen transfers the sync engine runs at once.
enum ProviderFileWork {
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 16)
        pool.start()
        return pool
    }()

    /// Runs `body` on the pool and returns its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(body)
    }
}
