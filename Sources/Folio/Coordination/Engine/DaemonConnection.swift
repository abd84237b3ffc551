import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A client's connection to the daemon's Unix socket: newline-delimited JSON frames, written under
/// a lock, read by a dedicated thread.
final class DaemonConnection: @unchecked Sendable {
    /// The protocol version this library speaks.
    static let protocolVersion = 1
    /// The largest frame either side accepts (docs/protocol.md).
    static let maximumFrameSize = 1 << 20

    struct Error: Swift.Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    private let fd: Int32
    private let writeLock = NSLock()
    private var buffered: [UInt8] = []

    /// How long each step may take before a daemon that does not answer is given up on.
    struct Deadlines: Sendable {
        /// Connecting and the hello exchange.
        var connect: Duration
        /// Each request's reply, and each frame's write.
        var request: Duration

        /// 10 s to connect and say hello, 60 s for a request; `FOLIO_CONNECT_TIMEOUT` and
        /// `FOLIO_REQUEST_TIMEOUT` (seconds) change them.
        static var fromEnvironment: Deadlines {
            func seconds(_ name: String, _ fallback: Duration) -> Duration {
                guard let text = ProcessInfo.processInfo.environment[name], let value = Double(text), value > 0, value.isFinite else {
                    return fallback
                }
                return .milliseconds(Int64(value * 1000))
            }
            return Deadlines(connect: seconds("FOLIO_CONNECT_TIMEOUT", .seconds(10)), request: seconds("FOLIO_REQUEST_TIMEOUT", .seconds(60)))
        }
    }

    /// Connects to the socket at `socketPath`. Connecting and every write give up after the
    /// deadlines (a daemon that stopped reading cannot hold this process forever).
    init(socketPath: String, deadlines: Deadlines) throws {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Error(message: "socket: \(String(cString: strerror(errno)))") }
        // A Unix socket's connect waits for the listener's backlog under the send timeout.
        Self.setTimeout(fd, SO_SNDTIMEO, deadlines.connect)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw Error(message: "socket path too long: \(socketPath)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let reason = errno == EAGAIN ? "the daemon did not accept the connection within \(deadlines.connect)" : String(cString: strerror(errno))
            close(fd)
            throw Error(message: "cannot connect to \(socketPath): \(reason)")
        }
        self.fd = fd
        self.deadlines = deadlines
        Self.setTimeout(fd, SO_SNDTIMEO, deadlines.request)
    }

    let deadlines: Deadlines

    private static func setTimeout(_ fd: Int32, _ option: Int32, _ duration: Duration?) {
        var value = timeval()
        if let duration {
            let (seconds, attoseconds) = duration.components
            value.tv_sec = Int(seconds)
            value.tv_usec = Int(attoseconds / 1_000_000_000_000)
        }
        _ = setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Ends the connection both ways; the reader thread sees the end and stops.
    func shutdownBothWays() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Writes one frame (the value and a newline).
    func send(_ frame: WireValue) throws(Error) {
        var bytes = frame.serialized()
        bytes.append(UInt8(ascii: "\n"))
        writeLock.lock()
        defer { writeLock.unlock() }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    // Part of a frame may be out: the stream cannot be used again.
                    shutdownBothWays()
                    throw Error(message: "the daemon took no data for \(deadlines.request): it does not answer")
                }
                throw Error(message: String(cString: strerror(errno)))
            }
            offset += written
        }
    }

    /// Sends `frame` and reads the first reply synchronously, before the reader thread starts,
    /// within the connect deadline.
    func handshake(_ frame: WireValue) throws -> WireValue {
        Self.setTimeout(fd, SO_RCVTIMEO, deadlines.connect)
        defer { Self.setTimeout(fd, SO_RCVTIMEO, nil) }
        try send(frame)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                return try WireValue(parsing: line)
            }
            guard try fill() else { throw Error(message: "the daemon closed the connection during hello") }
        }
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private func fill() throws(Error) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw Error(message: "the daemon did not answer hello within \(deadlines.connect)")
                }
                throw Error(message: String(cString: strerror(errno)))
            }
            if count == 0 { return false }
            buffered.append(contentsOf: chunk[..<count])
            if buffered.count > Self.maximumFrameSize, !buffered.contains(UInt8(ascii: "\n")) {
                throw Error(message: "the daemon sent a frame larger than \(Self.maximumFrameSize) bytes")
            }
            return true
        }
    }

    /// Starts the reader thread: each frame goes to `onFrame`; the end of the connection (or a
    /// frame that is not JSON) to `onClose`, once.
    func startReading(onFrame: @escaping @Sendable (WireValue) -> Void, onClose: @escaping @Sendable (String) -> Void) {
        let thread = Thread { [self] in
            var reason = "the daemon closed the connection"
            reading: while true {
                while let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = buffered[..<newline]
                    defer { buffered.removeSubrange(...newline) }
                    if line.isEmpty { continue }
                    do {
                        onFrame(try WireValue(parsing: line))
                    } catch {
                        reason = "the daemon sent a frame that is not JSON: \(error)"
                        break reading
                    }
                }
                do {
                    guard try fill() else { break }
                } catch {
                    reason = "\(error)"
                    break
                }
            }
            onClose(reason)
        }
        thread.name = "folio-daemon-reader"
        thread.start()
    }
}
