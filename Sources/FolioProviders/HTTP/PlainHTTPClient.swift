#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation
import NIOPosix
import Synchronization

/// A lean HTTP/1.1 client for `http://` servers, for the sync engine's small transfers: a GET into a
/// file or a PUT of bytes in memory runs whole as one job on a pool of its own, with blocking calls
/// on a pooled keep-alive connection — the request written in one call, the reply read as it comes,
/// the file written on the same thread. AsyncHTTPClient's path for the same request crossed the
/// cooperative pool, an event loop and the file-work pool several times, and that crossing, not the
/// bytes, was most of a 4 KiB file's cost. TLS, and every other request, stays with AsyncHTTPClient.
///
/// Idle connections are kept for at most 3 s (before servers drop them: Apache's keep-alive timeout
/// is 5 s), 16 at most per server. A request sent on a pooled connection the server had closed is
/// sent again on a new one when it is repeatable.
final class PlainHTTPClient: Sendable {
    let host: String
    let port: Int
    /// The `Host` field: the authority as the URL gave it.
    let authority: String
    private let idle = Mutex<[PlainHTTPConnection]>([])

    /// How long idle connections are kept, in nanoseconds.
    static let idleTimeout: UInt64 = 3_000_000_000
    /// The most idle connections kept per server.
    static let maximumIdle = 16
    /// Seconds to wait for a connection.
    static let connectTimeout = 10

