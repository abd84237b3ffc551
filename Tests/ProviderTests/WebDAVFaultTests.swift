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
        #expect(error?.code == .serverUnreachable && error?.reaction == .backOff)
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
}
