import Foundation
import FolioSystem

extension CoordinationEngine {
    /// An engine for the current task only (tests run the same suite against several engines).
    @TaskLocal package static var override: CoordinationEngine?

    /// The process's engine: the daemon when one answers on the user's socket, else in-process.
    /// `FOLIO_COORDINATION=local` forces the in-process engine, `=daemon` requires the daemon (an
    /// unreachable daemon then fails every coordination with a clear error).
    package static let shared: CoordinationEngine = makeShared()

    /// The engine new coordinators and presenters use.
    package static var current: CoordinationEngine { override ?? shared }

    private static func makeShared() -> CoordinationEngine {
        let mode = ProcessInfo.processInfo.environment["FOLIO_COORDINATION"] ?? "auto"
        if mode == "local" { return LocalCoordinationEngine() }
        let socket = FolioPaths().socketPath
        do {
            return try DaemonCoordinationEngine(socketPath: socket)
        } catch {
            // An app must not lose its isolation silently: without the daemon it runs unconfined.
            if mode == "daemon" || AppIdentity.current != nil { return UnreachableCoordinationEngine(reason: "\(error)") }
            return LocalCoordinationEngine()
        }
    }
}
