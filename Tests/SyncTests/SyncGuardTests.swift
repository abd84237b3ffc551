import Folio
@testable import FolioSync
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// The guards between a sync pass and data loss: an emptied server, a wiped replica, a mass
/// deletion, a reset journal, and metadata-only changes.
@Suite("Sync guards", .elasticPool)
struct SyncGuardTests {
    static let kinds = [SyncBackend.Kind.memory, .apache, .moto].filter(\.runs)

    /// Two devices with `count` synced files.
    static func synced(_ backend: SyncBackend, count: Int) async throws -> (SyncDevice, SyncDevice) {
        let one = try await backend.device("one"), two = try await backend.device("two")
        for index in 0..<count { try one.write("doc\(index).txt", "document \(index) " + String(repeating: "x", count: index)) }
        let pushed = try await one.settle()
        let pulled = try await two.settle()
        #expect(two.tree() == one.tree() && two.tree().count == count, "\(pushed) \(pulled)")
        return (one, two)
    }

    /// Deletes everything on the server, as an out-of-band tool would (Folio's marker included).
    static func wipeServer(_ backend: SyncBackend) async throws {
        let provider = try backend.provider()
        let request = FileProviderRequest(temporaryDirectory: FileManager.default.temporaryDirectory)
        let top = try await provider.enumerateItems(in: .rootContainer, startingAt: .initialPageSortedByName, request: request)
        for item in top.items {
            try await provider.deleteItem(identifier: item.itemIdentifier, baseVersion: FileProviderItemVersion(), options: .recursive, request: request)
        }
    }

    @Test(arguments: kinds)
    func anEmptiedServerStopsSyncAndRepairMergesBack(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let (one, two) = try await Self.synced(backend, count: 5)
        let before = one.tree()
        try await Self.wipeServer(backend)
        await #expect(throws: SyncStop.remoteMarkerMissing) { try await one.sync() }
        #expect(one.tree() == before, "a pass against an emptied server changed the replica")
        try await one.engine.repair()
        let merged = try await one.sync()
        #expect(merged.merged && merged.uploaded == 5 && merged.deletedHere == 0, "\(merged)")
        // The other device sees a new epoch: it merges too, and nothing differs, so nothing conflicts.
        let joined = try await two.sync()
        #expect(joined.merged && joined.conflicts.isEmpty && joined.deletedHere == 0 && joined.deletedOnServer == 0, "\(joined)")
        #expect(two.tree() == before)
    }

    /// The server's folder is put back as it was earlier (a backup restored): its marker's
    /// generation went back, so the pass merges: nothing is deleted on either side, what the server
    /// lost is sent again, and every byte either device wrote is still somewhere.
    @Test(.enabled(if: SyncBackend.Kind.apache.runs))
    func aRestoredServerMerges() async throws {
        let backend = try SyncBackend(.apache)
        let server = try #require(backend.server?.root)
        let (one, two) = try await Self.synced(backend, count: 4)
        let snapshot = try TemporaryDirectory("folio-server-snapshot")
        let copied = try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", server.path + "/.", snapshot.path])
        #expect(copied.status == 0, "\(copied.stderr)")
        try one.write("doc1.txt", "document 1, edited after the backup")
        try one.write("after.txt", "written after the backup")
        try one.delete("doc2.txt")
        try await one.settle()
        try await two.settle()
        // The restore.
        for name in try FileManager.default.contentsOfDirectory(atPath: server.path) { try FileManager.default.removeItem(atPath: server.path + "/" + name) }
        let restored = try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", snapshot.path + "/.", server.path])
        #expect(restored.status == 0, "\(restored.stderr)")
        backend.server?.fixOwnership()
        for device in [one, two] {
            let merged = try await device.sync()
            #expect(merged.merged && merged.deletedHere == 0 && merged.deletedOnServer == 0, "\(device.name): \(merged)")
        }
        try await one.settle()
        try await two.settle()
        for text in ["document 1, edited after the backup", "written after the backup", "document 1 x", "document 2 xx"] {
            #expect(one.keeps(text) || two.keeps(text), "lost: \(text)")
        }
        #expect(FileManager.default.contents(atPath: server.path + "/after.txt") == Data("written after the backup".utf8), "what the server lost was not sent again")
    }

