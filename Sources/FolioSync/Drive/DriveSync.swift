package import Folio
import FolioSystem
package import Foundation
package import GRDB
import Logging
import SystemPackage

/// The user's drive as the daemon and the `folio drive` commands sync it: the replica
/// `$XDG_DATA_HOME/folio/Drive`, the journal in the index database, the version store, and one
/// pass at a time (a lock file in the state folder).
package struct DriveSync: Sendable {
    let engine: SyncEngine
    let paths: FolioPaths
    /// Where the replica's files are: `paths.driveDirectory`, or beneath the drive's mount
    /// (``DriveMount``) while the folder is mounted.
    let replicaRoot: String

    /// The journal domain of the user's drive.
    package static let domain = "drive"

    /// The drive on `provider`, in the folders of `paths`; its journal in `database`, the pool on
    /// the index database (`$XDG_STATE_HOME/folio/index.sqlite`) of this process: the daemon's one
    /// pool, or, in a process of its own, one it opened (GRDB: one pool per database file in a
    /// process). The database's owner migrates it (``SyncJournal/createTables(_:)`` and the rest).
    /// `replicaRoot` is where the replica's files are reached when not at `paths.driveDirectory`
    /// (beneath the drive's mount).
    package init(provider: any FileProvider, paths: FolioPaths = FolioPaths(), database: any DatabaseWriter, replicaRoot: String? = nil) throws {
        try FileManager.default.createDirectory(atPath: paths.driveDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: paths.stateDirectory, withIntermediateDirectories: true)
        self.paths = paths
        self.replicaRoot = replicaRoot ?? paths.driveDirectory
        engine = SyncEngine(
            provider: provider, replica: LocalReplica(root: self.replicaRoot), journal: SyncJournal(database: database, domain: Self.domain),
            versions: VersionStore(directory: paths.versionsDirectory))
    }

    /// Whether `path` lies in the replica of the drive in the folders of `paths` (its own staging
    /// folder excepted).
    package static func replicaContains(_ path: String, paths: FolioPaths) -> Bool {
        path.hasPrefix(paths.driveDirectory + "/") && !path.contains("/" + LocalReplica.stagingName + "/")
    }

    /// One pass, while holding the drive's lock. With `retryingSetAside` (a pass the user asked
    /// for), actions set aside after failing pass after pass are tried again.
    package func sync(confirmingDeletions: Bool = false, retryingSetAside: Bool = false) async throws -> SyncReport {
        let lock = try await DriveLock.acquire(lockPath)
        defer { lock.release() }
        // Every user of the staging folder (a pass, a download, an eviction) holds the lock, so
        // what is there now was left by one that was killed: it goes, before the pass and after.
        _ = try? await sweepStaging()
        let outcome: Result<SyncReport, any Error>
        do { outcome = .success(try await engine.sync(confirmingDeletions: confirmingDeletions, retryingSetAside: retryingSetAside)) } catch { outcome = .failure(error) }
        _ = try? await sweepStaging()
        return try outcome.get()
    }

    /// The drive's lock file: one pass, download or eviction at a time, of any process (but for
    /// downloads beside a pass of this process: ``download(_:progress:arriving:)``).
    var lockPath: String { paths.stateDirectory + "/drive.lock" }

    /// The staging folder, where transfers write before a file takes its place.
    var stagingDirectory: String { replicaRoot + "/" + LocalReplica.stagingName }

    /// What the staging folder holds: files left by transfers that were killed (none while no
    /// transfer runs).
    package func stagingLeftovers() async throws -> (files: Int, bytes: Int64) {
        let folder = stagingDirectory
        return try await SyncFileWork.run {
            var files = 0, bytes: Int64 = 0
            // Files, in the folder and in the providers' folders within it (which stay).
            func count(_ folder: String, descending: Bool) {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                    let status = try? FileStatus(path: FilePath(folder + "/" + name))
                    if descending, status?.kind == .directory {
                        count(folder + "/" + name, descending: false)
                    } else {
                        files += 1
                        bytes += status?.size ?? 0
                    }
                }
            }
            count(folder, descending: true)
            return (files, bytes)
        }
    }

    /// Removes everything in the staging folder (the caller holds the drive's lock), but keeps its
    /// folders, emptied: a provider program that runs on is told its folder there once, at hello,
    /// and fetches into it.
    private func sweepStaging() async throws -> Int {
        let folder = stagingDirectory
        return try await SyncFileWork.run {
            var removed = 0
            func sweep(_ folder: String, keepingFolders: Bool) {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                    let path = folder + "/" + name
                    if keepingFolders, (try? FileStatus(path: FilePath(path)))?.kind == .directory {
                        sweep(path, keepingFolders: false)
                    } else if (try? FileManager.default.removeItem(atPath: path)) != nil {
                        removed += 1
                    }
                }
            }
            sweep(folder, keepingFolders: true)
            return removed
        }
    }

    /// Makes the next pass a merge that deletes nothing (see ``SyncEngine/repair()``).
    package func repair() async throws {
        let lock = try await DriveLock.acquire(lockPath)
        defer { lock.release() }
        try await engine.repair()
    }
}

