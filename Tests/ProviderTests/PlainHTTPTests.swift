#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Crypto
import Folio
@testable import FolioProviders
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The plain HTTP/1.1 client the WebDAV provider sends its small transfers through: replies read
/// as RFC 9112 frames them, refused when they are not, connections kept alive and reused only when
/// the reply allows it, and a request on a connection the server dropped sent again.
@Suite("Plain HTTP client", .elasticPool)
struct PlainHTTPTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/plain_http.py")

    static func head(_ text: String) throws -> HTTPReplyHead {
        try Array(text.utf8).withUnsafeBytes { try HTTPReplyHead.parse($0) }
    }

    static let patient = PlainHTTPWait(silence: 10_000_000_000, deadline: nil, isCancelled: { false })

    @Test func aHeadIsReadAsSent() throws {
        let head = try Self.head("HTTP/1.1 207 Multi-Status\r\nContent-Type: text/xml\r\nETag:  \"a b\" \t\r\nX-Empty:\r\n\r\n")
        #expect(head.status == 207 && !head.isHTTP10)
        #expect(head.fields.map(\.name) == ["Content-Type", "ETag", "X-Empty"])
        #expect(head.field("etag") == "\"a b\"" && head.field("x-empty") == "" && head.field("Missing") == nil)
        #expect(head.keepsAlive)
        // A reason left out, its space too; bare line feeds, as servers' parsers tolerate.
        #expect(try Self.head("HTTP/1.1 204\n\n").status == 204)
        #expect(try !Self.head("HTTP/1.0 200 OK\r\n\r\n").keepsAlive)
        #expect(try Self.head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n\r\n").keepsAlive)
        #expect(try !Self.head("HTTP/1.1 200 OK\r\nConnection: upgrade, close\r\n\r\n").keepsAlive)
    }

    @Test(arguments: [
        "", "\r\n\r\n", "HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 099 Low\r\n\r\n",
        "ICY 200 OK\r\n\r\n", "HTTP/1.1 200 OK\r\n folded: value\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: no name\r\n\r\n", "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "HTTP/1.1 200 OK\r\nX: a\u{0}b\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
    ])
    func aMalformedHeadIsRefused(text: String) {
        #expect(throws: PlainHTTPError.self) { try Self.head(text) }
    }

    @Test func tooManyOrTooLongFieldsAreRefused() {
        let many = "HTTP/1.1 200 OK\r\n" + (0...HTTPReplyHead.maximumFields).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        #expect(throws: PlainHTTPError.malformed("more than \(HTTPReplyHead.maximumFields) header fields")) { try Self.head(many) }
        let long = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: HTTPReplyHead.maximumSize) + "\r\n\r\n"
        #expect(throws: PlainHTTPError.self) { try Self.head(long) }
    }

    @Test func theBodyIsFramedAsRFC9112Says() throws {
        func framing(_ fields: String, status: Int = 200, method: String = "GET") throws -> HTTPReplyHead.Framing {
            try Self.head("HTTP/1.1 \(status) X\r\n\(fields)\r\n").framing(method: method)
        }
        #expect(try framing("Content-Length: 12\r\n") == .length(12))
        #expect(try framing("Content-Length: 12, 12\r\nContent-Length: 12\r\n") == .length(12))
        #expect(try framing("Content-Length: 12\r\n", method: "HEAD") == .none)
        #expect(try framing("Content-Length: 12\r\n", status: 304) == .none)
        #expect(try framing("", status: 204) == .none)
        #expect(try framing("") == .untilClose)
        #expect(try framing("Transfer-Encoding: Chunked\r\nContent-Length: 5\r\n") == .chunked)
        for bad in ["Content-Length: 12\r\nContent-Length: 13\r\n", "Content-Length: -1\r\n", "Content-Length: +5\r\n", "Content-Length: 1 2\r\n",
            "Content-Length: 9999999999999999999\r\n", "Content-Length:\r\n", "Transfer-Encoding: gzip, chunked\r\n", "Transfer-Encoding: chunked, gzip\r\n"]
        {
            #expect(throws: PlainHTTPError.self, "\(bad)") { try framing(bad) }
        }
    }

    @Test func aHeadEndsAtItsBlankLine() {
        func end(_ text: String) -> Int? { Array(text.utf8).withUnsafeBytes { HTTPReplyHead.end(in: $0) } }
        #expect(end("HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody") == 25)
        #expect(end("HTTP/1.1 200 OK\nA: b\n\nbody") == 22)
        #expect(end("HTTP/1.1 200 OK\r\nA: b\r\n") == nil)
        #expect(end("") == nil)
    }

    /// A connection whose server sends `bytes` and closes: one end of a socket pair.
    static func replying(_ bytes: [UInt8]) throws -> PlainHTTPConnection {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { throw POSIXError(.EIO) }
        let connection = PlainHTTPConnection(descriptor: pair[0])
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(pair[1], $0.baseAddress! + offset, $0.count - offset) }
            guard count > 0 else { throw POSIXError(.EIO) }
            offset += count
        }
        close(pair[1])
        return connection
    }

    /// The reply `text` read whole: its head, its body, whether it ended at its framing's end.
    static func read(_ text: String, method: String = "GET") throws -> (head: HTTPReplyHead, body: String, ended: Bool) {
        let connection = try replying(Array(text.utf8))
        let head = try connection.readHead(wait: patient)
        var body: [UInt8] = []
        let ended = try connection.readBody(try head.framing(method: method), wait: patient) { body.append(contentsOf: $0) }
        return (head, String(decoding: body, as: UTF8.self), ended)
    }

    @Test func bodiesAreReadInEachFraming() throws {
        let chunked = try Self.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n")
        #expect(chunked.body == "hello world" && chunked.ended)
        let informational = try Self.read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
        #expect(informational.head.status == 201 && informational.body == "ok")
        let untilClose = try Self.read("HTTP/1.0 200 OK\r\n\r\nall of it")
        #expect(untilClose.body == "all of it" && !untilClose.ended)
        let head = try Self.read("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", method: "HEAD")
        #expect(head.body.isEmpty && head.ended)
    }

    @Test(arguments: [
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Le",
    ])
    func aCutOrMalformedBodyIsAnError(text: String) {
        #expect(throws: PlainHTTPError.self) { try Self.read(text) }
    }

    @Test func aConnectionClosedBeforeAnyReplyIsDropped() throws {
        let connection = try Self.replying([])
        #expect(throws: PlainHTTPError.dropped) { try connection.readHead(wait: Self.patient) }
    }

    // MARK: Against a server

    /// A request for `path` on `server`, through a client of its own (connections made by other tests are not shared).
    static func get(_ path: String) -> PlainHTTPClient.Request { PlainHTTPClient.Request(method: "GET", target: path, fields: [], body: nil) }

    static func text(_ reply: (head: HTTPReplyHead, body: [UInt8])) -> String { String(decoding: reply.body, as: UTF8.self) }

    @Test func connectionsAreKeptAliveOnlyWhenTheReplyAllows() throws {
        let server = try TestServer(script: Self.script) { port in ["\(port)"] }
        let client = PlainHTTPClient(host: "127.0.0.1", port: server.port, authority: "127.0.0.1:\(server.port)")
        let first = try client.collect(Self.get("/keep"), repeatable: true, wait: Self.patient, limit: 1 << 10)
        #expect(client.idleCount == 1)
        let second = try client.collect(Self.get("/keep"), repeatable: true, wait: Self.patient, limit: 1 << 10)
        #expect(Self.text(second) == Self.text(first), "the second request came on the first one's connection")
        for path in ["/chunked", "/continue", "/keep"] {
            let reply = try client.collect(Self.get(path), repeatable: true, wait: Self.patient, limit: 1 << 10)
            #expect(Self.text(reply).hasSuffix(Self.text(first)), "\(path): \(Self.text(reply))")
            #expect(client.idleCount == 1, "\(path)")
        }
        #expect(Self.text(try client.collect(Self.get("/chunked"), repeatable: true, wait: Self.patient, limit: 1 << 10)) == "hello \(Self.text(first))")
        // Closed by name, framed by the close, or followed by bytes no framing asked for: not kept.
        for path in ["/close", "/until-close", "/extra"] {
            let reply = try client.collect(Self.get(path), repeatable: true, wait: Self.patient, limit: 1 << 10)
            #expect(reply.head.status == 200 && client.idleCount == 0, "\(path): \(Self.text(reply))")
            #expect(Self.text(try client.collect(Self.get("/keep"), repeatable: true, wait: Self.patient, limit: 1 << 10)) != Self.text(reply), "\(path)")
            #expect(client.idleCount == 1)
        }
    }

    @Test func aRequestOnAConnectionTheServerDroppedIsSentAgain() throws {
        let server = try TestServer(script: Self.script) { port in ["\(port)"] }
        let client = PlainHTTPClient(host: "127.0.0.1", port: server.port, authority: "127.0.0.1:\(server.port)")
        let dropped = try client.collect(Self.get("/drop"), repeatable: true, wait: Self.patient, limit: 1 << 10)
        #expect(client.idleCount == 1, "the reply said nothing of closing")
        // The pooled connection is closed: the request finds that out, and goes again on a new one.
        let again = try client.collect(Self.get("/keep"), repeatable: true, wait: Self.patient, limit: 1 << 10)
        #expect(again.head.status == 200 && Self.text(again) != Self.text(dropped), "\(Self.text(again))")
        // A request that may not be repeated is not.
        _ = try client.collect(Self.get("/drop"), repeatable: true, wait: Self.patient, limit: 1 << 10)
        #expect(throws: PlainHTTPError.dropped) {
            try client.collect(PlainHTTPClient.Request(method: "POST", target: "/keep", fields: [], body: []), repeatable: false, wait: Self.patient, limit: 1 << 10)
        }
    }

    @Test func aPutSendsItsBytesAndALongReplyIsRefused() throws {
        let server = try TestServer(script: Self.script) { port in ["\(port)"] }
        let client = PlainHTTPClient(host: "127.0.0.1", port: server.port, authority: "127.0.0.1:\(server.port)")
        let bytes = [UInt8](repeating: 7, count: 300_000)
        let put = try client.collect(PlainHTTPClient.Request(method: "PUT", target: "/f", fields: [], body: bytes), repeatable: true, wait: Self.patient, limit: 1 << 10)
        #expect(put.head.status == 201 && Self.text(put).hasSuffix("got 300000 bytes"), "\(Self.text(put))")
        let empty = try client.collect(PlainHTTPClient.Request(method: "PUT", target: "/f", fields: [], body: nil), repeatable: true, wait: Self.patient, limit: 1 << 10)
        #expect(Self.text(empty).hasSuffix("got 0 bytes"), "\(Self.text(empty))")
        #expect(throws: PlainHTTPError.tooLarge(4)) { try client.collect(Self.get("/keep"), repeatable: true, wait: Self.patient, limit: 4) }
    }

    @Test func aStalledReplyEndsAtItsDeadlineOrWhenCancelled() async throws {
        let server = try TestServer(script: Self.script) { port in ["\(port)"] }
        let client = PlainHTTPClient(host: "127.0.0.1", port: server.port, authority: "127.0.0.1:\(server.port)")
        let started = ContinuousClock.now
        await #expect(throws: FileProviderError.self) {
            try await HTTPTransfer.execute(Self.get("/stall"), plain: client, timeout: .seconds(1), limit: 1 << 10, what: "GET /stall")
        }
        let quiet = PlainHTTPWait(silence: 1_000_000_000, deadline: nil, isCancelled: { false })
        #expect(throws: PlainHTTPError.timedOut("the server sent nothing for 1 s")) { try client.collect(Self.get("/stall"), repeatable: true, wait: quiet, limit: 1 << 10) }
        #expect(ContinuousClock.now - started < .seconds(20))
        // Cancelled part way through a download: no file is left, and the error says cancelled.
        let scratch = try TemporaryDirectory("folio-plain-http")
        let destination = scratch.child("fetched").path
        let progress = Progress(totalUnitCount: 0)
        let download = Task {
            try await HTTPTransfer.download(
                Self.get("/stall"), plain: client, what: "GET /stall", to: destination, progress: progress, durable: false, landing: nil
            ) { status, _ in FileProviderError(.cannotSynchronize, message: "HTTP \(status)") }
        }
        try #require(await eventually { progress.completedUnitCount == 5 }, "the first bytes arrived")
        #expect(progress.totalUnitCount == 100)
        download.cancel()
        let error = await #expect(throws: CocoaError.self) { try await download.value }
        #expect(error?.code == .userCancelled)
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test func aDownloadIsWrittenWholeOrNotAtAll() async throws {
        let server = try TestServer(script: Self.script) { port in ["\(port)"] }
        let client = PlainHTTPClient(host: "127.0.0.1", port: server.port, authority: "127.0.0.1:\(server.port)")
        let scratch = try TemporaryDirectory("folio-plain-http")
        func download(_ path: String) async throws -> (String, Int64) {
            let destination = scratch.child(UUID().uuidString).path
            let progress = Progress(totalUnitCount: 0)
            do {
                let received = try await HTTPTransfer.download(
                    Self.get(path), plain: client, what: "GET \(path)", to: destination, progress: progress, durable: true, landing: nil
                ) { status, body in FileProviderError(.noSuchItem, message: "HTTP \(status): \(String(decoding: body, as: UTF8.self))") }
                #expect(progress.completedUnitCount == received.size && received.written.size == received.size)
                return (try String(contentsOfFile: destination, encoding: .utf8), received.size)
            } catch {
                #expect(!FileManager.default.fileExists(atPath: destination), "\(path) left a file")
                throw error
            }
        }
        let (chunked, size) = try await download("/chunked")
        #expect(chunked.hasPrefix("hello connection ") && size == Int64(chunked.utf8.count))
        #expect(try await download("/until-close").0.hasSuffix(" until close"))
        let short = await #expect(throws: FileProviderError.self) { try await download("/short") }
        #expect(short?.code == .serverUnreachable && short?.message?.contains(" of 100 bytes") == true, "\(String(describing: short))")
        let missing = await #expect(throws: FileProviderError.self) { try await download("/missing") }
        #expect(missing?.code == .noSuchItem && missing?.message?.contains("no such file") == true, "\(String(describing: missing))")
        let unreachable = PlainHTTPClient(host: "127.0.0.1", port: try LoopbackHTTP.freePort(), authority: "nobody")
        let refused = await #expect(throws: FileProviderError.self) {
            try await HTTPTransfer.execute(Self.get("/"), plain: unreachable, timeout: .seconds(5), limit: 1, what: "GET /")
        }
        #expect(refused?.code == .serverUnreachable && refused?.message?.contains("cannot connect") == true, "\(String(describing: refused))")
    }

    /// Where a download's file may be: in memory (tmpfs), where a large body is received into
    /// the file's mapping, and on the disk (`/tmp`, ext4 here), where it is written.
    static let places = ["/dev/shm", "/tmp"]

    /// The mapping is used where the file is in memory, and only there; what `fill` puts in it is
    /// the file's.
    @Test(arguments: places) func aFileInMemoryIsFilledThroughItsMapping(place: String) throws {
        let scratch = try TemporaryDirectory("folio-plain-http", under: place)
        let inMemory = place == "/dev/shm"
        let file = DownloadFile(path: scratch.child("mapped").path)
        var windows: [Int] = []
        let mapped = try file.receive(length: Int64(DownloadFile.window + 5)) { window in
            windows.append(window.count)
            for index in window.indices { window[index] = UInt8(truncatingIfNeeded: windows.count + index) }
        }
        #expect(mapped == inMemory)
        guard mapped else { return file.discard() }
        #expect(windows == [DownloadFile.window, 5])
        #expect(try file.finish(durable: true).size == Int64(DownloadFile.window + 5))
        let bytes = try Data(contentsOf: scratch.child("mapped"))
        #expect(bytes.prefix(3) == Data([1, 2, 3]) && bytes.suffix(5) == Data([2, 3, 4, 5, 6]))
    }

    /// A body of 8 MiB or more, framed by its length, lands in its file whole (received into its
    /// pages in memory, written on a disk): hashed as it came, with the umask's mode, and the
    /// connection is kept; cut short, it leaves no file and says how much came.
    @Test(arguments: places) func aLargeBodyLandsInItsFileWholeOrNotAtAll(place: String) async throws {
        let server = try TestServer(script: Self.script) { port in ["\(port)"] }
        let client = PlainHTTPClient(host: "127.0.0.1", port: server.port, authority: "127.0.0.1:\(server.port)")
        let scratch = try TemporaryDirectory("folio-plain-http", under: place)
        let expected = (0..<(9 << 20)).map { UInt8($0 % 251) }
        let destination = scratch.child("large").path
        let progress = Progress(totalUnitCount: 0)
        let received = try await HTTPTransfer.download(
            Self.get("/large"), plain: client, what: "GET /large", to: destination, progress: progress, durable: true, landing: nil
        ) { status, _ in FileProviderError(.noSuchItem, message: "HTTP \(status)") }
        #expect(received.size == Int64(expected.count) && received.written.size == received.size)
        #expect(received.sha256 == Data(SHA256.hash(data: expected)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data(expected))
        #expect(progress.totalUnitCount == Int64(expected.count) && progress.completedUnitCount == progress.totalUnitCount)
        let mode = try FileManager.default.attributesOfItem(atPath: destination)[.posixPermissions] as? Int
        #expect(mode.map { mode_t($0) } == FileCreationMask.fileMode)
        #expect(client.idleCount == 1, "the connection carries the next request")

        let cut = scratch.child("cut").path
        let short = await #expect(throws: FileProviderError.self) {
            try await HTTPTransfer.download(
                Self.get("/large-short"), plain: client, what: "GET /large-short", to: cut, progress: Progress(totalUnitCount: 0), durable: true, landing: nil
            ) { status, _ in FileProviderError(.noSuchItem, message: "HTTP \(status)") }
        }
        #expect(short?.code == .serverUnreachable && short?.message?.contains("after \(5 << 20) of \(9 << 20) bytes") == true, "\(String(describing: short))")
        #expect(!FileManager.default.fileExists(atPath: cut))
    }
}
