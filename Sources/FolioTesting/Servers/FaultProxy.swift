#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioServers
public import Foundation

/// An HTTP proxy on 127.0.0.1 in front of a test server that injects faults by rule: error
/// statuses, reset or stalled connections, truncated or delayed replies. One request per
/// connection (it asks both sides to close after it), so every request meets the rules.
public final class FaultProxy: @unchecked Sendable {
    /// What the proxy does with a request.
    public enum Action: Sendable, Equatable {
        /// Pass it on.
        case forward
        /// Answer with this status and an empty body, without passing it on.
        case status(Int)
        /// Answer with this status and this text as the body (a server's own words), without passing it on.
        case reply(Int, String)
        /// As lighttpd does: a request naming a collection without its trailing slash is answered
        /// `308 Permanent Redirect` to the slashed address (the proxy asks the server with a
        /// PROPFIND whether the path is a collection); anything else is passed on.
        case redirectUnslashedCollection
        /// Reset the connection without answering.
        case reset
        /// Never answer (until the proxy stops).
        case stall
        /// Pass it on, but cut the reply's body after this many bytes and close.
        case truncate(after: Int)
        /// Pass it on after this many seconds.
        case delay(Double)
        /// Pass it on, let the server answer, and reset the client's connection instead of relaying
        /// the answer: the server did the work, the client cannot know it.
        case loseReply
        /// Pass on the request with its body cut after this many bytes, as the whole of it (the
        /// server's end of the connection is closed there), wait for the server to answer, and
        /// reset the client's connection: an upload cut short by a failing network.
        case cutRequest(after: Int)
        /// Pass it on once the gate opens (or the proxy stops): the test acts while the request
        /// is known to be in flight, however slow the machine.
        case hold(Gate)
        /// Pass it on, relay the reply's head and this many bytes of its body, then the rest once
        /// the gate opens: a download known to be part way.
        case pauseReply(after: Int, Gate)
        /// Pass on the request's head at once and its body this many seconds later: an upload the
        /// server receives slowly, its file written seconds after the request arrived.
        case delayBody(Double)
    }

    /// A gate held requests wait at; ``held`` tells when one arrived.
    public final class Gate: @unchecked Sendable, Equatable {
        private let condition = NSCondition()
        private var isOpen = false
        private var waiting = 0

        /// A closed gate.
        public init() {}

        /// Lets every held request (and every later one) through.
        public func open() {
            condition.lock()
            isOpen = true
            condition.broadcast()
            condition.unlock()
        }

        /// How many requests wait at the gate.
        public var held: Int { condition.withLock { waiting } }

        func wait(unless stopped: () -> Bool) {
            condition.lock()
            waiting += 1
            while !isOpen && !stopped() { _ = condition.wait(until: Date().addingTimeInterval(0.1)) }
            waiting -= 1
            condition.unlock()
        }

        public static func == (lhs: Gate, rhs: Gate) -> Bool { lhs === rhs }
    }

    /// A rule: requests it matches get its action, `times` times (forever when nil).
    public struct Rule: Sendable {
        var method: String?
        var pathContains: String?
        var pathSuffix: String?
        var header: String?
        var action: Action
        var remaining: Int?

        /// A rule for `method` (any when nil) on paths containing `pathContains` and ending with
        /// `pathSuffix` (before any query), of requests carrying the header `header` (any when nil).
        public init(
            method: String? = nil, pathContains: String? = nil, pathSuffix: String? = nil, header: String? = nil, action: Action, times: Int? = nil
        ) {
            self.method = method
            self.pathContains = pathContains
            self.pathSuffix = pathSuffix
            self.header = header?.lowercased()
            self.action = action
            self.remaining = times
        }
    }

    /// The proxy's port on 127.0.0.1.
    public let port: Int
    /// The proxy's base URL.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/")! }
    private let upstream: Int
    private let listener: Int32
    private let lock = NSLock()
    private var rules: [Rule] = []
    private var seen: [String] = []
    private var stopped = false

