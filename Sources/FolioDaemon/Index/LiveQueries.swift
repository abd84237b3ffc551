import Folio
import Foundation
import GRDB
import Logging

/// Where a live query's events go (a client connection).
protocol QueryEventSink: AnyObject, Sendable {
    func write(_ frames: [WireValue])
}

/// The live queries: each hears every index transaction's changes, keeps the ones in its scopes
/// that match its predicate, and sends them to its client as one `update` event per batching
/// interval (at once for an interval of 0). Used only on the index queue.
final class LiveQueries: @unchecked Sendable {
    final class Query: @unchecked Sendable {
        let spec: IndexQuerySpec
        weak var sink: (any QueryEventSink)?
        /// Paths of the current results.
        var members = Set<String>()
        var written: [String: IndexRecord] = [:]
        var removed = Set<String>()
        var flushScheduled = false

        init(spec: IndexQuerySpec, sink: any QueryEventSink) {
            self.spec = spec
            self.sink = sink
        }

        func inScope(_ path: String) -> Bool {
            spec.folders.contains { CoordinationPath.isAncestor($0, of: path) }
        }
    }

    private let logger: Logger
    private var queries: [ObjectIdentifier: [Int64: Query]] = [:]
    /// Listeners that hear only which folders changed (the web page's push), by token.
    private var folderObservers: [UInt64: @Sendable (Set<String>) -> Void] = [:]
    private var lastObserver: UInt64 = 0
    private let countLock = NSLock()
    private var total = 0

    init(logger: Logger) {
        self.logger = logger
    }

    /// How many live queries there are (any thread).
    var count: Int { countLock.withLock { total } }

    func add(_ query: Query, for sink: any QueryEventSink) {
        queries[ObjectIdentifier(sink), default: [:]][query.spec.id] = query
        recount()
    }

    func remove(_ id: Int64, of sink: any QueryEventSink) {
        queries[ObjectIdentifier(sink)]?[id] = nil
        recount()
    }

    func removeAll(of sink: any QueryEventSink) {
        queries[ObjectIdentifier(sink)] = nil
        recount()
    }

    /// Calls `observer` with the folders whose children changed after each transaction, until
    /// `removeFolderObserver` with the returned token.
    func addFolderObserver(_ observer: @escaping @Sendable (Set<String>) -> Void) -> UInt64 {
        lastObserver += 1
        folderObservers[lastObserver] = observer
        recount()
        return lastObserver
    }

    func removeFolderObserver(_ token: UInt64) {
        folderObservers[token] = nil
        recount()
    }

    private func recount() {
        let count = queries.values.reduce(0) { $0 + $1.count } + folderObservers.count
        countLock.withLock { total = count }
    }

    /// Applies one transaction's changes to every query and sends or schedules its update.
    func apply(_ changes: IndexChanges, on index: MetadataIndex) {
        if !folderObservers.isEmpty {
            // A changed item changes its folder's listing, and itself when it is a folder.
            var folders = Set<String>()
            for path in changes.removed { folders.insert((path as NSString).deletingLastPathComponent); folders.insert(path) }
            for record in changes.written.values {
                folders.insert((record.path as NSString).deletingLastPathComponent)
                if record.kind == .directory { folders.insert(record.path) }
            }
            for observer in folderObservers.values { observer(folders) }
        }
        for query in queries.values.flatMap(\.values) {
            guard query.sink != nil else { continue }
            var touched = false
            for path in changes.removed {
                for member in query.members where member == path || CoordinationPath.isAncestor(path, of: member) {
                    query.members.remove(member)
                    query.written[member] = nil
                    query.removed.insert(member)
                    touched = true
                }
            }
            let readsText = query.spec.predicate.attributes.contains(.textContent)
            let relevanceQuery = readsText ? MetadataIndex.relevanceQuery(query.spec.predicate) : nil
            for var record in changes.written.values where query.inScope(record.path) {
                let facts = record.facts
                var matches = false
                if readsText {
                    try? index.pool.read { db in
                        matches = index.matches(query.spec.predicate, record, db)
                        if matches, let relevanceQuery { record.relevance = index.relevance(of: record, matching: relevanceQuery, db) }
                    }
                } else {
                    matches = query.spec.predicate.evaluate({ facts.value($0) })
                }
                if matches {
                    query.members.insert(record.path)
                    query.removed.remove(record.path)
                    query.written[record.path] = record
                    touched = true
                } else if query.members.remove(record.path) != nil {
                    query.written[record.path] = nil
                    query.removed.insert(record.path)
                    touched = true
                }
            }
            guard touched, !query.flushScheduled else { continue }
            if query.spec.interval == 0 {
                flush(query)
            } else {
                query.flushScheduled = true
                index.work.asyncAfter(deadline: .now() + query.spec.interval) { [weak self, weak query] in
                    guard let self, let query else { return }
                    query.flushScheduled = false
                    self.flush(query)
                }
            }
        }
    }

    private func flush(_ query: Query) {
        guard let sink = query.sink, !(query.written.isEmpty && query.removed.isEmpty) else { return }
        let frame: WireValue = [
            "event": "query", "query": .int(query.spec.id), "phase": "update",
            "items": .array(query.written.values.map { IndexWire.encode($0.facts) }), "removed": .array(query.removed.map { .string($0) }),
        ]
        query.written.removeAll()
        query.removed.removeAll()
        sink.write([frame])
    }
}
