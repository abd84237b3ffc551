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

    /// `folio provider validate http://…` runs the whole suite against Apache through the command.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func theCommandValidatesWebDAV() throws {
        let server = try TestServer(.apache)
        let output = try ProcessRunner.folio(["provider", "validate", server.baseURL.absoluteString, "--large-size", "3M", "--paging-items", "30"])
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.split(separator: "\n").last == "\(ProviderValidation.caseNames.count) passed, 0 failed")
    }
}
