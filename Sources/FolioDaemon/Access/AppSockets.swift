import Folio
import Foundation
import NIOCore
import Synchronization

/// Sockets that belong to one app each (`$XDG_RUNTIME_DIR/folio/apps/<app-id>.sock`): a sandboxed
/// app sees only its own, bound at the usual socket path, and every connection on it is that app
/// whatever its hello says — so a confined app cannot pass itself off as another.
final class AppSockets: Sendable {
    /// Binds app `app`'s socket (once) and returns its path; set by the control socket service.
    private let binder = Mutex<(@Sendable (String) -> EventLoopFuture<String>)?>(nil)
    private let bound = Mutex<[String: EventLoopFuture<String>]>([:])

    func setBinder(_ binder: @escaping @Sendable (String) -> EventLoopFuture<String>) {
        self.binder.withLock { $0 = binder }
    }

    /// App `app`'s socket path, once it listens.
    func socket(for app: String) throws(CoordinationFailure) -> EventLoopFuture<String> {
        guard let binder = binder.withLock({ $0 }) else { throw CoordinationFailure(kind: .failed, message: "the daemon is not listening yet") }
        return bound.withLock { bound in
            if let future = bound[app] { return future }
            let future = binder(app)
            bound[app] = future
            return future
        }
    }
}
