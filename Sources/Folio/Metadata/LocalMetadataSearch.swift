#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import FolioSystem
import Foundation
import Logging
import SystemPackage

/// A query's search in this process: walks the scope folders with `DirectoryScanner`, watches every
/// folder with inotify, hears coordinated writes through `MetadataStitching`, and batches what
/// changed into one update per batching interval. A queue overflow rescans the scopes.
final class LocalMetadataSearch: @unchecked Sendable {
    /// Whether live queries watch the file system (tests switch it off to show that stitching alone
    /// reports coordinated writes).
    @TaskLocal static var watchesFileSystem = true

    private let predicate: MetadataPredicate
    private let folders: [String]
    private let interval: TimeInterval
    private let watches: Bool
    private weak var query: MetadataQuery?
    private let work = DispatchQueue(label: "folio.metadata-search")
    private let logger = Logger(label: "folio.metadata-query")
    /// The drive replica of this process's user: its files are current, its stubs not downloaded.
    private let driveRoot = FolioPaths().driveDirectory
    private var watcher: InotifyWatcher?
    private var dirty = Set<String>()
    private var dirtyTrees = Set<String>()
    private var flushScheduled = false
    private let stitchLock = NSLock()
    private var stitched = Set<String>()
    private var stopped = false
    /// How many entries a walk reads between two progress reports.
    static let progressStride = 5000

    init(predicate: MetadataPredicate, folders: [String], interval: TimeInterval, query: MetadataQuery) {
        self.predicate = predicate
        self.folders = folders
        self.interval = interval
        self.query = query
        watches = Self.watchesFileSystem
    }

    func start() {
        MetadataStitching.shared.add(self) { [weak self] paths in
            guard let self else { return }
            // Recorded before the writer's claim is released — under a lock, never waiting for the
            // search's queue, which may be busy gathering.
            let relevant = paths.filter(self.inScope)
            guard !relevant.isEmpty else { return }
            self.stitchLock.withLock { self.stitched.formUnion(relevant) }
            self.work.async { self.takeStitched() }
        }
        work.async { [self] in
            if watches {
                do {
                    let watcher = try InotifyWatcher(logger: logger)
                    self.watcher = watcher
                    watcher.deliver(on: work) { [weak self] events in
                        guard let self else { return false }
                        handle(events)
                        return true
                    }
                } catch {
                    logger.warning("the query cannot watch the file system; it hears only coordinated writes", metadata: ["error": "\(error)"])
                }
            }
            for folder in folders {
                watcher?.watch(folder)
                walk(folder) { batch in query?.gathered(batch, final: false) }
            }
            query?.gathered([:], final: true)
        }
    }

    func stop() {
        MetadataStitching.shared.remove(self)
        work.async { [self] in
            stopped = true
            watcher?.stop()
            watcher = nil
        }
    }

    /// Handles a lost-events report as the watcher would (tests).
    func simulateOverflow() {
        work.async { [self] in handle([.overflow]) }
    }

    /// Applies what `disableUpdates` held back.
    func flushNow() {
        work.async { [self] in query?.changed([:]) }
    }

    // MARK: Walking

    private func values(_ path: String, _ name: String, _ status: FileStatus) -> MetadataFacts? {
        guard let facts = MetadataFacts.item(path: path, name: name, status: status, driveRoot: driveRoot), predicate.evaluate({ facts.value($0) }) else {
            return nil
        }
        return facts.resolvingTags()
    }

    /// Walks `root`, watching its folders, and reports the matching items in batches.
    private func walk(_ root: String, report: ([String: MetadataFacts]) -> Void) {
        var seen = 0
        var batch: [String: MetadataFacts] = [:]
        DirectoryScanner().scan(
            root,
            visit: { entry in
                if entry.status.kind == .directory { watcher?.watch(entry.path) }
                if let values = values(entry.path, entry.name, entry.status) { batch[values.path] = values }
                seen += 1
                if seen % Self.progressStride == 0, !batch.isEmpty {
                    report(batch)
                    batch = [:]
                }
                return !stopped
            },
            skipped: { path, reason in logger.notice("not indexed", metadata: ["path": "\(path)", "reason": "\(reason)"]) })
        if !batch.isEmpty { report(batch) }
    }

    // MARK: Changes

    private func inScope(_ path: String) -> Bool {
        folders.contains { CoordinationPath.isAncestor($0, of: path) }
    }

    private func takeStitched() {
        let paths = stitchLock.withLock { () -> Set<String> in
            defer { stitched.removeAll() }
            return stitched
        }
        guard !paths.isEmpty else { return }
        dirty.formUnion(paths)
        schedule()
    }

    /// Handles a batch on the search's queue; returns once it is handled, so the watcher reads
    /// the kernel's queue only as fast as the search keeps up.
    private func handle(_ events: [InotifyWatcher.Event]) {
        guard !stopped else { return }
        for event in events {
            switch event {
            case .overflow:
                dirtyTrees.formUnion(folders)
            case .created(let path), .movedIn(let path):
                appeared(path)
            case .moved(let from, let to):
                dirty.insert(from)
                appeared(to)
            case .modified(let path), .deleted(let path), .movedOut(let path):
                dirty.insert(path)
            }
        }
        schedule()
    }

    /// An item that appeared: a folder's contents are walked.
    private func appeared(_ path: String) {
        if (try? FileStatus(path: FilePath(path)))?.kind == .directory { dirtyTrees.insert(path) }
        dirty.insert(path)
    }

    private func schedule() {
        guard !flushScheduled, !stopped else { return }
        flushScheduled = true
        work.asyncAfter(deadline: .now() + interval) { [weak self] in self?.flush() }
    }

    private func flush() {
        flushScheduled = false
        guard !stopped, let query else { return }
        var changes: [String: MetadataFacts?] = [:]
        let current = query.currentPaths
        for tree in dirtyTrees where inScope(tree) || folders.contains(tree) {
            var found: [String: MetadataFacts] = [:]
            walk(tree) { found.merge($0) { $1 } }
            for (path, values) in found { changes[path] = .some(values) }
            for path in current where CoordinationPath.isAncestor(tree, of: path) && path != tree && found[path] == nil {
                changes[path] = .some(nil)
            }
        }
        // A placeholder's events are its document's.
        let documents = Set(dirty.map { PlaceholderStub.isStubName(($0 as NSString).lastPathComponent) ? PlaceholderStub.documentName(ofStub: $0) : $0 })
        for path in documents where changes[path] == nil {
            let stub = path + PlaceholderStub.suffix
            if access(path, F_OK) != 0, let status = try? FileStatus(path: FilePath(stub)) {
                changes[path] = .some(values(stub, (stub as NSString).lastPathComponent, status))
                continue
            }
            guard let status = try? FileStatus(path: FilePath(path)) else {
                changes[path] = .some(nil)
                // A folder that went: everything the results had under it went too.
                for inside in current where CoordinationPath.isAncestor(path, of: inside) && inside != path { changes[inside] = .some(nil) }
                continue
            }
            changes[path] = .some(values(path, (path as NSString).lastPathComponent, status))
        }
        dirty.removeAll()
        dirtyTrees.removeAll()
        query.changed(changes)
    }
}
