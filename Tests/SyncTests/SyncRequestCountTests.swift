import Folio
@testable import FolioProviders
@testable import FolioSync
import FolioServers
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// What small files cost on the wire, counted in Apache's access log: a PUT and a HEAD to upload
/// each (Apache's PUT reply names no tag; the HEAD that asks for it costs the server far less than
/// the PROPFIND sent before, 2.1 requests a file in all), a GET to download each, and listings by
/// folder, never by file.
@Suite("Requests per file", .elasticPool)
struct SyncRequestCountTests {
    /// The requests Apache answered after its first `after`, counted by method (the wait for its
    /// log runs on the file-work pool, not the cooperative pool).
    func requests(of server: TestServer, after: Int) async throws -> [String: Int] {
        let answered = try await SyncFileWork.run { Array(try server.requestsAnswered(after: after)).map(String.init) }
        return Dictionary(grouping: answered, by: { String($0.prefix { $0 != " " }) }).mapValues(\.count)
    }

    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func smallFilesCostAPutAndAHeadUpAndAGetDown() async throws {
        let server = try TestServer(.apache)
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let one = try await SyncDevice("one", provider: provider), two = try await SyncDevice("two", provider: provider)
        for index in 0..<60 { try one.write("folder \(index % 3)/file \(index).txt", "file \(index)") }

        var start = server.requests.count
        let sent = try await one.settle()
        #expect(sent.uploaded == 60 && sent.deferred.isEmpty, "\(sent)")
        let up = try await requests(of: server, after: start)
        // 60 files, the drive's marker, and the server's probe, once (a PUT and a conditional PUT;
        // sixteen uploads at once each probed for themselves).
        // (A request answered just before the marker can be logged just after it: ranges.)
        #expect((62...64).contains(up["PUT", default: 0]), "\(up)")
        #expect((60...62).contains(up["HEAD", default: 0]), "\(up)")
        // The listing (the root and three folders), the probe, the new folders and the marker's folder: not one per file.
        #expect(up["PROPFIND", default: 0] <= 20, "\(up)")

        start = server.requests.count
        let received = try await two.settle()
        #expect(received.downloaded == 60 && received.deferred.isEmpty, "\(received)")
        let down = try await requests(of: server, after: start)
        // 60 files and the drive's marker; the listing by folder.
        #expect((60...62).contains(down["GET", default: 0]), "\(down)")
        #expect(down["PROPFIND", default: 0] <= 6, "\(down)")
        #expect(down["PUT", default: 0] + down["HEAD", default: 0] == 0, "\(down)")
        #expect(two.read("folder 2/file 59.txt") == "file 59")
    }
}
