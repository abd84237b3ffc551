import Folio
import Logging

/// What every connection shares: the coordination arbiter, the isolation layer, the metadata index
/// and the type registry.
struct DaemonContext: Sendable {
    let arbiter: CoordinationArbiter
    let access: AccessService
    let index: MetadataIndex
    let appSockets: AppSockets
    let types: TypeRegistry
    let logger: Logger
}
