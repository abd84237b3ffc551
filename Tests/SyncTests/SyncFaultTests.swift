import Folio
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Server faults during sync passes, through a proxy: failed uploads wait and drain, failed
/// downloads leave the local file alone, an unreachable server changes nothing, and an edit made
/// while its upload is in flight is sent next.
@Suite("Sync under server faults", .elasticPool)
struct SyncFaultTests {
    static let kinds = [SyncBackend.Kind.apache, .moto].filter(\.runs)

    @Test(arguments: kinds)
    func failedUploadsWaitAndTheQueueDrainsOnce(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        try await one.settle()
        for index in 0..<4 { try one.write("draft\(index).txt", "draft \(index)") }
        // Refused, failing, and a server that drops the connection mid-upload (as if stopped).
        for action in [FaultProxy.Action.status(503), .status(500), .reset] {
            proxy.add(.init(method: "PUT", action: action))
            let failed = try await one.sync()
            #expect(failed.uploaded == 0 && failed.deferred.count == 4, "\(action): \(failed)")
            proxy.clearRules()
        }
        try await two.settle()
        #expect(two.tree().isEmpty, "a failed upload reached the server")
        let drained = try await one.sync()
        #expect(drained.uploaded == 4 && drained.deferred.isEmpty, "\(drained)")
        let pulled = try await two.sync()
        #expect(two.tree() == one.tree() && two.tree().count == 4, "\(pulled) \(two.tree()) \(one.tree())")
        let again = try await one.sync()
        #expect(again.uploaded == 0, "an upload was sent twice: \(again)")
    }

    /// A file whose upload the server refuses (400) is tried on each of three passes, then set
    /// aside: later passes send no request for it while the rest of each pass goes on, its error
    /// stays visible, and it is tried again when it changes or when a pass is asked to retry. A
    /// transient failure (503) is never set aside.
    @Test(arguments: kinds)
    func aRefusedItemIsSetAsideWhileTheRestGoesOn(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one")
        try await one.settle()
        proxy.add(.init(method: "PUT", pathContains: "refused", action: .status(400)))
        proxy.add(.init(method: "PUT", pathContains: "busy.txt", action: .status(503)))
        try one.write("refused.txt", "a name this server will not take")
        try one.write("refused-edited.txt", "also refused")
        try one.write("busy.txt", "the server is busy")
        func puts(_ name: String) -> Int { proxy.requests.filter { $0.hasPrefix("PUT ") && $0.contains(name) }.count }
        for round in 1...SyncFailure.setAsideAfter {
            try one.write("ok\(round).txt", "fine \(round)")
            let report = try await one.sync()
            #expect(report.uploaded == 1 && Set(report.deferred.keys) == ["refused.txt", "refused-edited.txt", "busy.txt"], "pass \(round): \(report)")
            #expect(report.setAside.isEmpty, "pass \(round): \(report)")
        }
        let tried = puts("refused.txt")
        #expect(tried >= SyncFailure.setAsideAfter, "\(proxy.requests)")

        // Set aside: no request for the refused file, the edited one tried again, the busy one too,
        // and the rest of the pass goes on.
        try one.write("refused-edited.txt", "changed: tried again")
        try one.write("ok-after.txt", "still synced")
        let aside = try await one.sync()
        #expect(aside.uploaded == 1 && Set(aside.deferred.keys) == ["refused-edited.txt", "busy.txt"], "\(aside)")
        #expect(aside.setAside.keys.sorted() == ["refused.txt"] && aside.setAside["refused.txt"]?.contains("set aside after 3 tries") == true, "\(aside)")
        #expect(puts("refused.txt") == tried, "a set-aside file was sent again: \(proxy.requests)")
        let status = try await one.engine.status([SyncPath("refused.txt")])
        #expect(status.first?.1.error?.contains("set aside after 3 tries") == true, "\(status)")

        // The server takes it now; an ordinary pass still leaves it, a pass asked to retry sends it.
        proxy.clearRules()
        let still = try await one.sync()
        #expect(still.setAside.keys.sorted() == ["refused.txt"] && puts("refused.txt") == tried, "\(still)")
        let retried = try await one.sync(retryingSetAside: true)
        #expect(retried.uploaded == 1 && retried.deferred.isEmpty && retried.setAside.isEmpty, "\(retried)")
        #expect(try await one.engine.status([SyncPath("refused.txt")]).first?.1.error == nil)
    }