    /// Nextcloud #2913: the replica put back from an earlier copy (its marker's token is an old
    /// one) merges: its older files neither overwrite the server's newer ones nor delete anything.
    @Test(arguments: kinds)
    func aRestoredReplicaMerges(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let (one, two) = try await Self.synced(backend, count: 4)
        let snapshot = try TemporaryDirectory("folio-replica-snapshot")
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", one.root + "/.", snapshot.path]).status == 0)
        try one.write("doc1.txt", "document 1, edited after the copy")
        try one.write("new.txt", "new after the copy")
        try await one.settle()
        try await two.settle()
        for name in try FileManager.default.contentsOfDirectory(atPath: one.root) { try FileManager.default.removeItem(atPath: one.root + "/" + name) }
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", snapshot.path + "/.", one.root]).status == 0)
        let merged = try await one.sync()
        #expect(merged.merged && merged.uploaded == 0 && merged.deletedOnServer == 0 && merged.deletedHere == 0, "\(merged)")
        #expect(one.read("doc1.txt") == "document 1, edited after the copy" && one.read("new.txt") == "new after the copy")
        #expect(one.keeps("document 1 x"), "the restored bytes were not kept")
        #expect(try await two.sync().downloaded == 0, "the restored copy reached the other device")
        #expect(two.read("doc1.txt") == "document 1, edited after the copy")
    }

