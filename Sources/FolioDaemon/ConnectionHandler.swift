import CFolioShims
import Folio
import Logging
import NIOCore
import NIOPosix
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// One client connection: checks the peer's uid, splits newline-delimited frames, hands them to the
/// connection's `ClientSession`, and ends the session (releasing its claims and presenters) when
/// the connection closes for any reason, a killed client included.
final class ConnectionHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let context: DaemonContext
    private let ownUID: uid_t
    private var session: ClientSession?
    private var pending: ByteBuffer?
    private var queued: [ByteBuffer] = []
    private var closing = false
    /// A frame's request runs on a blocking pool; later frames wait for it.
    private var busy = false
    /// Set while `drain` runs.
    private var draining = false
    /// Whether the channel reads (`autoRead`): see `updateReading`.
    private var isReading = true

    /// For an app's own socket: the app every connection on it is.
    private let forcedApp: String?

    init(context: DaemonContext, ownUID: uid_t, forcedApp: String? = nil) {
        self.context = context
        self.ownUID = ownUID
        self.forcedApp = forcedApp
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
                this.session = ClientSession(context: this.context, channel: context.channel, peerPID: credentials.pid, forcedApp: this.forcedApp)
                for buffer in this.queued { this.consume(context: context, buffer: buffer) }
                this.queued = []
            case .success(let credentials):
                this.context.logger.warning("refused a peer of another user", metadata: ["uid": "\(credentials.uid)"])
                context.close(promise: nil)
            case .failure(let error):
                this.context.logger.warning("cannot read peer credentials", metadata: ["error": "\(error)"])
                context.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        session?.closed()
        session = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.context.logger.notice("closing a connection after an error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        if session != nil { consume(context: context, buffer: buffer) } else { queued.append(buffer) }
    }

    private func consume(context: ChannelHandlerContext, buffer: ByteBuffer) {
        guard !closing else { return }
        var incoming = buffer
        if pending == nil {
            pending = incoming
        } else {
            pending!.writeBuffer(&incoming)
        }
        drain(context: context)
    }

    /// Handles the complete frames received, in order. A frame whose request blocks runs on its
    /// pool; until it is done, later frames of this connection wait (and reading stops, so a client
    /// cannot queue without bound), while every other connection goes on. So do frames of a client
    /// that does not read its replies: once the replies waiting for it pass the channel's high-water
    /// mark, its requests wait (and reading stops) until it has read them.
    private func drain(context: ChannelHandlerContext) {
        // Not re-entered: a write below may flush at once and report the channel writable again
        // (`channelWritabilityChanged`) while this loop still holds `pending`.
        guard !closing, !busy, !draining, let session, pending != nil else { return }
        draining = true
        defer { draining = false }
        // Replies are serialized as they are made and written every 64 of them or 64 KiB, so
        // what waits for a client that does not read stays near the high-water mark (plus one
        // reply), whatever the size of its replies.
        var out: [UInt8] = []
        var count = 0
        func flush() {
            guard !out.isEmpty else { return }
            session.write(bytes: out)
            out = []
            count = 0
        }
        while let newline = pending!.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            if count >= 64 || out.count >= 1 << 16 { flush() }
            if !context.channel.isWritable {
                flush()
                // The write may have gone out at once; else wait for the client to read.
                guard context.channel.isWritable else {
                    updateReading(context: context)
                    return
                }
            }
            let length = newline - pending!.readerIndex
            let frame = pending!.readSlice(length: length)!
            pending!.moveReaderIndex(forwardBy: 1)
            guard length > 0 else { continue }
            guard length <= WireFrame.maximumFrameSize else {
                flush()
                return refuseOversized(context: context, session: session)
            }
            switch session.handle(frame: frame.readableBytesView) {
            case .replied(let frameReplies, let close):
                ClientSession.serialize(frameReplies, into: &out)
                count += frameReplies.count
                if close {
                    flush()
                    return closeAfter([], context: context, session: session)
                }
            case .blocking(let request):
                flush()
                runBlocking(request, context: context, session: session)
                return
            }
        }
        flush()
        if pending!.readableBytes > WireFrame.maximumFrameSize { return refuseOversized(context: context, session: session) }
        if pending!.readableBytes == 0 {
            pending = nil
        } else if pending!.readerIndex > 1 << 16 {
            pending!.discardReadBytes()
        }
    }

    /// Reads from the client only while no request of it runs on a pool and its replies are being
    /// read (the channel is writable).
    private func updateReading(context: ChannelHandlerContext) {
        let reading = !busy && context.channel.isWritable
        guard reading != isReading else { return }
        isReading = reading
        context.channel.setOption(ChannelOptions.autoRead, value: reading).whenFailure { _ in }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if !draining {
            updateReading(context: context)
            if context.channel.isWritable { drain(context: context) }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Runs a request on its pool, then writes its replies and goes on with the frames after it.
    private func runBlocking(_ request: PreparedRequest, context: ChannelHandlerContext, session: ClientSession) {
        busy = true
        updateReading(context: context)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        self.context.pools.run(request.placement, on: context.eventLoop) { session.run(request) }.whenComplete { result in
            let (this, context) = loopBound.value
            this.busy = false
            let outcome: Result<WireValue?, CoordinationFailure>
            switch result {
            case .success(let value): outcome = value
            case .failure: outcome = .failure(CoordinationFailure(kind: .failed, message: "the daemon is stopping"))
            }
            let (replies, close) = session.finish(request, outcome)
            if session.isClosed {
                // The connection ended while the request ran: undo what it added (a hello's client).
                session.closed()
                return
            }
            if close { return this.closeAfter(replies, context: context, session: session) }
            session.write(replies)
            this.updateReading(context: context)
            this.drain(context: context)
        }
    }

    private func closeAfter(_ replies: [WireValue], context: ChannelHandlerContext, session: ClientSession) {
        session.write(replies)
        closing = true
        pending = nil
        context.close(promise: nil)
    }

    private func refuseOversized(context: ChannelHandlerContext, session: ClientSession) {
        session.write([
            WireFrame.error(.null, code: "bad-request", message: "frame larger than \(WireFrame.maximumFrameSize) bytes")
        ])
        closing = true
        pending = nil
        context.close(promise: nil)
    }
}
