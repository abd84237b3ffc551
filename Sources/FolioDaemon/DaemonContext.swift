import Folio
import Logging

/// What every connection shares: the coordination arbiter, the isolation layer and the type registry.
struct DaemonContext: Sendable {
    let arbiter: CoordinationArbiter
    let access: AccessService
    let appSockets: AppSockets
    let types: TypeRegistry
    let logger: Logger
}