    /// A pass that records its progress along the way (every 500 results: here the folder and the 499 files in it) still
    /// renews the replica's token, so a copy from before it is known for one.
    @Test func aLongPassStillRenewsTheReplicaToken() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one")
        try one.write("first.txt", "first")
        try await one.settle()
        let snapshot = try TemporaryDirectory("folio-replica-snapshot")
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", one.root + "/.", snapshot.path]).status == 0)
        for index in 0..<499 { try one.write("many/\(index).txt", "file \(index)") }
        #expect(try await one.settle().uploaded == 499)
        for name in try FileManager.default.contentsOfDirectory(atPath: one.root) { try FileManager.default.removeItem(atPath: one.root + "/" + name) }
        #expect(try ProcessRunner.run(URL(fileURLWithPath: "/bin/cp"), ["-a", snapshot.path + "/.", one.root]).status == 0)
        let merged = try await one.sync()
        #expect(merged.merged && merged.deletedOnServer == 0 && merged.downloaded == 499, "\(merged)")
    }

    @Test(arguments: kinds)
    func aWipedReplicaStopsSyncAndDeletesNothing(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let (one, two) = try await Self.synced(backend, count: 4)
        let before = one.tree()
        for name in try FileManager.default.contentsOfDirectory(atPath: one.root) { try FileManager.default.removeItem(atPath: one.path(name)) }
        let error = await #expect(throws: SyncStop.self) { try await one.sync() }
        #expect("\(error.map { "\($0)" } ?? "")".contains("folio drive repair"))
        // The server kept everything: the other device still syncs it all.
        try await two.settle()
        #expect(two.tree() == before)
        try await one.engine.repair()
        let merged = try await one.sync()
        #expect(merged.merged && merged.downloaded == 4 && merged.deletedOnServer == 0, "\(merged)")
        #expect(one.tree() == before)
    }

    @Test(arguments: kinds)
    func aMassDeletionWaitsForConfirmation(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let (one, two) = try await Self.synced(backend, count: 8)
        for index in 0..<6 { try one.delete("doc\(index).txt") }
        let held = try await one.sync()
        #expect(held.heldDeletions == 6 && held.deletedOnServer == 0, "\(held)")
        _ = try await two.sync()
        #expect(two.tree().count == 8, "held deletions reached the other device")
        let confirmed = try await one.sync(confirmingDeletions: true)
        #expect(confirmed.deletedOnServer == 6, "\(confirmed)")
        // The other device sees six of eight go: held there too until its user confirms.
        let heldThere = try await two.sync()
        #expect(heldThere.heldDeletions == 6 && two.tree().count == 8, "\(heldThere)")
        let removed = try await two.sync(confirmingDeletions: true)
        #expect(removed.deletedHere == 6 && two.tree().count == 2, "\(removed)")
        #expect(two.keeps("document 0 "), "a confirmed remote deletion did not keep the local bytes as a version")
    }

    @Test(arguments: kinds)
    func aResetJournalMergesWithoutConflictsOrDeletions(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let (one, two) = try await Self.synced(backend, count: 5)
        try await two.journal.reset()
        try one.delete("doc4.txt")
        try await one.settle()
        let merged = try await two.sync()
        // doc4 is back on the server (a merge never deletes), and equal contents matched.
        #expect(merged.merged && merged.conflicts.isEmpty && merged.deletedHere == 0 && merged.deletedOnServer == 0, "\(merged)")
        #expect(merged.converged == 4 && merged.uploaded == 1, "\(merged)")
        try await one.settle()
        #expect(one.tree() == two.tree())
    }

    /// Syncthing #6252: a dormant device whose unchanged copy has a date a year ahead never
    /// overwrites a newer edit: the base says it is unchanged, so the edit comes down, no conflict.
    @Test(arguments: kinds)
    func aDormantDeviceNeverOverwritesNewer(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let (one, two) = try await Self.synced(backend, count: 2)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 86_400 * 365)], ofItemAtPath: two.path("doc0.txt"))
        try one.write("doc0.txt", "document 0, edited while two slept")
        try await one.settle()
        let woke = try await two.sync()
        #expect(woke.downloaded == 1 && woke.uploaded == 0 && woke.conflicts.isEmpty, "\(woke)")
        #expect(two.read("doc0.txt") == "document 0, edited while two slept")
        #expect(try await one.sync().downloaded == 0)
    }

    @Test(arguments: kinds)
    func touchAndModeChangesAreNoChange(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let (one, two) = try await Self.synced(backend, count: 3)
        for device in [one, two] {
            for index in 0..<3 {
                let path = device.path("doc\(index).txt")
                try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 86_400 * 365), .posixPermissions: 0o600], ofItemAtPath: path)
            }
        }
        for device in [one, two, one] {
            let report = try await device.sync()
            #expect(report.uploaded == 0 && report.downloaded == 0 && report.conflicts.isEmpty && report.converged == 0, "\(device.name): \(report)")
        }
    }
}

/// Conflict versions are bounded (Syncthing #2282): equal losers are one version; past ten
/// different ones the document waits for its user, and no loser is dropped.
@Suite("Conflict versions", .elasticPool)
struct ConflictBoundTests {
    @Test func conflictCopiesAreBounded() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one"), two = try await backend.device("two")
        try one.write("plan.txt", "the plan")
        try await one.settle()
        try await two.settle()
        var conflicts = 0
        for round in 0..<14 {
            try one.write("plan.txt", "the plan, round \(round) on one")
            try await one.settle()
            // Rounds 0–3 lose the same bytes on two; the others lose new ones each time.
            try two.write("plan.txt", round < 4 ? "two's plan, always the same" : "two's plan, round \(round)")
            let pass = try await two.sync()
            conflicts += pass.conflicts.count
            // Rounds 0–12 keep a loser each (1 for rounds 0–3, then 9 more: ten different ones);
            // round 13's would be the eleventh, so the document waits instead.
            if round < 13 {
                #expect(pass.conflicts.count == 1 && pass.deferred.isEmpty, "round \(round): \(pass)")
            } else {
                #expect(pass.conflicts.isEmpty && pass.deferred.keys.sorted() == ["plan.txt"], "round \(round): \(pass)")
                #expect(pass.deferred["plan.txt"]?.contains("unresolved conflict versions") == true, "round \(round): \(pass)")
            }
        }
        let kept = try two.conflicts("plan.txt")
        #expect(Set(kept).count == kept.count, "equal losers were kept twice: \(kept)")
        #expect(kept.count == SyncEngine.maximumConflictVersions && conflicts == SyncEngine.maximumConflictVersions + 3, "\(kept.count) \(conflicts)")
        let waiting = try await two.sync()
        #expect(waiting.deferred["plan.txt"]?.contains("unresolved conflict versions") == true, "\(waiting)")
        #expect(two.read("plan.txt") == "two's plan, round 13" && two.keeps("two's plan, round 13"), "the waiting loser was dropped")
    }
}

