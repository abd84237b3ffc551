import CFolioShims
import Folio
import FolioWire
import FolioSystem
import Foundation
import Logging
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Hands open descriptors to one process of the user's: the daemon's event loops cannot send
/// SCM_RIGHTS on a connection, so the descriptors go over a one-time Unix socket in the daemon's
/// socket folder (mode 0700, out of every sandbox's reach). Only the process that asked — the same
/// uid and pid, by `SO_PEERCRED` — receives them; nobody connecting within ten seconds, they are
/// closed and the socket goes.
enum DescriptorHandoff {
    /// How long the socket waits for its process.
    static let deadline: Int32 = 10_000

    /// Listens at a fresh socket in `folder` and returns its path; a thread of its own waits for
    /// process `pid` and sends it `items`' descriptors (keeping them open until then).
    static func offer(_ items: [ResolvedItem], to pid: Int32, in folder: String, logger: Logger) throws(CoordinationFailure) -> String {
        guard items.count <= Int(CFOLIO_MAX_PASSED_FDS) else {
            throw CoordinationFailure(kind: .invalid, message: "more than \(CFOLIO_MAX_PASSED_FDS) grants to hand over")
        }
        let path = folder + "/handoff-" + UUID().uuidString.lowercased() + ".sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw CoordinationFailure(kind: .failed, message: "cannot make a socket: \(Errno(rawValue: errno))") }
        guard UnixSocketAddress.with(path, { bind(listener, $0, $1) }) == 0, chmod(path, 0o600) == 0, listen(listener, 1) == 0 else {
            let code = Errno(rawValue: errno)
            close(listener)
            unlink(path)
            throw CoordinationFailure(kind: .failed, message: "cannot listen at \(path): \(code)")
        }
        let thread = Thread {
            defer {
                close(listener)
                unlink(path)
            }
            var poll = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            let started = ContinuousClock.now
            while true {
                let left = Self.deadline - Int32((ContinuousClock.now - started).components.seconds * 1000)
                guard left > 0, Glibc.poll(&poll, 1, left) > 0 else {
                    if left <= 0 || errno != EINTR {
                        logger.notice("nobody took the grant descriptors", metadata: ["pid": "\(pid)"])
                        return
                    }
                    continue
                }
                let peer = accept(listener, nil, nil)
                guard peer >= 0 else { continue }
                defer { close(peer) }
                var credentials = cfolio_ucred()
                var length = socklen_t(MemoryLayout<cfolio_ucred>.size)
                guard getsockopt(peer, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, credentials.uid == getuid(), credentials.pid == pid else {
                    logger.warning("a process that did not ask connected for grant descriptors", metadata: ["pid": "\(credentials.pid)"])
                    continue
                }
                let descriptors = items.map(\.descriptor.rawValue)
                if cfolio_send_fds(peer, descriptors, Int32(descriptors.count)) != 0 {
                    logger.warning("cannot send grant descriptors", metadata: ["error": "\(Errno(rawValue: errno))"])
                }
                return
            }
        }
        thread.name = "folio handoff"
        thread.start()
        return path
    }
}
