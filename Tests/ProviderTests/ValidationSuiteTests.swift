import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// A provider that ignores base versions and overwrites whatever is there: the lost update the
/// suite must catch.
private struct CarelessProvider: FileProvider {
    let inner: InMemoryFileProvider

    func item(for identifier: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> any FileProviderItem {
        try await inner.item(for: identifier, request: request)
    }
    func enumerateItems(in container: FileProviderItemIdentifier, startingAt page: FileProviderPage, request: FileProviderRequest) async throws
        -> FileProviderItemPage
    {
        try await inner.enumerateItems(in: container, startingAt: page, request: request)
    }
    func currentSyncAnchor(for container: FileProviderItemIdentifier, request: FileProviderRequest) async throws -> FileProviderSyncAnchor {
        try await inner.currentSyncAnchor(for: container, request: request)
    }
    func enumerateChanges(in container: FileProviderItemIdentifier, from anchor: FileProviderSyncAnchor, request: FileProviderRequest)
        async throws -> FileProviderChangeBatch
    {
        try await inner.enumerateChanges(in: container, from: anchor, request: request)
    }
    func fetchContents(for identifier: FileProviderItemIdentifier, version: FileProviderItemVersion?, request: FileProviderRequest, progress: Progress)
        async throws -> (contents: URL, item: any FileProviderItem)
    {
        try await inner.fetchContents(for: identifier, version: version, request: request, progress: progress)
    }
    func createItem(
        basedOn template: any FileProviderItem, fields: FileProviderItemFields, contents: URL?, options: FileProviderCreateItemOptions,
        request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try await inner.createItem(basedOn: template, fields: fields, contents: contents, options: options, request: request)
    }
    func modifyItem(
        _ item: any FileProviderItem, baseVersion: FileProviderItemVersion, changedFields: FileProviderItemFields, contents: URL?,
        options: FileProviderModifyItemOptions, request: FileProviderRequest
    ) async throws -> FileProviderItemResult {
        try await inner.modifyItem(item, baseVersion: FileProviderItemVersion(), changedFields: changedFields, contents: contents, options: options, request: request)
    }
    func deleteItem(identifier: FileProviderItemIdentifier, baseVersion: FileProviderItemVersion, options: FileProviderDeleteItemOptions, request: FileProviderRequest)
        async throws
    {
        try await inner.deleteItem(identifier: identifier, baseVersion: baseVersion, options: options, request: request)
    }
}

@Suite("Provider validation suite", .elasticPool)
struct ValidationSuiteTests {
    static func run(_ provider: any FileProvider, only: [String] = []) async throws -> [ProviderValidation.Outcome] {
        let scratch = try TemporaryDirectory("folio-validation")
        var options = ProviderValidation.Options()
        options.largeFileSize = 8 << 20
        options.pagingItems = 45
        options.only = only
        return await ProviderValidation(provider: provider, temporaryDirectory: scratch.child("tmp"), options: options).run()
    }

    static func failures(_ outcomes: [ProviderValidation.Outcome]) -> [String] {
        outcomes.filter { !$0.passed }.map { "\($0.name): \($0.failure ?? "")" }
    }

    @Test func inMemoryProviderPasses() async throws {
        let outcomes = try await Self.run(InMemoryFileProvider(pageSize: 7))
        #expect(outcomes.count == ProviderValidation.caseNames.count)
        #expect(Self.failures(outcomes).isEmpty, "\(Self.failures(outcomes))")
    }

    @Test func caseInsensitiveInMemoryProviderPasses() async throws {
        let outcomes = try await Self.run(InMemoryFileProvider(pageSize: 3, caseInsensitive: true))
        #expect(Self.failures(outcomes).isEmpty, "\(Self.failures(outcomes))")
    }

    @Test func localFolderProviderPasses() async throws {
        let root = try TemporaryDirectory("folio-local-provider")
        let outcomes = try await Self.run(LocalFolderProvider(root: root.path, pageSize: 10))
        #expect(outcomes.count == ProviderValidation.caseNames.count)
        #expect(Self.failures(outcomes).isEmpty, "\(Self.failures(outcomes))")
        // The scratch folder is gone afterwards.
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
    }

    @Test func aProviderThatLosesUpdatesFails() async throws {
        let outcomes = try await Self.run(CarelessProvider(inner: InMemoryFileProvider()))
        let failed = Set(outcomes.filter { !$0.passed }.map(\.name))
        #expect(failed.contains("a stale base version is refused and writes nothing"))
        #expect(failed.contains("concurrent edits from one base: one wins, the other is refused"))
        #expect(outcomes.filter(\.passed).count > 15)
    }

    /// A provider whose root cannot be listed is one refusal, in the provider's words, before any case.
    @Test func aProviderThatFailsEveryListingIsOneRefusal() async throws {
        let provider = InMemoryFileProvider()
        await provider.failNext(.enumerateItems, with: FileProviderError(.serverUnreachable), times: 1000)
        let outcomes = try await Self.run(provider, only: ["paging", "working set"])
        #expect(outcomes.count == 1 && outcomes.first?.name == "list the root and set up a scratch folder")
        #expect(outcomes.allSatisfy { !$0.passed && ($0.failure ?? "").contains("serverUnreachable") })
    }

    /// A provider that fails listings only after the root's: the cases that list fail, each on its own.
    @Test func aProviderThatFailsListingsFailsThoseCases() async throws {
        let provider = InMemoryFileProvider()
        await provider.failNext(.enumerateItems, with: FileProviderError(.serverUnreachable), times: 1000, afterSucceeding: 1)
        let outcomes = try await Self.run(provider, only: ["paging", "working set"])
        #expect(outcomes.count == 2)
        #expect(outcomes.allSatisfy { !$0.passed && ($0.failure ?? "").contains("serverUnreachable") })
    }

    @Test func commandLinePrintsEachCaseAndTheCounts() throws {
        let root = try TemporaryDirectory("folio-validate-cli")
        let output = try ProcessRunner.folio(["provider", "validate", root.path, "--large-size", "2M", "--paging-items", "30"])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        let lines = output.stdout.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("pass  ") }.count == ProviderValidation.caseNames.count)
        #expect(lines.last == "\(ProviderValidation.caseNames.count) passed, 0 failed")

        let missing = try ProcessRunner.folio(["provider", "validate", root.child("absent").path])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("is not a folder"))
        let badSize = try ProcessRunner.folio(["provider", "validate", root.path, "--large-size", "lots"])
        #expect(badSize.status != 0)
        #expect(badSize.stderr.contains("not a size"))
    }
}
