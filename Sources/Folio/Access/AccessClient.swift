import Foundation

/// The library's way to the daemon's isolation layer: bookmarks are signed and resolved there, the
/// picker runs there, and grants are checked there. Without a daemon (or with a key set for the
/// current task, as tests do) bookmarks are made in process with the same key.
package enum AccessClient {
    /// The daemon connection in use, if any.
    package static var daemon: DaemonCoordinationEngine? {
        if BookmarkKeys.override != nil { return nil }
        return CoordinationEngine.current as? DaemonCoordinationEngine
    }

    /// For an app talking to a daemon: asks whether the app still holds the grant behind a scope
    /// (revoking takes effect at the next outermost start).
    package static var verifier: ((String) -> Bool)? {
        guard let daemon, daemon.app != nil else { return nil }
        return { path in
            (try? daemon.send(AccessCheck(path: path)))?.allowed ?? false
        }
    }

    /// Sends an access request; a refusal becomes the error Apple's API would throw.
    package static func send<Request: DaemonRequest>(_ daemon: DaemonCoordinationEngine, _ request: Request) throws -> Request.Reply {
        do {
            return try daemon.send(request)
        } catch {
            throw error.publicError
        }
    }
}
