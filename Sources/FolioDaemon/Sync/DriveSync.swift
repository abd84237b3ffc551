package import Folio
import FolioSystem
package import Foundation
import GRDB
import Logging

/// The user's drive as the `folio drive` commands (and later the daemon) sync it: the replica
/// `$XDG_DATA_HOME/folio/Drive`, the journal in the index database, the version store, and one
/// pass at a time (a lock file in the state folder).
package struct DriveSync: Sendable {
    let engine: SyncEngine
    let paths: FolioPaths

    /// The journal domain of the user's drive.
    package static let domain = "drive"

    /// The drive on `provider`, in the folders of `paths`; its journal in `database` (the daemon's
    /// one pool on the index database), or, in a process of its own, a pool opened on that file.
    package init(provider: any FileProvider, paths: FolioPaths = FolioPaths()) throws {
        try self.init(provider: provider, paths: paths, database: nil)
    }

    init(provider: any FileProvider, paths: FolioPaths, database: (any DatabaseWriter)?) throws {
        try FileManager.default.createDirectory(atPath: paths.driveDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: paths.stateDirectory, withIntermediateDirectories: true)
        self.paths = paths
        let journal = try database.map { SyncJournal(database: $0, domain: Self.domain) } ?? SyncJournal(path: paths.indexDatabase, domain: Self.domain)
        engine = SyncEngine(
            provider: provider, replica: LocalReplica(root: paths.driveDirectory), journal: journal,
            versions: VersionStore(directory: paths.versionsDirectory))
    }

    /// One pass, while holding the drive's lock.
    package func sync(confirmingDeletions: Bool = false) async throws -> SyncReport {
        let lock = try await DriveLock.acquire(paths.stateDirectory + "/drive.lock")
        defer { lock.release() }
        return try await engine.sync(confirmingDeletions: confirmingDeletions)
    }

    /// Makes the next pass a merge that deletes nothing (see ``SyncEngine/repair()``).
    package func repair() async throws {
        let lock = try await DriveLock.acquire(paths.stateDirectory + "/drive.lock")
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

    /// Downloads the placeholders at or below `paths` (drive paths), reporting to `progress`.
    package func download(_ paths: [String], progress: Progress) async throws -> [String] {
        let lock = try await DriveLock.acquire(self.paths.stateDirectory + "/drive.lock")
        defer { lock.release() }
        return try await engine.materialize(paths.map(SyncPath.init), progress: progress).map(\.text)
    }

    /// Evicts the downloaded files at or below `paths`; returns those evicted and the refusals.
    package func evict(_ paths: [String]) async throws -> (evicted: [String], refused: [(String, FileProviderError)]) {
        let lock = try await DriveLock.acquire(self.paths.stateDirectory + "/drive.lock")
        defer { lock.release() }
        let (evicted, refused) = try await engine.evict(paths.map(SyncPath.init))
        return (evicted.map(\.text), refused.map { ($0.0.text, $0.1) })
    }

    /// Pins or unpins `paths` (kept downloaded by every pass).
    package func setPinned(_ paths: [String], _ pinned: Bool) async throws {
        try await engine.setPinned(paths.map(SyncPath.init), pinned)
    }

    /// The status of the items at or below `paths`.
    package func status(_ paths: [String]) async throws -> [(String, DriveItemStatus)] {
        try await engine.status(paths.map(SyncPath.init)).map { ($0.0.text, $0.1) }
    }
}

/// An exclusive lock on a file for one sync pass: a second pass (of this process or another)
/// waits for the first.
struct DriveLock {
    let descriptor: Int32

    /// Takes the lock, waiting as long as another holds it. The wait polls (every 50 ms) rather than
    /// blocking in `flock`: a thread of the cooperative pool held for a whole pass would stall the
    /// daemon's other work, and a cancelled wait ends.
    static func acquire(_ path: String) async throws -> DriveLock {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(descriptor)
                throw CocoaError(.fileLocking, userInfo: [NSFilePathErrorKey: path])
            }
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                close(descriptor)
                throw error
            }
        }
        return DriveLock(descriptor: descriptor)
    }

    func release() { close(descriptor) }
}
