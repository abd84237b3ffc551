import ArgumentParser
import FolioSystem
import Folio
import Foundation
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// `folio bench-worker`: the other processes of `folio bench coordination` (hidden).
struct BenchWorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-worker", abstract: "A helper process of `folio bench` (not for direct use).", shouldDisplay: false)

    @Argument var role: String
    @Argument var arguments: [String] = []

    func run() throws {
        switch role {
        case "echo": try echo(socketPath: arguments[0])
        case "hammer": hammer(mode: arguments[0], path: arguments[1], seconds: Double(arguments[2]) ?? 1)
        case "slow": try slow(kind: arguments[0], socket: arguments[1], target: arguments[2], stopFile: arguments[3])
        default: throw ValidationError("unknown role \(role)")
        }
    }

    /// Answers each newline-terminated request with a 64-byte reply, for one connection at a time.
    private func echo(socketPath: String) throws {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        unlink(socketPath)
        guard UnixSocketAddress.bind(listener, to: socketPath) == 0, listen(listener, 8) == 0 else {
            throw ValidationError("cannot listen on \(socketPath): \(String(cString: strerror(errno)))")
        }
        let reply = [UInt8](repeating: UInt8(ascii: "b"), count: PingPong.replySize - 1) + [UInt8(ascii: "\n")]
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            serving: while true {
                let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break serving }
                let requests = buffer[..<n].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                for _ in 0..<requests { _ = reply.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) } }
            }
            close(connection)
        }
    }

    /// Sends slow requests one after another until `stopFile` exists; prints how many were answered.
    /// `bookmark`: resolves the bookmark data in `target` (a file holding it in base64), whose item
    /// is gone, so each resolution searches the tree around it; `sniff`: the content type of the
    /// file `target`.
    private func slow(kind: String, socket: String, target: String, stopFile: String) throws {
        let engine = try DaemonCoordinationEngine(socketPath: socket, app: nil)
        defer { engine.disconnect() }
        let send: () throws -> Void
        switch kind {
        case "bookmark":
            let data = try String(contentsOfFile: target, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = Data(base64Encoded: data) else { throw ValidationError("\(target) holds no base64 bookmark") }
            send = { _ = try engine.send(BookmarkResolve(data: bytes, base: nil)) }
        case "sniff": send = { _ = try engine.send(TypesOf(path: target)) }
        default: throw ValidationError("unknown slow request \(kind)")
        }
        var count = 0
        while access(stopFile, F_OK) != 0 {
            try? send()
            count += 1
        }
        print(count)
    }

    /// Writes `path` under coordination (or flock) as often as it can for `seconds`; prints the count.
    private func hammer(mode: String, path: String, seconds: Double) {
        let url = URL(fileURLWithPath: path)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        var count = 0
        let fd = open(path, O_RDWR | O_CLOEXEC)
        var error: NSError?
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if mode == "flock" {
                flock(fd, LOCK_EX)
                flock(fd, LOCK_UN)
            } else {
                FileCoordinator().coordinate(writingItemAt: url, options: [], error: &error) { _ in }
            }
            count += 1
        }
        print(error == nil ? count : 0)
    }
}
