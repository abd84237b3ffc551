import Folio
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The single-instance lock (an OFD lock on `$XDG_RUNTIME_DIR/folio/daemon.lock`), taken before the
/// daemon touches its database: a second daemon of the same user must fail before it changes
/// anything the running one relies on (session grants, the crawl's state).
final class DaemonLock: Sendable {
    private let descriptor: SystemPackage.FileDescriptor

    /// Takes the lock, making the socket folder (mode 0700) first.
    ///
    /// - Throws: `DaemonError` when another daemon holds it.
    init(paths: FolioPaths) throws {
        try FolioPaths.makePrivateDirectory(paths.socketDirectory)
        let descriptor = try SystemPackage.FileDescriptor.open(
            FilePath(paths.socketDirectory + "/daemon.lock"), .readWrite, options: [.create, .closeOnExec],
            permissions: [.ownerReadWrite])
        guard try descriptor.tryLock(.exclusive) else {
            try? descriptor.close()
            throw DaemonError("another folio daemon is already running for this user (socket \(paths.socketPath))")
        }
        self.descriptor = descriptor
    }

    /// Lets the lock go.
    func release() {
        try? descriptor.close()
    }
}
