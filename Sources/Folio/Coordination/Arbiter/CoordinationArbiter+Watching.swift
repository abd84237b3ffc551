import FolioSystem
import Logging

/// Beyond Apple: writes made without coordination — a shell's `echo >`, an editor's save by rename,
/// `mv` — are seen through inotify and reported to presenters as `presentedItemDidChange`,
/// `presentedSubitemDidAppear`/`DidChange` and moves, so no presenter keeps stale content unknowingly.
///
/// The arbiter watches the folder of every presented item (to see replacements and moves) and
/// every presented folder (its direct contents). Changes made inside a granted coordinated write
/// are left to that write's own notifications; stamps (inode, size, time) of what presenters were
/// last told keep late kernel events of a coordinated write from being reported twice.
extension CoordinationArbiter {
    /// Recomputes which folders a presenter needs watched.
    func updateWatches(for key: PresenterKey, state: inout ArbiterState) {
        guard configuration.watchesUncoordinatedChanges else { return }
        var wanted: [String] = []
        if let path = state.presenters[key]?.path {
            if let parent = CoordinationPath.ancestors(of: path).first { wanted.append(parent) }
            let stamp = ItemStamp(path: path)
            if stamp.isDirectory { wanted.append(path) }
            state.stamps[path] = stamp
        }
        let previous = state.presenterWatches[key] ?? []
        guard previous != wanted else { return }
        state.presenterWatches[key] = wanted.isEmpty ? nil : wanted
        for directory in wanted { retain(directory, &state) }
        for directory in previous { releaseWatch(directory, &state) }
    }

    private func retain(_ directory: String, _ state: inout ArbiterState) {
        state.watchCounts[directory, default: 0] += 1
        guard state.watchCounts[directory] == 1 else { return }
        if state.watcher == nil {
            do {
                // The handler runs on the watcher's thread: the arbiter works under its lock, not in tasks.
                state.watcher = try InotifyWatcher(logger: logger) { [weak self] events in self?.externalChanges(events) }
            } catch {
                logger.warning("cannot watch for uncoordinated changes", metadata: ["error": "\(error)"])
                return
            }
        }
        state.watcher?.watch(directory)
    }

    private func releaseWatch(_ directory: String, _ state: inout ArbiterState) {
        guard let count = state.watchCounts[directory] else { return }
        if count <= 1 {
            state.watchCounts[directory] = nil
            state.watcher?.unwatch(directory)
        } else {
            state.watchCounts[directory] = count - 1
        }
    }

    /// Remembers what presenters of `path` now know.
    func recordStamp(_ path: String, _ stamp: ItemStamp, _ state: inout ArbiterState) {
        guard configuration.watchesUncoordinatedChanges else { return }
        if state.stamps.count > 50_000 { state.stamps.removeAll(keepingCapacity: true) }
        state.stamps[path] = stamp
    }

    /// Takes one read's worth of kernel events (renames already paired by the watcher).
    func externalChanges(_ events: [InotifyWatcher.Event]) {
        perform { state in
            for event in events {
                switch event {
                case .overflow:
                    logger.notice("inotify queue overflowed; rescanning presented items")
                    for (key, record) in state.presenters {
                        guard let path = record.path else { continue }
                        let stamp = ItemStamp(path: path)
                        guard state.stamps[path] != stamp else { continue }
                        state.stamps[path] = stamp
                        state.emit(to: key.client, .presenter(key.presenter, .didChange, token: nil))
                    }
                case .moved(let from, let to): externalMove(from: from, to: to, &state)
                case .created(let path), .movedIn(let path): externalAppearance(path, &state)
                case .deleted(let path), .movedOut(let path): externalRemoval(path, &state)
                case .modified(let path): externalChange(path, &state)
                }
            }
        }
    }

    /// Whether a granted coordinated write holds `path` (its own notifications cover the change).
    private func isCoordinated(_ path: String, _ state: inout ArbiterState) -> Bool {
        let key = conflictKey(path, &state)
        for claim in state.queue where claim.phase == .granted {
            for item in claim.items where item.access.isWrite {
                if item.key == key || CoordinationPath.isSelfOrDescendant(path, of: item.path) { return true }
            }
        }
        return false
    }

    private func tellAncestors(of path: String, _ message: PresenterMessage, _ state: inout ArbiterState) {
        for ancestor in CoordinationPath.ancestors(of: path) {
            for presenter in presenters(at: ancestor, state) {
                state.emit(to: presenter.client, .presenter(presenter.presenter, message, token: nil))
            }
        }
    }

    private func tellPresenters(at path: String, _ message: PresenterMessage, _ state: inout ArbiterState) {
        for presenter in presenters(at: path, state) {
            state.emit(to: presenter.client, .presenter(presenter.presenter, message, token: nil))
        }
    }

    private func externalChange(_ path: String, _ state: inout ArbiterState) {
        guard !isCoordinated(path, &state) else { return }
        let stamp = ItemStamp(path: path)
        // Gone by the time its late write event is read (moved or deleted since): the event for
        // that says what happened; a change reported now would be one too many.
        guard stamp.exists else { return }
        guard state.stamps[path] != stamp else { return }
        recordStamp(path, stamp, &state)
        if !stamp.isDirectory || isPackagePath(path, &state) { tellPresenters(at: path, .didChange, &state) }
        tellAncestors(of: path, .subitemDidChange(path: path), &state)
    }

    private func externalAppearance(_ path: String, _ state: inout ArbiterState) {
        guard !isCoordinated(path, &state) else { return }
        let stamp = ItemStamp(path: path)
        let previous = state.stamps[path]
        guard previous != stamp else { return }
        recordStamp(path, stamp, &state)
        tellPresenters(at: path, .didChange, &state)
        let replaced = previous?.exists == true
        tellAncestors(of: path, replaced ? .subitemDidChange(path: path) : .subitemDidAppear(path: path), &state)
    }

    private func externalRemoval(_ path: String, _ state: inout ArbiterState) {
        guard !isCoordinated(path, &state) else { return }
        guard state.stamps[path] != .absent else { return }
        recordStamp(path, .absent, &state)
        tellPresenters(at: path, .didChange, &state)
        tellAncestors(of: path, .subitemDidChange(path: path), &state)
    }

    /// A rename: over an existing item (an editor's safe save) it is a change of the destination;
    /// otherwise presenters follow the item to its new place.
    private func externalMove(from: String, to: String, _ state: inout ArbiterState) {
        guard !isCoordinated(from, &state), !isCoordinated(to, &state) else { return }
        let stamp = ItemStamp(path: to)
        if state.stamps[from] == .absent && state.stamps[to] == stamp { return }  // reported by item(at:didMoveTo:)
        let replaced = state.stamps[to]?.exists == true || state.presentersByPath[to] != nil
        let presentedInside = state.presenters.values.contains { record in
            record.path.map { CoordinationPath.isSelfOrDescendant($0, of: from) } ?? false
        }
        if replaced {
            recordStamp(to, stamp, &state)
            tellPresenters(at: to, .didChange, &state)
            tellAncestors(of: to, .subitemDidChange(path: to), &state)
            if presentedInside { applyMove(from: from, to: to, excluding: nil, state: &state) }
        } else {
            applyMove(from: from, to: to, excluding: nil, state: &state)
        }
        recordStamp(from, .absent, &state)
        recordStamp(to, stamp, &state)
    }
}