    /// The blocking pool every plain request runs on: a thread for each of the sync engine's
    /// sixteen transfers (its waits are the network's, so it is not the providers' file-work pool,
    /// whose other work a stalled server would hold up).
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 16)
        pool.start()
        return pool
    }()

    private static let clients = Mutex<[String: PlainHTTPClient]>([:])

    /// The process's client for `url`'s server, or nil unless `url` is plain `http` with a host (and
    /// no user in it). `FOLIO_PLAIN_HTTP=0` turns the plain path off (every request through
    /// AsyncHTTPClient).
    static func shared(for url: URL) -> PlainHTTPClient? {
        guard url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty, url.user == nil,
            ProcessInfo.processInfo.environment["FOLIO_PLAIN_HTTP"] != "0"
        else { return nil }
        let port = url.port ?? 80
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let authority = (bare.contains(":") ? "[\(bare)]" : bare) + (url.port.map { ":\($0)" } ?? "")
        return clients.withLock { clients in
            if let client = clients[authority] { return client }
            let client = PlainHTTPClient(host: bare, port: port, authority: authority)
            clients[authority] = client
            return client
        }
    }

    /// A client of its own for `host`:`port` (``shared(for:)`` gives the process's); `authority` is the `Host` field.
    init(host: String, port: Int, authority: String) {
        self.host = host
        self.port = port
        self.authority = authority
    }

    /// A request: its method, its target (the path, percent-encoded, and any query), its header
    /// fields and its body.
    struct Request {
        var method: String
        var target: String
        var fields: [(String, String)]
        var body: [UInt8]?

        /// The request as sent: head and body in one buffer.
        func serialized(authority: String) -> [UInt8] {
            var head = "\(method) \(target) HTTP/1.1\r\nHost: \(authority)\r\n"
            for (name, value) in fields { head += "\(name): \(value)\r\n" }
            if let body { head += "Content-Length: \(body.count)\r\n" } else if ["PUT", "POST"].contains(method) { head += "Content-Length: 0\r\n" }
            head += "\r\n"
            var bytes = Array(head.utf8)
            if let body { bytes.append(contentsOf: body) }
            return bytes
        }
    }

    /// A reply's body, for the caller of ``exchange(_:repeatable:wait:reply:)`` to read once: piece
    /// by piece, or, framed by its length, straight into memory of the caller's.
    final class ReplyBody {
        private let connection: PlainHTTPConnection
        private let framing: HTTPReplyHead.Framing
        private let wait: PlainHTTPWait
        private var received: Int64 = 0
        /// Whether the body was read to its end and the connection can carry another request.
        private(set) var ended = false

        fileprivate init(connection: PlainHTTPConnection, framing: HTTPReplyHead.Framing, wait: PlainHTTPWait) {
            self.connection = connection
            self.framing = framing
            self.wait = wait
            if case .none = framing { ended = true }
        }

        /// The body's length, when the reply framed it by its length.
        var length: Int64? {
            if case .length(let total) = framing { total } else { nil }
        }

        /// Reads the whole body, handing each piece to `sink` as it comes.
        func read(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
            ended = try connection.readBody(framing, wait: wait, sink: sink)
        }

        /// Reads the next `destination.count` bytes of a body framed by its length into
        /// `destination`, handing `landed` each piece as it lands; the body ends with its last byte.
        func read(into destination: UnsafeMutableRawBufferPointer, landed: (UnsafeRawBufferPointer) throws -> Void) throws {
            guard let length, received + Int64(destination.count) <= length else {
                throw PlainHTTPError.malformed("a read past the body's length")
            }
            var arrived = received
            do {
                try connection.readBody(into: destination, wait: wait) { piece in
                    try landed(piece)
                    arrived += Int64(piece.count)
                }
            } catch PlainHTTPError.closedEarly {
                throw PlainHTTPError.closedEarly("after \(arrived) of \(length) bytes")
            }
            received += Int64(destination.count)
            ended = received == length
        }
    }

    /// Sends `request` and hands its reply's head and body to `reply`; returns the head. Blocking:
    /// run it on ``pool``. A repeatable request whose connection closed before any byte of the
    /// reply is sent again, three times in all. The connection is kept for another request only
    /// when `reply` read the body to its end.
    func exchange(_ request: Request, repeatable: Bool, wait: PlainHTTPWait, reply: (HTTPReplyHead, ReplyBody) throws -> Void) throws -> HTTPReplyHead {
        let bytes = request.serialized(authority: authority)
        var attempt = 0
        while true {
            attempt += 1
            let connection = try checkOut(wait: wait)
            connection.begin()
            do {
                try bytes.withUnsafeBytes { try connection.send($0, wait: wait) }
                let head = try connection.readHead(wait: wait)
                let body = ReplyBody(connection: connection, framing: try head.framing(method: request.method), wait: wait)
                try reply(head, body)
                if body.ended, head.keepsAlive, !connection.hasUnreadBytes, head.status != 101 { checkIn(connection) }
                return head
            } catch PlainHTTPError.dropped where repeatable && attempt < 3 {
                continue
            }
        }
    }

    /// Sends `request` and reads its reply, handing each piece of the body to `body` with the
    /// reply's head; returns the head (``exchange(_:repeatable:wait:reply:)``).
    func perform(_ request: Request, repeatable: Bool, wait: PlainHTTPWait, body: (HTTPReplyHead, UnsafeRawBufferPointer) throws -> Void) throws -> HTTPReplyHead {
        try exchange(request, repeatable: repeatable, wait: wait) { head, reply in try reply.read { try body(head, $0) } }
    }

    /// Sends `request` and reads its whole reply, up to `limit` bytes of body.
    func collect(_ request: Request, repeatable: Bool, wait: PlainHTTPWait, limit: Int) throws -> (head: HTTPReplyHead, body: [UInt8]) {
        var collected: [UInt8] = []
        let head = try perform(request, repeatable: repeatable, wait: wait) { _, piece in
            // A retry starts again with nothing: only a dropped connection is retried, before any body.
            guard collected.count + piece.count <= limit else { throw PlainHTTPError.tooLarge(limit) }
            collected.append(contentsOf: piece)
        }
        return (head, collected)
    }

    /// An idle connection young enough to keep using, or a new one.
    private func checkOut(wait: PlainHTTPWait) throws(PlainHTTPError) -> PlainHTTPConnection {
        let found = idle.withLock { idle -> PlainHTTPConnection? in
            let now = PlainHTTPWait.now()
            while let last = idle.popLast() {
                if now - last.idleSince < Self.idleTimeout { return last }
            }
            return nil
        }
        if let found { return found }
        if wait.isCancelled() { throw .cancelled }
        return try PlainHTTPConnection(host: host, port: port, timeout: Self.connectTimeout)
    }

    private func checkIn(_ connection: PlainHTTPConnection) {
        idle.withLock { idle in
            // Taken under the lock, so the stack's times only grow towards its top.
            let now = PlainHTTPWait.now()
            connection.idleSince = now
            // Connections idle too long are dropped (the stack's bottom).
            idle.removeAll { now - $0.idleSince >= Self.idleTimeout }
            if idle.count < Self.maximumIdle { idle.append(connection) }
        }
    }

    /// How many connections are kept idle now (for tests).
    var idleCount: Int { idle.withLock { $0.count } }
}
