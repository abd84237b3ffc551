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
final class ControlSocketService: Service, Sendable {
    let socketPath: String
    private let handler: RequestHandler
    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let lock: SystemPackage.FileDescriptor

    private let channel: any Channel

    /// Takes the single-instance lock, prepares the folder, removes a stale socket and binds, so the
    /// socket accepts connections as soon as this returns.
    init(paths: FolioPaths, handler: RequestHandler, logger: Logger) async throws {
        socketPath = paths.socketPath
        self.handler = handler
        self.logger = logger
        try FileManager.default.createDirectory(
            atPath: paths.socketDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = chmod(paths.socketDirectory, 0o700)
        let lock = try SystemPackage.FileDescriptor.open(
            FilePath(paths.socketDirectory + "/daemon.lock"), .readWrite, options: [.create, .closeOnExec],
            permissions: [.ownerReadWrite])
        guard try lock.tryLock(.exclusive) else {
            try? lock.close()
            throw DaemonError("another folio daemon is already running for this user (socket \(paths.socketPath))")
        }
        self.lock = lock
        unlink(socketPath)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionHandler(handler: handler, logger: logger, ownUID: getuid()))
                    }
                }
                .bind(unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true)
                .get()
        } catch {
            try? await group.shutdownGracefully()
            try? lock.close()
            throw DaemonError("cannot listen on \(socketPath): \(error)")
        }
        _ = chmod(socketPath, 0o600)
    }

    func run() async throws {
        logger.info("listening", metadata: ["socket": "\(socketPath)"])
        let channel = channel
        try await withGracefulShutdownHandler {
            try await channel.closeFuture.get()
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
        unlink(socketPath)
        try await group.shutdownGracefully()
        try? lock.close()
    }
}

/// One client connection: splits newline-delimited frames and writes one reply per frame.
final class ConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let handler: RequestHandler
    private let logger: Logger
    private let ownUID: uid_t
    private var pending: [UInt8] = []
    private var authorised = false
    private var queued: [ByteBuffer] = []

    init(handler: RequestHandler, logger: Logger, ownUID: uid_t) {
        self.handler = handler
        self.logger = logger
        self.ownUID = ownUID
    }

    func channelActive(context: ChannelHandlerContext) {
        guard let provider = context.channel as? any SocketOptionProvider else {
            context.close(promise: nil)
            return
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let future: EventLoopFuture<cfolio_ucred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        future.whenComplete { result in
            let (this, context) = loopBound.value
            switch result {
            case .success(let credentials) where credentials.uid == this.ownUID:
                this.authorised = true
                for buffer in this.queued { this.consume(context: context, buffer: buffer) }
                this.queued = []
            case .success(let credentials):
                this.logger.warning("refused a peer of another user", metadata: ["uid": "\(credentials.uid)"])
                context.close(promise: nil)
            case .failure(let error):
                this.logger.warning("cannot read peer credentials", metadata: ["error": "\(error)"])
                context.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if authorised { consume(context: context, buffer: buffer) } else { queued.append(buffer) }
    }

    private func consume(context: ChannelHandlerContext, buffer: ByteBuffer) {
        pending.append(contentsOf: buffer.readableBytesView)
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let frame = pending[..<newline]
            if !frame.isEmpty { write(context: context, reply: handler.reply(to: frame)) }
            pending.removeSubrange(...newline)
        }
        if pending.count > WireProtocol.maximumFrameSize {
            write(context: context, reply: WireReply(id: nil, result: nil, error: .badRequest("frame larger than \(WireProtocol.maximumFrameSize) bytes")))
            context.close(promise: nil)
        }
    }

    private func write(context: ChannelHandlerContext, reply: WireReply) {
        var data = (try? JSONEncoder().encode(reply)) ?? Data(#"{"error":{"code":"failed","message":"encoding"}}"#.utf8)
        data.append(UInt8(ascii: "\n"))
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: data)), promise: nil)
    }
}
