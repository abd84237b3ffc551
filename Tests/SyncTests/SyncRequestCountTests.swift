import Folio
@testable import FolioProviders
@testable import FolioSync
import FolioServers
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// What small files cost on the wire, counted in Apache's access log: a PUT to upload each
/// (Apache's PUT reply names no tag: the pass lists each folder it wrote to once its transfers are
/// done, where it asked each file's tag after its PUT before, with a PROPFIND and then a HEAD), a
/// GET to download each, and listings by folder, never by file.
@Suite("Requests per file", .elasticPool)
struct SyncRequestCountTests {
    /// The requests Apache answered after its first `after`, counted by method (the wait for its
    /// log runs on the file-work pool, not the cooperative pool).
    func requests(of server: TestServer, after: Int) async throws -> [String: Int] {
        let answered = try await SyncFileWork.run { Array(try server.requestsAnswered(after: after)).map(String.init) }
        return Dictionary(grouping: answered, by: { String($0.prefix { $0 != " " }) }).mapValues(\.count)
    }

    /// A new folder is one MKCOL and one PROPFIND (for the item made); its name and its parent are
    /// looked up only when the MKCOL is refused: a name taken is a collision, with the item there.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aFolderIsMadeWithoutLookingFirst() async throws {
        let server = try TestServer(.apache)
        let scratch = try TemporaryDirectory("folio-webdav-mkcol")
        let request = FileProviderRequest(temporaryDirectory: scratch.url)
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let template = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: "f", contentType: .folder)
        let before = server.requests.count
        let made = try #require(try await provider.createItem(basedOn: template, fields: [.filename], uploading: nil, options: [], request: request).item)
        #expect(made.contentType.isFolder && made.filename == "f")
        let sent = try await requests(of: server, after: before)
        #expect(sent == ["MKCOL": 1, "PROPFIND": 1], "\(sent)")
        await #expect(throws: FileProviderError.self) {
            try await provider.createItem(basedOn: template, fields: [.filename], uploading: nil, options: [], request: request)
        }
        let again = try await provider.createItem(basedOn: template, fields: [.filename], uploading: nil, options: .mayAlreadyExist, request: request).item
        #expect(again?.itemIdentifier == made.itemIdentifier)
    }

    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func smallFilesCostAPutUpAndAGetDown() async throws {
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
        // The probe's, and the marker's (its write is not left to a listing).
        #expect(up["HEAD", default: 0] <= 2, "\(up)")
        // The listing (the root and three folders), the probe, the new folders, the marker's folder
        // and the three folders written to: not one per file.
        #expect(up["PROPFIND", default: 0] <= 23, "\(up)")

        // The versions listed are the uploads' own: the next pass has nothing to do.
        start = server.requests.count
        let again = try await one.sync()
        #expect(again.uploaded + again.downloaded + again.conflicts.count == 0 && again.deferred.isEmpty, "\(again)")
        let quiet = try await requests(of: server, after: start)
        #expect(quiet["PUT", default: 0] + quiet["HEAD", default: 0] == 0 && quiet["GET", default: 0] <= 1, "the marker is read, nothing else: \(quiet)")

        // One file more in a folder of twenty: asked for alone, not by listing the folder; and
        // again the next pass has nothing to do.
        try one.write("folder 0/one more.txt", "one more")
        #expect(try await one.sync().uploaded == 1)
        let after = try await one.sync()
        #expect(after.uploaded + after.downloaded + after.conflicts.count == 0 && after.deferred.isEmpty, "\(after)")

        // Ten files edited: a PUT each, conditional on the base, with nothing asked first or after
        // but the folder's listing.
        for index in stride(from: 1, to: 60, by: 6) { try one.write("folder 1/file \(index).txt", "file \(index), edited") }
        start = server.requests.count
        let edited = try await one.sync()
        #expect(edited.uploaded == 10 && edited.deferred.isEmpty, "\(edited)")
        let edits = try await requests(of: server, after: start)
        #expect((10...12).contains(edits["PUT", default: 0]) && edits["HEAD", default: 0] <= 1, "\(edits)")
        // The listing (the root, three folders, the marker's), the folder written to.
        #expect(edits["PROPFIND", default: 0] <= 8, "\(edits)")
        let settled = try await one.sync()
        #expect(settled.uploaded + settled.downloaded + settled.conflicts.count == 0 && settled.deferred.isEmpty, "\(settled)")

        start = server.requests.count
        let received = try await two.settle()
        #expect(received.downloaded == 61 && received.deferred.isEmpty, "\(received)")
        let down = try await requests(of: server, after: start)
        // 61 files and the drive's marker; the listing by folder.
        #expect((61...63).contains(down["GET", default: 0]), "\(down)")
        #expect(down["PROPFIND", default: 0] <= 6, "\(down)")
        #expect(down["PUT", default: 0] + down["HEAD", default: 0] == 0, "\(down)")
        #expect(two.read("folder 2/file 59.txt") == "file 59" && two.read("folder 0/one more.txt") == "one more")
        #expect(two.read("folder 1/file 55.txt") == "file 55, edited")
    }

    /// A file the pass wrote is taken for its upload only as the server lists it unchanged since:
    /// one another writer replaced (another size) keeps no version, so the next pass takes the
    /// server's content for a change made elsewhere; an untouched one gets the tag listed.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func anUploadListedOtherwiseThanSentKeepsNoVersion() async throws {
        let server = try TestServer(.apache)
        let provider = WebDAVProvider(baseURL: server.baseURL)
        let device = try await SyncDevice("one", provider: provider)
        var request = FileProviderRequest(temporaryDirectory: URL(fileURLWithPath: device.home.path))
        request.versionMayFollow = true
        var unsettled: [SyncPath: UnsettledUpload] = [:]
        for name in ["kept.txt", "replaced.txt"] {
            let source = device.home.child("source").path
            try Data("sent".utf8).write(to: URL(fileURLWithPath: source))
            let template = FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: .rootContainer, filename: name, contentType: .plainText)
            let item = try #require(try await provider.createItem(basedOn: template, fields: [.contents, .filename], contents: URL(fileURLWithPath: source), options: [], request: request).item)
            // Apache's PUT reply names no tag: the item comes back without one, dated by the reply.
            #expect(item.itemVersion.contentVersion.isEmpty && item.contentModificationDate != nil, "\(item)")
            unsettled[SyncPath(name)] = UnsettledUpload(
                base: BaseEntry(isFolder: false, identifier: item.itemIdentifier.rawValue, version: Data()), folder: .rootContainer,
                identifier: item.itemIdentifier, size: item.documentSize?.int64Value, written: item.contentModificationDate, elapsed: 1)
        }
        // Another writer replaces one, behind the provider's back.
        try Data("replaced by someone else".utf8).write(to: try #require(server.root).appendingPathComponent("replaced.txt"))

        let bases = Dictionary(uniqueKeysWithValues: await device.engine.settleVersions(unsettled, listedCounts: [:], request: request).map { ($0.0.text, $0.1) })
        let listed = try await provider.listedItems(in: .rootContainer)
        let kept = try #require(listed.first { $0.filename == "kept.txt" })
        #expect(bases["kept.txt"]??.version == kept.itemVersion.contentVersion && !kept.itemVersion.contentVersion.isEmpty)
        #expect(bases["replaced.txt"]??.version.isEmpty == true, "\(String(describing: bases["replaced.txt"]))")
    }

    /// On every WebDAV server of the matrix, what a pass uploads (new files, then edits) is known
    /// for its own by the next pass, whether the server's PUT replies name tags or not.
    @Test(arguments: [TestServer.Kind.apache, .lighttpd, .wsgidav, .rclone].filter(TestServer.shouldRun))
    func theNextPassHasNothingToDo(kind: TestServer.Kind) async throws {
        let server = try TestServer(kind)
        let device = try await SyncDevice("one", provider: WebDAVProvider(baseURL: server.baseURL))
        for index in 0..<6 { try device.write("folder \(index % 2)/file \(index).txt", "file \(index)") }
        let sent = try await device.settle()
        #expect(sent.uploaded == 6 && sent.deferred.isEmpty, "\(sent)")
        let quiet = try await device.sync()
        #expect(quiet.uploaded + quiet.downloaded + quiet.conflicts.count == 0 && quiet.deferred.isEmpty, "\(quiet)")
        for index in 0..<3 { try device.write("folder \(index % 2)/file \(index).txt", "file \(index), edited") }
        let edited = try await device.settle()
        #expect(edited.uploaded == 3 && edited.deferred.isEmpty, "\(edited)")
        let after = try await device.sync()
        #expect(after.uploaded + after.downloaded + after.conflicts.count == 0 && after.deferred.isEmpty, "\(after)")
    }

    /// An upload that could not be settled (its folder's listing failed) stays this device's own:
    /// edited before the next pass, the edit is sent over it, with no conflict kept.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func anUnsettledUploadIsStillKnownForOurOwn() async throws {
        let server = try TestServer(.apache)
        let proxy = try FaultProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        // The settling's listing of the new folder fails, once.
        proxy.add(.init(method: "PROPFIND", pathSuffix: "/f/", action: .status(500), times: 1))
        let device = try await SyncDevice("one", provider: WebDAVProvider(baseURL: proxy.baseURL))
        try device.write("f/report.txt", "first")
        let sent = try await device.sync()
        #expect(sent.uploaded == 1 && sent.deferred.isEmpty, "\(sent)")
        #expect(try await device.journal.base()[SyncPath("f/report.txt")]?.version.isEmpty == true, "the upload was settled after all")
        try device.write("f/report.txt", "edited since")
        let edited = try await device.settle()
        #expect(edited.uploaded == 1 && edited.conflicts.isEmpty && edited.downloaded == 0, "\(edited)")
        #expect(try String(contentsOf: try #require(server.root).appendingPathComponent("f/report.txt"), encoding: .utf8) == "edited since")
        #expect(device.read("f/report.txt") == "edited since")
    }

    /// An upload the server receives slowly (its file written seconds after the request arrived,
    /// as a large one is) is still taken for itself: the next pass has nothing to do.
    @Test(.enabled(if: TestServer.shouldRun(.apache)))
    func aSlowUploadIsTakenForItself() async throws {
        let server = try TestServer(.apache)
        let proxy = try FaultProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        proxy.add(.init(method: "PUT", pathSuffix: "slow.txt", action: .delayBody(2.5)))
        let device = try await SyncDevice("one", provider: WebDAVProvider(baseURL: proxy.baseURL))
        try device.write("slow.txt", "sent slowly")
        let sent = try await device.settle()
        #expect(sent.uploaded == 1 && sent.deferred.isEmpty, "\(sent)")
        let again = try await device.sync()
        #expect(again.uploaded + again.downloaded + again.conflicts.count == 0 && again.deferred.isEmpty, "\(again)")
    }

    /// What is listed is taken for what was sent only with the size sent, a date while the write
    /// ran by the server's clock (within the call's time of the reply's date, to the second, and
    /// the second after), and a version.
    @Test func aListedFileIsTheUploadOnlyWithItsSizeAndDate() {
        let written = Date(timeIntervalSince1970: 1_700_000_000.6)
        let upload = UnsettledUpload(
            base: BaseEntry(isFolder: false, identifier: "a", version: Data()), folder: .rootContainer, identifier: FileProviderItemIdentifier("a"), size: 4,
            written: written, elapsed: 0)
        func listed(size: Int64? = 4, at date: Date? = Date(timeIntervalSince1970: 1_700_000_000), version: String = "tag") -> FileProviderItemRecord {
            FileProviderItemRecord(
                itemIdentifier: FileProviderItemIdentifier("a"), parentItemIdentifier: .rootContainer, filename: "a", contentType: .data,
                itemVersion: FileProviderItemVersion(contentVersion: Data(version.utf8), metadataVersion: Data()), size: size, contentModificationDate: date)
        }
        #expect(upload.isSent(listed()))
        #expect(upload.isSent(listed(at: Date(timeIntervalSince1970: 1_700_000_001.9))))
        #expect(!upload.isSent(listed(at: Date(timeIntervalSince1970: 1_700_000_002))))
        // Older than the write: another file (one copied with its date kept, say).
        #expect(!upload.isSent(listed(at: Date(timeIntervalSince1970: 1_699_999_999.9))))
        #expect(!upload.isSent(listed(size: 5)))
        #expect(!upload.isSent(listed(size: nil)))
        #expect(!upload.isSent(listed(at: nil)))
        #expect(!upload.isSent(listed(version: "")))
        // A call of three seconds: the window is as wide on both sides.
        var slow = upload
        slow.elapsed = 3
        #expect(slow.isSent(listed(at: Date(timeIntervalSince1970: 1_699_999_997.6))))
        #expect(!slow.isSent(listed(at: Date(timeIntervalSince1970: 1_699_999_996.9))))
        #expect(slow.isSent(listed(at: Date(timeIntervalSince1970: 1_700_000_004.5))))
        #expect(!slow.isSent(listed(at: Date(timeIntervalSince1970: 1_700_000_005))))
        var dateless = upload
        dateless.written = nil
        #expect(!dateless.isSent(listed()))
    }
}
