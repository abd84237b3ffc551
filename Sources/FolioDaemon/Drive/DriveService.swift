import Folio
import FolioSync
import FolioSystem
import Foundation
import GRDB
import Logging
import NIOPosix
import ServiceLifecycle
import SystemPackage
import Synchronization

/// The daemon's drive: a sync pass shortly after coordinated writes land in it (once they have
/// been quiet for `quiet`), a pass every `interval` otherwise (remote changes, writers that do not
/// coordinate), a pass when `folio drive sync` asks for one (`drive.sync`), and placeholders
/// materialized for coordinated reads. Without a configured drive it
/// does nothing. The configuration is looked at again at each pass, so `folio drive setup` needs no
/// restart, also when it moves the drive to another server.
final class DriveService: Service, Sendable {
    let paths: FolioPaths
    /// The daemon's pool on the index database, which the drive's journal shares (GRDB: one pool per
    /// database file in a process).
    let database: any DatabaseWriter
    let makeProvider: @Sendable (_ replicaRoot: String?) throws -> (any FileProvider)?
    let interval: Duration
    let quiet: Duration
    let logger: Logger
    /// Told after each pass and around each download, with the paths being downloaded: the index
    /// brings its drive items' sync states up to date.
    let statesChanged: @Sendable (_ downloading: Set<String>) -> Void
    /// Told, at most four times a second, how far each download is (0…100, by path) and which
    /// ended since: the index shows them as they go.
    let downloadsChanged: @Sendable (_ percents: [String: Double], _ ended: Set<String>) -> Void
    private let state = Mutex(State())

    private struct State {
        var drive: DriveSync?
        /// The configuration files the drive was made from, as they were then.
        var madeFrom: [FileStatus?] = []
        /// When the last coordinated write in the drive ended, while no pass has taken it.
        var dirtySince: ContinuousClock.Instant?
        /// The paths being materialized now.
        var downloading: Set<String> = []
        /// The last passes, newest last (at most `keptPasses`).
        var passes: [PassRecord] = []
        /// Downloads asked for by the browser page, by path: their progress, and the task to
        /// cancel.
        var downloads: [String: (number: UUID, progress: Progress, task: Task<Void, Never>)] = [:]
        /// The drive's folder mounted (files on demand), while it is.
        var mount: DriveMount?
        /// Why the drive's folder could not be mounted, logged once.
        var mountRefusal: String?
        /// The daemon's coordination: programs' opens through the mount wait for its writes.
        var arbiter: CoordinationArbiter?
    }

    /// Where the replica is reached while the drive's folder is mounted; nil while it is not.
    var replicaBeneathMount: String? { state.withLock { $0.mount?.fileSystem.replicaPath } }

    /// Makes programs' opens through the drive's mount wait for the coordinated writes `arbiter`
    /// holds for other processes (made after the drive: it tells the drive of writes).
    func coordinate(with arbiter: CoordinationArbiter) {
        state.withLock { $0.arbiter = arbiter }
    }

    /// Held while the drive's folder is mounted or unmounted: `currentDrive()` runs on any thread
    /// of a blocking pool, and two of them must not both mount.
    private let mounting = NSLock()

    /// One pass, as the browser page shows it.
    struct PassRecord: Sendable {
        var ended: Date
        var reason: String
        var report: SyncReport?
        var error: String?
    }

    static let keptPasses = 20

    /// The last passes, oldest first.
    var passes: [PassRecord] { state.withLock { $0.passes } }

    private func record(_ pass: PassRecord) {
        state.withLock { state in
            state.passes.append(pass)
            if state.passes.count > Self.keptPasses { state.passes.removeFirst(state.passes.count - Self.keptPasses) }
        }
    }