    /// What tells a set-aside action from another: a server version of the same length (S3's
    /// ETags always are) or a changed local file makes another digest, so the item is tried again.
    @Test func aChangeOnEitherSideMakesAnotherDigest() {
        let path = SyncPath("doc.txt")
        let remote = { (tag: String) in RemoteEntry(identifier: "doc.txt", isFolder: false, version: Data(tag.utf8), size: 4) }
        var scan = LocalReplica.Scan()
        scan.entries[path] = LocalEntry(isFolder: false, fingerprint: LocalFingerprint(device: 1, inode: 2, size: 4, modified: 10))
        let first = SyncEngine.digest(.download(path, remote("\"aaaa\"")), scan)
        #expect(first == SyncEngine.digest(.download(path, remote("\"aaaa\"")), scan))
        #expect(first != SyncEngine.digest(.download(path, remote("\"bbbb\"")), scan))
        scan.entries[path]?.fingerprint?.modified = 11
        #expect(first != SyncEngine.digest(.download(path, remote("\"aaaa\"")), scan))
    }

    @Test(arguments: kinds)
    func aFailedDownloadLeavesTheLocalFileAlone(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        try one.write("report.txt", "the first report")
        try await one.settle()
        try await two.settle()
        try one.write("report.txt", "the second report, which is longer")
        try await one.settle()
        for action in [FaultProxy.Action.truncate(after: 10), .reset, .status(503)] {
            proxy.add(.init(method: "GET", pathContains: "report.txt", action: action))
            let failed = try await two.sync()
            #expect(failed.downloaded == 0 && failed.deferred["report.txt"] != nil, "\(action): \(failed)")
            #expect(two.read("report.txt") == "the first report", "\(action) changed the local file")
            #expect(two.stagedFiles().isEmpty, "\(action) left a partial download: \(two.stagedFiles())")
            proxy.clearRules()
        }
        let healed = try await two.sync()
        #expect(healed.downloaded == 1 && two.read("report.txt") == "the second report, which is longer", "\(healed)")
        #expect(two.keeps("the first report"), "the replaced local bytes were not kept")
    }

    @Test(arguments: kinds)
    func anUnreachableServerChangesNothing(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true, requestTimeout: .seconds(8))
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one")
        for index in 0..<3 { try one.write("kept\(index).txt", "kept \(index)") }
        try await one.settle()
        let before = one.tree()
        for action in [FaultProxy.Action.reset, .status(500), .stall] {
            proxy.add(.init(action: action))
            await #expect(throws: FileProviderError.self, "\(action)") { try await one.sync() }
            #expect(one.tree() == before, "\(action) changed the replica")
            proxy.clearRules()
        }
        let healed = try await one.sync()
        #expect(healed.deletedHere == 0 && healed.deletedOnServer == 0 && healed.uploaded == 0, "\(healed)")
    }

    /// The server stores an upload but its reply is lost: the PUT is sent again, meets its own
    /// write, and the contents are compared — nothing is duplicated, no conflict is made.
    @Test(arguments: kinds)
    func anUploadWhoseReplyIsLostIsNotDuplicated(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        try await one.settle()
        try one.write("minutes.txt", "the first minutes")
        proxy.add(.init(method: "PUT", pathContains: "minutes.txt", action: .loseReply, times: 1))
        let created = try await one.sync()
        #expect(proxy.requests.filter { $0.hasPrefix("PUT") && $0.contains("minutes.txt") }.count >= 2, "the lost reply was not answered by sending again")
        #expect(created.uploaded + created.converged == 1 && created.deferred.isEmpty && created.conflicts.isEmpty, "\(created)")
        try one.write("minutes.txt", "the second minutes, longer")
        proxy.add(.init(method: "PUT", pathContains: "minutes.txt", action: .loseReply, times: 1))
        var modified = try await one.sync()
        // A lost modification is sent again against a version that is no longer the server's: it
        // waits for the next pass, which finds the same contents on both sides.
        if modified.deferred.isEmpty == false { modified = try await one.sync() }
        #expect(modified.uploaded + modified.converged == 1 && modified.deferred.isEmpty && modified.conflicts.isEmpty, "\(modified)")
        let pulled = try await two.sync()
        #expect(two.tree() == ["minutes.txt": "the second minutes, longer"], "\(pulled)")
        #expect(try await one.sync() == SyncReport(), "the passes did not settle")
        #expect(try one.conflicts("minutes.txt").isEmpty && two.conflicts("minutes.txt").isEmpty)
    }

    /// A server that writes in place (WsgiDAV) keeps what arrived of an upload cut short, under the
    /// file's own name. That start of this device's own file is not another device's change: it is
    /// sent again over it (no conflict), and every device ends with the whole file. Apache, which
    /// writes to a temporary file, keeps nothing of it.
    @Test(arguments: [SyncBackend.Kind.wsgidav, .apache].filter(\.runs))
    func anUploadCutShortIsSentAgainNotKeptAsAConflict(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        try one.write("changed.txt", "the first report")
        try await one.settle()
        let report = String(repeating: "the whole report, line after line\n", count: 3000)
        let changed = String(repeating: "the second report, longer than the first\n", count: 3000)
        try one.write("new.txt", report)
        try one.write("changed.txt", changed)
        for name in ["new.txt", "changed.txt"] { proxy.add(.init(method: "PUT", pathContains: name, action: .cutRequest(after: 1000), times: 1)) }
        let sent = try await one.settle()
        for name in ["new.txt", "changed.txt"] {
            #expect(proxy.requests.filter { $0.hasPrefix("PUT /\(name)") }.count >= 2, "\(name) was not cut and sent again: \(proxy.requests)")
        }
        #expect(sent.conflicts.isEmpty && sent.uploaded == 2 && sent.deferred.isEmpty, "\(sent)")
        #expect(try one.conflicts("new.txt").isEmpty && one.conflicts("changed.txt").isEmpty)
        #expect(one.read("new.txt") == report && one.read("changed.txt") == changed)
        #expect(try await one.journal.unfinishedTransfers().isEmpty, "transfers that landed are still recorded as unfinished")
        let pulled = try await two.settle()
        #expect(two.tree() == one.tree() && two.tree().count == 2, "\(pulled)")
        #expect(try await one.sync() == SyncReport())
    }

    /// bisync's conflict window: an edit made while the upload of the previous content is in
    /// flight is never marked synced; the next pass sends it.
    @Test(arguments: kinds)
    func anEditDuringItsUploadIsSentNext(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        try await one.settle()
        try one.write("doc.txt", "version one")
        let gate = FaultProxy.Gate()
        proxy.add(.init(method: "PUT", pathContains: "doc.txt", action: .hold(gate), times: 1))
        let pass = Task { try await one.sync() }
        let deadline = Date().addingTimeInterval(120)
        while gate.held == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try #require(gate.held == 1, "the upload never reached the server")
        try one.write("doc.txt", "version two, written during the upload")
        gate.open()
        let first = try await pass.value
        #expect(first.uploaded == 1, "\(first)")
        try await two.settle()
        #expect(two.read("doc.txt") == "version one", "the upload was not the snapshot")
        // The next pass sends it (a pass or two more if the loaded machine makes a request fail: it
        // stays pending until sent, and is never taken for synced).
        var sent = 0
        for _ in 0..<3 where sent == 0 {
            let next = try await one.sync()
            #expect(next.conflicts.isEmpty, "\(next)")
            sent = next.uploaded
        }
        #expect(sent == 1)
        try await two.settle()
        #expect(two.read("doc.txt") == "version two, written during the upload")
    }
}

