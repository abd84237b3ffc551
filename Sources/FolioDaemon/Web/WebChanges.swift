import Folio
import FolioSystem
import Foundation
import Logging
import Synchronization

/// What the open pages hear (`GET /api/events`).
enum WebEvent: Sendable {
    /// Folders whose items changed.
    case folders(Set<String>)
    /// The picker's open requests changed (one was shown, answered, cancelled or withdrawn).
    case picker
    /// The drive's downloads under way (none: they ended).
    case progress([DownloadEntry])
    /// A download ended early, with why.
    case downloadFailed(String, String)
}

/// The open pages' events: which folders changed — the index's changes (everything under its
/// roots, from any app, sync or an uncoordinated edit) and, for folders the index does not hold, an
/// inotify watch on each folder a page listed (the last 64) — and the picker's requests. The index
/// is listened to only while a page is open, so a crawl with no page open records nothing for it;
/// while one is, the page is the document picker's front end (unless `folio pick --serve` is).
final class WebChanges: Sendable {
    private let index: MetadataIndex
    private let logger: Logger
    private struct State {
        var subscribers: [UInt64: AsyncStream<WebEvent>.Continuation] = [:]
        var last: UInt64 = 0
        var indexObserver: UInt64?
        var watcher: InotifyWatcher?
        /// Folders watched outside the index, oldest first.
        var watched: [String] = []
        /// Set once the daemon stops: no stream starts after.
        var finished = false
    }
    private let state = Mutex(State())
    /// Serializes telling the picker whether a page is open (a reload closes one stream and opens
    /// another: the last word must be the current one).
    private let pageLock = NSLock()
    static let watchedFolders = 64

    /// Where the picker's requests go while a page is open.
    let picker: WebPicker
    private let pickerService: PickerService

    init(index: MetadataIndex, picker: PickerService, logger: Logger) {
        self.index = index
        self.logger = logger
        pickerService = picker
        self.picker = WebPicker()
        self.picker.changes = self
    }

    /// A stream of events, until the caller stops iterating it.
    func subscribe() -> AsyncStream<WebEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: WebEvent.self, bufferingPolicy: .bufferingNewest(64))
        let (number, first) = state.withLock { state -> (UInt64, Bool) in
            guard !state.finished else { return (0, false) }
            state.last += 1
            state.subscribers[state.last] = continuation
            return (state.last, state.subscribers.count == 1)
        }
        guard number != 0 else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(number) }
        if first { updatePage() }
        if first {
            index.work.async { [self] in
                let token = index.live.addFolderObserver { [weak self] folders in self?.publish(folders) }
                let stale = state.withLock { state -> Bool in
                    guard !state.subscribers.isEmpty, state.indexObserver == nil else { return true }
                    state.indexObserver = token
                    return false
                }
                if stale { index.live.removeFolderObserver(token) }
            }
        }
        return stream
    }

    private func unsubscribe(_ number: UInt64) {
        let (observer, last) = state.withLock { state -> (UInt64?, Bool) in
            guard state.subscribers.removeValue(forKey: number) != nil, state.subscribers.isEmpty else { return (nil, false) }
            defer { state.indexObserver = nil }
            return (state.indexObserver, true)
        }
        // The last page closed: requests it showed are cancelled, as closing the picker would.
        if last { updatePage() }
        if let observer { index.work.async { [index] in index.live.removeFolderObserver(observer) } }
    }

    /// Tells the picker whether a page is open, as it is now.
    private func updatePage() {
        pageLock.withLock {
            let open = state.withLock { !$0.subscribers.isEmpty }
            pickerService.setPage(open ? picker : nil)
        }
    }

    /// Ends every page's stream (the daemon stops).
    func finish() {
        let (continuations, watcher) = state.withLock { state in
            defer {
                state.subscribers.removeAll()
                state.watcher = nil
                state.finished = true
            }
            return (Array(state.subscribers.values), state.watcher)
        }
        for continuation in continuations { continuation.finish() }
        watcher?.stop()
        updatePage()
    }

    /// A page listed `folder`, which the index does not hold: watch it (on a blocking pool).
    func watch(_ folder: String) {
        let watcher: InotifyWatcher? = state.withLock { state in
            if let watcher = state.watcher { return watcher }
            do {
                let watcher = try InotifyWatcher(logger: logger) { [weak self] events in self?.publish(Self.folders(of: events)) }
                state.watcher = watcher
                return watcher
            } catch {
                logger.warning("the page cannot watch folders outside the index; they show changes on reload only", metadata: ["error": "\(error)"])
                return nil
            }
        }
        guard let watcher else { return }
        let evicted = state.withLock { state -> String? in
            if let index = state.watched.firstIndex(of: folder) {
                state.watched.remove(at: index)
                state.watched.append(folder)
                return nil
            }
            state.watched.append(folder)
            return state.watched.count > Self.watchedFolders ? state.watched.removeFirst() : nil
        }
        if let evicted { watcher.unwatch(evicted) }
        watcher.watch(folder)
    }

    private func publish(_ folders: Set<String>) {
        guard !folders.isEmpty else { return }
        publish(.folders(folders))
    }

    func publish(_ event: WebEvent) {
        let continuations = state.withLock { Array($0.subscribers.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    private static func folders(of events: [InotifyWatcher.Event]) -> Set<String> {
        var folders = Set<String>()
        func parent(_ path: String) { folders.insert((path as NSString).deletingLastPathComponent) }
        for event in events {
            switch event {
            case .created(let path), .modified(let path), .deleted(let path), .movedIn(let path), .movedOut(let path): parent(path)
            case .moved(let from, let to):
                parent(from)
                parent(to)
            case .overflow: break
            }
        }
        return folders
    }
}
