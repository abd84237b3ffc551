import Folio
import Foundation
import Logging
import NIOCore
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// One client connection's state: whether it said hello, its arbiter client number, and how to
/// write to it. Frames are parsed (`ClientFrame`), decoded and checked by their route
/// (`RequestRoute`), and handled on the connection's event loop or the pool the route names; the arbiter's outputs for this client may arrive from any thread and are written
/// through the channel (thread-safe).
final class ClientSession: ArbiterClient, @unchecked Sendable {
    let context: DaemonContext
    let channel: any Channel
    let peerPID: Int32
    /// Who the connection is: written by hello (on a pool for an app) and at close (on the event
    /// loop), read by handlers on either.
    private let identity = Mutex<(client: UInt32?, app: String?)>((nil, nil))
    /// The arbiter's number for this client, once it said hello (nil again once it closed).
    private(set) var client: UInt32? {
        get { identity.withLock { $0.client } }
        set { identity.withLock { $0.client = newValue } }
    }
    /// The app this connection declared in its hello; nil for the user's own tools, which reach
    /// everything the user can.
    private(set) var app: String? {
        get { identity.withLock { $0.app } }
        set { identity.withLock { $0.app = newValue } }
    }
    /// Set when the connection ended; work that finishes on a pool afterwards is undone.
    private(set) var isClosed = false
    private var consecutiveErrors = 0
    /// After this many refused frames in a row the connection is closed.
    static let maximumConsecutiveErrors = 64

    /// Set for connections on an app's own socket: the app, whatever the hello declares.
    let forcedApp: String?

    /// The connection's place in its party's budget (nil: not charged).
    let ticket: ClientBudgets.Ticket?

    init(context: DaemonContext, channel: any Channel, peerPID: Int32, forcedApp: String? = nil, ticket: ClientBudgets.Ticket? = nil) {
        self.context = context
        self.channel = channel
        self.peerPID = peerPID
        self.forcedApp = forcedApp
        self.ticket = ticket
    }

    /// Frames for the arbiter's outputs, written in one go.
    func receive(_ outputs: [ArbiterOutput]) {
        var frames: [WireValue] = []
        frames.reserveCapacity(outputs.count)
        for output in outputs {
            switch output {
            case .granted(let claim, let paths):
                frames.append(WireFrame.result(.int(Int64(claim)), ["paths": .array(paths.map { .string($0) })]))
            case .failed(let claim, let failure):
                frames.append(WireFrame.error(.int(Int64(claim)), failure))
            case .presenter(let presenter, let message, let token):
                frames.append(CoordinationWire.event(presenter: presenter, message: message, token: token))
            }
        }
        write(frames)
    }

    func write(_ frames: [WireValue]) {
        guard !frames.isEmpty else { return }
        var bytes: [UInt8] = []
        Self.serialize(frames, into: &bytes)
        write(bytes: bytes)
    }

    /// Writes frames already serialized (each ending with its newline).
    /// Below the channel's high-water mark a write costs nothing more; past it (the client is not
    /// reading), its bytes are charged to the connection's party until they go out, so events a
    /// client never reads cannot pile up without bound (``ClientBudgets/holdUnread(_:adding:)``).
    func write(bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        let buffer = channel.allocator.buffer(bytes: bytes)
        guard let ticket, !channel.isWritable else { return channel.writeAndFlush(buffer, promise: nil) }
        let budgets = context.budgets, count = bytes.count
        guard budgets.holdUnread(ticket, adding: count) else { return }
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { _ in budgets.holdUnread(ticket, adding: -count) }
        channel.writeAndFlush(buffer, promise: written)
    }

