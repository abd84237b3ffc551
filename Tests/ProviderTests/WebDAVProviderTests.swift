import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

@Suite("The WebDAV provider against real servers", .serialized, .elasticPool)
struct WebDAVProviderTests {
    static func validate(_ kind: TestServer.Kind) async throws -> [String] {
        let server = try TestServer(kind)
        let scratch = try TemporaryDirectory("folio-webdav-\(kind.rawValue)")
        var options = ProviderValidation.Options()
        options.largeFileSize = 16 << 20
        options.pagingItems = 45
        let provider = WebDAVProvider(baseURL: server.baseURL, pageSize: 10)
        let outcomes = await ProviderValidation(provider: provider, temporaryDirectory: scratch.child("tmp"), options: options).run()
        #expect(outcomes.count == ProviderValidation.caseNames.count)
        let failures = outcomes.filter { !$0.passed }.map { "\($0.name): \($0.failure ?? "")" }
        if !failures.isEmpty { print(server.log.suffix(3000)) }
        return failures
    }

    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func apacheModDAVPasses() async throws {
        let failures = try await Self.validate(.apache)
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test(.enabled(if: TestServer.shouldRun(.wsgidav)))
    func wsgiDAVPasses() async throws {
        let failures = try await Self.validate(.wsgidav)
        #expect(failures.isEmpty, "\(failures)")
    }

    /// lighttpd redirects a collection named without its trailing slash (308, MOVE included) and
    /// refuses names with control characters (400).
    @Test(.enabled(if: TestServer.shouldRun(.lighttpd)))
    func lighttpdModWebDAVPasses() async throws {
        let failures = try await Self.validate(.lighttpd)
        #expect(failures.isEmpty, "\(failures)")
    }

    /// nginx's dav module has no PROPFIND: the suite stops at once with one refusal that says so,
    /// through the provider and through the command.
    @Test(.enabled(if: TestServer.shouldRun(.nginx)))
    func nginxWithoutPropfindIsOneClearRefusal() async throws {
        let server = try TestServer(.nginx)
        let scratch = try TemporaryDirectory("folio-webdav-nginx")
        let outcomes = await ProviderValidation(provider: WebDAVProvider(baseURL: server.baseURL), temporaryDirectory: scratch.child("tmp")).run()
        #expect(outcomes.count == 1 && outcomes.first?.name == "list the root and set up a scratch folder", "\(outcomes.map(\.name))")
        #expect(outcomes.first?.failure?.contains("this server does not speak WebDAV (no PROPFIND)") == true, "\(outcomes)")
        #expect(outcomes.first?.failure?.contains("serverUnreachable") == false)
        let output = try ProcessRunner.folio(["provider", "validate", server.baseURL.absoluteString])
        #expect(output.status != 0)
        #expect((output.stdout + output.stderr).contains("this server does not speak WebDAV (no PROPFIND)"), "\(output.stdout)\(output.stderr)")
        // It wrote nothing.
        #expect(try FileManager.default.contentsOfDirectory(atPath: server.root!.path).isEmpty)
    }

    /// rclone's server ignores If-Match and If-None-Match: the provider's own checks catch conflicts.
    @Test(.enabled(if: TestServer.shouldRun(.rclone)))
    func rcloneWhichIgnoresIfMatchPasses() async throws {
        let failures = try await Self.validate(.rclone)
        #expect(failures.isEmpty, "\(failures)")
    }

    /// A folder whose reply says what it said last time is not read again: the items read from
    /// it last time stand (here a stand-in with one of two, which only a reuse returns); a folder
    /// changed on the server, behind the provider's back, is read again, and the working set has
    /// the change.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func anUnchangedFolderListingIsNotReadAgain() async throws {
        let server = try TestServer(.apache)
        let root = server.root!
        try FileManager.default.createDirectory(at: root.appendingPathComponent("a"), withIntermediateDirectories: true)
        for name in ["1.txt", "2.txt"] { try Data(name.utf8).write(to: root.appendingPathComponent("a/" + name)) }
        // Dated an hour back: Apache lists a tag as weak within a second of its file's change, and
        // strong after, so a reply read in that second differs from the next.
        for name in ["a/1.txt", "a/2.txt", "a"] {
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: root.appendingPathComponent(name).path)
        }
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let first = try await provider.listing(of: "a", previous: nil)
        #expect(first.items.map(\.filename).sorted() == ["1.txt", "2.txt"])
        var standIn = first
        standIn.items = [first.items[0]]
        let again = try await provider.listing(of: "a", previous: standIn)
        #expect(again.items.map(\.itemIdentifier) == standIn.items.map(\.itemIdentifier))
        #expect(again.digest == first.digest)

