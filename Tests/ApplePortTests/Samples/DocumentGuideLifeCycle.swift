// Samples 15–18 of Apple's "Document-Based App Programming Guide for iOS": Listings 4-6 and 4-7
// (create a document or open it, close it when the view goes), 4-11 and 4-12 (observe the
// document's state and act on its bits), 5-2 (every edit counted, so autosave saves it) and
// 4-14 (delete a document with a coordinated write on a background queue).
//
// Apple's listings are Objective-C; this is their Swift, line for line. Lines changed beyond
// that: `import UIKit` → `import Folio` (+ Foundation); the view controller's hooks
// (`viewWillAppear:`, `viewDidDisappear:`, `initWithNibName:`, `textViewDidChange:`,
// `tableView:commitEditingStyle:forRowAtIndexPath:`) → plain methods of the same bodies; the UI
// they touch (`_textView`, `_statusView`, the conflict button, the table's rows, the modal
// dismissal) → properties that record what the UI would show; `@selector` observers → block
// observers (no Objective-C runtime here).
import Folio
import FolioTestTraits
import Foundation
import Testing

final class ImageNotesDetailController: @unchecked Sendable {
    let document: ImageNotesDocument
    var createFile: Bool
    private let lock = NSLock()
    private var _shownText: String?
    private var _shownStates: [UIDocument.State] = []
    private var _editing = true
    private var _conflictButtonShown = false
    var shownText: String? { lock.withLock { _shownText } }
    var shownStates: [UIDocument.State] { lock.withLock { _shownStates } }
    var editing: Bool { lock.withLock { _editing } }
    var conflictButtonShown: Bool { lock.withLock { _conflictButtonShown } }
    private var stateObserver: (any NSObjectProtocol)?

    // Listing 4-11: Adding an observer of the UIDocumentStateChangedNotification notification
    init(fileURL url: URL, createNewFile: Bool) {
        document = ImageNotesDocument(fileURL: url)
        createFile = createNewFile
        stateObserver = NotificationCenter.default.addObserver(
            forName: UIDocument.stateChangedNotification, object: document, queue: nil) { [weak self] _ in
            self?.documentStateChanged()
        }
    }

    deinit {
        if let stateObserver { NotificationCenter.default.removeObserver(stateObserver) }
    }

    // Listing 4-6: Opening a document
    func viewWillAppear() {
        if createFile {
            document.save(to: document.fileURL, for: .forCreating) { success in
                self.lock.withLock { self._shownText = self.document.text }
            }
            createFile = false
        } else {
            if document.documentState.contains(.closed) {
                document.open(completionHandler: nil)
            }
        }
    }

    // Listing 4-7: Closing a document
    func viewDidDisappear() {
        document.close(completionHandler: nil)
    }

    // Listing 4-12: Evaluating the current document state
    func documentStateChanged() {
        let state = document.documentState
        lock.withLock { _shownStates.append(state) }
        if state.contains(.editingDisabled) {
            lock.withLock { _editing = false }
        }
        if state.contains(.inConflict) {
            lock.withLock { _conflictButtonShown = true }
        } else {
            lock.withLock { _conflictButtonShown = false }
        }
    }
}

final class NoteEditorController: @unchecked Sendable {
    let document: NoteDocument
    init(document: NoteDocument) { self.document = document }

    // Listing 5-2: Updating the change count of a document
    func textViewDidChange(_ text: String) {
        document.documentText = text
        document.updateChangeCount(.done)
    }
}

final class NoteListController: @unchecked Sendable {
    var fileList: [URL]
    init(fileList: [URL]) { self.fileList = fileList }

    // Listing 4-14: Deleting a document
    func commitDeletion(forRow row: Int) {
        let fileURL = fileList[row]
        DispatchQueue.global(qos: .default).async {
            let fileCoordinator = NSFileCoordinator(filePresenter: nil)
            fileCoordinator.coordinate(writingItemAt: fileURL, options: .forDeleting, error: nil) { writingURL in
                let fileManager = FileManager()
                try? fileManager.removeItem(at: writingURL)
            }
        }
        fileList.remove(at: row)
    }
}

