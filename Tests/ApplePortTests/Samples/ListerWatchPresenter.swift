// Sample 34 of Apple's "Lister" sample (2016, Swift; the watch extension's
// ListInterfaceController.swift): a presenter that disables editing while another process reads
// or writes the list, saves its unsaved changes when asked, reloads when the list changes and
// follows it when it moves.
//
// Lines changed from Apple's: `import WatchKit` → `import Folio` (+ Foundation); the class is a
// `WKInterfaceController` in Apple's, a plain class here; Apple's Swift 2.2 spellings → today's,
// as Apple's later Lister has them (`NSURL` → `URL`, `NSOperationQueue` → `OperationQueue`,
// `relinquishPresentedItemToReader` → `relinquishPresentedItem(toReader:)`,
// `savePresentedItemChangesWithCompletionHandler` → `savePresentedItemChanges(completionHandler:)`,
// `presentedItemDidMoveToURL` → `presentedItemDidMove(to:)`; the relinquish blocks `@Sendable`, as
// today's SDK declares them, which Swift 6 requires of Apple's code too); `setupInterfaceTable()` (which
// fills the watch's table) → a count of the reloads; `saveUnsavedChangesWithCompletionHandler`
// (lines 219–251, not quoted; it writes the list through a coordinated write) → a coordinated
// write of the unsaved text by this presenter.
import Folio
import FolioTestTraits
import Foundation
import Testing

final class ListInterfaceController: NSObject, NSFilePresenter, @unchecked Sendable {
    private let lock = NSLock()
    private var _listURL: URL
    var listURL: URL {
        get { lock.withLock { _listURL } }
        set { lock.withLock { _listURL = newValue } }
    }
    private var _isEditingDisabled = false
    var isEditingDisabled: Bool {
        get { lock.withLock { _isEditingDisabled } }
        set { lock.withLock { _isEditingDisabled = newValue; if newValue { _timesDisabled += 1 } } }
    }
    private var _timesDisabled = 0
    var timesDisabled: Int { lock.withLock { _timesDisabled } }
    private var _reloads = 0
    var reloads: Int { lock.withLock { _reloads } }
    private var _unsavedText: String?
    var unsavedText: String? {
        get { lock.withLock { _unsavedText } }
        set { lock.withLock { _unsavedText = newValue } }
    }

    init(listURL: URL) {
        _listURL = listURL
        super.init()
        NSFileCoordinator.addFilePresenter(self)
    }

    func removeFilePresenter() { NSFileCoordinator.removeFilePresenter(self) }

    var presentedItemURL: URL? {
        return listURL
    }

    var presentedItemOperationQueue = OperationQueue()

    func setupInterfaceTable() { lock.withLock { _reloads += 1 } }

    func saveUnsavedChanges(completionHandler: @escaping (Bool) -> Void) {
        guard let text = unsavedText else { return completionHandler(true) }
        var success = false
        NSFileCoordinator(filePresenter: self).coordinate(writingItemAt: listURL, options: .forReplacing, error: nil) { url in
            success = (try? Data(text.utf8).write(to: url, options: .atomic)) != nil
        }
        if success { unsavedText = nil }
        completionHandler(success)
    }

    // MARK: NSFilePresenter

    func relinquishPresentedItem(toReader reader: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        isEditingDisabled = true

        reader {
            self.isEditingDisabled = false
        }
    }

    func relinquishPresentedItem(toWriter writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        isEditingDisabled = true

        writer {
            self.isEditingDisabled = false
        }
    }

    func presentedItemDidChange() {
        setupInterfaceTable()
    }

    func savePresentedItemChanges(completionHandler: @escaping (Error?) -> Void) {
        saveUnsavedChanges { success in
            completionHandler(nil)
        }
    }

    func presentedItemDidMove(to newURL: URL) {
        listURL = newURL
    }
}

@Suite("Apple's samples: Lister's watch list", .elasticPool)
struct ListerWatchPresenterTests {
    /// Another reader's read first gets the watch's unsaved changes saved, with editing off
    /// while it reads; a write makes the list reload; a move is followed.
    @Test func thePresenterSavesRelinquishesReloadsAndFollows() async throws {
        let world = try PortWorld("lister-watch")
        let url = world.url("Today.list")
        try Data("tea".utf8).write(to: url)
        let controller = ListInterfaceController(listURL: url)
        defer { controller.removeFilePresenter() }
        controller.unsavedText = "tea, bread"

        // Another reader (here a coordinator of this process's; across processes it is the
        // daemon that asks, with the same messages).
        let reader = NSFileCoordinator()
        var seen: Data?
        var disabledWhileRead = false
        reader.coordinate(readingItemAt: url, options: [], error: nil) { newURL in
            seen = try? Data(contentsOf: newURL)
            disabledWhileRead = controller.isEditingDisabled
        }
        #expect(seen == Data("tea, bread".utf8), "the reader saw the saved changes")
        #expect(controller.unsavedText == nil)
        #expect(disabledWhileRead)
        #expect(await world.wait { !controller.isEditingDisabled })

        let coordinator = NSFileCoordinator()
        coordinator.coordinate(writingItemAt: url, options: [], error: nil) { newURL in
            try? Data("tea, bread, jam".utf8).write(to: newURL)
        }
        #expect(await world.wait { controller.reloads >= 1 })

        let moved = world.url("Tomorrow.list")
        coordinator.coordinate(writingItemAt: url, options: .forMoving, writingItemAt: moved, options: .forReplacing, error: nil) { from, to in
            try? FileManager.default.moveItem(at: from, to: to)
            coordinator.item(at: from, didMoveTo: to)
        }
        #expect(await world.wait { controller.listURL.path == moved.path })
    }
}
