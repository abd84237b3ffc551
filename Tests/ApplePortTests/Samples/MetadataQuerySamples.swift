// Samples 28–31: metadata queries as Apple's code runs them.
// - 28–29: "File Metadata Search Programming Guide", Listing 2-1: a one-pass search for images,
//   sorted by display name, read with `resultCount`/`result(at:)` once gathered, then stopped.
// - 30: an Objective-C iCloud sample's block observers on an operation queue, with a
//   `%K LIKE %@` pattern built from a file type, results read between `disableUpdates` and
//   `enableUpdates`.
// - 31: the same sample's one-shot query that stops itself when gathered and reads each
//   result's URL (`valueForKey:` over the results).
//
// Apple's listings are Objective-C; this is their Swift, line for line. Lines changed beyond
// that: `import Cocoa`/`import UIKit` → `import Folio` (+ Foundation); `@selector` observers →
// block observers (no Objective-C runtime here); `NSLog` → a record of the lines; `[… valueForKey:]`
// over an array (key-value coding, which Foundation on Linux lacks) → `map`;
// `kMDItemDisplayName` (CoreServices) → `NSMetadataItemDisplayNameKey`, the same string. Scopes:
// Listing 2-1's `NSMetadataQueryUserHomeScope` (macOS only, as the guide says) and the
// ubiquitous scopes → the test's folder (the ubiquitous scopes are the daemon's, with the drive);
// the iCloud sample's `[NSOperationQueue mainQueue]` → a serial queue of its own (a test process
// does not run the main queue), and the query is started on it, as Apple's documentation of
// `start()` asks (the quoted lines end before the start). The sample's `handleQueryUpdates:`
// (not quoted) lists the results' display names.
import Folio
import FolioTestTraits
import Foundation
import Testing

final class ImageSearch: @unchecked Sendable {
    let searchFolder: URL
    private let lock = NSLock()
    private var _log: [String] = []
    var log: [String] { lock.withLock { _log } }
    private func NSLog(_ line: String) { lock.withLock { _log.append(line) } }
    private var _metadataSearch: NSMetadataQuery?
    var metadataSearch: NSMetadataQuery? {
        get { lock.withLock { _metadataSearch } }
        set { lock.withLock { _metadataSearch = newValue } }
    }
    private var observers: [any NSObjectProtocol] = []

    init(searchFolder: URL) { self.searchFolder = searchFolder }

    // Listing 2-1, part 1: Initialize Search Method
    func initiateSearch() {
        // Create the metadata query instance.
        self.metadataSearch = NSMetadataQuery()

        // Register the notifications for batch and completion updates
        observers.append(NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidUpdate, object: metadataSearch, queue: nil) { [weak self] notification in
            self?.queryDidUpdate(notification)
        })
        observers.append(NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering, object: metadataSearch, queue: nil) { [weak self] notification in
            self?.initalGatherComplete(notification)
        })

        // Configure the search predicate to find all images using the
        // public.image UTI
        let searchPredicate = NSPredicate(format: "kMDItemContentTypeTree == 'public.image'")
        metadataSearch!.predicate = searchPredicate

        // Set the search scope.
        let searchScopes = [searchFolder]
        metadataSearch!.searchScopes = searchScopes

        // Configure the sorting of the results so it will order the results by the
        // display name
        let sortKeys = NSSortDescriptor(key: NSMetadataItemDisplayNameKey, ascending: true)
        metadataSearch!.sortDescriptors = [sortKeys]

        // Begin the asynchronous query
        metadataSearch!.start()
    }

    // Listing 2-1, part 2: Method invoked when notifications of content batches have been received
    func queryDidUpdate(_ sender: Any) {
        NSLog("A data batch has been received")
    }

    // Method invoked when the initial query gathering is completed
    func initalGatherComplete(_ sender: Any) {
        let metadataSearch = self.metadataSearch!
        // Stop the query, the single pass is completed.
        metadataSearch.stop()

        // Process the content. In this case the application simply
        // iterates over the content, printing the display name key for
        // each image
        for i in 0..<metadataSearch.resultCount {
            let theResult = metadataSearch.result(at: i) as! NSMetadataItem
            let displayName = theResult.value(forAttribute: NSMetadataItemDisplayNameKey) as! String
            NSLog("result at \(i) - \(displayName)")
        }

        // Remove the notifications to clean up after ourselves.
        // Also release the metadataQuery.
        // When the Query is removed the query results are also lost.
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
        self.metadataSearch = nil
    }
}

