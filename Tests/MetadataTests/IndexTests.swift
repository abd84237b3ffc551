@testable import Folio
import FolioSystem
import FolioTesting
import FolioTestTraits
import Foundation
import SystemPackage
import Testing

@Suite("MetadataQuery through the daemon's index (§9 37–41)", .elasticPool)
struct DaemonQueryTests {
    /// 38 and 41 through the daemon: gathering in order, then every uncoordinated create, modify,
    /// delete and rename seen live; results carry the attributes and follow the sort.
    @Test func gathersThenSeesUncoordinatedChangesLive() async throws {
        let world = try await IndexWorld("index-live") { dir in
            for index in 0..<5000 { try dir.write("docs/many/\(index / 500)/file\(index).txt", "x") }
            try dir.write("docs/keep.txt", "1")
            try dir.write("docs/gone.txt", "1")
            try dir.write("docs/picture.png", "p")
        }
        try await world.waitUntilIdle()
        let query = try world.query("kMDItemFSName LIKE '*.txt'")
        query.sortDescriptors = [MetadataSortDescriptor(key: NSMetadataItemFSNameKey)]
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        #expect(query.resultCount == 5002)
        let names = recorder.names
        let finish = try #require(names.firstIndex(of: "finish"))
        #expect(names.first == "start" && names[1..<finish].allSatisfy { $0 == "progress" }, "\(names)")
        let first = try #require(query.result(at: 0) as? MetadataItem)
        #expect(first.value(forAttribute: NSMetadataItemFSNameKey) as? String == "file0.txt")
        #expect(first.value(forAttribute: NSMetadataItemURLKey) as? URL == world.docs.appendingPathComponent("many/0/file0.txt"))
        #expect((first.value(forAttribute: NSMetadataItemFSSizeKey) as? NSNumber)?.intValue == 1)
        #expect(first.value(forAttribute: NSMetadataItemContentTypeKey) as? String == "public.plain-text")
        #expect((first.value(forAttribute: NSMetadataItemContentTypeTreeKey) as? [String])?.contains("public.data") == true)
        #expect(first.value(forAttribute: NSMetadataItemFSContentChangeDateKey) is Date)

        let new = try world.dir.write("docs/folder/new.txt", "new")
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(new.path) } })
        try world.dir.write("docs/keep.txt", "changed, longer")
        #expect(await recorder.wait { recorder.updates.contains { $0.changed.contains(world.docs.appendingPathComponent("keep.txt").path) } })
        try FileManager.default.moveItem(at: world.docs.appendingPathComponent("gone.txt"), to: world.docs.appendingPathComponent("renamed.txt"))
        #expect(await recorder.wait {
            recorder.updates.contains { $0.removed.contains(world.docs.appendingPathComponent("gone.txt").path) }
                && recorder.updates.contains { $0.added.contains(world.docs.appendingPathComponent("renamed.txt").path) }
        })
        // A folder moved: its contents are removed at the old paths and added at the new ones.
        try FileManager.default.moveItem(at: world.docs.appendingPathComponent("many/3"), to: world.docs.appendingPathComponent("moved"))
        #expect(await recorder.wait {
            recorder.updates.contains { $0.added.contains(world.docs.appendingPathComponent("moved/file1500.txt").path) }
                && recorder.updates.contains { $0.removed.contains(world.docs.appendingPathComponent("many/3/file1500.txt").path) }
        })
        try FileManager.default.removeItem(at: world.docs.appendingPathComponent("folder"))
        #expect(await recorder.wait { recorder.updates.contains { $0.removed.contains(new.path) } })
        // A file created in the moved folder is seen under its new path (the watch followed it).
        let later = try world.dir.write("docs/moved/later.txt", "x")
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(later.path) } })
        #expect(await recorder.wait { query.resultCount == 5003 }, "\(query.resultCount)")
        query.stop()
        #expect(await recorder.wait { (try? world.send(IndexStatus())["queries"]?.intValue) == 0 })
    }

    /// 40 across processes: another process's coordinated create reaches the query through the
    /// daemon's arbiter, with the file system not watched at all.
    @Test func coordinatedWritesOfOtherProcessesAreStitchedIn() async throws {
        let world = try await IndexWorld("index-stitch", watch: false)
        try await world.waitUntilIdle()
        let query = try world.query("kMDItemFSName ENDSWITH '.txt'", interval: 0.2)
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        let target = world.docs.appendingPathComponent("stitched.txt")
        let started = Date()
        let writer = try ProcessRunner.folio(
            ["coordinate", "write", target.path, "--", "sh", "-c", "echo hello > '\(target.path)'"], environment: world.environment)
        #expect(writer.status == 0, "\(writer.stderr)")
        // Within a batching interval on an idle machine; the bound leaves room for a loaded one (the
        // latency itself is measured by `folio bench index`). The wait is longer than the bound, so
        // that an update arriving past it fails the bound rather than this wait.
        #expect(await recorder.wait(60) { recorder.updates.contains { $0.added.contains(target.path) } })
        let update = try #require(recorder.updates.first { $0.added.contains(target.path) })
        #expect(update.added == [target.path] && update.changed.isEmpty && update.removed.isEmpty, "\(update)")
        #expect(update.at.timeIntervalSince(started) < 20, "arrived after \(update.at.timeIntervalSince(started)) s")
        // An uncoordinated write is not seen: nothing watches the file system. A coordinated write
        // made after it is stitched in, and by then the uncoordinated one has not been seen.
        try world.dir.write("docs/unseen.txt", "x")
        let marker = world.docs.appendingPathComponent("marker.txt")
        let markerWriter = try ProcessRunner.folio(
            ["coordinate", "write", marker.path, "--", "sh", "-c", "echo marker > '\(marker.path)'"], environment: world.environment)
        #expect(markerWriter.status == 0, "\(markerWriter.stderr)")
        #expect(await recorder.wait(60) { recorder.updates.contains { $0.added.contains(marker.path) } })
        #expect(!recorder.updates.contains { $0.added.contains(world.docs.appendingPathComponent("unseen.txt").path) }, "\(recorder.updates)")
        // A lost-events report makes the index list everything again, and the write is found.
        _ = try world.send(IndexOverflow())
        #expect(await recorder.wait(10) { recorder.updates.contains { $0.added.contains(world.docs.appendingPathComponent("unseen.txt").path) } })
        // A coordinated move keeps the item (and what the index knows of it, such as its last use).
        _ = try world.send(RecentsAdd(path: target.path, event: "opened"))
        let moved = world.docs.appendingPathComponent("moved.txt")
        let mover = try ProcessRunner.folio(
            ["coordinate", "move", target.path, moved.path, "--", "mv", target.path, moved.path], environment: world.environment)
        #expect(mover.status == 0, "\(mover.stderr)")
        #expect(await recorder.wait(20) { recorder.updates.contains { $0.added.contains(moved.path) } })
        let item = try world.send(ItemFacts(path: moved.path))["item"]
        #expect(item?["u"] != nil, "the moved item lost its last-used date: \(String(describing: item))")
        query.stop()
    }

    /// 37 and 39 through the daemon: start rules, and updates held while disabled arrive as one.
    @Test func disabledUpdatesArriveInOneBatch() async throws {
        let world = try await IndexWorld("index-disable") { dir in try dir.write("docs/a.txt", "a") }
        try await world.waitUntilIdle()
        let query = try world.query("kMDItemFSName LIKE '*.txt'")
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(CoordinationEngine.$override.withValue(world.engine) { !query.start() })
        #expect(await recorder.wait { recorder.names.contains("finish") })
        query.disableUpdates()
        query.disableUpdates()
        try world.dir.write("docs/b.txt", "b")
        query.enableUpdates()
        try world.dir.write("docs/c.txt", "c")
        try FileManager.default.removeItem(at: world.docs.appendingPathComponent("a.txt"))
        // All three changes reach the query from the daemon, and the query holds them.
        let changed = Set(["a.txt", "b.txt", "c.txt"].map { world.docs.appendingPathComponent($0).path })
        #expect(await recorder.wait { query.heldPaths.isSuperset(of: changed) }, "held: \(query.heldPaths)")
        #expect(recorder.updates.isEmpty && query.resultCount == 1)
        query.enableUpdates()
        #expect(await recorder.wait { !recorder.updates.isEmpty })
        // A change made afterwards arrives as an update of its own; before it came the held changes
        // as one update, and nothing else.
        let later = try world.dir.write("docs/d.txt", "d")
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(later.path) } })
        let updates = recorder.updates
        try #require(updates.count == 2, "\(updates)")
        #expect(Set(updates[0].added) == [world.docs.appendingPathComponent("b.txt").path, world.docs.appendingPathComponent("c.txt").path])
        #expect(updates[0].removed == [world.docs.appendingPathComponent("a.txt").path] && updates[0].changed.isEmpty, "\(updates[0])")
        #expect(updates[1].added == [later.path] && updates[1].removed.isEmpty && updates[1].changed.isEmpty, "\(updates[1])")
        query.stop()
    }

    /// A live query survives a daemon restart: its process reconnects by itself, the new daemon
    /// runs the query again, and what changed while no daemon ran arrives as one update.
    @Test func liveQueriesComeBackAfterADaemonRestart() async throws {
        let world = try await IndexWorld("index-restart") { dir in
            try dir.write("docs/keep.txt", "1")
            try dir.write("docs/gone.txt", "1")
        }
        try await world.waitUntilIdle()
        let query = try world.query("kMDItemFSName LIKE '*.txt'")
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        world.kill(disconnecting: false)
        let during = try world.dir.write("docs/while-down.txt", "x")
        try FileManager.default.removeItem(at: world.docs.appendingPathComponent("gone.txt"))
        try world.restart()
        #expect(await recorder.wait(60) {
            recorder.updates.contains { $0.added.contains(during.path) && $0.removed.contains(world.docs.appendingPathComponent("gone.txt").path) }
        }, "\(recorder.updates)")
        let after = try world.dir.write("docs/after.txt", "x")
        #expect(await recorder.wait(20) { recorder.updates.contains { $0.added.contains(after.path) } })
        #expect(Set((query.results as? [MetadataItem])?.map(\.path) ?? []) == [world.docs.appendingPathComponent("keep.txt").path, during.path, after.path])
        query.stop()
    }

    /// A drive placeholder is indexed as its document, not downloaded (size, type and date from
    /// the stub; the document's bytes are never read), and becomes the document when it is
    /// materialized, keeping its row; a stub beside its document, or one that is not a stub, is
    /// not a second item.
    @Test func placeholdersAreIndexedAsTheirDocuments() async throws {
        let stub = PlaceholderStub(name: "report.pdf", size: 123_456, modified: 1_700_000_000, contentType: "com.adobe.pdf")
        let world = try await IndexWorld("index-placeholders") { dir in
            _ = try dir.write("docs/report.pdf.folio-cloud", stub.encoded())
            _ = try dir.write("docs/both.txt", "here")
            _ = try dir.write("docs/both.txt.folio-cloud", PlaceholderStub(name: "both.txt", size: 4, modified: nil, contentType: nil).encoded())
            _ = try dir.write("docs/junk.folio-cloud", "not a stub")
        }
        try await world.waitUntilIdle()
        let query = try world.query("kMDItemFSName == 'report.pdf' || kMDItemFSName BEGINSWITH 'both' || kMDItemFSName BEGINSWITH 'junk'")
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        let items = (query.results as? [MetadataItem]) ?? []
        #expect(Set(items.map(\.path)) == [world.docs.appendingPathComponent("report.pdf").path, world.docs.appendingPathComponent("both.txt").path])
        let report = try #require(items.first { $0.path.hasSuffix("report.pdf") })
        #expect((report.value(forAttribute: NSMetadataItemFSSizeKey) as? NSNumber)?.intValue == 123_456)
        #expect(report.value(forAttribute: NSMetadataItemContentTypeKey) as? String == "com.adobe.pdf")
        #expect(report.value(forAttribute: NSMetadataUbiquitousItemDownloadingStatusKey) as? String == NSMetadataUbiquitousItemDownloadingStatusNotDownloaded)
        let id = try world.sql("SELECT id FROM items WHERE name = 'report.pdf'")
        // Materialized: the document arrives, the stub goes; the row stays the document's.
        let content = Data(repeating: 7, count: 2048)
        let placed = try world.dir.write("docs/.report.pdf.download", content)
        try FileManager.default.moveItem(at: placed, to: world.docs.appendingPathComponent("report.pdf"))
        try FileManager.default.removeItem(at: world.docs.appendingPathComponent("report.pdf.folio-cloud"))
        #expect(await recorder.wait {
            (try? world.sql("SELECT size, download_status IS NULL FROM items WHERE name = 'report.pdf'")) == [["2048", "1"]]
        }, "\((try? world.sql("SELECT * FROM items WHERE name LIKE 'report%'")) ?? [])")
        #expect(try world.sql("SELECT id FROM items WHERE name = 'report.pdf'") == id)
        #expect(try world.sql("SELECT count(*) FROM items WHERE name LIKE '%folio-cloud'") == [["0"]])
        query.stop()
    }

    /// In the drive, a downloaded file is current and a placeholder's document not downloaded; both
    /// are ubiquitous. Outside the drive neither key is set. The in-process search says the same.
    @Test func driveItemsAreUbiquitousAndDownloadedOrNot() async throws {
        let world = try await IndexWorld("index-drive") { dir in
            _ = try dir.write("data/folio/Drive/Notes/today.txt", "written here")
            _ = try dir.write("data/folio/Drive/plan.pdf.folio-cloud", PlaceholderStub(name: "plan.pdf", size: 9_000, modified: nil, contentType: nil).encoded())
            _ = try dir.write("docs/local.txt", "not in the drive")
        }
        try await world.waitUntilIdle()
        let drive = world.dir.path + "/data/folio/Drive"
        let rows = try world.sql("SELECT name, download_status FROM items WHERE kind = 0 AND (path LIKE '\(drive)/%' OR path LIKE '\(world.docs.path)/%') ORDER BY name")
        #expect(rows == [
            ["local.txt", ""], ["plan.pdf", NSMetadataUbiquitousItemDownloadingStatusNotDownloaded], ["today.txt", NSMetadataUbiquitousItemDownloadingStatusCurrent],
        ], "\(rows)")
        let query = MetadataQuery()
        query.predicate = MetadataPredicate(format: "NSMetadataUbiquitousItemDownloadingStatusKey == 'NSMetadataUbiquitousItemDownloadingStatusCurrent' AND NSMetadataItemIsUbiquitousKey == YES")
        query.searchScopes = [URL(fileURLWithPath: drive), world.docs]
        let recorder = QueryRecorder(query)
        try world.start(query)
        #expect(await recorder.wait { recorder.names.contains("finish") })
        #expect(((query.results as? [MetadataItem]) ?? []).map(\.path) == [drive + "/Notes/today.txt"])
        query.stop()
        // The in-process rule, for the same files.
        for (path, expected) in [
            (drive + "/Notes/today.txt", NSMetadataUbiquitousItemDownloadingStatusCurrent), (world.docs.path + "/local.txt", nil),
        ] {
            let facts = try #require(MetadataFacts.item(path: path, name: (path as NSString).lastPathComponent, status: try FileStatus(path: FilePath(path)), driveRoot: drive))
            #expect(facts.downloadingStatus == expected && (facts.value(MetadataAttribute.isUbiquitous) != nil) == (expected != nil), "\(path)")
        }
        let stub = drive + "/plan.pdf.folio-cloud"
        let promised = try #require(MetadataFacts.item(path: stub, name: "plan.pdf.folio-cloud", status: try FileStatus(path: FilePath(stub)), driveRoot: drive))
        #expect(promised.downloadingStatus == NSMetadataUbiquitousItemDownloadingStatusNotDownloaded && promised.value(MetadataAttribute.isUbiquitous) == .bool(true))
    }

    /// The daemon's answers equal the in-process search's for the same predicates on the same
    /// tree: the SQL only narrows, the predicate decides.
    @Test func daemonAndInProcessAgree() async throws {
        let names = [
            "Report.txt", "report final.TXT", "Café au lait.md", "CAFE.md", "naïve résumé.pdf", "big.bin", "photo.JPG", "x.png",
            "50%_off.txt", "under_score.txt", "back\\slash.txt", "star*name.txt", "K\u{212A}elvin.txt", "e\u{301}cole.txt", "école.txt",
        ]
        let world = try await IndexWorld("index-agree") { dir in
            for (index, name) in names.enumerated() { try dir.write("docs/sub\(index % 3)/\(name)", String(repeating: "x", count: index * 100)) }
            try dir.write("docs/empty/.hidden", "")
            // Typed by its bytes, to both.
            try dir.write("docs/sub0/screenshot", Data(ThumbnailTests.png))
            // A placeholder is its document, to both; a stub beside its document is nothing.
            _ = try dir.write("docs/sub1/cloud report.pdf.folio-cloud", PlaceholderStub(name: "cloud report.pdf", size: 123_456, modified: 1_700_000_000, contentType: "com.adobe.pdf").encoded())
            try dir.write("docs/sub2/here.txt", "here!")
            _ = try dir.write("docs/sub2/here.txt.folio-cloud", PlaceholderStub(name: "here.txt", size: 5, modified: nil, contentType: nil).encoded())
        }
        try FileTags.setTags(["Work", "red"], of: world.docs.appendingPathComponent("sub0/Report.txt"))
        try FileTags.setTags(["home"], of: world.docs.appendingPathComponent("sub0/CAFE.md"))
        try await world.waitUntilIdle()
        let formats = [
            "kMDItemFSName CONTAINS[cd] 'cafe'", "kMDItemFSName CONTAINS 'Caf'", "kMDItemFSName BEGINSWITH[c] 'report'",
            "kMDItemFSName ENDSWITH[c] '.txt'", "kMDItemFSName LIKE[c] '*e?o*'", "kMDItemFSName LIKE '50%*'", "kMDItemFSName CONTAINS '_'",
            "kMDItemFSName CONTAINS '\\\\'", "kMDItemFSName LIKE 'star\\\\*name.txt'", "kMDItemFSName LIKE 'back\\\\\\\\slash*'",
            "kMDItemFSName ==[cd] 'ecole.txt'",
            "kMDItemFSName == 'école.txt'", "kMDItemFSName CONTAINS[c] 'kkelvin'", "kMDItemFSName MATCHES '.*[0-9]+.*'",
            "kMDItemFSSize > 500", "kMDItemFSSize >= 500 AND kMDItemFSSize <= 900", "NOT kMDItemFSSize BETWEEN {100, 1000}",
            "kMDItemFSSize IN {0, 300, 700}", "kMDItemContentTypeTree == 'public.image'", "kMDItemContentTypeTree == 'public.text'",
            "kMDItemContentType == 'public.folder'", "kMDItemContentType != 'public.folder'", "NOT kMDItemContentType == 'public.plain-text'",
            "kMDItemUserTags == 'red'", "kMDItemUserTags ==[c] 'WORK'", "kMDItemUserTags CONTAINS 'o'",
            "NOT kMDItemUserTags == 'red'", "kMDItemLastUsedDate == nil", "kMDItemFavoriteRank != 3", "kMDItemFSName != 'CAFE.md'",
            "kMDItemPath BEGINSWITH '\(world.docs.path)/sub1'", "kMDItemFSName == 'CAFE.md' OR kMDItemFSSize < 200",
            "NOT (kMDItemFSName CONTAINS[c] 'e' OR kMDItemFSSize > 1000)", "TRUEPREDICATE", "FALSEPREDICATE",
            "kMDItemFSContentChangeDate > CAST(0, 'NSDate')",
            "NSMetadataUbiquitousItemDownloadingStatusKey == 'NSMetadataUbiquitousItemDownloadingStatusNotDownloaded'",
            "kMDItemFSName ENDSWITH 'folio-cloud'", "kMDItemFSName BEGINSWITH[c] 'cloud' AND kMDItemFSSize == 123456",
        ]
        // Some answers checked outright, so that agreement cannot come from both finding nothing.
        let expected = [
            "kMDItemFSName CONTAINS[cd] 'cafe'": 2, "kMDItemFSName ==[cd] 'ecole.txt'": 2, "kMDItemUserTags == 'red'": 1,
            "kMDItemUserTags ==[c] 'WORK'": 1, "kMDItemContentTypeTree == 'public.image'": 3, "kMDItemFSName LIKE '50%*'": 1,
            "kMDItemFSName CONTAINS '_'": 2, "kMDItemFSName LIKE 'star\\\\*name.txt'": 1, "kMDItemFSName LIKE 'back\\\\\\\\slash*'": 1,
            "TRUEPREDICATE": names.count + 8, "FALSEPREDICATE": 0, "kMDItemFSSize IN {0, 300, 700}": 8,
            "NSMetadataUbiquitousItemDownloadingStatusKey == 'NSMetadataUbiquitousItemDownloadingStatusNotDownloaded'": 1,
            "kMDItemFSName ENDSWITH 'folio-cloud'": 0, "kMDItemFSName BEGINSWITH[c] 'cloud' AND kMDItemFSSize == 123456": 1,
        ]
        for format in formats {
            let predicate = MetadataPredicate(format: format)
            let local = try await results(predicate, scope: world.docs, engine: nil, world: world)
            let daemon = try await results(predicate, scope: world.docs, engine: world.engine, world: world)
            #expect(local == daemon, "\(format): in process \(local.sorted()), daemon \(daemon.sorted())")
            if let count = expected[format] { #expect(daemon.count == count, "\(format): \(daemon.sorted())") }
        }
        // Spotlight's query strings, word by word too.
        let queries = [
            "kMDItemFSName == \"report\"wc": 3, "kMDItemFSName == \"caf*\"cdw": 2, "* == \"ecole\"cdw": 2,
            "kMDItemFSName == \"*.txt\"c && kMDItemFSSize > 1000": 4, "kMDItemFSName == \"final\"w": 1,
        ]
        for (query, count) in queries {
            let predicate = try MetadataPredicate(metadataQueryString: query)
            let local = try await results(predicate, scope: world.docs, engine: nil, world: world)
            let daemon = try await results(predicate, scope: world.docs, engine: world.engine, world: world)
            #expect(local == daemon, "\(query): in process \(local.sorted()), daemon \(daemon.sorted())")
            #expect(daemon.count == count, "\(query): \(daemon.sorted())")
        }
    }

    private func results(_ predicate: MetadataPredicate, scope: URL, engine: DaemonCoordinationEngine?, world: IndexWorld) async throws -> Set<String> {
        let query = MetadataQuery()
        query.predicate = predicate
        query.searchScopes = [scope]
        let recorder = QueryRecorder(query)
        if let engine {
            try world.start(query)
            _ = engine
        } else {
            #expect(CoordinationEngine.$override.withValue(LocalCoordinationEngine()) { query.start() })
        }
        #expect(await recorder.wait { recorder.names.contains("finish") })
        defer { query.stop() }
        return Set((query.results as? [MetadataItem])?.map(\.path) ?? [])
    }
}