    /// Appends `frames` to `bytes`, a line each.
    static func serialize(_ frames: [WireValue], into bytes: inout [UInt8]) {
        for frame in frames {
            frame.write(into: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
    }

    /// The connection ended: the client's claims and presenters go at once.
    func closed() {
        isClosed = true
        let ended = identity.withLock { identity in
            defer { identity.client = nil }
            return identity.client
        }
        if let ended { context.arbiter.removeClient(ended) }
        context.index.sessionClosed(self)
        // The session's grants leave the grant table and its imports are removed: files and
        // SQLite, so on a pool.
        let access = context.access
        context.pools.submit(.quick) { [self] in
            if let ended { access.grants.sessionEnded(ended) }
            access.picker.sessionClosed(self)
        }
    }

    /// What handling a frame comes to: replies now, or work for a blocking pool whose outcome
    /// `finish` turns into replies back on the event loop.
    enum Step {
        /// The frames to write back (none for a notification that succeeded, nor for a claim,
        /// whose reply is its grant), and whether the connection should close (too many refused
        /// frames in a row).
        case replied([WireValue], close: Bool)
        /// Run the request on the pool for its placement, then pass its outcome to `finish`.
        case blocking(PreparedRequest)
    }

    /// Decodes one frame and either handles it here (it answers from memory) or hands it back to
    /// run on the blocking pool its route declares (`RequestRoute`). On the event loop.
    func handle(frame: ByteBufferView) -> Step {
        let request: PreparedRequest
        do throws(ClientFrameError) {
            let decoded = try ClientFrame(decoding: frame)
            guard let route = Self.routes[decoded.method] else {
                throw ClientFrameError(id: decoded.id, code: CoordinationFailure.Kind.unknownMethod.rawValue, message: "no method \(decoded.method)")
            }
            do {
                request = try route.prepare(self, decoded.id, decoded.params)
            } catch {
                throw ClientFrameError(id: decoded.id, code: error.kind.rawValue, message: error.message)
            }
        } catch {
            let (replies, close) = refused(error.id, code: error.code, message: error.message)
            return .replied(replies, close: close)
        }
        if request.placement != .eventLoop, !context.inlineRequests { return .blocking(request) }
        let (replies, close) = finish(request, run(request))
        return .replied(replies, close: close)
    }

    /// Runs a request's handler (on the event loop or a pool, as it declares).
    func run(_ request: PreparedRequest) -> Result<WireValue?, CoordinationFailure> {
        Result { () throws(CoordinationFailure) in try request.run() }
    }

    /// The replies for a request's outcome, on the event loop.
    func finish(_ request: PreparedRequest, _ outcome: Result<WireValue?, CoordinationFailure>) -> (replies: [WireValue], close: Bool) {
        switch outcome {
        case .success(let result):
            consecutiveErrors = 0
            guard let result, let id = request.id else { return ([], false) }
            return ([WireFrame.result(.int(id), result)], false)
        case .failure(let error):
            return refused(request.id, code: error.kind.rawValue, message: error.message, failure: error)
        }
    }

    /// The error reply; a request's failure goes whole (its `domain` and `errorCode` too: an
    /// access refusal says whether reading or writing was refused).
    private func refused(_ id: Int64?, code: String, message: String, failure: CoordinationFailure? = nil) -> (replies: [WireValue], close: Bool) {
        consecutiveErrors += 1
        context.logger.debug("refused a frame", metadata: ["pid": "\(peerPID)", "code": "\(code)", "error": "\(message)"])
        let replyID = id.map { WireValue.int($0) } ?? .null
        let reply = failure.map { WireFrame.error(replyID, $0) } ?? WireFrame.error(replyID, code: code, message: message)
        let close = consecutiveErrors >= Self.maximumConsecutiveErrors
        if close {
            context.logger.warning(
                "closing a connection after \(consecutiveErrors) refused frames in a row", metadata: ["pid": "\(peerPID)", "last": "\(message)"])
        }
        return ([reply], close)
    }

    /// The app the connection is or will be (its socket's, or the one its hello declares).
    var declaredApp: String? { forcedApp ?? app }

    /// The arbiter's number for this connection; refused before hello.
    func helloed() throws(CoordinationFailure) -> UInt32 {
        guard let client else { throw CoordinationFailure(kind: .invalid, message: "say hello first") }
        return client
    }

    /// Opens the session: the arbiter's client number, and the app this connection is.
    func hello(_ hello: Hello) throws(CoordinationFailure) -> HelloReply {
        guard client == nil else { throw CoordinationFailure(kind: .invalid, message: "hello was already said on this connection") }
        if let version = hello.protocol, version != Int64(WireFrame.protocolVersion) {
            throw CoordinationFailure(kind: .invalid, message: "this daemon speaks protocol \(WireFrame.protocolVersion), not \(version)")
        }
        if let forcedApp, let declared = hello.app, declared != forcedApp {
            throw CoordinationFailure(kind: .denied, message: "this socket belongs to \(forcedApp); it cannot be \(declared)")
        }
        if let app = forcedApp ?? hello.app {
            guard context.access.catalog.manifest(app) != nil else {
                throw CoordinationFailure(kind: .notFound, message: "no app \(app) is registered: run `folio app register` with its manifest")
            }
            self.app = app
        }
        let label = String((hello.name ?? "pid \(peerPID)").prefix(256))
        // A sandboxed app's claims are bounded across all its connections.
        let number = context.arbiter.addClient(self, pid: peerPID, name: label, party: forcedApp.map { ClientBudgets.party(app: $0) })
        client = number
        return HelloReply(
            protocol: Int64(WireFrame.protocolVersion), daemon: "folio", pid: Int64(getpid()), uid: Int64(getuid()), client: Int64(number),
            app: self.app)
    }
}

extension ClientSession {
    /// The session's requests: hello (an app's reads its manifest) and the arbiter's status.
    static let sessionRoutes = [
        RequestRoute(Hello.self, beforeHello: true, placement: { session, hello in session.declaredApp ?? hello.app != nil ? .quick : .eventLoop }) {
            session, hello, _ throws(CoordinationFailure) in try session.hello(hello)
        },
        // An app sees only its own client, claims and presenters.
        RequestRoute(DaemonStatus.self, on: .eventLoop) { session, _, _ throws(CoordinationFailure) in
            session.context.arbiter.status(visibleTo: session.app != nil ? try session.helloed() : nil)
        },
    ]
}
