import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing
#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A write killed mid-way leaves the provider's temporary file beside its target (the folder
/// provider's `.folio-tmp-…`, a WebDAV upload's `.folio-upload-…` before its MOVE); the next
/// listing removes it once nothing has written to it for ten minutes, and never one still being
/// written. (S3's are removed by the same rule on `LastModified`, which a test cannot set back.)
@Suite("Providers: temporary files left by killed writes", .elasticPool)
struct TemporaryLeftoverTests {
    @Test func aListingRemovesStaleTemporaryFilesOnly() async throws {
        let dir = try TemporaryDirectory("temporary-leftovers")
        let stale = try dir.write("sub/.folio-tmp-0d1e", Data(repeating: 7, count: 1 << 20)).path
        let fresh = try dir.write("sub/.folio-tmp-a11e", "being written").path
        try dir.write("sub/kept.txt", "the user's file")
        // Last written two hours ago.
        var times = [timespec(tv_sec: time(nil) - 7200, tv_nsec: 0), timespec(tv_sec: time(nil) - 7200, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, stale, &times, 0) == 0)
        let provider = try LocalFolderProvider(root: dir.path)
        let request = FileProviderRequest(temporaryDirectory: FileManager.default.temporaryDirectory)
        let page = try await provider.enumerateItems(in: .workingSet, startingAt: .initialPageSortedByName, request: request)
        #expect(page.items.map(\.filename).sorted() == ["kept.txt", "sub"], "\(page.items.map(\.filename))")
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(FileManager.default.fileExists(atPath: fresh))
        #expect(FileManager.default.fileExists(atPath: dir.path + "/sub/kept.txt"))
    }

    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aWebDAVListingRemovesStaleUploadsOnly() async throws {
        let server = try TestServer(.apache)
        defer { server.stop() }
        let root = try #require(server.root).path
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        let stale = root + "/sub/.folio-upload-0d1e", fresh = root + "/sub/.folio-upload-a11e"
        try Data(repeating: 7, count: 1 << 20).write(to: URL(fileURLWithPath: stale))
        try Data("being written".utf8).write(to: URL(fileURLWithPath: fresh))
        try Data("the user's file".utf8).write(to: URL(fileURLWithPath: root + "/sub/kept.txt"))
        var times = [timespec(tv_sec: time(nil) - 7200, tv_nsec: 0), timespec(tv_sec: time(nil) - 7200, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, stale, &times, 0) == 0)
        server.fixOwnership()
        let scratch = try TemporaryDirectory("webdav-leftovers")
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let request = FileProviderRequest(temporaryDirectory: scratch.url)
        let page = try await provider.enumerateItems(in: FileProviderItemIdentifier("sub"), startingAt: .initialPageSortedByName, request: request)
        #expect(page.items.map(\.filename) == ["kept.txt"], "\(page.items.map(\.filename))")
        #expect(!FileManager.default.fileExists(atPath: stale), "the stale upload is still on the server")
        #expect(FileManager.default.fileExists(atPath: fresh))
        #expect(FileManager.default.fileExists(atPath: root + "/sub/kept.txt"))
    }
}
