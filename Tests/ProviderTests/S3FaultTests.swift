import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Server faults between the S3 provider and moto, injected by a proxy: each call fails with a
/// provider error the system retries, nothing half-written is left, and the retry succeeds once.
@Suite("S3 provider under server faults", .serialized, .enabled(if: TestServer.shouldRun(.moto)), .elasticPool)
struct S3FaultTests {
    let server: TestServer
    let proxy: FaultProxy
    let provider: S3Provider
    let direct: S3Provider
    let scratch: TemporaryDirectory
    let request: FileProviderRequest

    init() throws {
        server = try TestServer(.moto)
        proxy = try FaultProxy(upstreamPort: server.port)
        let account = try #require(server.s3)
        provider = S3Provider(
            endpoint: proxy.baseURL, bucket: account.bucket, accessKey: account.accessKey, secretKey: account.secretKey,
            requestTimeout: .seconds(8), multipartThreshold: 5 << 20, partSize: 5 << 20)
        direct = S3Provider(endpoint: server.baseURL, bucket: account.bucket, accessKey: account.accessKey, secretKey: account.secretKey)
        scratch = try TemporaryDirectory("folio-s3-faults")
        request = FileProviderRequest(temporaryDirectory: scratch.url)
    }

    func create(_ name: String, _ data: Data) async throws -> FileProviderItemRecord {
        let template = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: name)
        let source = scratch.child("source-\(UUID().uuidString)")
        try data.write(to: source)
        let result = try await provider.createItem(basedOn: template, fields: [.contents, .filename], contents: source, options: [], request: request)
        return FileProviderItemRecord(try #require(result.item))
    }

    /// Whether the server has `name`, asked without the proxy.
    func serverHas(_ name: String) async throws -> Bool {
        do {
            _ = try await direct.item(for: FileProviderItemIdentifier(name), request: request)
            return true
        } catch let error as FileProviderError where error.code == .noSuchItem {
            return false
        }
    }

    @Test(arguments: [503, 500])
    func anErrorStatusOnUploadLeavesNothingAndTheRetryLandsOnce(status: Int) async throws {
        proxy.add(.init(method: "PUT", pathContains: "report.txt", action: .status(status), times: 1))
        let error = await #expect(throws: FileProviderError.self) { try await create("report.txt", Data("first".utf8)) }
        // The server answered: it is busy or failed, not unreachable; the domain backs off either way.
        #expect(error?.code == .providerDomainTemporarilyUnavailable && error?.reaction == .backOff, "\(String(describing: error))")
        #expect(error?.message?.contains(status == 503 ? "the server is busy" : "the server failed") == true, "\(String(describing: error))")
        #expect(try await !serverHas("report.txt"))
        let item = try await create("report.txt", Data("first".utf8))
        #expect(item.size == 5)
        #expect(try await serverHas("report.txt"))
        #expect(proxy.requests.filter { $0.hasPrefix("PUT /folio/report.txt") }.count == 2, "\(proxy.requests)")
    }

    /// A part that fails aborts the whole multipart upload: no object appears, and no parts are left.
    @Test func aFailedPartLeavesNoObject() async throws {
        proxy.add(.init(method: "PUT", pathContains: "partNumber=2", action: .status(503), times: 1))
        let bytes = Data((0..<(11 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 7) })
        await #expect(throws: FileProviderError.self) { try await create("parts.bin", bytes) }
        #expect(try await !serverHas("parts.bin"))
        #expect(proxy.requests.contains { $0.hasPrefix("DELETE /folio/parts.bin?uploadId=") }, "the upload was not aborted: \(proxy.requests)")
        let item = try await create("parts.bin", bytes)
        let fetched = try await direct.fetchContents(for: item.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
        #expect(try Data(contentsOf: fetched.contents) == bytes)
    }

    @Test func aFailedListingIsAnErrorNotAnEmptyBucket() async throws {
        _ = try await create("kept.txt", Data("kept".utf8))
        let anchor = try await provider.currentSyncAnchor(for: .workingSet, request: request)
        for action in [FaultProxy.Action.status(500), .status(503), .truncate(after: 200)] {
            proxy.add(.init(method: "GET", pathContains: "list-type", action: action, times: 2))
            await #expect(throws: FileProviderError.self, "\(action)") {
                try await provider.enumerateChanges(in: .workingSet, from: anchor, request: request)
            }
            proxy.clearRules()
        }
        let changes = try await provider.enumerateChanges(in: .workingSet, from: anchor, request: request)
        #expect(changes.deletedItemIdentifiers.isEmpty && changes.updatedItems.isEmpty)
    }

    @Test func aTruncatedOrResetDownloadLeavesNoFile() async throws {
        let item = try await create("big.bin", Data(String(repeating: "0123456789", count: 50_000).utf8))
        for action in [FaultProxy.Action.truncate(after: 1000), .reset] {
            proxy.add(.init(method: "GET", pathContains: "big.bin", action: action, times: action == .reset ? 3 : 1))  // a reset before any reply is tried again, twice
            let error = await #expect(throws: FileProviderError.self) {
                try await provider.fetchContents(for: item.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
            }
            #expect(error?.code == .serverUnreachable, "\(action): \(String(describing: error))")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix("fetch-") }.isEmpty, "\(action)")
        }
        let (url, fetched) = try await provider.fetchContents(for: item.itemIdentifier, version: nil, request: request, progress: Progress(totalUnitCount: 0))
        #expect(try Data(contentsOf: url).count == 500_000)
        #expect(fetched.documentSize?.intValue == 500_000)
    }

    @Test func aStalledServerTimesOutAndAStoppedOneIsUnreachable() async throws {
        proxy.add(.init(method: "GET", action: .stall, times: 1))
        let started = ContinuousClock.now
        let stalled = await #expect(throws: FileProviderError.self) {
            try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        }
        #expect(stalled?.code == .serverUnreachable)
        #expect(ContinuousClock.now - started < .seconds(30))
        server.stop()
        let stopped = await #expect(throws: FileProviderError.self) { try await create("after.txt", Data("y".utf8)) }
        #expect(stopped?.code == .serverUnreachable && stopped?.reaction == .backOff)
    }

    /// A server that refuses to copy a folder marker (`CopyObject` of `a/` answers 404 while
    /// `HEAD a/` finds it): the whole validation suite passes through it, folder renames included.
    @Test func aServerThatRefusesCopyingFolderMarkersPassesValidation() async throws {
        let refusal = "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>"
        proxy.add(.init(method: "PUT", pathSuffix: "/", header: "x-amz-copy-source", action: .reply(404, refusal)))
        var options = ProviderValidation.Options()
        options.largeFileSize = 6 << 20
        options.pagingItems = 30
        let outcomes = await ProviderValidation(provider: provider, temporaryDirectory: scratch.child("validation"), options: options).run()
        let failures = outcomes.filter { !$0.passed }.map { "\($0.name): \($0.failure ?? "")" }
        #expect(failures.isEmpty, "\(failures)")
        #expect(outcomes.count == ProviderValidation.caseNames.count)
        // Folders were renamed, and never by copying their markers.
        #expect(proxy.requests.contains { $0.hasPrefix("DELETE ") && $0.hasSuffix("/") }, "no folder was moved or deleted")
    }
}
