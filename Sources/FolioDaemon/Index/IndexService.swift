import ServiceLifecycle

/// Stops the metadata index at the daemon's graceful shutdown (it starts in `buildDaemon`, before
/// the socket takes its first request, so that its start-up work is queued ahead of any request's).
struct IndexService: Service {
    let index: MetadataIndex

    func run() async throws {
        try? await gracefulShutdown()
        index.stop()
    }
}
