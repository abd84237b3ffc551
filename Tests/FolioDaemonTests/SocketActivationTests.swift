import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// The daemon adopts a listening socket handed over the way systemd does (descriptor 3,
/// `LISTEN_FDS=1`, `LISTEN_PID`), and leaves it to its owner on stop. A Python launcher plays
/// systemd: it binds, then execs the daemon in the same process.
@Suite("folio daemon under socket activation", .elasticPool)
struct SocketActivationTests {
    @Test func adoptsTheActivatedSocket() throws {
        let python = try #require(ProcessRunner.which("python3"), "python3 plays systemd here")
        let dir = try TemporaryDirectory("activation")
        let socketPath = dir.path + "/run/folio/folio.sock"
        try FileManager.default.createDirectory(atPath: dir.path + "/run/folio", withIntermediateDirectories: true)
        let launcher = """
            import os, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(sys.argv[1]); s.listen(16)
            os.dup2(s.fileno(), 3); os.set_inheritable(3, True)
            os.environ["LISTEN_FDS"] = "1"; os.environ["LISTEN_PID"] = str(os.getpid())
            os.execv(sys.argv[2], [sys.argv[2], "daemon", "--log-level", "info"])
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", launcher, socketPath, ProcessRunner.folioExecutable().path]
        process.environment = dir.xdgEnvironment()
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let log = LogCollector(errors.fileHandleForReading)
        var reply: String?
        for _ in 0..<200 {
            if let client = try? RawClient(socket: socketPath) {
                reply = client.call(#"{"id":1,"method":"hello"}"#)
                break
            }
            usleep(20_000)
        }
        #expect(reply?.contains(#""protocol":1"#) == true, "\(reply ?? "no reply")")
        // Signal handlers are in place once the daemon logs that it listens.
        for _ in 0..<200 where !log.text.contains("listening") { usleep(20_000) }
        #expect(log.text.contains("activated=true"), "\(log.text)")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        // The socket belongs to the service manager, which keeps it for the next start.
        #expect(FileManager.default.fileExists(atPath: socketPath))
    }
}

/// Collects a pipe's output on a thread of its own.
final class LogCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var collected = ""

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { collected += String(decoding: chunk, as: UTF8.self) }
            }
        }
    }

    var text: String { lock.withLock { collected } }
}
