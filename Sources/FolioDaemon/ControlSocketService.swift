import CFolioShims
import Folio
import FolioSystem
import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SystemPackage
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Serves the wire protocol on the user's Unix socket (`$XDG_RUNTIME_DIR/folio/folio.sock`, in a
/// folder of mode 0700). Only peers with the daemon's own uid are served (`SO_PEERCRED`).
///
/// Under systemd socket activation (`LISTEN_FDS=1`, `LISTEN_PID` = this process) the inherited
/// socket on descriptor 3 is served instead of binding a new one.
final class ControlSocketService: Service, Sendable {
    let socketPath: String
    /// Whether the socket came from the service manager.
    let activated: Bool
    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let lock: DaemonLock
    private let channel: any Channel
    private let pools: DaemonPools

    /// Removes a stale socket and binds (or adopts the activated socket), so the socket accepts
    /// connections as soon as this returns. The caller holds the single-instance `lock`, which the
    /// service lets go when it stops.
    init(paths: FolioPaths, lock: DaemonLock, context: DaemonContext, logger: Logger) async throws {
        socketPath = paths.socketPath
        self.logger = logger
        self.lock = lock
        pools = context.pools
        let inherited = Self.activatedSocket()
        activated = inherited != nil
        // One event loop per core: a connection stays on one loop, and the arbiter's lock is the
        // only state the loops share, so coordination throughput grows with the cores.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: context.inlineRequests ? 1 : max(1, System.coreCount))
        self.group = group
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 128)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ConnectionHandler(context: context, ownUID: getuid()))
                }
            }
        let appsFolder = paths.socketDirectory + "/apps"
        context.appSockets.setBinder { [group] app in
            try? FileManager.default.createDirectory(atPath: appsFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let path = "\(appsFolder)/\(app).sock"
            let appBootstrap = ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 32)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ConnectionHandler(context: context, ownUID: getuid(), forcedApp: app))
                    }
                }
            return appBootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).map { _ in
                _ = chmod(path, 0o600)
                return path
            }
        }
        do {
            if let inherited {
                channel = try await bootstrap.withBoundSocket(inherited).get()
            } else {
                unlink(socketPath)
                channel = try await bootstrap.bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true).get()
                _ = chmod(socketPath, 0o600)
            }
        } catch {
            try? await group.shutdownGracefully()
            await context.pools.shutdown()
            lock.release()
            throw DaemonError("cannot listen on \(socketPath): \(error)")
        }
    }

    /// The listening socket systemd passed (descriptor 3), if this process was socket-activated.
    private static func activatedSocket() -> CInt? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LISTEN_FDS"] == "1", environment["LISTEN_PID"] == String(getpid()) else { return nil }
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDNAMES")
        let descriptor: CInt = 3
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        return descriptor
    }

    func run() async throws {
        logger.info("listening", metadata: ["socket": "\(socketPath)", "activated": "\(activated)"])
        let channel = channel
        try await withGracefulShutdownHandler {
            try await channel.closeFuture.get()
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
        // An activated socket belongs to the service manager, which keeps listening for the next start.
        if !activated { unlink(socketPath) }
        try? FileManager.default.removeItem(atPath: (socketPath as NSString).deletingLastPathComponent + "/apps")
        try await group.shutdownGracefully()
        await pools.shutdown()
        lock.release()
    }
}
