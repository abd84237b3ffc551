#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// What went wrong below HTTP on a ``PlainHTTPConnection``.
enum PlainHTTPError: Error, CustomStringConvertible, Equatable {
    /// No connection could be made.
    case connect(String)
    /// The connection was closed or reset before any byte of the reply: a pooled connection the
    /// server had dropped, which a repeatable request is sent again on a new one.
    case dropped
    /// The server closed or reset the connection part way through its reply.
    case closedEarly(String)
    /// Nothing moved for this many seconds, or the request's own time ran out.
    case timedOut(String)
    /// The caller gave up (a cancelled task or progress).
    case cancelled
    /// The reply is not HTTP/1.1 as RFC 9112 frames it.
    case malformed(String)
    /// The reply's body is longer than the caller reads (this many bytes).
    case tooLarge(Int)

    var description: String {
        switch self {
        case .connect(let why): "cannot connect: \(why)"
        case .dropped: "the server closed the connection before replying"
        case .closedEarly(let why): "the server closed the connection \(why)"
        case .timedOut(let why): why
        case .cancelled: "cancelled"
        case .malformed(let why): "a malformed reply: \(why)"
        case .tooLarge(let limit): "a reply larger than \(limit) bytes"
        }
    }
}

/// How long a request on a ``PlainHTTPConnection`` may wait: each wait for the server ends after
/// `silence` without a byte moving, the whole request at `deadline`, and either sooner when
/// `isCancelled` turns true (checked every quarter second while waiting).
struct PlainHTTPWait: Sendable {
    /// The longest time without a byte sent or received, in nanoseconds.
    var silence: UInt64
    /// When the whole request must have ended (monotonic nanoseconds), if ever.
    var deadline: UInt64?
    var isCancelled: @Sendable () -> Bool

    /// `duration` in nanoseconds (none below zero).
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return seconds < 0 ? 0 : UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// The monotonic clock, in nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Throws when the caller gave up, the deadline passed, or nothing moved since `lastMoved` for too long.
    func check(since lastMoved: UInt64) throws(PlainHTTPError) {
        if isCancelled() { throw .cancelled }
        let now = Self.now()
        if let deadline, now >= deadline { throw .timedOut("the request took longer than it may") }
        if now - lastMoved >= silence { throw .timedOut("the server sent nothing for \(silence / 1_000_000_000) s") }
    }
}

/// One keep-alive TCP connection to an HTTP/1.1 server, used by one request at a time with blocking
/// socket calls (on ``PlainHTTPClient``'s pool, never on Swift's cooperative pool or an event
/// loop). Each call waits at most a quarter second in the kernel, then checks its ``PlainHTTPWait``.
final class PlainHTTPConnection: @unchecked Sendable {
    let descriptor: Int32
    /// Bytes received and not yet read, at `buffer[start..<end]`.
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    /// When the connection was last handed back idle (monotonic nanoseconds).
    var idleSince: UInt64 = 0
    /// Whether the current request has received any byte of its reply.
    private(set) var receivedAny = false

    static let bufferSize = 64 << 10

