package import Folio
import FolioSystem
import Foundation
import Logging

/// The user's drive as the `folio drive` commands (and later the daemon) sync it: the replica
/// `$XDG_DATA_HOME/folio/Drive`, the journal in the index database, the version store, and one
/// pass at a time (a lock file in the state folder).
package struct DriveSync: Sendable {
    let engine: SyncEngine
    let paths: FolioPaths

    /// The drive on `provider`, in the folders of `paths`.
    package init(provider: any FileProvider, paths: FolioPaths = FolioPaths()) throws {
        try FileManager.default.createDirectory(atPath: paths.driveDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: paths.stateDirectory, withIntermediateDirectories: true)
        self.paths = paths
        engine = SyncEngine(
            provider: provider, replica: LocalReplica(root: paths.driveDirectory),
            journal: try SyncJournal(path: paths.indexDatabase, domain: "drive"), versions: VersionStore(directory: paths.versionsDirectory))
    }

    /// One pass, while holding the drive's lock.
    package func sync(confirmingDeletions: Bool = false) async throws -> SyncReport {
        let lock = try DriveLock(path: paths.stateDirectory + "/drive.lock")
        defer { lock.release() }
        return try await engine.sync(confirmingDeletions: confirmingDeletions)
    }

    /// Makes the next pass a merge that deletes nothing (see ``SyncEngine/repair()``).
    package func repair() async throws {
        let lock = try DriveLock(path: paths.stateDirectory + "/drive.lock")
        defer { lock.release() }
        try await engine.repair()
    }
}

/// An exclusive lock on a file for one sync pass: a second pass waits for the first.
struct DriveLock {
    let descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                close(descriptor)
                throw CocoaError(.fileLocking, userInfo: [NSFilePathErrorKey: path])
            }
        }
    }

    func release() { close(descriptor) }
}