@Suite("The daemon's index from the command line", .elasticPool)
struct IndexCommandTests {
    @Test func statusSearchRecentsFavoritesAndRebuild() async throws {
        let world = try await IndexWorld("index-cli") { dir in
            try dir.write("docs/Quarterly Report.txt", "q")
            try dir.write("docs/archive/old report.txt", "o")
            try dir.write("docs/other.md", "m")
        }
        let status = try ProcessRunner.folio(["index", "status", "--wait"], environment: world.environment)
        #expect(status.status == 0 && status.stdout.contains("state: idle") && status.stdout.contains("root: \(world.docs.path) (user"), "\(status)")
        let search = try ProcessRunner.folio(["search", "REPORT"], environment: world.environment)
        // Neither name starts with the text and neither was used: the shorter name comes first.
        #expect(search.status == 0 && search.stdout == world.docs.path + "/archive/old report.txt\n" + world.docs.path + "/Quarterly Report.txt\n", "\(search)")
        // One or two characters: the names that start with them (case and accents aside), the
        // shorter first.
        let short = try ProcessRunner.folio(["search", "Ö"], environment: world.environment)
        #expect(short.status == 0 && short.stdout == world.docs.path + "/other.md\n" + world.docs.path + "/archive/old report.txt\n", "\(short)")
        let two = try ProcessRunner.folio(["search", "qu"], environment: world.environment)
        #expect(two.status == 0 && two.stdout == world.docs.path + "/Quarterly Report.txt\n", "\(two)")
        let none = try ProcessRunner.folio(["search", "zzz"], environment: world.environment)
        #expect(none.status == 0 && none.stdout.isEmpty && none.stderr.contains("nothing found"))
        _ = try world.send(RecentsAdd(path: world.docs.path + "/other.md", event: "opened"))
        let recents = try ProcessRunner.folio(["recents"], environment: world.environment)
        #expect(recents.stdout.contains("opened") && recents.stdout.contains("/other.md"), "\(recents)")
        #expect(try ProcessRunner.folio(["favorites", "add", world.docs.path + "/archive"], environment: world.environment).status == 0)
        #expect(try ProcessRunner.folio(["favorites"], environment: world.environment).stdout == world.docs.path + "/archive\n")
        let rank = try world.send(ItemFacts(path: world.docs.path + "/archive"))["item"]?["f"]?.intValue
        #expect(rank == 1)
        // Several at once, the first named first; removed together.
        #expect(try ProcessRunner.folio(["favorites", "add", world.docs.path, world.docs.path + "/archive"], environment: world.environment).status == 0)
        #expect(try ProcessRunner.folio(["favorites"], environment: world.environment).stdout == world.docs.path + "\n" + world.docs.path + "/archive\n")
        #expect(try ProcessRunner.folio(["favorites", "remove", world.docs.path, world.docs.path + "/archive"], environment: world.environment).status == 0)
        #expect(try ProcessRunner.folio(["favorites"], environment: world.environment).stdout == "")
        #expect(try ProcessRunner.folio(["index", "rebuild"], environment: world.environment).status == 0)
        try await world.waitUntilIdle()
        #expect(try ProcessRunner.folio(["search", "quarterly"], environment: world.environment).stdout.contains("Quarterly Report.txt"))
        let bad = try ProcessRunner.folio(["index", "remove", "/nowhere"], environment: world.environment)
        #expect(bad.status != 0 && bad.stderr.contains("is not a folder added to the index"), "\(bad)")
    }
}

