import Folio
import Foundation
import Logging
import NIOCore
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// One client connection's state: whether it said hello, its arbiter client number, and how to
/// write to it. Frames are handled on the connection's event loop; the arbiter's outputs for this
/// client may arrive from any thread and are written through the channel (thread-safe).
final class ClientSession: ArbiterClient, @unchecked Sendable {
    let context: DaemonContext
    let channel: any Channel
    let peerPID: Int32
    /// The arbiter's number for this client, once it said hello.
    var client: UInt32?
    private var consecutiveErrors = 0

    init(context: DaemonContext, channel: any Channel, peerPID: Int32) {
        self.context = context
        self.channel = channel
        self.peerPID = peerPID
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
            self.client = nil
        }
    }

    /// Handles one frame and returns the frames to write back (none for a notification that
    /// succeeded), and whether the connection should close (too many errors in a row).
    func handle(frame: ByteBufferView) -> (replies: [WireValue], close: Bool) {
        let value: WireValue
        do {
            value = try WireValue(parsing: frame)
        } catch {
            return failed(.null, RequestError.badRequest("not a JSON frame: \(error)"))
        }
        guard case .object = value, let method = value["method"]?.stringValue else {
            return failed(value["id"] ?? .null, RequestError.badRequest("a frame needs a \"method\" string"))
        }
        let id = value["id"] ?? .null
        switch id {
        case .null, .int: break
        default: return failed(.null, RequestError.badRequest("\"id\" must be an integer"))
        }
        do {
            let result = try dispatch(method: method, id: id, params: value["params"])
            consecutiveErrors = 0
            guard let result, id != .null else { return ([], false) }
            return ([WireFrame.result(id, result)], false)
        } catch let error as RequestError {
            return failed(id, error)
        } catch let failure as CoordinationFailure {
            return failed(id, RequestError(code: failure.kind.rawValue, message: failure.message))
        } catch {
            return failed(id, RequestError(code: "failed", message: "\(error)"))
        }
    }

    private func failed(_ id: WireValue, _ error: RequestError) -> (replies: [WireValue], close: Bool) {
        consecutiveErrors += 1
        context.logger.debug("refused a frame", metadata: ["pid": "\(peerPID)", "code": "\(error.code)", "error": "\(error.message)"])
        return ([WireFrame.error(id, code: error.code, message: error.message)], consecutiveErrors >= 64)
    }

    /// Runs a method; returns its result, or nil for a method that has none (a notification).
    private func dispatch(method: String, id: WireValue, params: WireValue?) throws -> WireValue? {
        if method == "hello" { return try hello(params) }
        guard let client else { throw RequestError.badRequest("say hello first") }
        switch method {
        case "types.show": return try typesShow(params)
        case "types.of": return try typesOf(params)
        case "status": return context.arbiter.status()
        case "claim": return try claim(id: id, params: params, client: client)
        case "release": return try release(params, client: client)
        case "cancel": return try cancel(params, client: client)
        case "moved": return try moved(params, client: client)
        case "presenter.add": return try addPresenter(params, client: client)
        case "presenter.update": return try updatePresenter(params, client: client)
        case "presenter.remove": return try removePresenter(params, client: client)
        case "presenter.answer": return try answer(params, client: client)
        case "ubiquity.changed": return try ubiquityChanged(params, client: client)
        default: throw RequestError(code: "unknown-method", message: "no method \(method)")
        }
    }

    private func hello(_ params: WireValue?) throws -> WireValue {
        guard client == nil else { throw RequestError.badRequest("hello was already said on this connection") }
        if let version = params?["protocol"], version != .null {
            guard version.intValue == Int64(WireFrame.protocolVersion) else {
                throw RequestError(
                    code: "unsupported-protocol", message: "this daemon speaks protocol \(WireFrame.protocolVersion)")
            }
        }
        var name = params?["name"]?.stringValue ?? "pid \(peerPID)"
        if name.utf8.count > 256 { name = String(name.prefix(256)) }
        let number = context.arbiter.addClient(self, pid: peerPID, name: name)
        client = number
        return [
            "protocol": .int(Int64(WireFrame.protocolVersion)), "daemon": "folio", "pid": .int(Int64(getpid())),
            "uid": .int(Int64(getuid())), "client": .int(Int64(number)),
        ]
    }
}
