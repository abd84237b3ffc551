import Foundation
import Logging
import Synchronization

/// A query's search run by the daemon's index: the daemon gathers from its database, keeps the
/// query live from its crawl, its inotify watches and the coordinated writes of every process, and
/// sends the changes (docs/protocol.md, "Index and queries"). Used when the index covers the
/// query's folders; otherwise the query searches in process (`LocalMetadataSearch`).
final class DaemonMetadataSearch: @unchecked Sendable {
    private let daemon: DaemonCoordinationEngine
    private let spec: IndexQuerySpec
    private weak var query: MetadataQuery?
    private let logger = Logger(label: "folio.metadata-query")

    private static let searches = Mutex<[Int64: DaemonMetadataSearch]>([:])
    private static let numbers = Atomic<Int64>(0)

    /// Asks the daemon to run the query; nil when the daemon does not cover its folders (or
    /// refuses or is unreachable; the query then searches in process).
    static func start(daemon: DaemonCoordinationEngine, predicate: MetadataPredicate, folders: [String], interval: TimeInterval, query: MetadataQuery) -> DaemonMetadataSearch? {
        let number = numbers.wrappingAdd(1, ordering: .relaxed).newValue
        let search = DaemonMetadataSearch(daemon: daemon, spec: IndexQuerySpec(id: number, predicate: predicate, folders: folders, interval: interval), query: query)
        daemon.setEventHandler("query") { frame in
            guard let id = frame["query"]?.intValue, let search = searches.withLock({ $0[id] }) else { return }
            search.received(frame)
        }
        searches.withLock { $0[number] = search }
        do {
            let reply = try daemon.send(QueryStart(search.spec))
            if reply["covered"]?.boolValue == true {
                daemon.setReconnectHandler(for: search) { [weak search] in search?.resync(round: 0) }
                return search
            }
        } catch {
            search.logger.notice("the daemon's index cannot run this query; searching in process", metadata: ["error": "\(error.message)"])
        }
        searches.withLock { $0[number] = nil }
        return nil
    }

    private init(daemon: DaemonCoordinationEngine, spec: IndexQuerySpec, query: MetadataQuery) {
        self.daemon = daemon
        self.spec = spec
        self.query = query
    }

    func stop() {
        state.withLock { $0.stopped = true }
        daemon.setReconnectHandler(for: self, nil)
        Self.searches.withLock { $0[spec.id] = nil }
        _ = try? daemon.send(QueryStop(query: UInt64(spec.id)))
    }

    /// Applies what `disableUpdates` held back.
    func flushNow() {
        query?.changed([:])
    }

    /// Makes the daemon's index act on a lost-events report (tests).
    func simulateOverflow() {
        _ = try? daemon.send(IndexOverflow())
    }

    /// After the daemon restarted: asks the new one to run the query (once its index covers the
    /// folders again: a restarted daemon first checks its index), then reports what changed
    /// meanwhile as one update. Tries once a second for ten minutes, on this process's resync
    /// queue (a request waits for its reply there, within the request deadline).
    private func resync(round: Int) {
        Self.resyncs.async { [self] in
            guard state.withLock({ state in
                guard !state.stopped else { return false }
                state.resyncing = [:]
                return true
            }) else { return }
            if (try? daemon.send(QueryStart(spec)))?["covered"]?.boolValue == true { return }
            state.withLock { $0.resyncing = nil }
            guard round < 600 else {
                logger.warning("the restarted daemon did not take the query back; it no longer updates")
                return
            }
            Self.resyncs.asyncAfter(deadline: .now() + 1) { [weak self] in self?.resync(round: round + 1) }
        }
    }

    /// Where queries are taken back after a reconnection: requests wait there, not on a shared queue.
    private static let resyncs = DispatchQueue(label: "folio.metadata-query.resync")

    private struct State {
        var stopped = false
        /// While the query is gathered again after a reconnection: what the new daemon sent so far.
        var resyncing: [String: MetadataFacts]?
    }

    private let state = Mutex(State())

    private func received(_ frame: WireValue) {
        guard let query else { return }
        let items = (frame["items"]?.arrayValue ?? []).compactMap(IndexWire.decode)
        if let resynced = state.withLock({ state -> [String: MetadataFacts]? in
            guard state.resyncing != nil else { return nil }
            for facts in items { state.resyncing?[facts.path] = facts }
            guard frame["phase"]?.stringValue == "finished" else { return [:] }
            defer { state.resyncing = nil }
            return state.resyncing
        }) {
            guard frame["phase"]?.stringValue == "finished" else { return }
            var changes: [String: MetadataFacts?] = [:]
            for path in query.currentPaths where resynced[path] == nil { changes[path] = .some(nil) }
            for (path, facts) in resynced { changes[path] = .some(facts) }
            query.changed(changes)
            return
        }
        switch frame["phase"]?.stringValue {
        case "gathering":
            query.gathered(Dictionary(items.map { ($0.path, $0) }, uniquingKeysWith: { $1 }), final: false)
        case "finished":
            query.gathered([:], final: true)
        case "update":
            var changes: [String: MetadataFacts?] = [:]
            for path in (frame["removed"]?.arrayValue ?? []).compactMap(\.stringValue) { changes[path] = .some(nil) }
            for facts in items { changes[facts.path] = .some(facts) }
            query.changed(changes)
        default:
            logger.debug("unexpected query event", metadata: ["phase": "\(frame["phase"]?.stringValue ?? "?")"])
        }
    }
}