/// A conflict version kept on one device reaches the others (through `.folio/conflicts` on the
/// server): every device shows the same unresolved conflict, once.
@Suite("Shared conflict versions", .elasticPool)
struct SharedConflictTests {
    /// `plan.txt` synced to both devices, then edited on each: one's edit reaches the server first,
    /// and two's pass (returned) keeps its own as a conflict version.
    static func editBoth(_ one: SyncDevice, _ two: SyncDevice) async throws -> SyncReport {
        try one.write("plan.txt", "the plan")
        try await one.settle()
        try await two.settle()
        try one.write("plan.txt", "the plan, as one sees it")
        try await one.settle()
        try two.write("plan.txt", "the plan, as two sees it")
        return try await two.sync()
    }

    @Test(arguments: [SyncBackend.Kind.memory, .apache, .moto].filter(\.runs))
    func conflictVersionsReachEveryDevice(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one"), two = try await backend.device("two")
        let clash = try await Self.editBoth(one, two)
        let kept = try two.conflicts("plan.txt")
        #expect(clash.conflicts == ["plan.txt"] && kept == ["the plan, as two sees it"], "\(clash)")
        let told = try await one.sync()
        let shared = try one.conflicts("plan.txt")
        #expect(told.sharedConflicts == 1 && shared == ["the plan, as two sees it"], "\(told)")
        #expect(try await one.sync().sharedConflicts == 0, "a shared conflict was taken in twice")
        #expect(try await two.sync().sharedConflicts == 0, "a device took in its own conflict")
        let three = try await backend.device("three")
        try await three.settle()
        #expect(try three.conflicts("plan.txt") == ["the plan, as two sees it"] && three.read("plan.txt") == "the plan, as one sees it")

        // Resolved on one device, resolved on all (the bytes stay, as a resolved version).
        let (identity, records) = try one.versions.versions(ofItemAt: one.path("plan.txt"))
        for record in records where record.isConflict { try one.versions.markResolved(record.id, identity: identity, path: one.path("plan.txt")) }
        #expect(try await one.sync().resolvedConflicts == 0)
        for device in [two, three] {
            let pass = try await device.sync()
            let left = try device.conflicts("plan.txt")
            #expect(pass.resolvedConflicts == 1 && left.isEmpty && device.keeps("the plan, as two sees it"), "\(device.name): \(pass)")
        }
        #expect(try await one.sync() == SyncReport())
        #expect(try await two.sync() == SyncReport())
    }

