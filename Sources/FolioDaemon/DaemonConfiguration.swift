public import Folio
package import FolioSync
public import Foundation

/// What the daemon needs to start: where its files live.
public struct DaemonConfiguration: Sendable {
    /// The XDG places: socket, index database, apps, containers.
    public var paths: FolioPaths

    /// How long a presenter may take to answer a coordination's message before that coordination
    /// fails (and the presenter is logged as the culprit).
    public var presenterTimeout: Duration

    /// Whether the index watches the file system with inotify (`FOLIO_INDEX_WATCH=off` turns it
    /// off, so tests can show that coordinated writes alone reach the index).
    public var indexWatchesFileSystem: Bool

    /// A pause after each crawl step (`FOLIO_INDEX_STEP_DELAY`, milliseconds; tests slow a crawl
    /// down to kill the daemon in the middle of it).
    public var indexStepDelay: Duration

    /// Whether the index reads documents' text for content search (`FOLIO_INDEX_CONTENT=off`
    /// turns it off: names, types and dates only, as benchmarks of the crawl want).
    public var indexReadsContent: Bool

    /// Makes the drive's provider from its configuration (nil while no drive is set up), given
    /// where the replica is reached when not at the drive's folder (beneath its mount); without
    /// it the daemon leaves the drive to `folio drive sync`. The `folio daemon` command sets it.
    public var driveProvider: (@Sendable (_ replicaRoot: String?) throws -> (any FileProvider)?)?

    /// Checks a drive configuration (with its secret) before the browser page saves it: the
    /// provider is made and its root asked for. Set by `folio daemon`, where the providers are
    /// linked; without it the page cannot set up a drive.
    package var driveCheck: (@Sendable (DriveConfiguration, String?) async throws -> Void)?

    /// How often the daemon syncs the drive when nothing asks sooner (`FOLIO_DRIVE_INTERVAL`,
    /// seconds; default 60).
    public var driveInterval: Duration

    /// Benchmarks only (`FOLIO_DAEMON_INLINE_REQUESTS=1`): one event loop, on which every handler
    /// runs, blocking or not — the daemon as it was before its requests declared where they run,
    /// so `folio bench stall` can measure what that buys in the same run.
    public var inlineRequests: Bool

    /// The port the browser page is served on, on 127.0.0.1: 0 (the default) for any free port,
    /// nil for no page (`FOLIO_WEB_PORT`: a number, or `off`). `web.json` says which it got.
    public var webPort: Int?

    /// The user's home folder: the page may browse it (`HOME`).
    public var home: String?

    /// Creates a configuration; by default from the process environment.
    public init(
        paths: FolioPaths = FolioPaths(), presenterTimeout: Duration = .seconds(30),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.paths = paths
        self.presenterTimeout = presenterTimeout
        inlineRequests = environment["FOLIO_DAEMON_INLINE_REQUESTS"] == "1"
        home = environment["HOME"].flatMap { $0.hasPrefix("/") && $0 != "/" ? $0 : nil }
        switch environment["FOLIO_WEB_PORT"] {
        case nil, "": webPort = 0
        case "off": webPort = nil
        case let value?: webPort = Int(value).flatMap { (0...65535).contains($0) ? $0 : nil } ?? 0
        }
        indexWatchesFileSystem = environment["FOLIO_INDEX_WATCH"] != "off"
        indexReadsContent = environment["FOLIO_INDEX_CONTENT"] != "off"
        driveInterval = .seconds(environment["FOLIO_DRIVE_INTERVAL"].flatMap { Double($0) }.map { min(max($0, 0.5), 86_400) } ?? 60)
        indexStepDelay = .milliseconds(Int64(environment["FOLIO_INDEX_STEP_DELAY"].flatMap { Int($0) }.map { min(max($0, 0), 10_000) } ?? 0))
    }
}
