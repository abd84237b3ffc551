#if canImport(Glibc)
import Glibc
#endif
import FolioWire

/// One connection to the daemon's Unix socket: frames out, whole reply lines back, each wait
/// bounded (60 s, the library's request deadline).
struct UnixSocketExchange {
    private let descriptor: Int32

    /// What an exchange brought.
    enum Result {
        case replies([WireValue])
        /// The daemon closed the connection or sent what is not a reply.
        case refused
        /// The daemon did not answer in time, or the socket failed midway.
        case failed(String)
    }

    /// How long a read or a write may wait.
    static let deadlineSeconds = 60

    /// Connects to the socket at `path`; nil when nothing listens there.
    init?(path: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: Self.deadlineSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard UnixSocketAddress.connect(fd, to: path) == 0 else {
            Glibc.close(fd)
            return nil
        }
        descriptor = fd
    }

    func close() { _ = Glibc.close(descriptor) }

    /// Sends `frames` and reads `count` reply lines.
    func exchange(_ frames: [UInt8], replies count: Int) -> Result {
        var offset = 0
        while offset < frames.count {
            let sent = frames[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return .failed(Self.silence) }
                return .refused
            }
            offset += sent
        }
        var replies: [WireValue] = []
        var buffered: [UInt8] = []
        var scanned = 0
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while replies.count < count {
            if let newline = buffered[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                guard let reply = try? WireValue(parsing: buffered[..<newline]) else { return .refused }
                replies.append(reply)
                buffered.removeSubrange(...newline)
                scanned = 0
                continue
            }
            scanned = buffered.count
            let received = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if received < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return .failed(Self.silence) }
                return .refused
            }
            guard received > 0 else { return .refused }
            buffered.append(contentsOf: chunk[..<received])
        }
        return .replies(replies)
    }

    private static var silence: String { "the Folio daemon did not answer within \(deadlineSeconds) seconds" }
}