        try Data("3".utf8).write(to: root.appendingPathComponent("a/3.txt"))
        let changed = try await provider.listing(of: "a", previous: standIn)
        #expect(changed.items.map(\.filename).sorted() == ["1.txt", "2.txt", "3.txt"])
        #expect(changed.digest != first.digest)

        // Through the working set: a walk, a file rewritten on the server, another walk.
        let request = FileProviderRequest(temporaryDirectory: FileManager.default.temporaryDirectory)
        let anchor = try await provider.currentSyncAnchor(for: .workingSet, request: request)
        let before = try await provider.item(for: FileProviderItemIdentifier("a/2.txt"), request: request)
        try Data("two, longer".utf8).write(to: root.appendingPathComponent("a/2.txt"))
        let batch = try await provider.enumerateChanges(in: .workingSet, from: anchor, request: request)
        let updated = try #require(batch.updatedItems.first { $0.itemIdentifier.rawValue == "a/2.txt" })
        #expect(updated.documentSize?.int64Value == 11)
        #expect(updated.itemVersion != before.itemVersion)
    }

    /// A folder listed to settle uploads (``WebDAVProvider/listedItems(in:)``, just after the writes,
    /// while Apache still marks their tags weak) is not read again by the next walk when the server
    /// answers it the same: the walk reuses it, and lists the file with the version settled.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aFolderListedAfterItsWritesIsNotReadAgain() async throws {
        let server = try TestServer(.apache)
        let scratch = try TemporaryDirectory("folio-webdav-settled")
        let request = FileProviderRequest(temporaryDirectory: scratch.url)
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let folder = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: "f", contentType: .folder)
        let made = try #require(try await provider.createItem(basedOn: folder, fields: [.filename], uploading: nil, options: [], request: request).item)
        let file = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: made.itemIdentifier, filename: "a.txt", contentType: .plainText)
        _ = try await provider.createItem(basedOn: file, fields: [.contents, .filename], uploading: .bytes(Array("written".utf8)), options: [], request: request)
        let settled = try #require(try await provider.listedItems(in: made.itemIdentifier).first { $0.filename == "a.txt" })
        #expect(!settled.itemVersion.contentVersion.isEmpty)
        try await Task.sleep(for: .seconds(1.1))
        let walked = try await provider.workingSetItems(request: request)
        #expect(await provider.lastWalk == (2, 1), "the root read, the folder as it was")
        #expect(walked[settled.itemIdentifier]?.itemVersion == settled.itemVersion)
        // Changed since: read again (and the root, which lists the folder's date).
        _ = try await provider.createItem(basedOn: FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: made.itemIdentifier, filename: "b.txt", contentType: .plainText), fields: [.contents, .filename], uploading: .bytes([1]), options: [], request: request)
        let again = try await provider.workingSetItems(request: request)
        #expect(await provider.lastWalk == (2, 0), "both read")
        #expect(again.values.contains { $0.filename == "b.txt" })
    }

    /// `folio provider validate http://…` runs the whole suite against Apache through the command.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func theCommandValidatesWebDAV() throws {
        let server = try TestServer(.apache)
        let output = try ProcessRunner.folio(["provider", "validate", server.baseURL.absoluteString, "--large-size", "3M", "--paging-items", "30"])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.split(separator: "\n").last == "\(ProviderValidation.caseNames.count) passed, 0 failed")
    }
}
