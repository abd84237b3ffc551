import Folio
import Logging

/// What every connection shares: the coordination arbiter and the type registry.
struct DaemonContext: Sendable {
    let arbiter: CoordinationArbiter
    let types: TypeRegistry
    let logger: Logger
}
