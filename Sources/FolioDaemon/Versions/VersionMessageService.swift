import Folio
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

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

    /// Places the watch and reads every manifest once (what is there then is not news), on a
    /// thread of its own, not Swift's shared pool; returns when that is done, or after `deadline`.
    /// The daemon calls it before it serves: a version added once a presenter could be registered
    /// is news (started while the daemon already served, a version added before the first look
    /// was taken for one that was there, and its presenters never heard of it).
    func start(within deadline: DispatchTimeInterval) async {
        let watcher = watcher, logger = logger
        let started = Started()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            started.waiting(continuation)
            let starting = Thread {
                do {
                    try watcher.start()
                } catch {
                    logger.warning("presenters will not hear of versions: the version store cannot be watched", metadata: ["error": "\(error)"])
                }
                started.resume()
            }
            starting.name = "folio-versions-start"
            starting.start()
            DispatchQueue(label: "folio.versions.start-deadline").asyncAfter(deadline: .now() + deadline) {
                if started.resume() {
                    logger.notice("the version store's first look is taking long; the daemon serves meanwhile, and versions added before it ends are not told to presenters")
                }
            }
        }
    }

    func run() async throws {
        try? await gracefulShutdown()
        watcher.stop()
    }

    /// The start's one wait, ended by whichever comes first: the first look done, or the deadline.
    private final class Started: Sendable {
        private let continuation = Mutex<CheckedContinuation<Void, Never>?>(nil)

        func waiting(_ waiter: CheckedContinuation<Void, Never>) {
            continuation.withLock { $0 = waiter }
        }

        /// Ends the wait; false when it had ended already.
        @discardableResult
        func resume() -> Bool {
            guard let waiter = continuation.withLock({ state -> CheckedContinuation<Void, Never>? in
                defer { state = nil }
                return state
            }) else { return false }
            waiter.resume()
            return true
        }
    }
}