    /// A shared conflict whose document is a placeholder here waits for the download without being
    /// fetched again every pass; once the document is downloaded, it gets the conflict version.
    @Test(.enabled(if: SyncBackend.Kind.apache.runs))
    func aConflictForAPlaceholderWaitsUnfetched() async throws {
        let backend = try SyncBackend(.apache, proxied: true)
        let proxy = try #require(backend.proxy)
        let one = try await backend.device("one"), two = try await backend.device("two")
        #expect(try await Self.editBoth(one, two).conflicts == ["plan.txt"])
        let three = try await backend.device("three", keepsEverything: false)
        #expect(try await three.settle().placeholders == 1)
        let manifestReads = { proxy.requests.filter { $0.hasPrefix("GET") && $0.contains("/conflicts/") && $0.hasSuffix(".json") }.count }
        let before = manifestReads()
        for _ in 0..<2 { #expect(try await three.sync().sharedConflicts == 0) }
        #expect(manifestReads() == before, "the manifest of a placeholder's conflict was fetched again: \(proxy.requests.suffix(20))")
        #expect(try await three.engine.materialize([SyncPath("plan.txt")], progress: Progress(totalUnitCount: 0)) == [SyncPath("plan.txt")])
        let pass = try await three.sync()
        let added = try three.conflicts("plan.txt")
        #expect(pass.sharedConflicts == 1 && added == ["the plan, as two sees it"], "\(pass)")
    }

    /// Manifests the server made up (a path out of the drive, bytes that are not what they are
    /// named, garbage) are refused, and add nothing anywhere.
    @Test func forgedManifestsAreRefused() async throws {
        let backend = try SyncBackend(.memory)
        let one = try await backend.device("one")
        try one.write("plan.txt", "the plan")
        try await one.settle()
        let provider = try backend.provider()
        let scratch = try TemporaryDirectory("folio-forged")
        let request = FileProviderRequest(temporaryDirectory: scratch.url)
        let listing = try await provider.enumerateItems(in: .workingSet, startingAt: .initialPageSortedByName, request: request).items
        let meta = try #require(listing.first { $0.filename == ".folio" })
        let folder = try await provider.createItem(
            basedOn: FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: meta.itemIdentifier, filename: "conflicts", contentType: .folder),
            fields: [.filename], contents: nil, options: [], request: request
        ).item!
        func put(_ name: String, _ data: Data) async throws {
            let file = scratch.child(UUID().uuidString)
            try data.write(to: file)
            _ = try await provider.createItem(
                basedOn: FileProviderItemRecord(itemIdentifier: FileProviderItemIdentifier("new"), parentItemIdentifier: folder.itemIdentifier, filename: name, contentType: .data),
                fields: [.filename, .contents], contents: file, options: [], request: request)
        }
        let claimed = String(repeating: "ab", count: 32)
        try await put(claimed, Data("not what it says".utf8))
        for path in ["../../outside.txt", "plan.txt"] {
            let manifest = SharedConflict(path: path, object: claimed, size: 16, device: "forger", date: 0)
            try await put(SharedConflict.manifestName(object: claimed, path: path), try JSONEncoder().encode(manifest))
        }
        try await put(String(repeating: "cd", count: 32) + "-" + String(repeating: "0", count: 16) + ".json", Data("{ not json".utf8))
        let pass = try await one.sync()
        let added = try one.conflicts("plan.txt")
        #expect(pass.sharedConflicts == 0 && added.isEmpty, "\(pass)")
        #expect(!FileManager.default.fileExists(atPath: one.home.child("outside.txt").path))
        #expect(try await one.sync().sharedConflicts == 0)
    }
}

