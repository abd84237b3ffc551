import Folio
import Foundation
import Logging
import NIOCore
import Synchronization
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// One client connection's state: whether it said hello, its arbiter client number, and how to
/// write to it. Frames are decoded and validated (`ClientFrame`) and handled on the connection's
/// event loop; the arbiter's outputs for this client may arrive from any thread and are written
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

    init(context: DaemonContext, channel: any Channel, peerPID: Int32, forcedApp: String? = nil) {
        self.context = context
        self.channel = channel
        self.peerPID = peerPID
        self.forcedApp = forcedApp
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
        for frame in frames {
            frame.write(into: &bytes)
            bytes.append(UInt8(ascii: "\n"))
        }
        channel.writeAndFlush(channel.allocator.buffer(bytes: bytes), promise: nil)
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
        case blocking(RequestPlacement, Request)
    }

    /// A decoded request waiting for its pool.
    struct Request: Sendable {
        var id: Int64?
        var request: ClientRequest
    }

    /// Decodes one frame and either handles it here (it answers from memory) or hands it back to
    /// run on the blocking pool its request declares (`ClientRequest.placement`). On the event loop.
    func handle(frame: ByteBufferView) -> Step {
        let decoded: ClientFrame
        do {
            decoded = try ClientFrame(decoding: frame)
        } catch {
            let (replies, close) = refused(error.id, code: error.code, message: error.message)
            return .replied(replies, close: close)
        }
        let request = Request(id: decoded.id, request: decoded.request)
        let placement = decoded.request.placement(app: forcedApp ?? app, drive: context.drive)
        if placement != .eventLoop, !context.inlineRequests { return .blocking(placement, request) }
        let (replies, close) = finish(request, run(request))
        return .replied(replies, close: close)
    }

    /// Runs a request's handler (on the event loop or a pool, as it declares).
    func run(_ request: Request) -> Result<WireValue?, CoordinationFailure> {
        Result { () throws(CoordinationFailure) in try execute(request.request, id: request.id) }
    }

    /// The replies for a request's outcome, on the event loop.
    func finish(_ request: Request, _ outcome: Result<WireValue?, CoordinationFailure>) -> (replies: [WireValue], close: Bool) {
        switch outcome {
        case .success(let result):
            consecutiveErrors = 0
            guard let result, let id = request.id else { return ([], false) }
            return ([WireFrame.result(.int(id), result)], false)
        case .failure(let error):
            return refused(request.id, code: error.kind.rawValue, message: error.message)
        }
    }

    private func refused(_ id: Int64?, code: String, message: String) -> (replies: [WireValue], close: Bool) {
        consecutiveErrors += 1
        context.logger.debug("refused a frame", metadata: ["pid": "\(peerPID)", "code": "\(code)", "error": "\(message)"])
        let reply = WireFrame.error(id.map { .int($0) } ?? .null, code: code, message: message)
        let close = consecutiveErrors >= Self.maximumConsecutiveErrors
        if close {
            context.logger.warning(
                "closing a connection after \(consecutiveErrors) refused frames in a row", metadata: ["pid": "\(peerPID)", "last": "\(message)"])
        }
        return ([reply], close)
    }

    /// Runs a request; returns its result, or nil when it has none to send now.
    private func execute(_ request: ClientRequest, id: Int64?) throws(CoordinationFailure) -> WireValue? {
        if case .hello(let version, let name, let app) = request { return try hello(version: version, name: name, app: app) }
        guard let client else { throw CoordinationFailure(kind: .invalid, message: "say hello first") }
        let arbiter = context.arbiter
        switch request {
        case .hello: return nil
        case .typesShow(let request): return try WireValueEncoder().encode(try typesShow(request))
        case .typesOf(let request): return try WireValueEncoder().encode(try typesOf(request))
        case .status: return arbiter.status()
        case .access(let request): return try access(request, id: id)
        case .index(let request): return try index(request, id: id)
        case .claim(let claim):
            if let app {
                for item in claim.items { try context.access.require(app: app, path: item.path, write: item.access.isWrite) }
            }
            // A placeholder is materialized before the claim is granted (Apple: a coordinated read
            // or write of a dataless file downloads it first).
            if let drive = context.drive {
                let placeholders = claim.items.map(\.path).filter(drive.isPlaceholder)
                if !placeholders.isEmpty {
                    materialize(placeholders, drive: drive, then: claim, client: client)
                    return nil
                }
            }
            try arbiter.submit(claim, from: client)
            return nil
        case .release(let claim): try arbiter.release(claim, from: client)
        case .cancel(let claim): arbiter.cancel(claim, from: client)
        case .moved(let claim, let from, let to): try arbiter.moved(from: from, to: to, claim: claim, client: client)
        case .addPresenter(let presenter, let purpose, let path):
            if let app, let path { try context.access.require(app: app, path: path, write: false) }
            try arbiter.addPresenter(presenter, purpose: purpose, path: path, client: client)
        case .updatePresenter(let presenter, let path): try arbiter.updatePresenter(presenter, path: path, client: client)
        case .removePresenter(let presenter): arbiter.removePresenter(presenter, client: client)
        case .answer(let answer): try arbiter.answer(answer, from: client)
        case .ubiquityChanged(let path, let keys): arbiter.ubiquityAttributesChanged(at: path, keys: keys, client: client)
        case .driveSync(let confirmingDeletions): return try driveSync(confirmingDeletions: confirmingDeletions, id: id)
        }
        return [:]
    }

    /// Downloads the placeholders, then submits the claim; a failed download fails the claim.
    private func materialize(_ placeholders: [String], drive: DriveService, then claim: ClaimRequest, client: UInt32) {
        let arbiter = context.arbiter
        Task {
            do {
                for path in placeholders { try await drive.materialize(path) }
                try arbiter.submit(claim, from: client)
            } catch let failure as CoordinationFailure {
                self.receive([.failed(claim: claim.claim, failure: failure)])
            } catch {
                self.receive([.failed(claim: claim.claim, failure: CoordinationFailure(kind: .failed, message: "the placeholder could not be downloaded: \(error)"))])
            }
        }
    }

    private func hello(version: Int64?, name: String?, app: String?) throws(CoordinationFailure) -> WireValue {
        guard client == nil else { throw CoordinationFailure(kind: .invalid, message: "hello was already said on this connection") }
        if let version, version != Int64(WireFrame.protocolVersion) {
            throw CoordinationFailure(kind: .invalid, message: "this daemon speaks protocol \(WireFrame.protocolVersion), not \(version)")
        }
        if let forcedApp, app != nil, app != forcedApp {
            throw CoordinationFailure(kind: .denied, message: "this socket belongs to \(forcedApp); it cannot be \(app ?? "")")
        }
        if let app = forcedApp ?? app {
            guard context.access.catalog.manifest(app) != nil else {
                throw CoordinationFailure(kind: .notFound, message: "no app \(app) is registered: run `folio app register` with its manifest")
            }
            self.app = app
        }
        let label = String((name ?? "pid \(peerPID)").prefix(256))
        let number = context.arbiter.addClient(self, pid: peerPID, name: label)
        client = number
        var reply: [String: WireValue] = [
            "protocol": .int(Int64(WireFrame.protocolVersion)), "daemon": "folio", "pid": .int(Int64(getpid())),
            "uid": .int(Int64(getuid())), "client": .int(Int64(number)),
        ]
        if let app = self.app { reply["app"] = .string(app) }
        return .object(reply)
    }
}
