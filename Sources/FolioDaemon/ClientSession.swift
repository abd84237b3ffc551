import Folio
import Foundation
import Logging
import NIOCore
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
    /// The arbiter's number for this client, once it said hello.
    private(set) var client: UInt32?
    /// The app this connection declared in its hello; nil for the user's own tools, which reach
    /// everything the user can.
    private(set) var app: String?
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
        if let client {
            context.arbiter.removeClient(client)
            context.access.grants.sessionEnded(client)
            self.client = nil
        }
        context.access.picker.sessionClosed(self)
        context.index.sessionClosed(self)
    }

    /// Handles one frame and returns the frames to write back (none for a notification that
    /// succeeded, nor for a claim, whose reply is its grant), and whether the connection should
    /// close (too many refused frames in a row).
    func handle(frame: ByteBufferView) -> (replies: [WireValue], close: Bool) {
        let decoded: ClientFrame
        do {
            decoded = try ClientFrame(decoding: frame)
        } catch {
            return refused(error.id, code: error.code, message: error.message)
        }
        let id: WireValue = decoded.id.map { .int($0) } ?? .null
        do {
            let result = try execute(decoded.request, id: decoded.id)
            consecutiveErrors = 0
            guard let result, decoded.id != nil else { return ([], false) }
            return ([WireFrame.result(id, result)], false)
        } catch {
            return refused(decoded.id, code: error.kind.rawValue, message: error.message)
        }
    }

    private func refused(_ id: Int64?, code: String, message: String) -> (replies: [WireValue], close: Bool) {
        consecutiveErrors += 1
        context.logger.debug("refused a frame", metadata: ["pid": "\(peerPID)", "code": "\(code)", "error": "\(message)"])
        let reply = WireFrame.error(id.map { .int($0) } ?? .null, code: code, message: message)
        return ([reply], consecutiveErrors >= Self.maximumConsecutiveErrors)
    }

    /// Runs a request; returns its result, or nil when it has none to send now.
    private func execute(_ request: ClientRequest, id: Int64?) throws(CoordinationFailure) -> WireValue? {
        if case .hello(let version, let name, let app) = request { return try hello(version: version, name: name, app: app) }
        guard let client else { throw CoordinationFailure(kind: .invalid, message: "say hello first") }
        let arbiter = context.arbiter
        switch request {
        case .hello: return nil
        case .typesShow(let query): return try typesShow(query)
        case .typesOf(let path): return try typesOf(path)
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
