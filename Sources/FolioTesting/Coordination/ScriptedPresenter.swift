import Foundation
import Folio

/// How a scripted presenter answers.
struct PresenterBehaviour: Sendable {
    /// "ok", "error" (fails with CocoaError 513), "never" (never calls back) or "write" (saves through
    /// a coordinated write with a coordinator created with the presenter).
    var save = "ok"
    /// "ok", "error" or "never".
    var accommodate = "ok"
    /// "ok", "never", "reacquire" (hands back a reacquirer) or "delay" (answers after `delayMs`).
    var relinquish = "ok"
    var delayMilliseconds = 0

    init(_ command: WireValue) {
        save = command["save"]?.stringValue ?? "ok"
        accommodate = command["accommodate"]?.stringValue ?? "ok"
        relinquish = command["relinquish"]?.stringValue ?? "ok"
        delayMilliseconds = Int(command["delayMs"]?.intValue ?? 0)
    }
}

/// The shared part of the scripted presenters: answers by behaviour, logs every callback with the
/// time and whether it ran on the presenter's own queue.
final class PresenterScript: @unchecked Sendable {
    let name: String
    let behaviour: PresenterBehaviour
    let queue: OperationQueue
    let emit: @Sendable (WireValue) -> Void
    weak var engine: CoordinationEngine?
    private let lock = NSLock()
    private var url: URL?

    init(name: String, url: URL?, behaviour: PresenterBehaviour, engine: CoordinationEngine, emit: @escaping @Sendable (WireValue) -> Void) {
        self.name = name
        self.url = url
        self.behaviour = behaviour
        self.engine = engine
        self.emit = emit
        queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "presenter \(name)"
    }

    var currentURL: URL? {
        lock.lock()
        defer { lock.unlock() }
        return url
    }

    func setURL(_ new: URL) {
        lock.lock()
        url = new
        lock.unlock()
    }

    func log(_ callback: String, _ extra: [String: WireValue] = [:]) {
        var event: [String: WireValue] = [
            "event": "presenter", "name": .string(name), "callback": .string(callback), "t": .int(MonotonicClock.now()),
            "onQueue": .bool(OperationQueue.current === queue),
        ]
        for (key, value) in extra { event[key] = value }
        emit(.object(event))
    }

    func relinquish(_ callback: String, _ block: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        log(callback)
        switch behaviour.relinquish {
        case "never": return
        case "reacquire": block({ [self] in self.log("reacquire") })
        case "delay":
            usleep(useconds_t(behaviour.delayMilliseconds * 1000))
            log("\(callback)Answered")
            block(nil)
        default: block(nil)
        }
    }

    func answer(_ callback: String, _ mode: String, _ handler: @escaping @Sendable ((any Error)?) -> Void, presenter: any FilePresenter) {
        log(callback)
        switch mode {
        case "never": return
        case "error": handler(CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: "\(name) refuses"]))
        case "write":
            guard let engine else { return handler(nil) }
            let coordinator = FileCoordinator(filePresenter: presenter, engine: engine)
            var error: NSError?
            let target = currentURL
            coordinator.coordinate(writingItemAt: target ?? URL(fileURLWithPath: "/nonexistent"), options: [], error: &error) { url in
                try? Data("saved by \(name)\n".utf8).write(to: url)
            }
            log("saved", ["ok": .bool(error == nil)])
            handler(error)
        default: handler(nil)
        }
    }
}

/// What both scripted presenters share: answers and logs come from their script.
protocol ScriptedPresenting: FilePresenter {
    var script: PresenterScript { get }
}

extension ScriptedPresenting {
    var presentedItemURL: URL? { script.currentURL }
    var presentedItemOperationQueue: OperationQueue { script.queue }
    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        script.relinquish("relinquishToReader", reader)
    }
    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        script.relinquish("relinquishToWriter", writer)
    }
    func savePresentedItemChanges(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        script.answer("save", script.behaviour.save, completionHandler, presenter: self)
    }
    func accommodatePresentedItemDeletion(completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        script.answer("accommodateDeletion", script.behaviour.accommodate, completionHandler, presenter: self)
    }
    func presentedItemDidMove(to newURL: URL) {
        script.setURL(newURL)
        script.log("didMove", ["to": .string(newURL.path)])
    }
    func presentedItemDidChange() { script.log("didChange") }
    func presentedItemDidGain(_ version: FileVersion) { script.log("didGain", ["version": .string(version.identifier)]) }
    func presentedItemDidLose(_ version: FileVersion) { script.log("didLose", ["version": .string(version.identifier)]) }
    func presentedItemDidResolveConflict(_ version: FileVersion) { script.log("didResolve", ["version": .string(version.identifier)]) }
}

/// A presenter of a file, driven by a script: it has no subitem methods, so Apple's fallbacks apply.
final class ScriptedPresenter: ScriptedPresenting, @unchecked Sendable {
    let script: PresenterScript
    init(script: PresenterScript) { self.script = script }
}

/// A presenter of a directory, driven by a script, with every subitem method.
final class ScriptedDirectoryPresenter: ScriptedPresenting, @unchecked Sendable {
    let script: PresenterScript
    init(script: PresenterScript) { self.script = script }

    func accommodatePresentedSubitemDeletion(at url: URL, completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        script.log("accommodateSubitemDeletion", ["path": .string(url.path)])
        completionHandler(nil)
    }
    func presentedSubitemDidAppear(at url: URL) { script.log("subitemDidAppear", ["path": .string(url.path)]) }
    func presentedSubitemDidChange(at url: URL) { script.log("subitemDidChange", ["path": .string(url.path)]) }
    func presentedSubitem(at oldURL: URL, didMoveTo newURL: URL) {
        script.log("subitemDidMove", ["path": .string(oldURL.path), "to": .string(newURL.path)])
    }
    func presentedSubitem(at url: URL, didGain version: FileVersion) {
        script.log("subitemDidGain", ["path": .string(url.path), "version": .string(version.identifier)])
    }
    func presentedSubitem(at url: URL, didLose version: FileVersion) {
        script.log("subitemDidLose", ["path": .string(url.path), "version": .string(version.identifier)])
    }
    func presentedSubitem(at url: URL, didResolve version: FileVersion) {
        script.log("subitemDidResolve", ["path": .string(url.path), "version": .string(version.identifier)])
    }
}
