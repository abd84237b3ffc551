@testable import Folio
import FolioTesting
import FolioTestTraits
import Foundation
import Testing

/// Records a query's events with the time each arrived.
final class QueryRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var events: [(MetadataQueryEvent, Date)] = []
    private var task: Task<Void, Never>?

    init(_ query: MetadataQuery) {
        let stream = query.events
        task = Task { [weak self] in
            for await event in stream { self?.lock.withLock { self?.events.append((event, Date())) } }
        }
    }

    deinit { task?.cancel() }

    var all: [(MetadataQueryEvent, Date)] { lock.withLock { events } }

    var names: [String] {
        all.map { event, _ in
            switch event {
            case .didStartGathering: "start"
            case .gatheringProgress: "progress"
            case .didFinishGathering: "finish"
            case .didUpdate: "update"
            }
        }
    }

    var updates: [(added: [String], changed: [String], removed: [String], at: Date)] {
        all.compactMap { event, date in
            guard case .didUpdate(let added, let changed, let removed) = event else { return nil }
            return (added.map(\.path), changed.map(\.path), removed.map(\.path), date)
        }
    }

    /// Waits (suspending) until `condition` holds or `seconds` pass. The default is long: with the
    /// whole suite running on two cores, a dispatch queue's work can wait many seconds for a thread;
    /// a wait that succeeds returns as soon as it does.
    func wait(_ seconds: Double = 30, until condition: () -> Bool) async -> Bool {
        await eventually(seconds, condition)
    }
}

@Suite("MetadataQuery in process (§9 37–41)", .elasticPool)
struct MetadataQueryTests {
    private func makeQuery(_ dir: TemporaryDirectory, _ format: String = "kMDItemFSName LIKE '*.txt'", interval: TimeInterval = 0.1) throws
        -> MetadataQuery
    {
        let query = MetadataQuery()
        query.predicate = MetadataPredicate(format: format)
        query.searchScopes = [dir.url]
        query.notificationBatchingInterval = interval
        return query
    }

    /// 37. `start()` is false without a predicate and when already started.
    @Test func startNeedsAPredicateAndStartsOnce() throws {
        let dir = try TemporaryDirectory("query-start")
        let query = MetadataQuery()
        query.searchScopes = [dir.url]
        #expect(!query.start())
        query.predicate = .truePredicate
        #expect(query.start())
        #expect(!query.start())
        #expect(query.isStarted)
        query.stop()
        #expect(query.isStopped && !query.isStarted)
        let mixed = MetadataQuery()
        mixed.predicate = .truePredicate
        mixed.searchScopes = [dir.url, NSMetadataQueryUbiquitousDocumentsScope]
        #expect(!mixed.start(), "ubiquitous and local scopes cannot mix")
    }

