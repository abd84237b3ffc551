import Folio
import FolioSync
public import Logging
import Foundation
import ServiceLifecycle
import UnixSignals

/// The per-user daemon: a `ServiceGroup` of services with graceful shutdown on SIGTERM and SIGINT.
public struct Daemon: Sendable {
    /// Where the daemon listens.
    public let socketPath: String
    /// The index database.
    public let databasePath: String
    private let group: ServiceGroup
    private let store: IndexStore

    /// Runs until a shutdown signal, then stops every service.
    public func run() async throws { try await group.run() }

    init(socketPath: String, databasePath: String, group: ServiceGroup, store: IndexStore) {
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.group = group
        self.store = store
    }
}

/// Builds the daemon: creates the XDG folders, opens the SQLite index, loads the type registry,
/// prepares the control socket and the metadata index (which starts crawling when the daemon runs). Tests call it too.
///
/// - Throws: `DaemonError` when another daemon of this user runs, or the error of the failing step.
public func buildDaemon(configuration: DaemonConfiguration, logger: Logger) async throws -> Daemon {
    let paths = configuration.paths
    // First: a second daemon must fail before it touches the running one's database.
    let lock = try DaemonLock(paths: paths)
    // Folio's folders are the user's alone (0700), whatever the umask; the database is 0600.
    for directory in [paths.dataDirectory, paths.appsDirectory, paths.containersDirectory, paths.stateDirectory, paths.configDirectory] {
        try FolioPaths.makePrivateDirectory(directory)
    }
    // A daemon that was killed left its drive mount dead (every access fails with ENOTCONN): gone
    // before anything looks at the drive's folder.
    DriveMount.clearStale(at: paths.driveDirectory)
    let store = try IndexStore(path: paths.indexDatabase)
    let schema = try store.schemaVersion() ?? "?"
    logger.debug("index database ready", metadata: ["path": "\(paths.indexDatabase)", "schema": "\(schema)"])
    let names = try NameTrigrams(path: paths.indexNamesDatabase, indexPath: paths.indexDatabase, logger: logger)
    let index = MetadataIndex(
        pool: store.pool, names: names, paths: paths, driveStates: DriveJournalStates(paths: paths, database: store.pool),
        watchesFileSystem: configuration.indexWatchesFileSystem, stepDelay: configuration.indexStepDelay,
        extractorExecutable: configuration.indexReadsContent ? MetadataIndex.ownExecutable : nil, logger: logger)
    let drive = configuration.driveProvider.map {
        DriveService(
            paths: paths, database: store.pool, makeProvider: $0, interval: configuration.driveInterval, statesChanged: { index.refreshDriveStates(downloading: $0) },
            downloadsChanged: { index.refreshDownloads($0, ended: $1) }, logger: Logger(label: "folio.drive"))
    }
    var arbiterConfiguration = CoordinationArbiter.Configuration(presenterTimeout: configuration.presenterTimeout)
    arbiterConfiguration.writeEnded = { change in
        index.stitch(change)
        drive?.noteWrite(change)
    }
    let arbiter = CoordinationArbiter(configuration: arbiterConfiguration, logger: logger)
    drive?.coordinate(with: arbiter)
    // Presenters of drive items hear when their state with the server changes.
    index.onUbiquityChange { path, keys in arbiter.ubiquityAttributesChanged(at: path, keys: keys, client: 0) }
    let pools = DaemonPools()
    let access = try AccessService(paths: paths, store: store, arbiter: arbiter, pools: pools, logger: logger)
    let context = DaemonContext(
        arbiter: arbiter, access: access, index: index, appSockets: AppSockets(), types: TypeRegistry.shared, drive: drive, pools: pools,
        inlineRequests: configuration.inlineRequests, budgets: ClientBudgets(), logger: logger)
    index.start()
    // Versions are watched before anyone can connect: a presenter then hears of every version added.
    let versions = VersionMessageService(paths: paths, arbiter: arbiter, logger: logger)
    await versions.start(within: .seconds(5))
    let socket = try await ControlSocketService(paths: paths, lock: lock, context: context, logger: logger)
    let web = configuration.webPort.map { WebService(context: context, paths: paths, port: $0, home: configuration.home, driveCheck: configuration.driveCheck, logger: logger) }
    var services: [any Service] = [IndexService(index: index), versions, socket]
    if let drive { services.append(drive) }
    if let web { services.append(web) }
    let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    return Daemon(socketPath: socket.socketPath, databasePath: paths.indexDatabase, group: group, store: store)
}