    /// Connects to `host`:`port`, giving up on an address after `timeout` seconds.
    init(host: String, port: Int, timeout: Int) throws(PlainHTTPError) {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &found)
        guard resolved == 0, let first = found else {
            throw .connect("cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(first) }
        var connected: Int32 = -1
        var failure = "no address for \(host)"
        var address: UnsafeMutablePointer<addrinfo>? = first
        while let candidate = address, connected < 0 {
            address = candidate.pointee.ai_next
            let made = socket(candidate.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard made >= 0 else {
                failure = String(cString: strerror(errno))
                continue
            }
            Self.setTimeout(made, SO_SNDTIMEO, microseconds: timeout * 1_000_000)
            if Glibc.connect(made, candidate.pointee.ai_addr, candidate.pointee.ai_addrlen) == 0 {
                connected = made
            } else {
                failure = errno == EINPROGRESS ? "no answer within \(timeout) s" : String(cString: strerror(errno))
                Glibc.close(made)
            }
        }
        guard connected >= 0 else { throw .connect("\(host):\(port): \(failure)") }
        var one: Int32 = 1
        setsockopt(connected, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        Self.setTimeout(connected, SO_SNDTIMEO, microseconds: 250_000)
        Self.setTimeout(connected, SO_RCVTIMEO, microseconds: 250_000)
        descriptor = connected
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    /// A connection over `descriptor`, already connected (a socket pair's end, for tests); it is closed with the connection.
    init(descriptor: Int32) {
        Self.setTimeout(descriptor, SO_SNDTIMEO, microseconds: 250_000)
        Self.setTimeout(descriptor, SO_RCVTIMEO, microseconds: 250_000)
        self.descriptor = descriptor
        buffer = .allocate(byteCount: Self.bufferSize, alignment: 16)
    }

    deinit {
        Glibc.close(descriptor)
        buffer.deallocate()
    }

    private static func setTimeout(_ socket: Int32, _ option: Int32, microseconds: Int) {
        var value = timeval(tv_sec: microseconds / 1_000_000, tv_usec: microseconds % 1_000_000)
        setsockopt(socket, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Whether bytes are left over that no reply asked for (a server that sent more than it framed).
    var hasUnreadBytes: Bool { end > start }

    /// Begins a request: what a previous one left is forgotten.
    func begin() {
        receivedAny = false
        start = 0
        end = 0
    }

    /// Sends all of `bytes`.
    func send(_ bytes: UnsafeRawBufferPointer, wait: PlainHTTPWait) throws(PlainHTTPError) {
        var offset = 0
        var lastMoved = PlainHTTPWait.now()
        while offset < bytes.count {
            let count = Glibc.send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if count > 0 {
                offset += count
                lastMoved = PlainHTTPWait.now()
                continue
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try wait.check(since: lastMoved)
            case EPIPE, ECONNRESET:
                // The server may have answered before it closed (a refusal of a large body).
                if receivedAny { throw .closedEarly("while the request was sent") }
                throw .dropped
            default: throw .closedEarly("while the request was sent: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Receives more bytes into the buffer; false when the server closed the connection.
    private func fill(wait: PlainHTTPWait) throws(PlainHTTPError) -> Bool {
        if start == end {
            start = 0
            end = 0
        } else if end == buffer.count {
            guard start > 0 else { return true }
            (buffer.baseAddress! + 0).copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            end -= start
            start = 0
        }
        let count = try receive(into: buffer.baseAddress! + end, count: buffer.count - end, flags: 0, wait: wait)
        end += count
        return count > 0
    }

    /// Receives up to `count` bytes at `address` (with `MSG_WAITALL`, all of them unless a wait in
    /// the kernel ends first), waiting as `wait` allows: how many came, 0 when the server closed or
    /// reset the connection.
    private func receive(into address: UnsafeMutableRawPointer, count: Int, flags: Int32, wait: PlainHTTPWait) throws(PlainHTTPError) -> Int {
        let lastMoved = PlainHTTPWait.now()
        while true {
            let received = recv(descriptor, address, count, flags)
            if received > 0 {
                receivedAny = true
                return received
            }
            if received == 0 { return 0 }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: try wait.check(since: lastMoved)
            case ECONNRESET: return 0
            default: throw receivedAny ? .closedEarly("part way: \(String(cString: strerror(errno)))") : .dropped
            }
        }
    }

    /// Reads the next final reply's head (informational 1xx heads are passed over).
    func readHead(wait: PlainHTTPWait) throws(PlainHTTPError) -> HTTPReplyHead {
        while true {
            let buffered = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
            if let length = HTTPReplyHead.end(in: buffered) {
                let head = try HTTPReplyHead.parse(UnsafeRawBufferPointer(rebasing: buffered[..<length]))
                start += length
                if (100..<200).contains(head.status), head.status != 101 { continue }
                return head
            }
            guard end - start < HTTPReplyHead.maximumSize else { throw .malformed("a reply head longer than \(HTTPReplyHead.maximumSize) bytes") }
            guard try fill(wait: wait) else {
                if !receivedAny { throw .dropped }
                throw .closedEarly("in the middle of the reply's head")
            }
        }
    }

    /// Reads the body `framing` describes, handing each piece to `sink` as it comes; whether the
    /// connection ended cleanly at the body's end (false: read until the server closed it).
    func readBody(_ framing: HTTPReplyHead.Framing, wait: PlainHTTPWait, sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        switch framing {
        case .none:
            return true
        case .length(let total):
            var left = total
            while left > 0 {
                if start == end, try !fill(wait: wait) { throw PlainHTTPError.closedEarly("after \(total - left) of \(total) bytes") }
                let count = min(Int64(end - start), left)
                try sink(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + Int(count))]))
                start += Int(count)
                left -= count
            }
            return true
        case .untilClose:
            while true {
                if start < end {
                    try sink(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
                    start = end
                }
                guard try fill(wait: wait) else { return false }
            }
        case .chunked:
            while true {
                let line = try readLine(wait: wait)
                // chunk-size [; extensions]
                let size = line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first?.trimmingASCIISpaces() ?? ""
                guard !size.isEmpty, size.utf8.count <= 15, let count = Int(size, radix: 16), count >= 0 else {
                    throw PlainHTTPError.malformed("a chunk size that is not a number: \(line.prefix(40))")
                }
                if count == 0 {
                    // Trailer fields, up to the blank line.
                    var trailers = 0
                    while try !readLine(wait: wait).isEmpty {
                        trailers += 1
                        guard trailers <= HTTPReplyHead.maximumFields else { throw PlainHTTPError.malformed("too many trailer fields") }
                    }
                    return true
                }
                _ = try readBody(.length(Int64(count)), wait: wait, sink: sink)
                guard try readLine(wait: wait).isEmpty else { throw PlainHTTPError.malformed("a chunk longer than its size") }
            }
        }
    }

    /// Reads the next `destination.count` bytes of a body framed by its length straight into
    /// `destination`: what the buffer holds is copied, the rest received in place, so a large body's
    /// bytes are copied once, by the kernel. `landed` is handed each piece as it lands.
    func readBody(into destination: UnsafeMutableRawBufferPointer, wait: PlainHTTPWait, landed: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard let base = destination.baseAddress else { return }
        var filled = 0
        if start < end {
            let count = min(end - start, destination.count)
            base.copyMemory(from: buffer.baseAddress! + start, byteCount: count)
            start += count
            filled = count
            try landed(UnsafeRawBufferPointer(start: base, count: count))
        }
        while filled < destination.count {
            let count = try receive(into: base + filled, count: min(destination.count - filled, Self.directPiece), flags: Int32(MSG_WAITALL), wait: wait)
            guard count > 0 else { throw PlainHTTPError.closedEarly("part way through the body") }
            try landed(UnsafeRawBufferPointer(start: base + filled, count: count))
            filled += count
        }
    }

    /// The most a receive into the caller's memory asks for at once: its piece is hashed while it
    /// is still in the processor's cache.
    static let directPiece = 256 << 10

    /// The next line of the reply (without its CRLF or LF), at most 4 KiB.
    private func readLine(wait: PlainHTTPWait) throws(PlainHTTPError) -> Substring {
        while true {
            let buffered = UnsafeRawBufferPointer(rebasing: buffer[start..<end])
            if let newline = buffered.firstIndex(of: 0x0A) {
                var last = newline
                if last > 0, buffered[last - 1] == 0x0D { last -= 1 }
                let line = String(decoding: UnsafeRawBufferPointer(rebasing: buffered[..<last]), as: UTF8.self)
                start += newline + 1
                return Substring(line)
            }
            guard buffered.count < 4096 else { throw .malformed("a chunk line longer than 4 KiB") }
            guard try fill(wait: wait) else { throw .closedEarly("in the middle of a chunked body") }
        }
    }
}
