#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Entry points for the fuzz targets in `Fuzz/` (not API).
@_spi(Fuzzing)
public enum HTTPFuzzing {
    /// Reads `bytes` as what a server sent on a connection (up to 32 KiB): its replies one after
    /// another while each keeps the connection alive, heads and bodies refused or read, never a
    /// trap; a body framed by its length is exactly that long, and no body is longer than what came.
    public static func exerciseReply(_ bytes: [UInt8]) {
        let sent = Array(bytes.prefix(32 << 10))
        _ = sent.withUnsafeBytes { try? HTTPReplyHead.parse(UnsafeRawBufferPointer(rebasing: $0.prefix(HTTPReplyHead.maximumSize))) }
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return }
        let connection = PlainHTTPConnection(descriptor: pair[0])
        let written = sent.withUnsafeBytes { Glibc.write(pair[1], $0.baseAddress, $0.count) }
        close(pair[1])
        precondition(written == sent.count, "the socket pair took less than was sent")
        let wait = PlainHTTPWait(silence: 5_000_000_000, deadline: nil, isCancelled: { false })
        var total = 0
        for _ in 0..<8 {
            guard let head = try? connection.readHead(wait: wait), let framing = try? head.framing(method: "GET") else { return }
            var count = 0
            guard let ended = try? connection.readBody(framing, wait: wait, sink: { count += $0.count }) else { return }
            total += count
            precondition(total <= sent.count, "a body longer than what the server sent")
            if case .length(let length) = framing { precondition(Int64(count) == length, "a body that is not its Content-Length") }
            guard ended, head.keepsAlive else { return }
        }
    }
}
