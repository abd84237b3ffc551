import Folio
import FolioSync
import Foundation

extension ClientSession {
    /// `drive.sync` reads the drive's configuration and makes its provider; the pass then runs as
    /// the drive's own work, and its reply comes when it ends.
    static let driveRoutes = [
        RequestRoute(DriveSyncRequest.self, on: .slow) { session, request, id throws(CoordinationFailure) in
            try session.driveSync(confirmingDeletions: request.confirmDeletions ?? false, id: id)
        },
        RequestRoute(DriveEvictRequest.self, on: .slow) { session, request, id throws(CoordinationFailure) in
            try session.driveEvict(request.path, id: id)
        },
        RequestRoute(DriveDownloadRequest.self, on: .slow) { session, request, id throws(CoordinationFailure) in
            try session.driveDownload(request.paths, id: id)
        },
        RequestRoute(DriveProgressRequest.self, on: .slow) { session, _, _ throws(CoordinationFailure) in
            try session.driveProgress()
        },
        // The configuration is taken as it is now (a drive just set up is mounted now, not at the
        // next pass), so the reply says where the replica is once the folder is mounted.
        RequestRoute(DriveReplicaRequest.self, on: .slow) { session, _, _ throws(CoordinationFailure) in
            try session.userOnly("reach the drive's replica")
            guard let service = session.context.drive else { return DriveReplicaReply(path: nil) }
            do {
                _ = try service.currentDrive()
            } catch {
                throw DriveSyncWire.failure(of: error)
            }
            return DriveReplicaReply(path: service.replicaBeneathMount)
        },
        RequestRoute(DrivePublishRequest.self, on: .slow) { session, request, id throws(CoordinationFailure) in
            try session.drivePublish(request.path, seconds: request.seconds, id: id)
        },
    ]

    /// The daemon's drive service and the drive ready to work (its configuration read, its provider
    /// made), or why there is none.
    private func preparedDrive() throws(CoordinationFailure) -> (DriveService, DriveSync) {
        guard let service = context.drive else { throw CoordinationFailure(kind: .notFound, message: "this daemon runs no drive") }
        let prepared: DriveSync?
        do {
            prepared = try service.currentDrive()
        } catch {
            throw DriveSyncWire.failure(of: error)
        }
        guard let drive = prepared else {
            throw CoordinationFailure(kind: .notFound, message: "no drive is set up (folio drive setup webdav|s3|folder …)")
        }
        return (service, drive)
    }

    /// Evicts a drive file (or the files below a folder) for `FileManager.evictUbiquitousItem`:
    /// checked as a write for an app; refused for a pinned file and for changes the server lacks.
    /// Returns nil: the reply comes when the eviction is done.
    func driveEvict(_ path: ClientPath, id: Int64?) throws(CoordinationFailure) -> DriveEvictReply? {
        let path = try context.access.checkedPath(app: app, path: path, write: true)
        let (service, drive) = try preparedDrive()
        guard service.contains(path) else {
            throw CoordinationFailure(kind: .invalid, message: "\(path) is not in the drive", code: CocoaError.Code.fileWriteUnknown.rawValue)
        }
        let replyID = id.map { WireValue.int($0) } ?? .null
        Task {
            do {
                let (evicted, refused) = try await context.evictCoordinated([try drive.drivePath(path)], drive: drive, driveDirectory: service.paths.driveDirectory)
                if let (_, error) = refused.first { throw error }
                if id != nil { write([WireFrame.result(replyID, try WireValueEncoder().encode(DriveEvictReply(evicted: evicted)))]) }
            } catch {
                write([WireFrame.error(replyID, DriveSyncWire.failure(of: error))])
            }
        }
        return nil
    }

    /// Downloads placeholders for `folio drive download`, in the daemon, so that its index and
    /// presenters see each download as it goes. Returns nil: the reply comes when all are done.
    func driveDownload(_ paths: [String], id: Int64?) throws(CoordinationFailure) -> DriveDownloadReply? {
        try userOnly("download drive items")
        let (service, drive) = try preparedDrive()
        let relative: [String]
        do {
            relative = try paths.map(drive.drivePath)
        } catch {
            throw DriveSyncWire.failure(of: error)
        }
        let replyID = id.map { WireValue.int($0) } ?? .null
        Task {
            do {
                let downloaded = try await drive.download(relative, progress: Progress(totalUnitCount: 0))
                service.refreshStates()
                if id != nil { write([WireFrame.result(replyID, try WireValueEncoder().encode(DriveDownloadReply(downloaded: downloaded)))]) }
            } catch {
                service.refreshStates()
                write([WireFrame.error(replyID, DriveSyncWire.failure(of: error))])
            }
        }
        return nil
    }

    /// What the drive's passes and downloads are doing now, for the commands' bars.
    func driveProgress() throws(CoordinationFailure) -> DriveProgressReply {
        try userOnly("follow the drive's progress")
        guard let service = context.drive else { throw CoordinationFailure(kind: .notFound, message: "this daemon runs no drive") }
        return DriveProgressReply(service.progress())
    }

    /// Makes a link to a drive file for `FileManager.url(forPublishingUbiquitousItemAt:expiration:)`:
    /// checked as a read for an app. Returns nil: the reply comes when the server was asked.
    func drivePublish(_ path: ClientPath, seconds: Double?, id: Int64?) throws(CoordinationFailure) -> DrivePublishReply? {
        let path = try context.access.checkedPath(app: app, path: path, write: false)
        let (service, drive) = try preparedDrive()
        guard service.contains(path) else {
            throw CoordinationFailure(kind: .invalid, message: "\(path) is not in the drive", code: CocoaError.Code.fileReadUnknown.rawValue)
        }
        let replyID = id.map { WireValue.int($0) } ?? .null
        Task {
            do {
                let expiration = seconds.map { Date() + $0 } ?? .distantFuture
                let (url, until) = try await drive.publishingURL(try drive.drivePath(path), expiration: expiration)
                let reply = DrivePublishReply(url: url.absoluteString, expiration: until.timeIntervalSince1970)
                if id != nil { write([WireFrame.result(replyID, try WireValueEncoder().encode(reply))]) }
            } catch {
                write([WireFrame.error(replyID, DriveSyncWire.failure(of: error))])
            }
        }
        return nil
    }

    /// Runs a pass of the drive for `folio drive sync` (docs/protocol.md, "Drive"). Here, on the
    /// slow pool, the drive is made ready (its configuration read, its provider made); the pass
    /// then runs as the drive's own passes do (after one under way), and its report, or why it
    /// failed, is written when it ends. Returns nil: the reply always comes later.
    func driveSync(confirmingDeletions: Bool, id: Int64?) throws(CoordinationFailure) -> WireValue? {
        try userOnly("sync the drive")
        let (service, drive) = try preparedDrive()
        let replyID = id.map { WireValue.int($0) } ?? .null
        Task {
            do {
                let report = try await service.syncNow(drive, confirmingDeletions: confirmingDeletions)
                // A notification gets a reply only when it failed.
                if id != nil { write([WireFrame.result(replyID, DriveSyncWire.value(of: report))]) }
            } catch {
                write([WireFrame.error(replyID, DriveSyncWire.failure(of: error))])
            }
        }
        return nil
    }
}
