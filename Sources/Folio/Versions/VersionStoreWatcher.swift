import FolioSystem
import Foundation
package import Logging
import Synchronization

/// Watches a version store's manifests, whichever process writes them (an app's `Document`, the
/// drive's sync, `FileVersion` calls), and reports each item's versions gained, lost and resolved
/// since the last look, with the item's last known path: the daemon hands them to the item's
/// presenters (`presentedItemDidGain`, `…DidLose`, `…DidResolveConflict`).
package final class VersionStoreWatcher: Sendable {
    /// What one item's manifest said last: each version's record, by identifier.
    private struct Seen: Sendable {
        var records: [String: VersionRecord]
        var path: String
    }

    private let store: VersionStore
    private let logger: Logger
    private let report: @Sendable (String, [(VersionChange, VersionRecord)]) -> Void
    private struct State: ~Copyable {
        var seen: [String: Seen] = [:]
        var watcher: InotifyWatcher?
    }

    private let state = Mutex(State())

    /// A watcher of `store`; `report` gets the item's path and its changes, on the watcher's thread.
    package init(store: VersionStore, logger: Logger, report: @escaping @Sendable (String, [(VersionChange, VersionRecord)]) -> Void) {
        self.store = store
        self.logger = logger
        self.report = report
    }

    /// Reads every manifest once (what is there now is not news), then watches for changes.
    package func start() throws {
        try store.makePrivateFolders()
        let watcher = try InotifyWatcher(logger: logger) { [weak self] events in self?.changed(events) }
        state.withLock { state in
            state.watcher = watcher
            // Under the lock: a change reported meanwhile waits until the first look is done.
            _ = watcher.watch(store.itemsDirectory)
            state.seen = lookAtEveryManifest()
        }
    }

    /// What every manifest says now.
    private func lookAtEveryManifest() -> [String: Seen] {
        var seen: [String: Seen] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: store.itemsDirectory)) ?? [] {
            guard let identity = VersionStore.identity(ofManifestNamed: name), let manifest = peek(identity) else { continue }
            seen[identity] = Seen(records: Dictionary(manifest.versions.map { ($0.id, $0) }) { $1 }, path: manifest.lastKnownPath)
        }
        return seen
    }

    /// Stops watching.
    package func stop() {
        state.withLock { $0.watcher }?.stop()
    }

    private func changed(_ events: [InotifyWatcher.Event]) {
        var identities = Set<String>()
        for event in events {
            switch event {
            case .created(let path), .modified(let path), .deleted(let path), .movedIn(let path), .movedOut(let path):
                if let identity = VersionStore.identity(ofManifestNamed: (path as NSString).lastPathComponent) { identities.insert(identity) }
            case .moved(let from, let to):
                for path in [from, to] {
                    if let identity = VersionStore.identity(ofManifestNamed: (path as NSString).lastPathComponent) { identities.insert(identity) }
                }
            case .overflow:
                // Events were lost: every manifest is looked at again (what changed meanwhile is not
                // told, but later changes are told right).
                logger.warning("version store events were lost; presenters may have missed version messages")
                state.withLock { $0.seen = lookAtEveryManifest() }
                return
            }
        }
        for identity in identities {
            let news: (String, [(VersionChange, VersionRecord)])? = state.withLock { state in
                let before = state.seen[identity]
                let manifest = peek(identity)
                let now = Dictionary((manifest?.versions ?? []).map { ($0.id, $0) }) { $1 }
                let path = manifest?.lastKnownPath ?? before?.path
                state.seen[identity] = manifest.map { Seen(records: now, path: $0.lastKnownPath) }
                guard let path else { return nil }
                var changes: [(VersionChange, VersionRecord)] = []
                for (id, record) in now.sorted(by: { $0.value.addedAt < $1.value.addedAt }) {
                    if let old = before?.records[id] {
                        if !old.isResolved && record.isResolved && record.isConflict { changes.append((.resolved, record)) }
                    } else {
                        changes.append((.gained, record))
                    }
                }
                for (id, record) in (before?.records ?? [:]).sorted(by: { $0.value.addedAt < $1.value.addedAt }) where now[id] == nil {
                    changes.append((.lost, record))
                }
                return changes.isEmpty ? nil : (path, changes)
            }
            if let news { report(news.0, news.1) }
        }
    }

    /// The manifest as it is now, or nil (absent, or damaged: the store itself reports that when
    /// it next reads it; the watcher never moves anything).
    private func peek(_ identity: String) -> VersionManifest? {
        try? store.manifest(identity, movingAsideIfDamaged: false)
    }
}
