import Folio
import Logging

/// What every connection shares: the coordination arbiter, the isolation layer, the metadata index,
/// the type registry and the drive.
struct DaemonContext: Sendable {
    let arbiter: CoordinationArbiter
    let access: AccessService
    let index: MetadataIndex
    let appSockets: AppSockets
    let types: TypeRegistry
    /// The drive (nil when the daemon was started without a way to reach one).
    let drive: DriveService?
    let logger: Logger
}