extension DriveSync {
    /// The drive path of `argument`: a path in the replica (absolute, or relative to the working
    /// folder), or a placeholder's stub (which names its document).
    package func drivePath(_ argument: String) throws -> String {
        let root = URL(fileURLWithPath: paths.driveDirectory).standardizedFileURL.path
        var absolute = URL(fileURLWithPath: argument).standardizedFileURL.path
        if PlaceholderStub.isStubName((absolute as NSString).lastPathComponent) { absolute = PlaceholderStub.documentName(ofStub: absolute) }
        if absolute == root { return "" }
        guard absolute.hasPrefix(root + "/") else {
            throw FileProviderError(.noSuchItem, message: "“\(argument)” is not in the drive (\(root))")
        }
        return String(absolute.dropFirst(root.count + 1))
    }

    /// Downloads the placeholders at or below `paths` (drive paths), reporting to `progress` (and
    /// a single file's content as it is written to `arriving`). Holds the drive's lock, or runs
    /// beside a pass of this process that leaves the paths alone: a program's open waits for its
    /// file, not for a pass sending others.
    package func download(_ paths: [String], progress: Progress, arriving: ArrivingContents? = nil) async throws -> [String] {
        let targets = paths.map(SyncPath.init)
        while true {
            if let done = try await engine.materializeBesidePass(targets, progress: progress, arriving: arriving) { return done.map(\.text) }
            guard let lock = try await lockUnlessBesidePass(targets) else { continue }
            defer { lock.release() }
            return try await engine.materialize(targets, progress: progress, arriving: arriving).map(\.text)
        }
    }

    /// The drive's lock; or nil, having given up waiting for it, once a pass of this process that
    /// leaves `targets` alone is under way.
    private func lockUnlessBesidePass(_ targets: [SyncPath]) async throws -> DriveLock? {
        try await withThrowingTaskGroup(of: DriveLock?.self) { group in
            group.addTask { [lockPath] in try await DriveLock.acquire(lockPath) }
            group.addTask { [engine] in
                while await !engine.admitsBesidePass(targets) { try await Task.sleep(for: .milliseconds(20)) }
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            // The lock taken just as the wait for it was given up goes back.
            while !group.isEmpty {
                if case .some(.some(let lock)) = try? await group.next() { lock.release() }
            }
            return first
        }
    }

    /// Evicts the downloaded files at or below `paths`; returns those evicted and the refusals.
    package func evict(_ paths: [String]) async throws -> (evicted: [String], refused: [(String, FileProviderError)]) {
        let lock = try await DriveLock.acquire(lockPath)
        defer { lock.release() }
        let (evicted, refused) = try await engine.evict(paths.map(SyncPath.init))
        return (evicted.map(\.text), refused.map { ($0.0.text, $0.1) })
    }

    /// A link anyone may download the file `path` (a drive path) from, without the drive's
    /// credentials, until the date returned (`expiration`, or the provider's longest when sooner).
    package func publishingURL(_ path: String, expiration: Date) async throws -> (url: URL, expiration: Date) {
        try await engine.publishingURL(SyncPath(path), expiration: expiration)
    }

    /// What the drive's passes and downloads in this process are doing now.
    package var progress: SyncProgressBoard.Snapshot { engine.board.snapshot() }

    /// Pins or unpins `paths` (kept downloaded by every pass).
    package func setPinned(_ paths: [String], _ pinned: Bool) async throws {
        try await engine.setPinned(paths.map(SyncPath.init), pinned)
    }

    /// The status of the items at or below `paths`.
    package func status(_ paths: [String]) async throws -> [(String, DriveItemStatus)] {
        try await engine.status(paths.map(SyncPath.init)).map { ($0.0.text, $0.1) }
    }
}
