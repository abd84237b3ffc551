#if canImport(Glibc)
@preconcurrency import Glibc
#endif
package import Folio
package import FolioSystem
package import Foundation
package import Logging
import SystemPackage

/// The drive's folder mounted as ``DriveFileSystem``: the mount, and the threads that serve it (its
/// own, never Swift's cooperative pool or NIO's: a request may wait on the disk). Unmounted by
/// ``unmount()``; if the process dies first, the kernel ends the connection and the mount answers
/// `ENOTCONN` until the next mount clears it.
package final class DriveMount: Sendable {
    /// The file system being served.
    package let fileSystem: DriveFileSystem
    private let finished: DispatchGroup

    /// How many threads serve requests.
    static let threads = 4

    /// Mounts the drive's folder `folder` (its replica stays reachable beneath the mount) and
    /// starts serving it. `materialize` downloads a placeholder, by its path relative to the
    /// folder, into the replica at ``DriveFileSystem/replicaPath``, telling the progress how far
    /// it is (and, where it can, the arriving contents where its file is written: a reader then
    /// starts before the file is whole).
    /// `journal` gives each item's state; `changed` hears of each change made through the mount;
    /// programs' opens wait for the coordinated writes `arbiter` holds for other processes; what a
    /// program writes over is kept in `versions`; `passthrough` false keeps every read and write
    /// in this process.
    package init(
        _ folder: String, journal: SyncJournal? = nil, materialize: @escaping @Sendable (String, Progress, ArrivingContents) async throws -> Void,
        changed: @escaping @Sendable (String) -> Void = { _ in }, arbiter: CoordinationArbiter? = nil, versions: VersionStore? = nil,
        passthrough: Bool = true, logger: Logger
    ) throws(FUSEMountError) {
        Self.clearStale(at: folder)
        // O_PATH (Swift's Glibc module lacks it): the folder itself, to reach beneath the mount.
        let replica = open(folder, 0o10000000 | O_DIRECTORY | O_CLOEXEC)
        guard replica >= 0 else { throw FUSEMountError("cannot open the drive's folder \(folder): \(Errno(rawValue: errno))") }
        let channel: FUSEChannel
        do { channel = try FUSEChannel(mountingAt: folder, name: "folio") } catch {
            close(replica)
            throw error
        }
        fileSystem = DriveFileSystem(
            channel: channel, replica: replica, journal: journal, materialize: materialize, changed: changed, folder: folder,
            arbiter: arbiter, versions: versions, passthrough: passthrough, logger: logger)

        finished = DispatchGroup()
        for number in 0..<Self.threads {
            finished.enter()
            let thread = Thread { [fileSystem, finished] in
                Self.serve(fileSystem)
                finished.leave()
            }
            thread.name = "folio-mount-\(number)"
            thread.start()
        }
    }

    /// Unmounts what a daemon that died left mounted at the drive's folder `folder` (only one
    /// daemon of the user runs, so a Folio mount there now is a dead one's), so that the folder is
    /// the plain replica again. Blocking.
    package static func clearStale(at folder: String) {
        // Mounts can be stacked (a daemon that mounted over a dead one's, then died): at most a few.
        for _ in 0..<8 where DriveMountAvailability.isMounted(at: folder) {
            FUSEChannel.detachStale(at: folder)
        }
    }

    private static func serve(_ fileSystem: DriveFileSystem) {
        let request = UnsafeMutableRawBufferPointer.allocate(byteCount: FUSEChannel.requestBufferSize, alignment: 16)
        let reply = UnsafeMutableRawBufferPointer.allocate(byteCount: FUSEChannel.maximumWrite * 8, alignment: 16)
        defer {
            request.deallocate()
            reply.deallocate()
        }
        while true {
            let count: Int?
            do { count = try fileSystem.channel.read(into: request) } catch {
                fileSystem.logger.error("the drive's mount stopped reading requests", metadata: ["error": "\(error)"])
                return
            }
            guard let count, let parsed = FUSERequest(UnsafeRawBufferPointer(rebasing: request[0..<count])) else { return }
            guard fileSystem.serve(parsed, readBuffer: reply) else { return }
        }
    }

    /// Unmounts the drive's folder (lazily: files open through it keep working until closed) and
    /// waits up to `deadline` for the serving threads to end; if something still holds the mount
    /// then, the threads stop serving it and its connection ends when the device is closed (the
    /// files still open through it fail from then on). False when the threads had not ended.
    /// Blocks: call it from a thread or pool made for blocking work.
    @discardableResult
    package func unmount(deadline: Duration = .seconds(2)) -> Bool {
        fileSystem.channel.unmount()
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        if finished.wait(timeout: .now() + seconds) == .success { return true }
        fileSystem.logger.notice("the drive's mount was still in use after it was unmounted: its connection ends")
        fileSystem.channel.stop()
        return finished.wait(timeout: .now() + seconds) == .success
    }
}
