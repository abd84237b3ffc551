import ServiceLifecycle

/// Runs the metadata index for the daemon's lifetime: crawling and watching start with the
/// daemon and stop at its graceful shutdown.
struct IndexService: Service {
    let index: MetadataIndex

    func run() async throws {
        index.start()
        try? await gracefulShutdown()
        index.stop()
    }
}