    /// 38. didStartGathering → gatheringProgress* → didFinishGathering → didUpdate, also as
    /// notifications on `NotificationCenter.default` with the query as object.
    @Test func notificationsComeInOrder() async throws {
        let dir = try TemporaryDirectory("query-order")
        for index in 0..<12_000 { try dir.write("many/\(index / 1000)/file\(index).txt", "x") }
        let query = try makeQuery(dir)
        let recorder = QueryRecorder(query)
        let posted = NotificationLog(query)
        #expect(query.start())
        #expect(await recorder.wait { recorder.names.contains("finish") })
        #expect(query.resultCount == 12_000)
        try dir.write("late.txt", "new")
        #expect(await recorder.wait { recorder.names.contains("update") })
        let names = recorder.names
        #expect(names.first == "start" && names.contains("progress"), "\(names)")
        let finish = try #require(names.firstIndex(of: "finish"))
        #expect(names[1..<finish].allSatisfy { $0 == "progress" } && names[(finish + 1)...].allSatisfy { $0 == "update" }, "\(names)")
        #expect(await recorder.wait { posted.names.count == names.count })
        #expect(posted.names == [
            .NSMetadataQueryDidStartGathering,
        ] + Array(repeating: .NSMetadataQueryGatheringProgress, count: finish - 1) + [.NSMetadataQueryDidFinishGathering]
            + Array(repeating: .NSMetadataQueryDidUpdate, count: names.count - finish - 1))
        #expect(posted.lastUserInfoKeys.contains(NSMetadataQueryUpdateAddedItemsKey))
        query.stop()
    }

    /// 39. disableUpdates nests: nothing is posted until the last enableUpdates, which posts the
    /// held changes in one batch.
    @Test func disabledUpdatesNestAndArriveInOneBatch() async throws {
        let dir = try TemporaryDirectory("query-disable")
        try dir.write("a.txt", "a")
        let query = try makeQuery(dir, interval: 0.05)
        let recorder = QueryRecorder(query)
        #expect(query.start())
        #expect(await recorder.wait { recorder.names.contains("finish") })
        query.disableUpdates()
        query.disableUpdates()
        try dir.write("b.txt", "b")
        query.enableUpdates()
        try dir.write("c.txt", "c")
        try FileManager.default.removeItem(at: dir.child("a.txt"))
        // All three changes reach the query, which holds them.
        let changed: Set = [dir.child("a.txt").path, dir.child("b.txt").path, dir.child("c.txt").path]
        #expect(await recorder.wait { query.heldPaths.isSuperset(of: changed) }, "held: \(query.heldPaths)")
        #expect(recorder.updates.isEmpty, "updates were posted while disabled")
        #expect(query.resultCount == 1, "the results changed while disabled")
        query.enableUpdates()
        #expect(await recorder.wait { !recorder.updates.isEmpty })
        // A change made afterwards arrives as an update of its own; before it came the held changes
        // as one update, and nothing else.
        try dir.write("d.txt", "d")
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(dir.child("d.txt").path) } })
        let updates = recorder.updates
        try #require(updates.count == 2, "\(updates)")
        #expect(
            Set(updates[0].added) == [dir.child("b.txt").path, dir.child("c.txt").path] && updates[0].removed == [dir.child("a.txt").path]
                && updates[0].changed.isEmpty, "\(updates[0])")
        #expect(updates[1].added == [dir.child("d.txt").path] && updates[1].removed.isEmpty && updates[1].changed.isEmpty, "\(updates[1])")
        query.stop()
    }

    /// 40. Stitching: a coordinated create shows up as added within one batching interval — with
    /// the file system not watched at all, so nothing but the coordinated write can report it.
    @Test func coordinatedWritesAreStitchedIn() async throws {
        let dir = try TemporaryDirectory("query-stitch")
        let query = try makeQuery(dir, interval: 0.2)
        let recorder = QueryRecorder(query)
        LocalMetadataSearch.$watchesFileSystem.withValue(false) { #expect(query.start()) }
        #expect(await recorder.wait { recorder.names.contains("finish") })
        let target = dir.child("stitched.txt")
        let started = Date()
        var error: NSError?
        FileCoordinator(filePresenter: nil, engine: LocalCoordinationEngine()).coordinate(writingItemAt: target, options: [], error: &error) { url in
            try? Data("hello".utf8).write(to: url)
        }
        #expect(error == nil)
        // Waited for longer than the bound below, so that an update arriving past it fails that
        // check rather than this wait.
        #expect(await recorder.wait(60) { recorder.updates.contains { $0.added.contains(target.path) } })
        let update = try #require(recorder.updates.first { $0.added.contains(target.path) })
        #expect(update.added == [target.path] && update.changed.isEmpty && update.removed.isEmpty, "\(update)")
        // One interval on an idle machine (about 0.2 s here); the bound leaves room for a loaded one —
        // the latency itself is measured by `folio bench`, not here.
        #expect(update.at.timeIntervalSince(started) < 30, "arrived after \(update.at.timeIntervalSince(started)) s")
        // An uncoordinated write is not reported without the watcher: a coordinated write made after
        // it is reported, and by then the uncoordinated one has not been.
        try dir.write("unseen.txt", "x")
        let marker = dir.child("marker.txt")
        FileCoordinator(filePresenter: nil, engine: LocalCoordinationEngine()).coordinate(writingItemAt: marker, options: [], error: &error) { url in
            try? Data("marker".utf8).write(to: url)
        }
        #expect(error == nil)
        #expect(await recorder.wait(60) { recorder.updates.contains { $0.added.contains(marker.path) } })
        #expect(!recorder.updates.contains { $0.added.contains(dir.child("unseen.txt").path) }, "\(recorder.updates)")
        query.stop()
    }

    /// 41. Each result has FSName, URL, FSSize, FSContentChangeDate and ContentType; results follow
    /// the sort descriptors; value lists and groups.
    @Test func resultsCarryAttributesAndFollowTheSortDescriptors() async throws {
        let dir = try TemporaryDirectory("query-results")
        try dir.write("b.txt", "bb")
        try dir.write("a.txt", "aaaa")
        try dir.write("sub/c.txt", "c")
        try dir.write("d.png", "png")
        let query = try makeQuery(dir)
        query.sortDescriptors = [MetadataSortDescriptor(key: NSMetadataItemFSSizeKey, ascending: false)]
        query.valueListAttributes = [NSMetadataItemContentTypeKey]
        query.groupingAttributes = [NSMetadataItemContentTypeKey]
        let recorder = QueryRecorder(query)
        #expect(query.start())
        #expect(await recorder.wait { recorder.names.contains("finish") })
        #expect(query.resultCount == 3)
        let names = (0..<query.resultCount).map { query.value(ofAttribute: NSMetadataItemFSNameKey, forResultAt: $0) as? String }
        #expect(names == ["a.txt", "b.txt", "c.txt"])
        let first = try #require(query.result(at: 0) as? MetadataItem)
        #expect(first.value(forAttribute: NSMetadataItemURLKey) as? URL == dir.child("a.txt"))
        #expect(first.value(forAttribute: NSMetadataItemFSSizeKey) as? Int == 4)
        #expect(first.value(forAttribute: NSMetadataItemContentTypeKey) as? String == "public.plain-text")
        #expect((first.value(forAttribute: NSMetadataItemContentTypeTreeKey) as? [String])?.contains("public.text") == true)
        let modified = try FileManager.default.attributesOfItem(atPath: dir.child("a.txt").path)[.modificationDate] as? Date
        #expect(abs((first.value(forAttribute: NSMetadataItemFSContentChangeDateKey) as? Date)?.timeIntervalSince(modified!) ?? 99) < 0.001)
        #expect(query.index(ofResult: first) == 0)
        query.sortDescriptors = [MetadataSortDescriptor(key: NSMetadataItemFSNameKey)]
        #expect((query.results as? [MetadataItem])?.compactMap { $0.value(forAttribute: NSMetadataItemFSNameKey) as? String } == ["a.txt", "b.txt", "c.txt"])
        #expect(query.valueLists[NSMetadataItemContentTypeKey]?.first?.count == 3)
        #expect(query.groupedResults.count == 1 && query.groupedResults[0].resultCount == 3)
        query.stop()
    }

    /// A result without the sort's attribute orders as NSSortDescriptor orders nil: smallest,
    /// so first when ascending and last when descending (a search by relevance, highest first,
    /// ends with the results that have none).
    @Test func resultsWithoutTheValueSortAsSmallest() {
        func item(_ name: String, _ relevance: Double?) -> MetadataItem {
            MetadataItem(facts: MetadataFacts(path: "/r/" + name, name: name, kind: .regular, size: 1, modified: 0, relevance: relevance))
        }
        let items = [item("low", 0.2), item("none", nil), item("high", 0.8), item("also-none", nil)]
        func sorted(ascending: Bool) -> [String] {
            let key = MetadataSortDescriptor(key: NSMetadataQueryResultContentRelevanceAttribute, ascending: ascending)
            return MetadataQuery.sort(items, by: [key]).map { $0.path.replacingOccurrences(of: "/r/", with: "") }
        }
        // Equal values (both nil here) keep the order of their paths.
        #expect(sorted(ascending: true) == ["also-none", "none", "low", "high"])
        #expect(sorted(ascending: false) == ["high", "low", "also-none", "none"])
    }

    /// Apple's delegate replaces results and values; `searchItems` limits the results to some
    /// items and folders; `enumerateResults` walks them, in reverse too, and stops when asked.
    @Test func delegateSearchItemsAndEnumeration() async throws {
        let dir = try TemporaryDirectory("query-delegate")
        try dir.write("a.txt", "aaaa")
        try dir.write("b.txt", "bb")
        try dir.write("sub/c.txt", "c")
        try dir.write("sub/deeper/d.txt", "d")
        try dir.write("other/e.txt", "e")
        final class Names: MetadataQueryDelegate {
            func metadataQuery(_ query: MetadataQuery, replacementObjectForResultObject result: MetadataItem) -> Any {
                (result.value(forAttribute: NSMetadataItemFSNameKey) as? String ?? "?") as NSString
            }
            func metadataQuery(_ query: MetadataQuery, replacementValueForAttribute attrName: String, value attrValue: Any) -> Any {
                attrName == NSMetadataItemFSSizeKey ? "\(attrValue) bytes" : attrValue
            }
        }
        let query = try makeQuery(dir)
        query.sortDescriptors = [MetadataSortDescriptor(key: NSMetadataItemFSNameKey)]
        query.searchItems = [dir.child("a.txt"), dir.child("sub").path]
        let names = Names()
        query.delegate = names
        let recorder = QueryRecorder(query)
        #expect(query.start())
        #expect(await recorder.wait { recorder.names.contains("finish") })
        #expect((query.results as? [NSString])?.map { String(describing: $0) } == ["a.txt", "c.txt", "d.txt"])
        #expect(query.value(ofAttribute: NSMetadataItemFSSizeKey, forResultAt: 0) as? String == "4 bytes")
        let second = query.result(at: 1)
        #expect(query.index(ofResult: second) == 1)
        var seen: [String] = []
        query.enumerateResults(options: .reverse) { result, index, stop in
            seen.append("\(index):\(result)")
            if index == 1 { stop.pointee = true }
        }
        #expect(seen == ["2:d.txt", "1:c.txt"])
        // A file made outside the items is not a result; one inside is.
        try dir.write("outside.txt", "x")
        try dir.write("sub/new.txt", "x")
        #expect(await recorder.wait { query.resultCount == 4 })
        #expect((query.results as? [NSString])?.map { String(describing: $0) } == ["a.txt", "c.txt", "d.txt", "new.txt"])
        query.delegate = nil
        #expect(query.result(at: 0) is MetadataItem)
        query.stop()
        _ = names
    }

    /// Uncoordinated create, modify, rename and delete are seen live (through inotify), and a lost
    /// queue (overflow) is recovered by a rescan.
    @Test func uncoordinatedChangesAreSeenLive() async throws {
        let dir = try TemporaryDirectory("query-live")
        try dir.write("keep.txt", "1")
        try dir.write("gone.txt", "1")
        let query = try makeQuery(dir, interval: 0.05)
        let recorder = QueryRecorder(query)
        #expect(query.start())
        #expect(await recorder.wait { recorder.names.contains("finish") })
        let new = try dir.write("folder/new.txt", "new")
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(new.path) } })
        try dir.write("keep.txt", "changed, longer")
        #expect(await recorder.wait { recorder.updates.contains { $0.changed.contains(dir.child("keep.txt").path) } })
        try FileManager.default.moveItem(at: dir.child("gone.txt"), to: dir.child("renamed.txt"))
        #expect(await recorder.wait {
            recorder.updates.contains { $0.removed.contains(dir.child("gone.txt").path) }
                && recorder.updates.contains { $0.added.contains(dir.child("renamed.txt").path) }
        })
        try FileManager.default.removeItem(at: dir.child("folder"))
        #expect(await recorder.wait { recorder.updates.contains { $0.removed.contains(new.path) } })
        // An overflow: changes the watcher never reported are found by the rescan.
        LocalMetadataSearch.$watchesFileSystem.withValue(true) {}
        try dir.write("during-overflow.txt", "x")
        query.simulateOverflow()
        #expect(await recorder.wait { recorder.updates.contains { $0.added.contains(dir.child("during-overflow.txt").path) } })
        #expect(Set((query.results as? [MetadataItem])?.map(\.path) ?? []) == [dir.child("keep.txt").path, dir.child("renamed.txt").path, dir.child("during-overflow.txt").path])
        query.stop()
    }

    /// Hostile trees: names with newlines, invalid UTF-8 (skipped, logged), symbolic-link loops, a
    /// 4096-byte path, a folder of 20,000 entries — never a crash.
    @Test func hostileTreesAreIndexedOrSkipped() async throws {
        let dir = try TemporaryDirectory("query-hostile")
        try HostileTree.build(in: dir.path, bigFolderEntries: 20_000)
        let query = try makeQuery(dir)
        let recorder = QueryRecorder(query)
        #expect(query.start())
        #expect(await recorder.wait(60) { recorder.names.contains("finish") })
        let names = Set((query.results as? [MetadataItem])?.compactMap { $0.value(forAttribute: NSMetadataItemFSNameKey) as? String } ?? [])
        #expect(names.contains("line\nbreak.txt"))
        #expect(!names.contains { $0.hasPrefix("bad-") })
        #expect(!names.contains("deep.txt"), "a path beyond PATH_MAX was indexed")
        #expect(query.resultCount == 20_001, "\(query.resultCount)")
        query.stop()
    }
}

