import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Server faults between the WebDAV provider and Apache, injected by a proxy: each call fails with
/// a provider error the system retries, nothing half-written is left, and the retry succeeds once.
@Suite("WebDAV provider under server faults", .serialized, .enabled(if: TestServer.shouldRun(.apache)), .elasticPool)
struct WebDAVFaultTests {
    let server: TestServer
    let proxy: FaultProxy
    let provider: WebDAVProvider
    let scratch: TemporaryDirectory
    let request: FileProviderRequest

    init() throws {
        server = try TestServer(.apache)
        proxy = try FaultProxy(upstreamPort: server.port)
        provider = WebDAVProvider(baseURL: proxy.baseURL, requestTimeout: .seconds(8))
        scratch = try TemporaryDirectory("folio-webdav-faults")
        request = FileProviderRequest(temporaryDirectory: scratch.url)
    }

    func source(_ text: String) throws -> URL { try scratch.write("source-\(UUID().uuidString)", text) }

    func create(_ name: String, _ text: String) async throws -> FileProviderItemRecord {
        let template = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: name)
        let result = try await provider.createItem(
            basedOn: template, fields: [.contents, .filename], contents: try source(text), options: [], request: request)
        return FileProviderItemRecord(try #require(result.item))
    }

    func fetchedFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("fetch-") }
    }

    @Test(arguments: [503, 500])
    func anErrorStatusOnUploadLeavesNothingAndTheRetryLandsOnce(status: Int) async throws {
        proxy.add(.init(method: "PUT", pathContains: "report.txt", action: .status(status), times: 1))
        let error = await #expect(throws: FileProviderError.self) { try await create("report.txt", "first") }
        // The server answered: it is busy or failed, not unreachable; the domain backs off either way.
        #expect(error?.code == .providerDomainTemporarilyUnavailable && error?.reaction == .backOff, "\(String(describing: error))")
        #expect(error?.message?.contains(status == 503 ? "the server is busy" : "the server failed") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: server.root!.appendingPathComponent("report.txt").path))
        let item = try await create("report.txt", "first")
        #expect(try String(contentsOf: server.root!.appendingPathComponent("report.txt"), encoding: .utf8) == "first")
        #expect(proxy.requests.filter { $0 == "PUT /report.txt" }.count == 2, "\(proxy.requests)")
        #expect(item.size == 5)
    }

    @Test func aFailedListingIsAnErrorNotAnEmptyFolder() async throws {
        _ = try await create("kept.txt", "kept")
        let anchor = try await provider.currentSyncAnchor(for: .workingSet, request: request)
        proxy.add(.init(method: "PROPFIND", action: .status(500), times: 1))
        await #expect(throws: FileProviderError.self) { try await provider.enumerateChanges(in: .workingSet, from: anchor, request: request) }
        // A listing sent again after a reset connection succeeds; reset three times, it is an error.
        proxy.add(.init(method: "PROPFIND", action: .reset, times: 1))
        let recovered = try await provider.enumerateChanges(in: .workingSet, from: anchor, request: request)
        #expect(recovered.deletedItemIdentifiers.isEmpty)
        proxy.add(.init(method: "PROPFIND", action: .reset, times: 3))
        await #expect(throws: FileProviderError.self) { try await provider.enumerateChanges(in: .workingSet, from: anchor, request: request) }
        // Healed: nothing was deleted by the failures.
        let changes = try await provider.enumerateChanges(in: .workingSet, from: anchor, request: request)
        #expect(changes.deletedItemIdentifiers.isEmpty && changes.updatedItems.isEmpty)
    }

    @Test func aTruncatedOrResetDownloadLeavesNoFile() async throws {
        let item = try await create("big.bin", String(repeating: "0123456789", count: 50_000))
        for action in [FaultProxy.Action.truncate(after: 1000), .reset] {
            proxy.add(.init(method: "GET", action: action, times: action == .reset ? 3 : 1))  // a reset before any reply is tried again, twice
            let error = await #expect(throws: FileProviderError.self) {
                try await provider.fetchContents(for: item.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
            }
            #expect(error?.code == .serverUnreachable, "\(action): \(String(describing: error))")
            #expect(try fetchedFiles().isEmpty, "\(action)")
        }
        let (url, fetched) = try await provider.fetchContents(for: item.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
        #expect(try Data(contentsOf: url).count == 500_000)
        #expect(fetched.documentSize?.intValue == 500_000)
    }

    @Test func aStalledServerTimesOut() async throws {
        proxy.add(.init(method: "PROPFIND", action: .stall, times: 1))
        let started = ContinuousClock.now
        let error = await #expect(throws: FileProviderError.self) {
            try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        }
        #expect(error?.code == .serverUnreachable)
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func aStoppedServerIsUnreachable() async throws {
        _ = try await create("before.txt", "x")
        server.stop()
        let error = await #expect(throws: FileProviderError.self) { try await create("after.txt", "y") }
        #expect(error?.code == .serverUnreachable)
        #expect(error?.reaction == .backOff)
    }

    /// Each status a server answers means what it says, with the server's words, and only a server
    /// that could not be reached is `serverUnreachable`.
    @Test func eachStatusMeansWhatItSays() async throws {
        let words = "<html><body><h1>Refused</h1><p>the name is not allowed here</p></body></html>"
        let cases: [(status: Int, code: FileProviderError.Code, says: String)] = [
            (400, .excludedFromSync, "the server refuses the name “report.txt”"),
            (401, .notAuthenticated, "the server refused the user name or password"),
            (403, .cannotSynchronize, "the server forbids it"),
            (405, .cannotSynchronize, "the server does not allow PUT here"),
            (409, .noSuchItem, "its folder is missing on the server"),
            (413, .cannotSynchronize, "the server refuses a file this large"),
            (415, .cannotSynchronize, "the server refuses this kind of content"),
            (429, .providerDomainTemporarilyUnavailable, "the server is busy"),
            (501, .cannotSynchronize, "the server does not allow PUT here"),
            (502, .serverUnreachable, "a gateway could not reach the server"),
            (507, .insufficientQuota, "the server is out of space"),
        ]
        for (status, code, says) in cases {
            proxy.add(.init(method: "PUT", pathContains: "report.txt", action: .reply(status, words), times: 1))
            let error = await #expect(throws: FileProviderError.self) { try await create("report.txt", "first") }
            #expect(error?.code == code, "\(status): \(String(describing: error))")
            #expect(error?.message?.contains(says) == true, "\(status): \(String(describing: error))")
            #expect(error?.message?.contains("Refused the name is not allowed here") == true, "\(status): the server's words: \(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: server.root!.appendingPathComponent("report.txt").path), "\(status)")
        }
        // A listing refused with 405 is a server without PROPFIND; a 404 on the root names the configured path.
        proxy.add(.init(method: "PROPFIND", action: .status(405), times: 1))
        let notDAV = await #expect(throws: FileProviderError.self) {
            try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        }
        #expect(notDAV?.message?.hasPrefix("this server does not speak WebDAV (no PROPFIND)") == true, "\(String(describing: notDAV))")
        let missing = WebDAVProvider(baseURL: proxy.baseURL.appendingPathComponent("no/such/collection"))
        let notThere = await #expect(throws: FileProviderError.self) {
            try await missing.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        }
        #expect(notThere?.code == .noSuchItem && notThere?.message?.contains("PROPFIND /no/such/collection/: HTTP 404") == true, "\(String(describing: notThere))")
    }

    /// A server that redirects every collection named without its trailing slash (lighttpd's 308):
    /// the whole validation suite passes through it, and a folder's rename is one MOVE of the
    /// slashed address.
    @Test func aServerThatRedirectsUnslashedCollectionsPassesValidation() async throws {
        proxy.add(.init(action: .redirectUnslashedCollection))
        var options = ProviderValidation.Options()
        options.largeFileSize = 4 << 20
        options.pagingItems = 30
        let outcomes = await ProviderValidation(provider: provider, temporaryDirectory: scratch.child("validation"), options: options).run()
        let failures = outcomes.filter { !$0.passed }.map { "\($0.name): \($0.failure ?? "")" }
        #expect(failures.isEmpty, "\(failures)")
        #expect(outcomes.count == ProviderValidation.caseNames.count)
        let moves = proxy.requests.filter { $0.hasPrefix("MOVE ") }
        #expect(!moves.isEmpty)
        // Collections are named with their slash from the start: no redirect was needed for a MOVE.
        #expect(!proxy.requests.contains { $0.hasPrefix("MOVE ") && !$0.hasSuffix("/") && moves.contains($0 + "/") }, "\(moves)")
        // A folder looked up by path alone (its kind unknown) was redirected, and the redirect followed.
        let requests = proxy.requests
        let followed = zip(requests, requests.dropFirst()).contains { $0.hasPrefix("PROPFIND ") && !$0.hasSuffix("/") && $1 == $0 + "/" }
        #expect(followed, "\(requests.filter { $0.hasPrefix("PROPFIND") }.prefix(40))")
    }
}