@Suite("Apple's samples: Managing the Life Cycle of a Document", .elasticPool)
struct DocumentGuideLifeCycleTests {
    /// A new document is created when the view appears and shows its text; closed when the view
    /// goes; opened (not created) when a view for the existing file appears.
    @Test func createOpenAndCloseWithTheView() async throws {
        let world = try PortWorld("life-cycle")
        try await world.run {
            let url = world.url("Notes.imagenotes")
            let creating = ImageNotesDetailController(fileURL: url, createNewFile: true)
            creating.document.text = "first words"
            creating.viewWillAppear()
            #expect(await world.wait { creating.shownText == "first words" })
            #expect(!creating.createFile)
            creating.viewDidDisappear()
            #expect(await world.wait { creating.document.documentState.contains(.closed) })
            let saved = try Data(contentsOf: url.appendingPathComponent(TextFileName))
            #expect(saved == Data("first words".utf8))

            let opening = ImageNotesDetailController(fileURL: url, createNewFile: false)
            opening.viewWillAppear()
            #expect(await world.wait { opening.document.documentState == .normal })
            #expect(opening.document.fileWrapper?.fileWrappers?[TextFileName]?.regularFileContents == Data("first words".utf8))
            // The view hears of the state by a notification, after the state changed.
            #expect(await world.wait { opening.shownStates.last == .normal })
            #expect(!opening.conflictButtonShown && opening.editing)
            opening.viewDidDisappear()
            #expect(await world.wait { opening.document.documentState.contains(.closed) })
        }
    }

    /// A file with an unresolved conflict version opens in conflict: the observer shows the
    /// conflict button, and hides it once the conflict is resolved.
    @Test func theStateObserverShowsAConflict() async throws {
        let world = try PortWorld("state-bits")
        try await world.run {
            let url = world.url("Shared.note")
            try Data("mine".utf8).write(to: url)
            _ = try world.store.addVersion(ofItemAt: url.path, data: Data("theirs".utf8), modified: Date(), kind: .conflict, isConflict: true)
            let controller = ImageNotesDetailController(fileURL: url, createNewFile: false)
            controller.viewWillAppear()
            #expect(await world.wait { controller.conflictButtonShown })
            #expect(controller.shownStates.last?.contains(.inConflict) == true)
            let conflict = try #require(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.first)
            conflict.isResolved = true
            #expect(await world.wait { !controller.conflictButtonShown })
            controller.viewDidDisappear()
            #expect(await world.wait { controller.document.documentState.contains(.closed) })
        }
    }

    /// Each edit counts a change; autosave then writes the document without an explicit save.
    @Test func countedChangesAreAutosaved() async throws {
        let world = try PortWorld("change-count")
        try await world.run {
            let url = world.url("Draft.note")
            try Data("draft".utf8).write(to: url)
            let document = NoteDocument(fileURL: url)
            document.autosaveDelay = .milliseconds(100)
            #expect(await document.open())
            let editor = NoteEditorController(document: document)
            editor.textViewDidChange("draft, then more")
            #expect(document.hasUnsavedChanges)
            #expect(await world.wait { (try? Data(contentsOf: url)) == Data("draft, then more".utf8) })
            #expect(await world.wait { !document.hasUnsavedChanges })
            #expect(await document.close())
        }
    }

    /// The row goes at once; the file goes through a coordinated write on a background queue.
    @Test func deletingARowDeletesTheFile() async throws {
        let world = try PortWorld("delete-row")
        let urls = [world.url("One.note"), world.url("Two.note")]
        for url in urls { try Data("x".utf8).write(to: url) }
        let list = NoteListController(fileList: urls)
        list.commitDeletion(forRow: 0)
        #expect(list.fileList == [urls[1]])
        #expect(await world.wait { !FileManager.default.fileExists(atPath: urls[0].path) })
        #expect(FileManager.default.fileExists(atPath: urls[1].path))
    }
}