/// Notifications posted for one query, by name.
final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [(NSNotification.Name, [AnyHashable: Any]?)] = []
    private var tokens: [any NSObjectProtocol] = []

    init(_ query: MetadataQuery) {
        for name in [NSNotification.Name.NSMetadataQueryDidStartGathering, .NSMetadataQueryGatheringProgress, .NSMetadataQueryDidFinishGathering, .NSMetadataQueryDidUpdate] {
            tokens.append(NotificationCenter.default.addObserver(forName: name, object: query, queue: nil) { [weak self] note in
                guard let self else { return }
                self.lock.withLock { self.received.append((note.name, note.userInfo)) }
            })
        }
    }

    deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }

    var names: [NSNotification.Name] { lock.withLock { received.map(\.0) } }
    var lastUserInfoKeys: [String] { lock.withLock { (received.last?.1?.keys.compactMap { $0 as? String }) ?? [] } }
}

@Suite("folio query", .elasticPool)
struct QueryCommandTests {
    @Test func queriesFromTheCommandLine() throws {
        let dir = try TemporaryDirectory("query-cli")
        try dir.write("a.txt", "hello")
        try dir.write("sub/b.txt", "hi")
        try dir.write("c.png", "x")
        let found = try ProcessRunner.folio(["query", "kMDItemFSName LIKE '*.txt'", "--scope", dir.path, "--sort", NSMetadataItemFSSizeKey])
        #expect(found.status == 0 && found.stdout == dir.child("sub/b.txt").path + "\n" + dir.child("a.txt").path + "\n", "\(found)")
        let images = try ProcessRunner.folio(["query", "kMDItemContentTypeTree == 'public.image'", "--scope", dir.path, "--json"])
        #expect(images.stdout.contains("\"contentType\":\"public.png\""), "\(images.stdout)")
        let bad = try ProcessRunner.folio(["query", "kMDItemFSSize >", "--scope", dir.path])
        #expect(bad.status == 2 && bad.stderr.contains("expected a value at offset 15") && bad.stderr.contains("^"), "\(bad.stderr)")
    }
}