extension IndexCommandTests {
    /// `folio` is a small front that answers `search` itself and hands everything else to
    /// `folio-tool`: both print the same bytes for every form of the command, and the front hands
    /// over (here to `/bin/false`, which prints nothing) exactly the forms it does not handle.
    @Test func theFrontAnswersSearchAsTheToolDoes() async throws {
        let world = try await IndexWorld("index-front") { dir in
            try dir.write("docs/Quarterly Report.txt", "the quarterly figures")
            try dir.write("docs/archive/old report.txt", "an old report")
            try dir.write("docs/-dash.txt", "")
        }
        try await world.waitUntilIdle()
        let tool = ProcessRunner.builtExecutable("folio-tool")
        let answered: [[String]] = [
            ["search", "REPORT"], ["search", "--limit", "1", "report"], ["search", "--limit=1", "report"],
            ["search", "report", "--json"], ["search", "-c", "figures"], ["search", "--content", "--", "-dash"], ["search", "zzz"],
        ]
        let handedOver: [[String]] = [
            ["search", "--limit", "0", "report"], ["search", "--help"], ["search"], ["search", "a", "b"], ["search", "--json", "--json", "x"],
            ["search", "--limit", "many", "x"], ["favorites"],
        ]
        for arguments in answered + handedOver {
            let front = try ProcessRunner.folio(arguments, environment: world.environment)
            let whole = try ProcessRunner.run(tool, arguments, environment: world.environment)
            #expect(front.status == whole.status && front.stdout == whole.stdout && front.stderr == whole.stderr, "\(arguments): \(front) against \(whole)")
            let alone = try ProcessRunner.folio(arguments, environment: world.environment.merging(["FOLIO_TOOL": "/bin/false"]) { $1 })
            let handled = answered.contains(arguments)
            #expect(handled ? alone.stdout == whole.stdout && alone.status == whole.status : alone.status == 1 && alone.stdout.isEmpty, "\(arguments): \(alone)")
        }
        #expect(try ProcessRunner.folio(["search", "report"], environment: world.environment).stdout.split(separator: "\n").count == 2)
    }
}

