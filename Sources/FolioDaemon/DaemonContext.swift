import Folio
import Logging

/// What every connection shares: the coordination arbiter, the isolation layer, the metadata index,
/// the type registry, the drive and the blocking pools.
struct DaemonContext: Sendable {
    let arbiter: CoordinationArbiter
    let access: AccessService
    let index: MetadataIndex
    let appSockets: AppSockets
    let types: TypeRegistry
    /// The drive (nil when the daemon was started without a way to reach one).
    let drive: DriveService?
    /// Threads for the handlers that block (`RequestPlacement`).
    let pools: DaemonPools
    /// Every handler on the event loop (`DaemonConfiguration.inlineRequests`, benchmarks only).
    let inlineRequests: Bool
    /// What each app's connections, and the user's clients, may hold (``ClientBudgets``).
    let budgets: ClientBudgets
    let logger: Logger
}