final class UbiquitousFileBrowser: @unchecked Sendable {
    var fileType: String
    let scope: URL
    private(set) var ubiquitousQuery: NSMetadataQuery!
    private var metadataQueryGatherObserver: (any NSObjectProtocol)?
    private let lock = NSLock()
    private var _shownNames: [String] = []
    var shownNames: [String] { lock.withLock { _shownNames } }
    private var _log: [String] = []
    var log: [String] { lock.withLock { _log } }
    private func NSLog(_ line: String) { lock.withLock { _log.append(line) } }
    let queue: OperationQueue = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return queue
    }()

    init(fileType: String, scope: URL) {
        self.fileType = fileType
        self.scope = scope
    }

    func changeQueryCriteria(_ fileType: String) {
        var filePattern: String? = nil
        if self.fileType == "" {
            filePattern = String(format: "*.*")
        } else {
            filePattern = String(format: "*.%@", self.fileType)
        }

        self.ubiquitousQuery.predicate = NSPredicate(format: "%K LIKE %@", NSMetadataItemFSNameKey, filePattern!)
    }

    func setUpQuery() {
        ubiquitousQuery = NSMetadataQuery()
        self.ubiquitousQuery.notificationBatchingInterval = 15
        self.ubiquitousQuery.searchScopes = [scope]

        self.changeQueryCriteria(self.fileType)

        let queue = self.queue

        self.ubiquitousQuery.operationQueue = queue

        self.metadataQueryGatherObserver = NotificationCenter.default.addObserver(
            forName: .NSMetadataQueryDidFinishGathering, object: self.ubiquitousQuery, queue: queue) { [weak self] gatherNotification in
            // use "weakSelf" to refer back to the object that owns this query
            if let weakSelf = self {
                let query = gatherNotification.object as! NSMetadataQuery

                // we should invoke this method before iterating over query results that could change due to live updates
                query.disableUpdates()

                weakSelf.NSLog("finishGathering...")

                weakSelf.handleQueryUpdates(weakSelf.ubiquitousQuery)

                // enable updates again
                query.enableUpdates()
            }
        }
        queue.addOperation { self.ubiquitousQuery.start() }
    }

    /// The sample's own (not quoted): the results' display names, sorted as the Finder would.
    func handleQueryUpdates(_ query: NSMetadataQuery) {
        let names = query.results.compactMap { ($0 as? NSMetadataItem)?.value(forAttribute: NSMetadataItemDisplayNameKey) as? String }
        lock.withLock { _shownNames = names.sorted { $0.localizedStandardCompare($1) == .orderedAscending } }
    }

    func stop() {
        ubiquitousQuery.stop()
        if let metadataQueryGatherObserver { NotificationCenter.default.removeObserver(metadataQueryGatherObserver) }
    }

    /// The one-shot query for data to preload: the names of the files already there.
    func preloadNames(_ found: @escaping @Sendable ([String]) -> Void) {
        let queryForPreloadData = NSMetadataQuery()
        queryForPreloadData.predicate = NSPredicate(format: "%K like '*.*'", NSMetadataItemFSNameKey)
        queryForPreloadData.searchScopes = [scope]

        final class ObserverBox: @unchecked Sendable { weak var observer: (any NSObjectProtocol)? }
        let box = ObserverBox() // Use __weak to ensure the observer is released after being removed from NC.
        box.observer = NotificationCenter.default.addObserver(forName: .NSMetadataQueryDidFinishGathering,
                                                              object: queryForPreloadData,
                                                              queue: nil) // use the current queue
        { gatherNotification in
            // Use queryForPreloadData so that it is held by the block
            // thus won't be released outside of the method.
            //
            queryForPreloadData.stop()

            let existingFileURLs = queryForPreloadData.results.map { ($0 as! NSMetadataItem).value(forAttribute: NSMetadataItemURLKey) as! URL }
            let existingFileNames = existingFileURLs.map(\.lastPathComponent)

            found(existingFileNames)

            if let observer = box.observer { NotificationCenter.default.removeObserver(observer) }
        }

        queryForPreloadData.start()
    }
}

@Suite("Apple's samples: metadata queries", .elasticPool)
struct MetadataQuerySampleTests {
    /// Images found by content type (one without an extension among them), listed by display
    /// name once gathered; the query is then stopped and released.
    @Test func aOnePassSearchForImages() async throws {
        let world = try PortWorld("image-search")
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 24))
        try png.write(to: world.url("beach.png"))
        try png.write(to: world.url("Attic photo"))
        try Data("text".utf8).write(to: world.url("notes.txt"))
        let search = ImageSearch(searchFolder: world.directory.url)
        search.initiateSearch()
        #expect(await world.wait { search.metadataSearch == nil })
        #expect(search.log.filter { $0.hasPrefix("result") } == ["result at 0 - Attic photo", "result at 1 - beach.png"])
    }

    /// The pattern follows the file type; results are read between disabling and enabling
    /// updates, on the query's own queue.
    @Test func blockObserversOnTheQuerysQueue() async throws {
        let world = try PortWorld("ubiquitous-browser")
        for name in ["b.txt", "a.txt", "c.md", "README"] { try Data(name.utf8).write(to: world.url(name)) }
        let browser = UbiquitousFileBrowser(fileType: "txt", scope: world.directory.url)
        browser.setUpQuery()
        defer { browser.stop() }
        #expect(await world.wait { browser.shownNames == ["a.txt", "b.txt"] })
        #expect(browser.log == ["finishGathering..."])

        let all = UbiquitousFileBrowser(fileType: "", scope: world.directory.url)
        all.setUpQuery()
        defer { all.stop() }
        #expect(await world.wait { all.shownNames == ["a.txt", "b.txt", "c.md"] })
    }

    /// The one-shot query reports the names there are and removes its own observer.
    @Test func aOneShotQueryForPreloading() async throws {
        let world = try PortWorld("preload")
        for name in ["One.doc", "Two.doc"] { try Data(name.utf8).write(to: world.url(name)) }
        final class Found: @unchecked Sendable {
            let lock = NSLock()
            var names: [String]?
        }
        let found = Found()
        UbiquitousFileBrowser(fileType: "", scope: world.directory.url).preloadNames { names in
            found.lock.withLock { found.names = names }
        }
        #expect(await world.wait { found.lock.withLock { found.names } != nil })
        #expect(found.lock.withLock { found.names }?.sorted() == ["One.doc", "Two.doc"])
    }
}
