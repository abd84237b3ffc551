import Folio
import FolioSync

extension ClientSession {
    /// `drive.sync` reads the drive's configuration and makes its provider; the pass then runs as
    /// the drive's own work, and its reply comes when it ends.
    static let driveRoutes = [
        RequestRoute(DriveSyncRequest.self, on: .slow) { session, request, id throws(CoordinationFailure) in
            try session.driveSync(confirmingDeletions: request.confirmDeletions ?? false, id: id)
        }
    ]

    /// Runs a pass of the drive for `folio drive sync` (docs/protocol.md, "Drive"). Here, on the
    /// slow pool, the drive is made ready (its configuration read, its provider made); the pass
    /// then runs as the drive's own passes do (after one under way), and its report, or why it
    /// failed, is written when it ends. Returns nil: the reply always comes later.
    func driveSync(confirmingDeletions: Bool, id: Int64?) throws(CoordinationFailure) -> WireValue? {
        try userOnly("sync the drive")
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
