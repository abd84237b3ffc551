import Folio
import Foundation
import Logging
import ServiceLifecycle

/// Tells presenters of their items' versions: the version store's manifests are watched
/// (`VersionStoreWatcher`), whoever writes them, and each version gained, lost or resolved goes
/// to the item's presenters and, as subitem messages, to the presenters of the folders above it.
struct VersionMessageService: Service {
    let watcher: VersionStoreWatcher
    let logger: Logger

    init(paths: FolioPaths, arbiter: CoordinationArbiter, logger: Logger) {
        watcher = VersionStoreWatcher(store: VersionStore(directory: paths.versionsDirectory), logger: logger) { path, changes in
            arbiter.versionsChanged(at: path, changes)
        }
        self.logger = logger
    }

    func run() async throws {
        // The first look reads every manifest: on a thread of its own, not Swift's shared pool.
        let watcher = watcher, logger = logger
        let starting = Thread {
            do {
                try watcher.start()
            } catch {
                logger.warning("presenters will not hear of versions: the version store cannot be watched", metadata: ["error": "\(error)"])
            }
        }
        starting.name = "folio-versions-start"
        starting.start()
        try? await gracefulShutdown()
        watcher.stop()
    }
}
