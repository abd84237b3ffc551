import Folio
import FolioProviders
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Uploads from memory (``UploadingFileProvider``): the sync engine's small files, read and hashed
/// once, go to the WebDAV and S3 providers as bytes, with the conditions a file upload has.
@Suite("Uploads from memory", .serialized, .elasticPool)
struct UploadContentsTests {
    @Test func aSmallFileIsReadWholeWithItsDigest() throws {
        let scratch = try TemporaryDirectory("folio-upload-read")
        let bytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = scratch.child("f").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let read = try #require(try ContentDigest.read(path, expecting: 5000, upTo: 8192))
        #expect(read.bytes == bytes)
        #expect(read.digest == (try ContentDigest.sha256(ofFileAt: path)))
        // Grown since it was looked at (expected smaller): still read whole, up to the limit.
        #expect(try ContentDigest.read(path, expecting: 10, upTo: 8192)?.bytes == bytes)
        // Larger than the limit: not read.
        #expect(try ContentDigest.read(path, expecting: 5000, upTo: 4999) == nil)
        #expect(try ContentDigest.read(path, expecting: 10, upTo: 4999) == nil)
        // Exactly the limit, and empty.
        #expect(try ContentDigest.read(path, expecting: 5000, upTo: 5000)?.bytes == bytes)
        try Data().write(to: URL(fileURLWithPath: path))
        #expect(try ContentDigest.read(path, expecting: 0, upTo: 10)?.bytes == [])
        #expect(throws: (any Error).self) { try ContentDigest.read(scratch.child("missing").path, expecting: 0, upTo: 10) }
    }

    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func webDAVTakesBytesAsAFile() async throws {
        let server = try TestServer(.apache)
        try await Self.sendsBytes(to: WebDAVProvider(baseURL: server.baseURL, pageSize: 10))
    }

    @Test(.enabled(if: TestServer.shouldRun(.moto)))
    func s3TakesBytesAsAFile() async throws {
        let server = try TestServer(.moto)
        try await Self.sendsBytes(to: try S3ProviderTests.provider(server, prefix: "drive"))
    }

    /// Creates a file from bytes, refuses a second one of its name, replaces it from bytes over its
    /// version and refuses bytes over a version it no longer has; reads back what each write sent.
    static func sendsBytes(to provider: some UploadingFileProvider) async throws {
        let scratch = try TemporaryDirectory("folio-upload-bytes")
        let request = FileProviderRequest(temporaryDirectory: scratch.url)
        func contents(_ identifier: FileProviderItemIdentifier) async throws -> Data {
            try Data(contentsOf: try await provider.fetchContents(for: identifier, version: nil, request: request, progress: Progress(totalUnitCount: 1)).contents)
        }
        let first = Array("written from memory".utf8)
        let template = FileProviderItemRecord(
            itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: "memory.txt", contentType: .plainText)
        let created = try #require(
            try await provider.createItem(basedOn: template, fields: [.contents, .filename], uploading: .bytes(first), options: [], request: request).item)
        #expect(created.documentSize?.intValue == first.count)
        #expect(try await contents(created.itemIdentifier) == Data(first))

        await #expect(throws: FileProviderError.self) {
            try await provider.createItem(basedOn: template, fields: [.contents, .filename], uploading: .bytes([1, 2, 3]), options: [], request: request)
        }
        #expect(try await contents(created.itemIdentifier) == Data(first))

        let second = (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }
        let current = try await provider.item(for: created.itemIdentifier, request: request)
        let modified = try #require(
            try await provider.modifyItem(
                current, baseVersion: current.itemVersion, changedFields: [.contents], uploading: .bytes(second), options: [], request: request
            ).item)
        #expect(modified.itemVersion.contentVersion != created.itemVersion.contentVersion || modified.itemVersion.contentVersion.isEmpty)
        #expect(try await contents(created.itemIdentifier) == Data(second))

        // Over the first version, which the server no longer has: refused, and nothing written.
        await #expect(throws: FileProviderError.self) {
            try await provider.modifyItem(
                current, baseVersion: current.itemVersion, changedFields: [.contents], uploading: .bytes(first), options: [], request: request)
        }
        #expect(try await contents(created.itemIdentifier) == Data(second))
    }
}
