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

    @Test func motoServesS3() throws {
        try #require(TestServer.shouldRun(.moto), "\(TestServer.unavailability(.moto) ?? "")")
        let server = try TestServer(.moto)
        let reset = try LoopbackHTTP.request(port: server.port, method: "POST", path: "/moto-api/reset")
        #expect(reset.status == 200)
    }
}
