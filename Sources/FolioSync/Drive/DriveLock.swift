#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

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