    /// Starts downloading `path` (a placeholder, or a folder with placeholders below) in the
    /// background; `progress(of:)` follows it, `cancelDownload` stops it. `finished` is called
    /// when it ends, with its error unless it succeeded.
    func startDownload(_ path: String, finished: @escaping @Sendable ((any Error)?) -> Void) async throws {
        guard let drive = try await preparedDrive() else {
            throw FileProviderError(.providerDomainNotFound, message: "no drive is set up")
        }
        let relative = try drive.drivePath(path)
        let progress = Progress(totalUnitCount: 0)
        let number = UUID()
        // The entry is made, and the task started, in one step: a second request for the path
        // finds it, and a download that ends at once removes an entry that is there.
        let started = state.withLock { state -> Bool in
            guard state.downloads[path] == nil else { return false }
            state.downloading.insert(path)
            let task = Task {
                var failure: (any Error)?
                do { _ = try await drive.download([relative], progress: progress) } catch { failure = error }
                let downloading = self.state.withLock { state -> Set<String> in
                    if state.downloads[path]?.number == number {
                        state.downloads[path] = nil
                        state.downloading.remove(path)
                    }
                    return state.downloading
                }
                self.statesChanged(downloading)
                if let failure {
                    self.logger.notice("a download from the browser page ended early", metadata: ["path": "\(relative)", "error": "\(failure)"])
                }
                finished(failure)
            }
            state.downloads[path] = (number, progress, task)
            return true
        }
        if started { statesChanged(state.withLock { $0.downloading }) }
    }

    /// Tells the index the drive's states changed (after an eviction or a pin).
    func refreshStates() {
        statesChanged(state.withLock { $0.downloading })
    }

    /// The downloads under way, with the fraction done of each.
    func downloadProgress() -> [(path: String, fraction: Double, completed: Int64, total: Int64)] {
        state.withLock { state in
            state.downloads.map { ($0.key, $0.value.progress.fractionCompleted, $0.value.progress.completedUnitCount, $0.value.progress.totalUnitCount) }
                .sorted { $0.0 < $1.0 }
        }
    }

    /// Cancels the download of `path`; false when none is under way.
    func cancelDownload(_ path: String) -> Bool {
        guard let download = state.withLock({ $0.downloads[path] }) else { return false }
        download.progress.cancel()
        download.task.cancel()
        return true
    }

    /// The drive, made or made again as its configuration says (nil while none is set up), on a
    /// blocking pool.
    func drive() async throws -> DriveSync? { try await preparedDrive() }

    init(
        paths: FolioPaths, database: any DatabaseWriter, makeProvider: @escaping @Sendable (_ replicaRoot: String?) throws -> (any FileProvider)?, interval: Duration, quiet: Duration = .seconds(2),
        statesChanged: @escaping @Sendable (_ downloading: Set<String>) -> Void = { _ in },
        downloadsChanged: @escaping @Sendable (_ percents: [String: Double], _ ended: Set<String>) -> Void = { _, _ in }, logger: Logger
    ) {
        self.paths = paths
        self.database = database
        self.makeProvider = makeProvider
        self.interval = interval
        self.quiet = quiet
        self.statesChanged = statesChanged
        self.downloadsChanged = downloadsChanged
        var logger = logger
        logger[metadataKey: "service"] = "drive"
        self.logger = logger
    }

    /// Whether `path` lies in the drive's replica.
    func contains(_ path: String) -> Bool {
        DriveSync.replicaContains(path, paths: paths)
    }

    /// A coordinated write ended: when it was in the drive, a pass follows once writes are quiet.
    func noteWrite(_ change: CoordinatedChange) {
        let touched: [String]
        switch change {
        case .wrote(let path): touched = [path]
        case .moved(let from, let to): touched = [from, to]
        }
        guard touched.contains(where: contains) else { return }
        state.withLock { $0.dirtySince = .now }
    }

    /// Downloads the placeholder standing for `path` (a coordinated read or write of it is waiting,
    /// or a program's open through the drive's mount), telling `progress` how far it is.
    func materialize(_ path: String, progress: Progress = Progress(totalUnitCount: 0), arriving: ArrivingContents? = nil) async throws {
        guard let drive = try await preparedDrive() else {
            throw FileProviderError(.providerDomainNotFound, message: "no drive is set up, and “\(path)” is a placeholder")
        }
        let relative = try drive.drivePath(path)
        logger.info("materializing a placeholder for an access", metadata: ["path": "\(relative)"])
        statesChanged(state.withLock { $0.downloading.insert(path); return $0.downloading })
        defer { statesChanged(state.withLock { $0.downloading.remove(path); return $0.downloading }) }
        _ = try await drive.download([relative], progress: progress, arriving: arriving)
    }

