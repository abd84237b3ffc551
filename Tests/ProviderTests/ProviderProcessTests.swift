import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("Out-of-process providers over the provider protocol", .elasticPool)
struct ProviderProcessTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let scripted = fixtures.appendingPathComponent("scripted_provider.py")
    static let pythonExample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/PythonProvider/folder_provider.py")
    static let request = FileProviderRequest(temporaryDirectory: FileManager.default.temporaryDirectory)

    static func process(_ executable: URL, _ arguments: [String], in scratch: TemporaryDirectory) -> ProviderProcess {
        ProviderProcess(
            executable: executable, arguments: arguments,
            domain: FileProviderDomain(identifier: FileProviderDomainIdentifier(rawValue: "test-domain"), displayName: "Test Domain"),
            temporaryDirectory: scratch.child("provider-tmp"))
    }

    static func validate(_ provider: ProviderProcess, scratch: TemporaryDirectory) async -> [String] {
        var options = ProviderValidation.Options()
        options.largeFileSize = 8 << 20
        options.pagingItems = 60
        let outcomes = await ProviderValidation(provider: provider, temporaryDirectory: provider.temporaryDirectory, options: options).run()
        provider.stop()
        #expect(outcomes.count == ProviderValidation.caseNames.count)
        return outcomes.filter { !$0.passed }.map { "\($0.name): \($0.failure ?? "")" }
    }

    @Test func theLocalProviderPassesOverStdio() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-local")
        let root = scratch.child("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let provider = Self.process(ProcessRunner.folioExecutable(), ["provider", "serve", "local", root.path], in: scratch)
        let failures = await Self.validate(provider, scratch: scratch)
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func thePythonExampleProviderPasses() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-python")
        let root = scratch.child("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let provider = Self.process(Self.pythonExample, [root.path], in: scratch)
        let failures = await Self.validate(provider, scratch: scratch)
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test func aMissingExecutableIsASpecificError() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-missing")
        let provider = Self.process(scratch.child("no-such-provider"), [], in: scratch)
        let error = await #expect(throws: FileProviderError.self) { try await provider.item(for: .rootContainer, request: Self.request) }
        #expect(error?.code == .applicationExtensionNotFound)
        #expect(error?.message?.contains(scratch.child("no-such-provider").path) == true)
        #expect(error?.message?.contains("Test Domain") == true)
    }

    @Test func aCrashFailsTheRequestAndTheNextOneStartsItAgain() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-crash")
        let provider = Self.process(Self.scripted, ["crash-once", scratch.child("crashed").path], in: scratch)
        let error = await #expect(throws: FileProviderError.self) { try await provider.item(for: .rootContainer, request: Self.request) }
        #expect(error?.code == .providerDomainTemporarilyUnavailable)
        #expect(error?.message?.contains("exited with status 3") == true, "\(String(describing: error))")
        #expect(error?.message?.contains(Self.scripted.path) == true)
        let root = try await provider.item(for: .rootContainer, request: Self.request)
        #expect(root.contentType == .folder)
        provider.stop()
    }

    @Test func hostileRepliesAreRefused() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-hostile")
        let outside = try scratch.write("outside.txt", "keep")
        let escape = Self.process(Self.scripted, ["escape", outside.path], in: scratch)
        let escaped = await #expect(throws: FileProviderError.self) {
            try await escape.fetchContents(for: FileProviderItemIdentifier("x"), version: nil, request: Self.request, progress: Progress(totalUnitCount: 0))
        }
        #expect(escaped?.code == .cannotSynchronize)
        #expect(escaped?.message?.contains("not a file directly in its temporary directory") == true)
        #expect(try String(contentsOf: outside, encoding: .utf8) == "keep")
        escape.stop()

        for (mode, expected) in [("bad-name", "not a valid name"), ("long-version", "over 128")] {
            let provider = Self.process(Self.scripted, [mode], in: scratch)
            let error = await #expect(throws: FileProviderError.self) { try await provider.item(for: .rootContainer, request: Self.request) }
            #expect(error?.code == .cannotSynchronize, "\(mode)")
            #expect(error?.message?.contains(expected) == true, "\(mode): \(String(describing: error))")
            provider.stop()
        }
        for mode in ["garbage", "huge"] {
            let provider = Self.process(Self.scripted, [mode], in: scratch)
            let error = await #expect(throws: FileProviderError.self) { try await provider.item(for: .rootContainer, request: Self.request) }
            #expect(error?.code == .providerDomainTemporarilyUnavailable, "\(mode): \(String(describing: error))")
            provider.stop()
        }
    }

    @Test func aHungProviderTimesOutAndIsStopped() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-hang")
        let provider = Self.process(Self.scripted, ["hang"], in: scratch)
        provider.requestTimeout = .seconds(1)
        let error = await #expect(throws: FileProviderError.self) { try await provider.item(for: .rootContainer, request: Self.request) }
        #expect(error?.code == .providerDomainTemporarilyUnavailable)
        #expect(error?.message?.contains("did not answer item within") == true, "\(String(describing: error))")
        for _ in 0..<100 where provider.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!provider.isRunning)
    }

    /// A provider that stops reading: a request larger than the pipe cannot be written, yet its
    /// deadline still ends it (the write waits on the connection's queue, under the deadline, not
    /// on a caller's thread with no deadline armed).
    @Test(.timeLimit(.minutes(1))) func aProviderThatStopsReadingTimesOut() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-deaf")
        let provider = Self.process(Self.scripted, ["deaf"], in: scratch)
        provider.requestTimeout = .seconds(1)
        let huge = FileProviderItemIdentifier(String(repeating: "x", count: 256 << 10))
        let error = await #expect(throws: FileProviderError.self) { try await provider.item(for: huge, request: Self.request) }
        #expect(error?.message?.contains("did not answer item within") == true, "\(String(describing: error))")
        #expect(await eventually(10) { !provider.isRunning })
    }

    @Test func cancellingAFetchReachesTheProvider() async throws {
        let scratch = try TemporaryDirectory("folio-stdio-cancel")
        let provider = Self.process(Self.scripted, ["cancel"], in: scratch)
        let progress = Progress(totalUnitCount: 0)
        let fetch = Task {
            try await provider.fetchContents(for: FileProviderItemIdentifier("x"), version: nil, request: Self.request, progress: progress)
        }
        for _ in 0..<200 where progress.completedUnitCount == 0 { try await Task.sleep(for: .milliseconds(25)) }
        #expect(progress.completedUnitCount == 1 && progress.totalUnitCount == 10)
        fetch.cancel()
        let error = await #expect(throws: CocoaError.self) { try await fetch.value }
        #expect(error?.code == .userCancelled)
        #expect(progress.isCancelled)
        provider.stop()
    }
}
