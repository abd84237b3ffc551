// Sample 9 of Apple's "Lister" sample (2016, Swift; ListerKit's recent-document presenter): a
// file presenter that follows its item's moves and changes and lets its deletion go ahead,
// registered with `NSFileCoordinator.addFilePresenter`.
//
// Lines changed from Apple's: `import UIKit` → `import Folio`; Apple's Swift 2.2 spellings →
// today's (`NSURL` → `URL`, `NSOperationQueue` → `OperationQueue`,
// `accommodatePresentedItemDeletionWithCompletionHandler` → `accommodatePresentedItemDeletion(completionHandler:)`,
// `presentedItemDidMoveToURL` → `presentedItemDidMove(to:)`, as Apple's later Lister has them);
// the operation queue is a queue of
// the presenter's own rather than `mainQueue()` (a test process does not run the main queue);
// `refreshNameAndSubtitle()` (which reads the localized name, for the UI) left out.
import Folio
import FolioTestTraits
import Foundation
import Testing

protocol RecentPresenterDelegate: AnyObject {
    func recentWasDeleted(_ recent: RecentPresenter)
    func recentNeedsReload(_ recent: RecentPresenter)
}

final class RecentPresenter: NSObject, NSFilePresenter, @unchecked Sendable {
    private(set) var URL: Foundation.URL
    weak var delegate: RecentPresenterDelegate?
    private let queue = OperationQueue()

    init(url: Foundation.URL) {
        URL = url
        super.init()
        queue.maxConcurrentOperationCount = 1
        NSFileCoordinator.addFilePresenter(self)
    }

    func stop() { NSFileCoordinator.removeFilePresenter(self) }

    var presentedItemURL: Foundation.URL? {
        return URL
    }

    var presentedItemOperationQueue: OperationQueue {
        return queue
    }

    // MARK: NSFilePresenter Notifications

    func accommodatePresentedItemDeletion(completionHandler: @escaping (Error?) -> Void) {
        /*
            Notify our delegate that the recent was deleted, then call the completion
            handler to allow for the deletion to go through.
        */
        delegate?.recentWasDeleted(self)

        completionHandler(nil)
    }

    func presentedItemDidMove(to newURL: Foundation.URL) {
        /*
            Update our presented item URL to the new location, then notify our
            delegate that the recent needs to be refreshed in the UI.
        */
        URL = newURL

        delegate?.recentNeedsReload(self)
    }

    func presentedItemDidChange() {
        // Notify the delegate that the recent needs to be refreshed in the UI.
        delegate?.recentNeedsReload(self)
    }
}

final class RecentsRecorder: RecentPresenterDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [String] = []
    var calls: [String] { lock.withLock { heard } }
    func recentWasDeleted(_ recent: RecentPresenter) { lock.withLock { heard.append("deleted") } }
    func recentNeedsReload(_ recent: RecentPresenter) { lock.withLock { heard.append("reload \(recent.URL.lastPathComponent)") } }
}

@Suite("Apple's samples: Lister", .elasticPool)
struct ListerRecentPresenterTests {
    @Test func aRecentFollowsChangesMovesAndDeletion() async throws {
        let world = try PortWorld("lister")
        let url = world.url("Groceries.list")
        try Data("milk".utf8).write(to: url)
        let recent = RecentPresenter(url: url)
        defer { recent.stop() }
        let recorder = RecentsRecorder()
        recent.delegate = recorder

        let coordinator = NSFileCoordinator()
        coordinator.coordinate(writingItemAt: url, options: [], error: nil) { newURL in
            try? Data("milk, eggs".utf8).write(to: newURL)
        }
        #expect(await world.wait { recorder.calls.contains("reload Groceries.list") })

        let moved = world.url("Shopping.list")
        coordinator.coordinate(writingItemAt: url, options: .forMoving, writingItemAt: moved, options: .forReplacing, error: nil) { from, to in
            try? FileManager.default.moveItem(at: from, to: to)
            coordinator.item(at: from, didMoveTo: to)
        }
        #expect(await world.wait { recorder.calls.contains("reload Shopping.list") })
        #expect(recent.presentedItemURL?.path == moved.path)

        coordinator.coordinate(writingItemAt: moved, options: .forDeleting, error: nil) { newURL in
            try? FileManager.default.removeItem(at: newURL)
        }
        #expect(recorder.calls.contains("deleted"), "the deletion waited for the presenter")
        #expect(!FileManager.default.fileExists(atPath: moved.path))
    }
}