/// A journal written by the previous schema (v4, before placeholders) is migrated, and the next
/// passes see nothing changed: no conflict flood (Syncthing #2067), no transfer.
@Suite("Journal upgrade", .elasticPool)
struct JournalUpgradeTests {
    @Test(arguments: [SyncBackend.Kind.memory, .apache].filter(\.runs))
    func upgradeCausesNoConflictFlood(kind: SyncBackend.Kind) async throws {
        let backend = try SyncBackend(kind)
        let one = try await backend.device("one")
        for index in 0..<20 { try one.write("Folder\(index % 3)/doc\(index).txt", "document \(index)") }
        try await one.settle()
        // Made a v4 journal: the v5, v6, v8 and v10 columns and tables dropped, the migrations forgotten.
        let database = one.home.child("index.sqlite").path
        let downgrade = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [
            database,
            "ALTER TABLE sync_base DROP COLUMN placeholder; ALTER TABLE sync_domains DROP COLUMN replica_token; DROP TABLE sync_pins; DROP TABLE sync_errors; DROP TABLE sync_conflicts_seen; DROP TABLE sync_unfinished; "
                + "DELETE FROM grdb_migrations WHERE identifier IN ('v5-placeholders', 'v6-unfinished-uploads', 'v8-transfer-hashes', 'v10-set-aside'); UPDATE meta SET value = '4' WHERE key = 'schema';",
        ])
        #expect(downgrade.status == 0, "\(downgrade.stderr)")
        try Data("folio replica: drive\n".utf8).write(to: URL(fileURLWithPath: one.root + "/" + LocalReplica.markerName))
        let journal = try SyncJournal(path: database, domain: "drive")
        try await journal.setPinned([.root], true)
        let engine = SyncEngine(provider: try backend.provider(), replica: LocalReplica(root: one.root), journal: journal, versions: one.versions)
        #expect(try await engine.sync() == SyncReport(), "the upgrade looked like a change")
        let two = try await backend.device("two")
        try await two.settle()
        try two.write("Folder1/doc1.txt", "document 1, changed elsewhere")
        try await two.settle()
        let pulled = try await engine.sync()
        #expect(pulled.downloaded == 1 && pulled.conflicts.isEmpty && pulled.uploaded == 0, "\(pulled)")
    }
}

/// One pass at a time: a second waits for the drive's lock without holding a thread (a wait of
/// the daemon's for a long pass stalls nothing else), this process's waiters in turn, and a
/// cancelled wait ends.
@Suite("The drive's lock", .elasticPool)
struct DriveLockTests {
    @Test(.timeLimit(.minutes(1)))
    func aSecondHolderWaitsAndACancelledWaitEnds() async throws {
        let dir = try TemporaryDirectory("drive-lock")
        let path = dir.path + "/drive.lock"
        let held = try await DriveLock.acquire(path)
        #expect(Self.descriptors(of: path) == 1)
        // A waiter of this process waits for its turn (the lock file not opened yet): only once it
        // is seen waiting is it cancelled or let in.
        let waiter = Task { try await DriveLock.acquire(path) }
        #expect(await eventually { DriveLock.waiting(at: path) == 1 }, "the waiter never started waiting")
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(DriveLock.waiting(at: path) == 0 && Self.descriptors(of: path) == 1, "the cancelled wait is still there")
        let second = Task { try await DriveLock.acquire(path) }
        #expect(await eventually { DriveLock.waiting(at: path) == 1 }, "the second never started waiting")
        // Another waits behind it: turns are taken in order.
        let behind = Task { try await DriveLock.acquire(path) }
        #expect(await eventually { DriveLock.waiting(at: path) == 2 }, "the one behind never started waiting")
        held.release()
        let taken = try await second.value
        #expect(Self.descriptors(of: path) == 1 && DriveLock.waiting(at: path) == 1)
        behind.cancel()
        await #expect(throws: CancellationError.self) { _ = try await behind.value }
        // Held again: a third waits.
        let third = Task { try await DriveLock.acquire(path) }
        #expect(await eventually { DriveLock.waiting(at: path) == 1 }, "the third never started waiting")
        third.cancel()
        await #expect(throws: CancellationError.self) { _ = try await third.value }
        taken.release()
        #expect(Self.descriptors(of: path) == 0 && DriveLock.waiting(at: path) == 0)
        // Free again: taken at once.
        try await DriveLock.acquire(path).release()
    }

    /// How many descriptors of this process have the file at `path` open.
    static func descriptors(of path: String) -> Int {
        let path = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
    }
}
