import FolioSystem
import FolioWire
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A raw client of the daemon's socket, for frames no library would send. One thread may send
/// while another reads (the read buffer is the reader's own).
public final class RawClient: @unchecked Sendable {
    /// The connected socket.
    public let fd: Int32
    private var buffered: [UInt8] = []

    /// Connects to the socket at `path`; reads wait at most 5 s.
    public init(socket path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard UnixSocketAddress.connect(fd, to: path) == 0 else { throw TestFailure("connect failed: errno \(errno)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Connects as app `app` from inside its sandbox: `folio run --app <app> --sandbox` starts
    /// the test app helper's relay, which speaks to the daemon on the socket bound in there (the
    /// app's own: every connection on it is that app) and copies bytes to and from this client.
    public init(sandboxedApp app: String, environment: [String: String], filePath: String = #filePath) throws {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw TestFailure("socketpair failed: errno \(errno)") }
        fd = pair[0]
        let process = Process()
        process.executableURL = ProcessRunner.folioExecutable(filePath: filePath)
        process.arguments = ["run", "--app", app, "--sandbox", "--", ProcessRunner.builtExecutable("FolioAppHelper", filePath: filePath).path, "relay"]
        process.environment = environment
        let end = FileHandle(fileDescriptor: pair[1], closeOnDealloc: true)
        process.standardInput = end
        process.standardOutput = end
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            close(fd)
            throw error
        }
        try? end.close()
        relay = process
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// How long a read waits for the daemon (5 s unless set).
    public var readTimeout: Duration = .seconds(5) {
        didSet {
            let (seconds, attoseconds) = readTimeout.components
            var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// The sandboxed relay this client speaks through, if it is one.
    private var relay: Process?

    deinit {
        close(fd)
        if let relay, relay.isRunning {
            // It ends once its input does (closed above); SIGTERM, then SIGKILL after 10 s.
            relay.terminate()
            let deadline = ContinuousClock.now + .seconds(10)
            while relay.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            if relay.isRunning { kill(relay.processIdentifier, SIGKILL) }
            relay.waitUntilExit()
        }
    }

    /// Writes `text` as it is (add the newline yourself).
    public func send(_ text: String) { sendBytes(Array(text.utf8)) }

    /// Writes `bytes` as they are.
    public func sendBytes(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// The next line, or nil at the end of the connection (or after 5 s).
    public func line() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let text = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return text
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            buffered += chunk[..<n]
        }
    }

    /// Whether a reply is waiting to be read now (without waiting for one).
    public var hasReplyWaiting: Bool {
        if !buffered.isEmpty { return true }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
    }

    /// Sends a frame and returns the reply line.
    public func call(_ frame: String) -> String {
        send(frame + "\n")
        return line() ?? "<closed>"
    }
}
