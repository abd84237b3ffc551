#if canImport(Glibc)
@preconcurrency import Glibc
#endif
public import Foundation

/// A tiny blocking HTTP/1.1 client for loopback test servers: readiness probes and out-of-band
/// changes to a server's content ("another device"), with no dependency on the code under test.
public enum LoopbackHTTP {
    /// A response.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// The header fields, names lowercased.
        public var headers: [String: String]
        /// The body.
        public var body: Data
    }

    /// A free TCP port on 127.0.0.1 (bound, read and released; the caller retries if it is taken meanwhile).
    public static func freePort() throws -> Int {
        let socket = try connectableSocket()
        defer { close(socket) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts connections on `port`.
    public static func isListening(_ port: Int) -> Bool {
        guard let socket = try? connect(port) else { return false }
        close(socket)
        return true
    }

    /// Sends one request and reads the whole response (the connection is closed after it).
    public static func request(
        port: Int, method: String, path: String, headers: [String: String] = [:], body: Data = Data(), timeout: Double = 30
    ) throws -> Response {
        let socket = try connect(port)
        defer { close(socket) }
        var timeoutValue = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeoutValue, socklen_t(MemoryLayout<timeval>.size))
        // A `Host` in `headers` replaces the loopback one (tests of servers that check it).
        let host = headers.contains { $0.key.lowercased() == "host" } ? "" : "Host: 127.0.0.1:\(port)\r\n"
        var head = "\(method) \(path) HTTP/1.1\r\n\(host)Connection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try send(socket, Data(head.utf8) + body)
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if count == 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return try parse(received, method: method)
    }

    static func parse(_ data: Data, method: String) throws -> Response {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { throw POSIXError(.EBADMSG) }
        let lines = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, let status = Int(parts[1]) else { throw POSIXError(.EBADMSG) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Data(data[end.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Response(status: status, headers: headers, body: method == "HEAD" ? Data() : body)
    }

    static func dechunk(_ data: Data) -> Data {
        var out = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)) {
            let sizeText = String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0 else { break }
            let start = lineEnd.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size else { break }
            out.append(rest[start..<rest.index(start, offsetBy: size)])
            rest = rest[rest.index(start, offsetBy: min(size + 2, rest.distance(from: start, to: rest.endIndex)))...]
        }
        return out
    }

    /// Returns a socket connected to `port` on 127.0.0.1.
    package static func connect(_ port: Int) throws -> Int32 {
        let socket = try connectableSocket()
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            let error = errno
            close(socket)
            throw POSIXError(POSIXErrorCode(rawValue: error) ?? .ECONNREFUSED)
        }
        return socket
    }

    /// Writes all of `data` to `socket`.
    package static func send(_ socket: Int32, _ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = Glibc.send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EPIPE)
                }
                offset += sent
            }
        }
    }

    private static func connectableSocket() throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return socket
    }

    /// Returns the address of `port` on 127.0.0.1.
    package static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }
}