    /// Whether `path` is a folder (a package, say) in the drive with a placeholder somewhere inside:
    /// a coordinated read of it downloads them first (the walk stops at the first one found).
    func holdsPlaceholders(_ path: String) -> Bool {
        // Beneath the drive's mount, where stubs are seen as they are.
        guard contains(path) else { return false }
        let path = PathRedirect.physical(path)
        guard (try? FileStatus(path: FilePath(path)))?.kind == .directory else { return false }
        var found = false
        DirectoryScanner().scan(path, visit: { entry in
            if PlaceholderStub.isStubName(entry.name) { found = true }
            return !found
        }, skipped: { _, _ in })
        return found
    }

    /// Whether `path` is a placeholder: a stub is there, the document is not.
    func isPlaceholder(_ path: String) -> Bool {
        guard contains(path) else { return false }
        let path = PathRedirect.physical(path)
        return access(path, F_OK) != 0 && PlaceholderStub.read(at: path + PlaceholderStub.suffix) != nil
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.schedulePasses() }
                group.addTask { await self.forwardDownloads() }
            }
        }
        _ = try? await SyncFileWork.run { self.unmounted() }
    }

    /// Runs a pass at start, once coordinated writes are quiet, and every interval.
    private func schedulePasses() async {
        var last: ContinuousClock.Instant?
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let dirty = state.withLock { $0.dirtySince }
            if let dirty, now - dirty >= quiet {
                state.withLock { $0.dirtySince = nil }
                await pass(reason: "coordinated writes")
                last = .now
            } else if last.map({ now - $0 >= interval }) ?? true {
                await pass(reason: last == nil ? "start" : "interval")
                last = .now
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// Every quarter second, tells the index how far the drive's downloads are when that changed.
    private func forwardDownloads() async {
        var shown: [String: Double] = [:]
        while !Task.isCancelled {
            if let drive = state.withLock({ $0.drive }) {
                var percents: [String: Double] = [:]
                for (path, transfer) in drive.progress.transfers where transfer.direction == .download {
                    percents[paths.driveDirectory + "/" + path] = transfer.percent
                }
                if percents != shown {
                    downloadsChanged(percents, Set(shown.keys).subtracting(percents.keys))
                    shown = percents
                }
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// What the drive's passes and downloads in the daemon are doing now (nil without a drive).
    func progress() -> SyncProgressBoard.Snapshot? {
        state.withLock { $0.drive }?.progress
    }

    /// Runs a pass of `drive` now, for `folio drive sync` (`drive.sync`), after any pass under way
    /// (passes never overlap), and returns its report. Logged whatever it did.
    func syncNow(_ drive: DriveSync, confirmingDeletions: Bool) async throws -> SyncReport {
        try await pass(drive, reason: Self.requested, confirmingDeletions: confirmingDeletions)
    }

    /// The reason logged for a pass `folio drive sync` asked for.
    static let requested = "request"

    /// A pass of the drive's own (at start, after coordinated writes, every interval).
    private func pass(reason: String) async {
        let drive: DriveSync?
        do {
            drive = try await preparedDrive()
        } catch {
            logger.warning("drive sync failed", metadata: ["reason": "\(reason)", "error": "\(error)"])
            record(PassRecord(ended: Date(), reason: reason, error: "\(error)"))
            statesChanged(state.withLock { $0.downloading })
            return
        }
        guard let drive else { return }
        _ = try? await pass(drive, reason: reason)
    }

    /// One pass of `drive`, logged when it did something (or was asked for) and when it failed;
    /// the index hears the drive's states after it.
    private func pass(_ drive: DriveSync, reason: String, confirmingDeletions: Bool = false) async throws -> SyncReport {
        defer { statesChanged(state.withLock { $0.downloading }) }
        do {
            // A pass the user asked for also tries what was set aside.
            let report = try await drive.sync(confirmingDeletions: confirmingDeletions, retryingSetAside: reason == Self.requested)
            record(PassRecord(ended: Date(), reason: reason, report: report))
            var news = report
            news.setAside = [:]
            if news != SyncReport() || reason == Self.requested {
                logger.info(
                    "drive synced",
                    metadata: [
                        "reason": "\(reason)", "uploaded": "\(report.uploaded)", "downloaded": "\(report.downloaded)",
                        "placeholders": "\(report.placeholders)", "deletedOnServer": "\(report.deletedOnServer)", "deletedHere": "\(report.deletedHere)",
                        "conflicts": "\(report.conflicts.count)", "deferred": "\(report.deferred.count)", "setAside": "\(report.setAside.count)",
                        "held": "\(report.heldDeletions)",
                    ])
            }
            return report
        } catch {
            logger.warning("drive sync failed", metadata: ["reason": "\(reason)", "error": "\(error)"])
            record(PassRecord(ended: Date(), reason: reason, error: "\(error)"))
            throw error
        }
    }

    /// The replica beneath the drive's folder, mounted now if it was not; nil when it cannot be
    /// (the drive then keeps stubs, and says why once).
    private func mountedReplica() -> String? {
        mounting.lock()
        defer { mounting.unlock() }
        if let mount = state.withLock({ $0.mount }) { return mount.fileSystem.replicaPath }
        do {
            try FileManager.default.createDirectory(atPath: paths.driveDirectory, withIntermediateDirectories: true)
            let mount = try DriveMount(
                paths.driveDirectory, journal: SyncJournal(database: database, domain: DriveSync.domain),
                materialize: { [weak self] relative, progress, arriving in
                    guard let self else { throw FileProviderError(.providerDomainNotFound, message: "the daemon is stopping") }
                    try await self.materialize(self.paths.driveDirectory + "/" + relative, progress: progress, arriving: arriving)
                },
                // A program's change through the mount is sent once writes are quiet, as a coordinated one is.
                changed: { [weak self] relative in
                    guard let self else { return }
                    self.noteWrite(.wrote(self.paths.driveDirectory + "/" + relative))
                }, arbiter: state.withLock { $0.arbiter }, versions: VersionStore(directory: paths.versionsDirectory), logger: logger)
            state.withLock {
                $0.mount = mount
                $0.mountRefusal = nil
            }
            // The daemon owns the replica: its index, watches and checks see it beneath the mount.
            PathRedirect.redirect(paths.driveDirectory, to: mount.fileSystem.replicaPath)
            logger.info("the drive's folder is mounted: files not downloaded show under their names", metadata: ["folder": "\(paths.driveDirectory)"])
            return mount.fileSystem.replicaPath
        } catch {
            let reason = "\(error)"
            if state.withLock({ state in defer { state.mountRefusal = reason }; return state.mountRefusal != reason }) {
                logger.warning("the drive's folder could not be mounted: files not downloaded stay stubs", metadata: ["error": "\(reason)"])
            }
            return nil
        }
    }

    /// Unmounts the drive's folder if it is mounted (the configuration went back to stubs, or no
    /// drive is set up); nil.
    private func unmounted() -> String? {
        mounting.lock()
        defer { mounting.unlock() }
        if let mount = state.withLock({ state in defer { state.mount = nil }; return state.mount }) {
            PathRedirect.remove(paths.driveDirectory)
            mount.unmount()
        }
        return nil
    }

    /// `currentDrive()` for async callers, on a blocking pool (it reads files), not on Swift's
    /// cooperative pool.
    private func preparedDrive() async throws -> DriveSync? {
        try await NIOThreadPool.singleton.runIfActive { try self.currentDrive() }
    }

    /// The drive (nil while none is configured): made on first use, and made again when its
    /// configuration changed since (`folio drive setup` while the daemon runs: the next pass goes to
    /// the new server, with the same checks as a pass of the command's own). A pass still running on
    /// the old drive finishes first: passes take the drive's lock file. Blocking work (a `stat` of
    /// the configuration each time; reading it and making the provider when it changed), for a
    /// blocking pool.
    func currentDrive() throws -> DriveSync? {
        let files = [paths.driveConfiguration, DriveConfiguration.secretPath(paths)].map { try? FileStatus(path: FilePath($0), followSymlinks: true) }
        let (known, madeFrom) = state.withLock { ($0.drive, $0.madeFrom) }
        if let known, madeFrom == files { return known }
        if known != nil { logger.notice("the drive's configuration changed: the next pass uses the new one") }
        // With files on demand the replica is reached beneath the mount (a provider program too).
        let onDemand = (try? DriveConfiguration.load(paths))??.files == .onDemand
        let replicaRoot = onDemand ? mountedReplica() : unmounted()
        guard let provider = try makeProvider(replicaRoot) else {
            state.withLock {
                $0.drive = nil
                $0.madeFrom = []
            }
            _ = unmounted()
            return nil
        }
        let drive = try DriveSync(provider: provider, paths: paths, database: database, replicaRoot: replicaRoot)
        state.withLock {
            $0.drive = drive
            $0.madeFrom = files
        }
        return drive
    }
}