    /// A proxy to the server on `upstreamPort`.
    public init(upstreamPort: Int) throws {
        upstream = upstreamPort
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = LoopbackHTTP.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    deinit { stop() }

    /// Adds a rule (earlier rules win).
    public func add(_ rule: Rule) { lock.withLock { rules.append(rule) } }

    /// Removes every rule: everything is passed on.
    public func clearRules() { lock.withLock { rules.removeAll() } }

    /// Every request seen, as "METHOD path", in order.
    public var requests: [String] { lock.withLock { seen } }

    /// Stops accepting; stalled connections end.
    public func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Waits on this connection's thread until `deadline` or until the proxy stops, whichever is first.
    private func pause(until deadline: Date) {
        while !isStopped, Date() < deadline { usleep(UInt32(min(50_000, max(1, deadline.timeIntervalSinceNow * 1_000_000)))) }
    }

    private func acceptLoop() {
        while !isStopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func action(for method: String, _ path: String, headers: Set<String>) -> Action {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? path
        return lock.withLock {
            seen.append("\(method) \(path)")
            for index in rules.indices {
                let rule = rules[index]
                guard rule.method.map({ $0 == method }) ?? true, rule.pathContains.map({ path.contains($0) }) ?? true,
                    rule.pathSuffix.map({ bare.hasSuffix($0) }) ?? true, rule.header.map({ headers.contains($0) }) ?? true,
                    rule.remaining.map({ $0 > 0 }) ?? true
                else { continue }
                if let remaining = rule.remaining { rules[index].remaining = remaining - 1 }
                return rule.action
            }
            return .forward
        }
    }

    /// Whether the server has a collection at `path` (a PROPFIND of depth 0, asked directly).
    private func isCollection(_ path: String) -> Bool {
        guard let reply = try? LoopbackHTTP.request(port: upstream, method: "PROPFIND", path: path, headers: ["Depth": "0"], timeout: 10),
            reply.status == 207
        else { return false }
        // The resource type's element, `<D:collection/>` whatever the prefix (a name is never the tag).
        let body = String(decoding: reply.body, as: UTF8.self)
        return body.contains(":collection/>") || body.contains("<collection/>")
    }

    private func serve(_ client: Int32) {
        // shutdown, not just close: the body-relay thread may be blocked reading this socket, and a
        // close alone would neither wake it nor send the client its end of stream.
        var abortive = false
        defer {
            if !abortive { shutdown(client, Int32(SHUT_RDWR)) }
            close(client)
        }
        guard var (head, rest) = readHead(client) else { return }
        let firstLine = head.prefix { $0 != UInt8(ascii: "\r") }
        let parts = String(decoding: firstLine, as: UTF8.self).split(separator: " ")
        guard parts.count >= 2 else { return }
        let method = String(parts[0]), path = String(parts[1])
        let names = String(decoding: head, as: UTF8.self).split(separator: "\r\n").dropFirst().compactMap { line in
            line.split(separator: ":", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }
        let action = action(for: method, path, headers: Set(names))
        switch action {
        case .status(let code):
            drainBody(client, head: head, already: rest)
            _ = try? LoopbackHTTP.send(client, Data("HTTP/1.1 \(code) Injected Fault\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            return
        case .reply(let code, let text):
            drainBody(client, head: head, already: rest)
            let body = Data(text.utf8)
            _ = try? LoopbackHTTP.send(
                client,
                Data("HTTP/1.1 \(code) Injected Fault\r\nContent-Type: text/html\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body)
            return
        case .redirectUnslashedCollection:
            if !path.hasSuffix("/"), isCollection(path) {
                drainBody(client, head: head, already: rest)
                let location = "http://127.0.0.1:\(port)\(path)/"
                _ = try? LoopbackHTTP.send(
                    client, Data("HTTP/1.1 308 Permanent Redirect\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
                return
            }
        case .reset:
            abortive = Self.resetOnClose(client)
            return
        case .stall:
            pause(until: .distantFuture)
            return
        case .loseReply:
            break
        case .delay(let seconds):
            pause(until: Date(timeIntervalSinceNow: seconds))
        case .hold(let gate):
            gate.wait { isStopped }
        case .cutRequest(let limit):
            cutRequest(client, head: head, body: rest, limit: limit)
            abortive = Self.resetOnClose(client)
            return
        case .forward, .truncate, .pauseReply, .delayBody:
            break
        }
        guard let server = try? LoopbackHTTP.connect(upstream) else { return }
        head = closingHead(head)
        let bodyDelay: Double? = if case .delayBody(let seconds) = action { seconds } else { nil }
        guard (try? LoopbackHTTP.send(server, Data(head) + Data(bodyDelay == nil ? rest : []))) != nil else {
            close(server)
            return
        }
        let early = bodyDelay == nil ? [] : rest
        rest = []
        // The request body, as it comes. Both descriptors stay open until this thread has ended:
        // closed under it, their numbers would be reused by other connections, and it would move
        // one connection's bytes into another.
        let relayed = DispatchSemaphore(value: 0)
        Thread {
            if let bodyDelay {
                self.pause(until: Date(timeIntervalSinceNow: bodyDelay))
                if !early.isEmpty, (try? LoopbackHTTP.send(server, Data(early))) == nil {
                    shutdown(server, Int32(SHUT_WR))
                    relayed.signal()
                    return
                }
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = recv(client, &buffer, buffer.count, 0)
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                if (try? LoopbackHTTP.send(server, Data(buffer[0..<count]))) == nil { break }
            }
            shutdown(server, Int32(SHUT_WR))
            relayed.signal()
        }.start()
        switch action {
        case .truncate(let after): relayReply(from: server, to: client, bodyLimit: after)
        case .pauseReply(let after, let gate): relayReply(from: server, to: client, bodyLimit: nil, pause: (after, gate))
        case .loseReply:
            Self.readToEnd(server)
            abortive = Self.resetOnClose(client)
        default: relayReply(from: server, to: client, bodyLimit: nil)
        }
        // Wakes the body relay; a connection to be reset gets no FIN first.
        shutdown(client, Int32(abortive ? SHUT_RD : SHUT_RDWR))
        shutdown(server, Int32(SHUT_RDWR))
        relayed.wait()
        close(server)
    }

    /// Sends the server the request with the first `limit` bytes of its body and the end of the
    /// stream, and reads its answer to the end.
    private func cutRequest(_ client: Int32, head: [UInt8], body: [UInt8], limit: Int) {
        var body = body
        var buffer = [UInt8](repeating: 0, count: 65536)
        while body.count < limit {
            let count = recv(client, &buffer, min(buffer.count, limit - body.count), 0)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            body += buffer[0..<count]
        }
        guard let server = try? LoopbackHTTP.connect(upstream) else { return }
        defer { close(server) }
        guard (try? LoopbackHTTP.send(server, Data(closingHead(head)) + Data(body.prefix(limit)))) != nil else { return }
        shutdown(server, Int32(SHUT_WR))
        Self.readToEnd(server)
    }

    /// Reads and drops what `socket` sends until its end of stream.
    private static func readToEnd(_ socket: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
        }
    }

    /// Makes closing `socket` abortive (RST, with no FIN first); returns true.
    private static func resetOnClose(_ socket: Int32) -> Bool {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        return true
    }

    /// Reads up to the end of the request head; returns the head and what came after it.
    private func readHead(_ socket: Int32) -> ([UInt8], [UInt8])? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while data.count < 65536 {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            data.append(contentsOf: buffer[0..<count])
            if let end = Self.headEnd(data) { return (Array(data[..<end]), Array(data[end...])) }
        }
        return nil
    }

    private static func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for index in 0...(data.count - 4) where data[index] == 13 && data[index + 1] == 10 && data[index + 2] == 13 && data[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// A request or reply head with `Connection: close` in place of any Connection header.
    private func closingHead(_ head: [UInt8]) -> [UInt8] {
        var lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        lines.removeAll { $0.lowercased().hasPrefix("connection:") }
        lines.append("Connection: close")
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Reads and drops a request's body (by Content-Length), so an early answer reaches the client.
    private func drainBody(_ socket: Int32, head: [UInt8], already: [UInt8]) {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        guard let range = text.range(of: "content-length:") else { return }
        let digits = text[range.upperBound...].prefix { $0 != "\r" }.trimmingCharacters(in: .whitespaces)
        var remaining = (Int(digits) ?? 0) - already.count
        var buffer = [UInt8](repeating: 0, count: 65536)
        while remaining > 0 {
            let count = recv(socket, &buffer, min(buffer.count, remaining), 0)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return }
            remaining -= count
        }
    }

    /// Relays the server's reply, its head rewritten to say `Connection: close` (the proxy serves
    /// one request per connection, so a client must not send another on it), its body cut after
    /// `bodyLimit` bytes when given.
    private func relayReply(from server: Int32, to client: Int32, bodyLimit: Int?, pause: (after: Int, gate: Gate)? = nil) {
        var pause = pause
        var buffer = [UInt8](repeating: 0, count: 65536)
        var pending: [UInt8] = []
        var headSent = false
        var sentBody = 0
        while true {
            let count = recv(server, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return }
            var chunk = Array(buffer[0..<count])
            if !headSent {
                pending += chunk
                guard let end = Self.headEnd(pending) else {
                    if pending.count > 65536 { return }
                    continue
                }
                if (try? LoopbackHTTP.send(client, Data(closingHead(Array(pending[..<end]))))) == nil { return }
                headSent = true
                chunk = Array(pending[end...])
                pending = []
            }
            if let limit = bodyLimit, sentBody + chunk.count > limit {
                _ = try? LoopbackHTTP.send(client, Data(chunk.prefix(max(0, limit - sentBody))))
                return
            }
            if let (after, gate) = pause, sentBody + chunk.count > after {
                let first = max(0, after - sentBody)
                if (try? LoopbackHTTP.send(client, Data(chunk.prefix(first)))) == nil { return }
                sentBody += first
                chunk.removeFirst(first)
                gate.wait { isStopped }
                pause = nil
            }
            sentBody += chunk.count
            if !chunk.isEmpty, (try? LoopbackHTTP.send(client, Data(chunk))) == nil { return }
        }
    }
}
