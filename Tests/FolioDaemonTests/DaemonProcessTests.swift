import Foundation
import FolioTesting
import FolioTestTraits
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

typealias DaemonTestError = TestFailure

/// Sends newline-delimited frames over a Unix socket and reads one reply line per frame.
func exchange(socket path: String, frames: [String]) throws -> [String] {
    let client = try RawClient(socket: path)
    client.send(frames.map { $0 + "\n" }.joined())
    return frames.compactMap { _ in client.line() }
}

@Suite("folio daemon (real processes)", .serialized, .elasticPool)
struct DaemonProcessTests {
    @Test func daemonServesTheSocketRefusesASecondInstanceAndStopsCleanly() throws {
        let dir = try TemporaryDirectory("daemon")
        let env = dir.xdgEnvironment()
        let daemon = try DaemonProcess(environment: env)
        let socketPath = try daemon.waitForListening()
        #expect(socketPath == dir.path + "/run/folio/folio.sock")
        #expect(FileManager.default.fileExists(atPath: dir.path + "/state/folio/index.sqlite"))
        let mode = try FileManager.default.attributesOfItem(atPath: dir.path + "/run/folio")[.posixPermissions] as? Int
        #expect(mode == 0o700)

        let replies = try exchange(socket: socketPath, frames: [
            #"{"id":1,"method":"hello"}"#,
            #"{"id":2,"method":"types.show","params":{"type":"jpg"}}"#,
            "this is not json",
            #"{"id":4,"method":"no.such.method"}"#,
            #"{"id":5,"method":"types.of","params":{"path":"relative/path"}}"#,
        ])
        #expect(replies.count == 5)
        #expect(replies[0].contains(#""protocol":1"#))
        #expect(replies[1].contains(#""identifier":"public.jpeg""#))
        #expect(replies[2].contains(#""code":"bad-request""#))
        #expect(replies[3].contains(#""code":"unknown-method""#))
        #expect(replies[4].contains(#""code":"bad-request""#))
        // The daemon is still serving after bad frames.
        #expect(try exchange(socket: socketPath, frames: [#"{"id":9,"method":"hello"}"#]).first?.contains(#""id":9"#) == true)

        let second = try ProcessRunner.folio(["daemon"], environment: env)
        #expect(second.status != 0)
        #expect(second.stderr.contains("already running"))

        #expect(daemon.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: socketPath))
    }
}