/// Files large enough to be sent from where they are (not from a snapshot copy).
@Suite("Sync of large files", .elasticPool)
struct LargeFileSyncTests {
    /// `count` bytes: 1 MiB blocks, each one different, and `seed` makes the whole different.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) })
        var data = Data(capacity: count)
        var index: UInt32 = 0
        while data.count < count {
            withUnsafeBytes(of: index) { data.append(contentsOf: $0) }
            data.append(block.prefix(min(block.count, count - data.count)))
            index += 1
        }
        return data.prefix(count)
    }

    @Test(arguments: [SyncBackend.Kind.memory, .apache, .moto].filter(\.runs))
    func aLargeFileSyncsByteForByte(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two")
        let content = Self.bytes(Int(SyncEngine.directUploadSize) + 4097, seed: 1)
        try content.write(to: URL(fileURLWithPath: one.path("large.bin")))
        #expect(try await one.sync().uploaded == 1)
        #expect(try await two.sync().downloaded == 1)
        #expect(FileManager.default.contents(atPath: two.path("large.bin")) == content)
        #expect(try await one.sync().uploaded == 0)
    }

    /// A large file changed while it is sent: the server's copy is not taken for synced, and the
    /// next pass sends the finished file.
    @Test(.enabled(if: SyncBackend.Kind.apache.runs))
    func aLargeFileChangedWhileSentIsSentAgain() async throws {
        let backend = try SyncBackend(.apache, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        try await one.settle()
        let first = Self.bytes(Int(SyncEngine.directUploadSize) + 10, seed: 2)
        let second = Self.bytes(Int(SyncEngine.directUploadSize) + 20, seed: 3)
        try first.write(to: URL(fileURLWithPath: one.path("large.bin")))
        let gate = FaultProxy.Gate()
        proxy.add(.init(method: "PUT", pathContains: "large.bin", action: .hold(gate), times: 1))
        let pass = Task { try await one.sync() }
        let deadline = Date().addingTimeInterval(120)
        while gate.held == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try #require(gate.held == 1, "the upload never reached the server")
        try second.write(to: URL(fileURLWithPath: one.path("large.bin")))
        gate.open()
        _ = try await pass.value
        var sent = 0
        for _ in 0..<3 where sent == 0 { sent = try await one.sync().uploaded }
        #expect(sent == 1, "the finished file was not sent again")
        try await two.settle()
        #expect(FileManager.default.contents(atPath: two.path("large.bin")) == second)
    }
}
