#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import CFolioShims
import Folio
import FolioSystem
import Foundation
import Logging
import Synchronization
import SystemPackage

/// What programs write over through the mount, kept as versions.
extension DriveFileSystem {
    /// Keeps the content of the downloaded file at `path` (as `status` found it) as a version of
    /// its document before a program writes it, as for any other writer's change: not an empty
    /// file, nor one larger than ``largestVersioned`` (copied at each open, it would cost more than
    /// it saves), nor content kept already.
    func keepVersion(_ path: String, _ status: stat) {
        guard let versions, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0, status.st_size <= Self.largestVersioned else { return }
        let fingerprint = LocalFingerprint(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
            modified: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9)
        guard state.withLock({ $0.kept[path] != fingerprint }) else { return }
        do {
            // Named beneath the mount (never through it: this thread serves it), shown as programs see it.
            try versions.addVersion(ofItemAt: replicaPath + "/" + path, shownAt: visible(path), kind: .external)
            state.withLock { state in
                if state.kept.count >= 4096 { state.kept.removeAll() }
                state.kept[path] = fingerprint
            }
        } catch {
            logger.warning("the content a program writes over could not be kept as a version", metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }
}
