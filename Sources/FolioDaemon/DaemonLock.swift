import Folio
package import FolioSystem
import Foundation
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The single-instance lock (an OFD lock on `$XDG_RUNTIME_DIR/folio/daemon.lock`), taken before the
/// daemon touches its database: a second daemon of the same user must fail before it changes
/// anything the running one relies on (session grants, the crawl's state). The holder writes its
/// process id into the file (an OFD lock names no owner), for `folio daemon --stop`.
package final class DaemonLock: Sendable {
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
        let pid = Array("\(getpid())\n".utf8)
        _ = try? descriptor.resize(to: 0)
        _ = try? pid.withUnsafeBytes { try descriptor.writeAll(toAbsoluteOffset: 0, $0) }
    }

    /// The process id of the daemon holding the lock of `paths`, nil when none holds it. Asks
    /// without taking the lock (a daemon starting meanwhile is not refused).
    package static func holder(paths: FolioPaths) -> Int32? {
        let descriptor = open(paths.socketDirectory + "/daemon.lock", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        // F_OFD_GETLK (36), which Swift's Glibc module does not export.
        guard fcntl(descriptor, 36, &lock) == 0, lock.l_type != Int16(F_UNLCK) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Lets the lock go.
    func release() {
        try? descriptor.close()
    }
}
