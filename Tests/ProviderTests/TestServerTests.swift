#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("Test servers start, answer and stop", .elasticPool)
struct TestServerTests {
    @Test(arguments: [TestServer.Kind.apache, .wsgidav, .lighttpd, .rclone, .nginx])
    func webDAVServersServeTheirFolder(kind: TestServer.Kind) throws {
        try #require(TestServer.shouldRun(kind), "\(TestServer.unavailability(kind) ?? "")")
        let server = try TestServer(kind)
        let put = try LoopbackHTTP.request(port: server.port, method: "PUT", path: "/probe.txt", body: Data("hello".utf8))
        #expect([200, 201, 204].contains(put.status), "\(put.status) \(server.log.suffix(500))")
        let get = try LoopbackHTTP.request(port: server.port, method: "GET", path: "/probe.txt")
        #expect(get.status == 200 && get.body == Data("hello".utf8))
        #expect(try Data(contentsOf: server.root!.appendingPathComponent("probe.txt")) == Data("hello".utf8))
        let port = server.port
        server.stop()
        #expect(!LoopbackHTTP.isListening(port))
    }

    /// A server started from a thread that blocks SIGTERM (a dispatch worker does) runs with it
    /// unblocked, so the SIGTERM that stops it arrives: Apache, started so, ignored it until SIGKILL.
    @Test func aServerStartedWhereSIGTERMIsBlockedReceivesIt() throws {
        try #require(TestServer.shouldRun(.apache), "\(TestServer.unavailability(.apache) ?? "")")
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let server = Result { try TestServer(.apache) }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        let started = try server.get()
        let status = try String(contentsOfFile: "/proc/\(started.processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") })
        let mask = try #require(UInt64(line.split(separator: "\t").last ?? "", radix: 16))
        #expect(mask & (1 << 14) == 0, "SIGTERM (bit 14) blocked: \(line)")
        let pid = started.processIdentifier
        kill(pid, SIGTERM)
        // Gone (or a zombie: its exit not yet collected) once SIGTERM arrived.
        let gone = (0..<200).contains { _ in
            usleep(50_000)
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: ")").last?.split(separator: " ").first
            return state == nil || state == "Z"
        }
        #expect(gone, "the server's process \(pid) is still running 10 s after SIGTERM")
    }

    @Test func motoServesS3() throws {
        try #require(TestServer.shouldRun(.moto), "\(TestServer.unavailability(.moto) ?? "")")
        let server = try TestServer(.moto)
        let reset = try LoopbackHTTP.request(port: server.port, method: "POST", path: "/moto-api/reset")
        #expect(reset.status == 200)
    }
}
