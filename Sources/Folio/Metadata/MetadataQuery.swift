public import Foundation
import FolioSystem
import Logging

/// A live metadata query (Apple's `NSMetadataQuery`): the items in its search scopes that match
/// its predicate, gathered, then kept current as files change, with Apple's notifications posted
/// through `NotificationCenter.default` (the query as object) and the same events as an async
/// sequence (`events`).
///
/// Scopes are folder URLs or paths, and Apple's scope constants
/// (`NSMetadataQueryUbiquitousDocumentsScope`, `…UbiquitousDataScope`), which name the app's
/// ubiquity container in the Drive. With a daemon whose index covers the scopes, the daemon runs
/// the query from its database and keeps it live (every process's coordinated writes are stitched
/// in before their claims are released). Otherwise the query walks its scopes in this process with
/// raw directory reads, watches them with inotify, and hears this process's coordinated writes at
/// once.
///
/// Notifications go to `operationQueue` when set (it must be serial, as Apple requires), else to the
/// queue `start()` was called on unless that is the main queue, else to a private serial queue.
open class MetadataQuery: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private let logger = Logger(label: "folio.metadata-query")

    // MARK: Configuration

    /// The predicate results must satisfy; required. Setting it while the query runs restarts it.
    open var predicate: MetadataPredicate? {
        get { lock.withLock { storedPredicate } }
        set {
            let restart = lock.withLock { () -> Bool in
                storedPredicate = newValue
                return state == .started
            }
            if restart {
                stop()
                _ = start()
            }
        }
    }
    private var storedPredicate: MetadataPredicate?

    /// Folder URLs or paths, and the ubiquitous scope constants.
    open var searchScopes: [Any] {
        get { lock.withLock { storedScopes } }
        set { lock.withLock { storedScopes = newValue } }
    }
    private var storedScopes: [Any] = []

    /// Items the search is limited to (file URLs, paths or `MetadataItem`s): a result is one of
    /// them or inside one of them. Nil, the default: no limit. Read at `start()`.
    open var searchItems: [Any]? {
        get { lock.withLock { storedSearchItems } }
        set { lock.withLock { storedSearchItems = newValue } }
    }
    private var storedSearchItems: [Any]?
    /// The paths of `searchItems` as the running query took them.
    private var limitPaths: [String]?

    /// Asked for the objects `results` gives and for attribute values (Apple's
    /// `NSMetadataQueryDelegate`); not retained.
    open weak var delegate: (any MetadataQueryDelegate)? {
        get { lock.withLock { storedDelegate } }
        set {
            lock.withLock {
                storedDelegate = newValue
                replacements = [:]
            }
        }
    }
    private weak var storedDelegate: (any MetadataQueryDelegate)?
    /// The delegate's replacement of each result, asked once per result (as Apple's query keeps
    /// them), so a replacement is found again by `index(ofResult:)`.
    private var replacements: [ObjectIdentifier: Any] = [:]

    /// How results are ordered; unordered when empty.
    open var sortDescriptors: [MetadataSortDescriptor] {
        get { lock.withLock { storedSortDescriptors } }
        set {
            lock.withLock {
                storedSortDescriptors = newValue
                order = nil
            }
        }
    }
    private var storedSortDescriptors: [MetadataSortDescriptor] = []

    /// Attributes whose distinct values `valueLists` counts.
    open var valueListAttributes: [String] {
        get { lock.withLock { storedValueListAttributes } }
        set { lock.withLock { storedValueListAttributes = newValue } }
    }
    private var storedValueListAttributes: [String] = []

    /// Attributes to group `groupedResults` by (the first is used).
    open var groupingAttributes: [String]? {
        get { lock.withLock { storedGroupingAttributes } }
        set { lock.withLock { storedGroupingAttributes = newValue } }
    }
    private var storedGroupingAttributes: [String]?

    /// How long live changes are collected before one `didUpdate` reports them.
    open var notificationBatchingInterval: TimeInterval {
        get { lock.withLock { storedInterval } }
        set { lock.withLock { storedInterval = max(0, newValue) } }
    }
    private var storedInterval: TimeInterval = 1.0

    /// Where notifications are posted (must be serial).
    open var operationQueue: OperationQueue? {
        get { lock.withLock { storedQueue } }
        set { lock.withLock { storedQueue = newValue } }
    }
    private var storedQueue: OperationQueue?

    // MARK: State

    enum State { case idle, started, stopped }
    private var state = State.idle
    private var gathering = false
    private var disabled = 0
    private var items: [String: MetadataItem] = [:]
    private var order: [MetadataItem]?
    private var pending = MetadataChanges()
    /// The paths whose changes the query holds back while its updates are disabled (tests: a
    /// disabled query posts nothing, so nothing else tells that a change has reached it).
    package var heldPaths: Set<String> { lock.withLock { Set(pending.values.keys) } }
    private var search: (any MetadataSearch)?
    private var delivery: OperationQueue?
    private var streams: [UUID: AsyncStream<MetadataQueryEvent>.Continuation] = [:]

    /// Creates a query; set `predicate` and `searchScopes`, then `start()`.
    public override init() {
        super.init()
    }

    deinit { search?.stop() }

    /// Whether `start()` succeeded and `stop()` has not been called.
    open var isStarted: Bool { lock.withLock { state == .started } }
    /// Whether the initial results are still being gathered.
    open var isGathering: Bool { lock.withLock { gathering } }
    /// Whether `stop()` was called.
    open var isStopped: Bool { lock.withLock { state == .stopped } }

    /// Starts gathering. False without a predicate, when already started, or when the scopes mix
    /// ubiquitous constants with folders (which Apple refuses too).
    @discardableResult
    open func start() -> Bool {
        let configuration: (MetadataPredicate, [String], OperationQueue)? = lock.withLock {
            guard state != .started, let predicate = storedPredicate else { return nil }
            guard let folders = Self.folders(for: storedScopes, logger: logger) else { return nil }
            let caller = OperationQueue.current.flatMap { $0 === OperationQueue.main ? nil : $0 }
            let queue = storedQueue ?? caller ?? {
                let serial = OperationQueue()
                serial.maxConcurrentOperationCount = 1
                serial.name = "folio.metadata-query"
                return serial
            }()
            state = .started
            gathering = true
            limitPaths = storedSearchItems.map { $0.compactMap(Self.path(ofSearchItem:)) }
            items = [:]
            replacements = [:]
            order = nil
            pending = MetadataChanges()
            delivery = queue
            return (predicate, folders, queue)
        }
        guard let (predicate, folders, _) = configuration else { return false }
        post(.didStartGathering)
        let interval = notificationBatchingInterval
        if LocalMetadataSearch.watchesFileSystem, let daemon = CoordinationEngine.current as? DaemonCoordinationEngine,
            let remote = DaemonMetadataSearch.start(daemon: daemon, predicate: predicate, folders: folders, interval: interval, query: self)
        {
            lock.withLock { self.search = remote }
            return true
        }
        let search = LocalMetadataSearch(predicate: predicate, folders: folders, interval: interval, query: self)
        lock.withLock { self.search = search }
        search.start()
        return true
    }

    /// Stops the query: no more updates; the results stay as they were.
    open func stop() {
        let search = lock.withLock { () -> (any MetadataSearch)? in
            guard state == .started else { return nil }
            state = .stopped
            gathering = false
            defer { self.search = nil }
            return self.search
        }
        search?.stop()
    }

    /// Freezes the results; no `didUpdate` until the matching `enableUpdates()`. Nests.
    open func disableUpdates() { lock.withLock { disabled += 1 } }

    /// Ends one `disableUpdates()`; the last one posts what changed meanwhile, in one batch.
    open func enableUpdates() {
        let flush = lock.withLock { () -> Bool in
            guard disabled > 0 else { return false }
            disabled -= 1
            return disabled == 0 && !pending.isEmpty
        }
        if flush { search?.flushNow() }
    }

    // MARK: Results

    /// The number of results.
    open var resultCount: Int { lock.withLock { items.count } }

    /// The result at `index` (a `MetadataItem`, or the delegate's replacement), in
    /// `sortDescriptors` order.
    open func result(at index: Int) -> Any { replacement(sortedResults()[index]) }

    /// The results (`MetadataItem`s, or the delegate's replacements), in `sortDescriptors` order.
    open var results: [Any] { sortedResults().map(replacement) }

    /// The index of `result` (an item, or a replacement object the delegate gave), or `NSNotFound`.
    open func index(ofResult result: Any) -> Int {
        let results = sortedResults()
        if let item = result as? MetadataItem, let found = results.firstIndex(where: { $0 === item }) { return found }
        guard delegate != nil, let object = result as AnyObject? else { return NSNotFound }
        return results.firstIndex { replacement($0) as AnyObject === object } ?? NSNotFound
    }

    /// One attribute of the result at `index` (or the delegate's replacement value).
    open func value(ofAttribute attribute: String, forResultAt index: Int) -> Any? {
        guard let value = sortedResults()[index].value(forAttribute: attribute) else { return nil }
        return delegate.map { $0.metadataQuery(self, replacementValueForAttribute: attribute, value: value) } ?? value
    }

    /// Calls `block` with each result, its index and a flag that stops the enumeration.
    open func enumerateResults(_ block: (Any, Int, UnsafeMutablePointer<ObjCBool>) -> Void) {
        enumerateResults(options: [], using: block)
    }

    /// Calls `block` with each result (in reverse with `.reverse`; `.concurrent` runs them in
    /// order, one at a time), its index and a flag that stops the enumeration.
    open func enumerateResults(options: NSEnumerationOptions = [], using block: (Any, Int, UnsafeMutablePointer<ObjCBool>) -> Void) {
        let results = sortedResults()
        var stop: ObjCBool = false
        let indices = options.contains(.reverse) ? Array(results.indices.reversed()) : Array(results.indices)
        for index in indices {
            block(replacement(results[index]), index, &stop)
            if stop.boolValue { return }
        }
    }

    /// The delegate's replacement for `item` (asked once), or the item.
    private func replacement(_ item: MetadataItem) -> Any {
        let key = ObjectIdentifier(item)
        guard let delegate else { return item }
        if let known = lock.withLock({ replacements[key] }) { return known }
        let made = delegate.metadataQuery(self, replacementObjectForResultObject: item)
        lock.withLock { replacements[key] = made }
        return made
    }

    /// The path of one of `searchItems`: a file URL, a path, or an item.
    private static func path(ofSearchItem item: Any) -> String? {
        switch item {
        case let url as URL where url.isFileURL: CoordinationPath.normalize(url.path)
        case let url as NSURL: url.path.map { CoordinationPath.normalize($0) }
        case let path as String where path.hasPrefix("/"): CoordinationPath.normalize(path)
        case let item as MetadataItem: (item.value(forAttribute: NSMetadataItemPathKey) as? String).map { CoordinationPath.normalize($0) }
        default: nil
        }
    }

    /// Whether `path` is within the running query's `searchItems` (always, without them).
    private func withinSearchItems(_ path: String) -> Bool {
        guard let limitPaths else { return true }
        return limitPaths.contains { path == $0 || path.hasPrefix($0 == "/" ? "/" : $0 + "/") }
    }

    /// For each of `valueListAttributes`, its distinct values among the results and their counts.
    open var valueLists: [String: [MetadataQueryAttributeValueTuple]] {
        let results = sortedResults()
        var lists: [String: [MetadataQueryAttributeValueTuple]] = [:]
        for name in valueListAttributes {
            guard let attribute = MetadataAttribute.named(name) else { continue }
            var counts: [MetadataValue: Int] = [:]
            for item in results {
                guard let value = item.metadataValue(attribute) else { continue }
                if case .array(let values) = value { for value in values { counts[value, default: 0] += 1 } } else { counts[value, default: 0] += 1 }
            }
            lists[name] = counts.sorted { $0.value > $1.value }.map { MetadataQueryAttributeValueTuple(attribute: name, value: $0.key, count: $0.value) }
        }
        return lists
    }

    /// The results grouped by the first of `groupingAttributes`, in result order.
    open var groupedResults: [MetadataQueryResultGroup] {
        guard let name = groupingAttributes?.first, let attribute = MetadataAttribute.named(name) else { return [] }
        var groups: [(MetadataValue, [Any])] = []
        var index: [MetadataValue: Int] = [:]
        for item in sortedResults() {
            let value = item.metadataValue(attribute) ?? .null
            if let at = index[value] { groups[at].1.append(item) } else {
                index[value] = groups.count
                groups.append((value, [item]))
            }
        }
        return groups.map { MetadataQueryResultGroup(attribute: name, value: MetadataItem.object($0.0), results: $0.1) }
    }

    private func sortedResults() -> [MetadataItem] {
        lock.withLock {
            if let order { return order }
            let sorted = Self.sort(Array(items.values), by: storedSortDescriptors)
            order = sorted
            return sorted
        }
    }

    static func sort(_ items: [MetadataItem], by descriptors: [MetadataSortDescriptor]) -> [MetadataItem] {
        let keys = descriptors.compactMap { descriptor in MetadataAttribute.named(descriptor.key).map { ($0, descriptor.ascending) } }
        return items.sorted { a, b in
            for (attribute, ascending) in keys {
                let x = a.metadataValue(attribute) ?? .null, y = b.metadataValue(attribute) ?? .null
                if x == y { continue }
                let less = MetadataPredicate.Comparison.compare(x, .less, y, [])
                let greater = MetadataPredicate.Comparison.compare(x, .greater, y, [])
                if less || greater { return ascending ? less : greater }
                // No value is the smallest, as NSSortDescriptor orders nil.
                if x == .null { return ascending }
                if y == .null { return !ascending }
            }
            return a.path < b.path
        }
    }

    // MARK: Events

    /// The query's notifications as an async sequence (from now on).
    open var events: AsyncStream<MetadataQueryEvent> {
        AsyncStream { continuation in
            let id = UUID()
            lock.withLock { streams[id] = continuation }
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.lock.withLock { _ = self.streams.removeValue(forKey: id) }
            }
        }
    }

    private func post(_ event: MetadataQueryEvent) {
        let (queue, continuations) = lock.withLock { (delivery, Array(streams.values)) }
        let name: NSNotification.Name
        var userInfo: [AnyHashable: Any]?
        switch event {
        case .didStartGathering: name = .NSMetadataQueryDidStartGathering
        case .gatheringProgress: name = .NSMetadataQueryGatheringProgress
        case .didFinishGathering: name = .NSMetadataQueryDidFinishGathering
        case .didUpdate(let added, let changed, let removed):
            name = .NSMetadataQueryDidUpdate
            userInfo = [
                NSMetadataQueryUpdateAddedItemsKey: added, NSMetadataQueryUpdateChangedItemsKey: changed,
                NSMetadataQueryUpdateRemovedItemsKey: removed,
            ]
        }
        let box = UncheckedBox((self, userInfo))
        let deliver: @Sendable () -> Void = {
            let (query, userInfo) = box.value
            NotificationCenter.default.post(name: name, object: query, userInfo: userInfo)
            for continuation in continuations { continuation.yield(event) }
        }
        if let queue { queue.addOperation(deliver) } else { deliver() }
    }

    // MARK: From the search

    /// The initial results grew (`final`: they are complete).
    func gathered(_ found: [String: MetadataFacts], final: Bool) {
        let count = lock.withLock { () -> Int? in
            guard state == .started else { return nil }
            for (path, facts) in found where items[path] == nil && withinSearchItems(path) { items[path] = MetadataItem(facts: facts) }
            order = nil
            if final { gathering = false }
            return items.count
        }
        guard let count else { return }
        post(final ? .didFinishGathering(resultCount: count) : .gatheringProgress(resultCount: count))
    }

    /// Live changes: the current values of paths (nil: gone or no longer matching). Held while
    /// updates are disabled; otherwise applied and posted.
    func changed(_ values: [String: MetadataFacts?]) {
        let update = lock.withLock { () -> (added: [MetadataItem], changed: [MetadataItem], removed: [MetadataItem])? in
            guard state == .started else { return nil }
            for (path, value) in values { pending.record(path, value) }
            guard disabled == 0, !pending.isEmpty else { return nil }
            let changes = pending
            pending = MetadataChanges()
            var added: [MetadataItem] = [], changed: [MetadataItem] = [], removed: [MetadataItem] = []
            for (path, change) in changes.values {
                let value = withinSearchItems(path) ? change : nil
                switch (items[path], value) {
                case (nil, let value?):
                    let item = MetadataItem(facts: value)
                    items[path] = item
                    added.append(item)
                case (let item?, let value?):
                    if item.update(value) { changed.append(item) }
                case (let item?, nil):
                    items[path] = nil
                    replacements[ObjectIdentifier(item)] = nil
                    removed.append(item)
                case (nil, nil):
                    break
                }
            }
            guard !(added.isEmpty && changed.isEmpty && removed.isEmpty) else { return nil }
            order = nil
            return (added, changed, removed)
        }
        if let update { post(.didUpdate(added: update.added, changed: update.changed, removed: update.removed)) }
    }

    /// Makes the search act on an inotify queue overflow (tests).
    func simulateOverflow() { lock.withLock { search }?.simulateOverflow() }

    /// The paths of the current results (for a rescan's comparison).
    var currentPaths: Set<String> { lock.withLock { Set(items.keys) } }

    /// Folders for the scopes; nil when they mix ubiquitous constants and folders.
    static func folders(for scopes: [Any], logger: Logger) -> [String]? {
        var folders: [String] = []
        var ubiquitous = false, local = false
        for scope in scopes {
            switch scope {
            case let url as URL:
                local = true
                folders.append(CoordinationPath.normalize(url.path))
            case let text as String where text == NSMetadataQueryUbiquitousDocumentsScope || text == NSMetadataQueryUbiquitousDataScope:
                ubiquitous = true
                if let container = FileManager.default.url(forUbiquityContainerIdentifier: nil) {
                    folders.append(container.path + (text == NSMetadataQueryUbiquitousDocumentsScope ? "/Documents" : ""))
                }
            case let text as String where text == NSMetadataQueryAccessibleUbiquitousExternalDocumentsScope:
                ubiquitous = true
            case let text as String where text.hasPrefix("/"):
                local = true
                folders.append(CoordinationPath.normalize(text))
            default:
                logger.error("unsupported search scope", metadata: ["scope": "\(scope)"])
                return nil
            }
        }
        if ubiquitous && local {
            logger.error("a query's scopes cannot mix ubiquitous scopes and folders")
            return nil
        }
        return folders
    }
}

/// Where a query's results come from: the daemon's index, or a search in this process.
protocol MetadataSearch: AnyObject, Sendable {
    func stop()
    /// Applies what `disableUpdates` held back.
    func flushNow()
    /// Acts on an inotify queue overflow (tests).
    func simulateOverflow()
}

extension LocalMetadataSearch: MetadataSearch {}
extension DaemonMetadataSearch: MetadataSearch {}

/// Changes collected while updates are batched or disabled: the latest value per path.
struct MetadataChanges {
    var values: [String: MetadataFacts?] = [:]
    var isEmpty: Bool { values.isEmpty }
    mutating func record(_ path: String, _ value: MetadataFacts?) { values[path] = .some(value) }
}
