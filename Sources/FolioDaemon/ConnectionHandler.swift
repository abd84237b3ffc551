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
    /// How far `pending` has been searched for a newline (an index into it).
    private var searched = 0
    /// Set while the connection waits for its next turn (`drain` handled its share of frames).
    private var yielded = false
    /// Its place in its party's budget (``ClientBudgets``); nil once refused or closed.
    private var ticket: ClientBudgets.Ticket?

    /// The frames one party's connections handle together in one turn (each its share).
    static let framesPerTurn = 64

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
        // Charged to its app (or the user's clients): past the party's cap it is refused at once.
        let admitted = self.context.budgets.open(ClientBudgets.party(app: forcedApp)) { message in
            loopBound.eventLoop.execute {
                let (this, context) = loopBound.value
                this.refuse(message, context: context)
            }
        }
        switch admitted {
        case .success(let ticket): self.ticket = ticket
        case .failure(let refusal):
            self.context.logger.notice("refused a connection past its app's cap", metadata: ["app": "\(forcedApp ?? "user")"])
            refuse(refusal.message, context: context)
            context.fireChannelActive()
            return
        }
        let future: EventLoopFuture<cfolio_ucred> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        future.whenComplete { result in
            let (this, context) = loopBound.value
            switch result {
            case .success(let credentials) where credentials.uid == this.ownUID:
                this.session = ClientSession(
                    context: this.context, channel: context.channel, peerPID: credentials.pid, forcedApp: this.forcedApp, ticket: this.ticket)
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
        if let ticket { self.context.budgets.close(ticket) }
        ticket = nil
        session?.closed()
        session = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.context.logger.notice("closing a connection after an error", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let buffer = unwrapInboundIn(data)
        if session != nil {
            consume(context: context, buffer: buffer)
        } else {
            queued.append(buffer)
            chargePending()
        }
    }

    private func consume(context: ChannelHandlerContext, buffer: ByteBuffer) {
        guard !closing else { return }
        var incoming = buffer
        if pending == nil {
            pending = incoming
            searched = 0
        } else {
            pending!.writeBuffer(&incoming)
        }
        drain(context: context)
        chargePending()
    }

    /// Tells the budget what this connection holds of unfinished frames (its buffer's capacity).
    private func chargePending() {
        guard let ticket, !closing else { return }
        let held = (pending?.capacity ?? 0) + queued.reduce(0) { $0 + $1.capacity }
        if !self.context.budgets.holdPending(ticket, bytes: held) { pending = nil }
    }

    /// Closes the connection after telling the client why.
    private func refuse(_ message: String, context: ChannelHandlerContext) {
        guard !closing else { return }
        closing = true
        pending = nil
        queued = []
        var bytes = WireFrame.error(.null, code: "limit", message: message).serialized()
        bytes.append(UInt8(ascii: "\n"))
        let channel = context.channel
        context.writeAndFlush(NIOAny(channel.allocator.buffer(bytes: bytes))).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Handles the complete frames received, in order. A frame whose request blocks runs on its
    /// pool; until it is done, later frames of this connection wait (and reading stops, so a client
    /// cannot queue without bound), while every other connection goes on. So do frames of a client
    /// that does not read its replies: once the replies waiting for it pass the channel's high-water
    /// mark, its requests wait (and reading stops) until it has read them.
    private func drain(context: ChannelHandlerContext) {
        // Not re-entered: a write below may flush at once and report the channel writable again
        // (`channelWritabilityChanged`) while this loop still holds `pending`.
        guard !closing, !busy, !draining, !yielded, let session, pending != nil else { return }
        draining = true
        defer { draining = false }
        // Turns are fair across parties, not connections: a party's connections share one turn's
        // worth of frames between them, so opening more of them gains it nothing.
        let party = ticket?.party ?? "user"
        let turn = max(1, Self.framesPerTurn / max(1, self.context.budgets.connections(of: party)))
        var handled = 0
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
        while true {
            if handled >= turn, pending!.readableBytes > 0 {
                // The rest waits for this connection's next turn, after the loop's other work.
                flush()
                return waitForTurn(context: context)
            }
            guard let newline = nextNewline() else { break }
            if count >= 64 || out.count >= 1 << 16 { flush() }
            if !context.channel.isWritable {
                flush()
                // The write may have gone out at once; else wait for the client to read.
                guard context.channel.isWritable else {
                    updateReading(context: context)
                    return
                }
            }
            handled += 1
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
            searched -= pending!.readerIndex
            pending!.discardReadBytes()
        }
    }

    /// The index of the next newline in `pending`, searching only bytes not searched before (a
    /// large frame arriving in small reads is scanned once, not once per read).
    private func nextNewline() -> Int? {
        guard let buffer = pending else { return nil }
        let start = max(searched, buffer.readerIndex)
        guard start < buffer.writerIndex else { return nil }
        let found: Int? = buffer.withUnsafeReadableBytes { raw in
            let offset = start - buffer.readerIndex
            guard let base = raw.baseAddress, let hit = memchr(base + offset, Int32(UInt8(ascii: "\n")), raw.count - offset) else { return nil }
            return buffer.readerIndex + (UnsafeRawPointer(hit) - base)
        }
        // A newline found stays to be found again until its frame is consumed (a caller may stop
        // before consuming it).
        searched = found ?? buffer.writerIndex
        return found
    }

    /// Reads from the client only while no request of it runs on a pool and its replies are being
    /// read (the channel is writable).
    private func updateReading(context: ChannelHandlerContext) {
        let reading = !busy && !yielded && context.channel.isWritable
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
        let budgets = self.context.budgets, pools = self.context.pools, party = ticket?.party ?? "user", loop = context.eventLoop
        // A party's requests take turns on the pools (an app runs one at a time, whatever its
        // connections): the threads and cores stay free for everyone else.
        budgets.runWorker(party) {
            loop.execute {
                pools.run(request.placement, on: loop) { session.run(request) }.whenComplete { result in
                    budgets.workerDone(party)
                    loopBound.value.0.finishBlocking(request, result, context: loopBound.value.1, session: session)
                }
            }
        }
    }

    /// Writes a pooled request's replies; the connection's next frames wait for its next turn.
    private func finishBlocking(
        _ request: PreparedRequest, _ result: Result<Result<WireValue?, CoordinationFailure>, any Error>, context: ChannelHandlerContext,
        session: ClientSession
    ) {
        busy = false
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
        if close { return closeAfter(replies, context: context, session: session) }
        session.write(replies)
        // Completions from the pools arrive as tasks, and an event loop runs tasks until none is
        // left before it reads its sockets again: a connection with more frames waiting goes on at
        // its next turn, or one app's pipelined requests would crowd out everyone's. One that
        // waits for this reply before it sends again (most clients) goes on at once.
        if nextNewline() != nil { return waitForTurn(context: context) }
        updateReading(context: context)
        drain(context: context)
    }

    /// Stops reading and handling frames until the event loop's next round (``FairTurns``).
    private func waitForTurn(context: ChannelHandlerContext) {
        yielded = true
        updateReading(context: context)
        FairTurns.of(context.eventLoop).wait { [self] in
            yielded = false
            guard !closing, context.channel.isActive else { return }
            updateReading(context: context)
            drain(context: context)
            chargePending()
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