@Suite("Tags", .elasticPool)
struct TagTests {
    /// Tags live in `user.xdg.tags`, are set with `folio tag`, and are queried as kMDItemUserTags.
    @Test func tagsAreSetAndQueried() throws {
        let dir = try TemporaryDirectory("tags")
        let report = try dir.write("report.txt", "r")
        let notes = try dir.write("notes.txt", "n")
        #expect(try ProcessRunner.folio(["tag", "add", "Work", report.path, notes.path]).status == 0)
        #expect(try ProcessRunner.folio(["tag", "add", "Urgent", report.path]).status == 0)
        #expect(try ProcessRunner.folio(["tag", "remove", "Work", notes.path]).status == 0)
        #expect(FileTags.tags(of: report) == ["Work", "Urgent"] && FileTags.tags(of: notes).isEmpty)
        let bad = try ProcessRunner.folio(["tag", "add", "a,b", report.path])
        #expect(bad.status != 0 && FileTags.tags(of: report) == ["Work", "Urgent"])
        let found = try ProcessRunner.folio(["query", "'urgent' IN[c] kMDItemUserTags", "--scope", dir.path])
        #expect(found.stdout == report.path + "\n", "\(found)")
        #expect(try ProcessRunner.folio(["tag", "list", report.path]).stdout.contains("Work, Urgent"))
    }
}