/// A plain text document, for recents recorded by opening and saving.
final class NoteDocument: Document, @unchecked Sendable {
    private let textLock = NSLock()
    private var storedText = ""
    var text: String {
        get { textLock.withLock { storedText } }
        set { textLock.withLock { storedText = newValue } }
    }

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        text = String(decoding: contents as? Data ?? Data(), as: UTF8.self)
    }
}

@Suite("Recents: Folio's documents and GTK's list", .elasticPool)
struct RecentsTests {
    @Test func gtkRecentsAndFolioDocumentsAppear() async throws {
        let world = try await IndexWorld("index-recents") { dir in
            try dir.write("docs/report.txt", "r")
            try FileManager.default.createDirectory(atPath: dir.path + "/data", withIntermediateDirectories: true)
            try Data(gtkRecents.utf8).write(to: URL(fileURLWithPath: dir.path + "/data/recently-used.xbel"))
        }
        try await world.waitUntilIdle()
        func recents() throws -> [WireValue] { try world.send(Recents(limit: 50))["items"]?.arrayValue ?? [] }
        // Read at start.
        let first = try recents()
        #expect(first.first?["path"]?.stringValue == "/home/u/a&b.odt" && first.first?["app"]?.stringValue == "Evince" && first.first?["source"]?.stringValue == "gtk", "\(first)")
        // Rewritten (atomically, as GLib does) while the daemon runs.
        let report = world.docs.appendingPathComponent("report.txt").path
        let stamp = ISO8601DateFormatter().string(from: Date())
        let rewritten = gtkRecents.replacingOccurrences(
            of: "<!-- web pages are not files -->",
            with: "<bookmark href=\"file://\(report)\" added=\"\(stamp)\" modified=\"\(stamp)\" visited=\"\(stamp)\"/>")
        let xbel = URL(fileURLWithPath: world.dir.path + "/data/recently-used.xbel")
        try Data(rewritten.utf8).write(to: xbel, options: .atomic)
        var found = false
        for _ in 0..<500 where !found {
            found = try recents().contains { $0["path"]?.stringValue == report && $0["source"]?.stringValue == "gtk" }
            if !found { try await Task.sleep(for: .milliseconds(20)) }
        }
        let afterRewrite = try recents()
        #expect(found, "\(afterRewrite)")
        let item = try world.send(ItemFacts(path: report))["item"]
        #expect(item?["u"] != nil, "the item's last-used date was not set")
        // A broken list is refused whole and changes nothing.
        let before = try recents()
        let mark = world.daemon.logLength
        try Data("<xbel><bookmark href='file:///x".utf8).write(to: xbel, options: .atomic)
        // The daemon has read it (and refused it) once it says so.
        #expect(await eventually { world.daemon.log(after: mark).contains("GTK's recents were not read") }, "\(world.daemon.log.suffix(1000))")
        let afterBroken = try recents()
        #expect(afterBroken == before)
        // A document opened and saved through Folio: among the recents, and written back to GTK's
        // list (a good one again), where GTK apps see it.
        try Data(rewritten.utf8).write(to: xbel, options: .atomic)
        let notes = try world.dir.write("docs/notes.txt", "hello")
        let document = CoordinationEngine.$override.withValue(world.engine) { NoteDocument(fileURL: notes) }
        #expect(await document.open())
        var opened = false
        for _ in 0..<500 where !opened {
            opened = try recents().first.map { $0["path"]?.stringValue == notes.path && $0["event"]?.stringValue == "opened" && $0["source"]?.stringValue == "folio" } ?? false
            if !opened { try await Task.sleep(for: .milliseconds(20)) }
        }
        let latest = try recents().prefix(3)
        #expect(opened, "\(latest)")
        document.text = "hello again"
        document.updateChangeCount(.done)
        #expect(await document.autosave())
        var modified = false
        for _ in 0..<500 where !modified {
            modified = try recents().first.map { $0["path"]?.stringValue == notes.path && $0["event"]?.stringValue == "modified" } ?? false
            if !modified { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(modified)
        #expect(await document.close())
        let written = try RecentlyUsedList(bytes: Array(try Data(contentsOf: xbel)))
        #expect(written.entries.first?.path == notes.path && written.entries.first?.application == "Folio", "\(written.entries.prefix(2)) \(world.daemon.log.suffix(2000))")
        #expect(written.entries.map(\.path).contains("/home/u/a&b.odt"), "GTK's own entries stay")
        let listed = try RecentlyUsedListTests.parsedByPython(Array(try Data(contentsOf: xbel)), in: world.dir)
        #expect(listed[URL(fileURLWithPath: notes.path).absoluteString]?.0 == "text/plain")
        #expect(listed[URL(fileURLWithPath: notes.path).absoluteString]?.1 == ["Folio": "2"], "opened, then modified")
    }
}
