// Samples 23–27: resolving version conflicts as Apple's code does.
// - 23–24: "Document-Based App Programming Guide for iOS", Listing 6-3 (the user picked a
//   version, or kept the current one). Objective-C in the guide; this is its Swift, line for line.
// - 25: "Synchronizing documents in the iCloud environment" (SimpleiCloudDocument,
//   DetailViewController+Conflict.swift): "latest wins" run inside a coordinated write for
//   metadata only, on a background queue (`pickLatestVersion` is sample 4's).
// - 26: "Lister" (2016, Swift; ListDocumentViewController): keep the current version when the
//   document's state shows a conflict.
// - 27: "Building a Document Browser-Based App" (TextDocument.swift): the same policy inside the
//   document.
//
// Lines changed from Apple's: `import UIKit` (and `import os.log`) → `import Folio` (+
// Foundation); `dismissViewControllerAnimated:` (UI) left out; the conflict resolver (a view
// controller) → its two delegate methods on a plain class; `os_log(…)` → `log(…)`; Lister's
// Swift 2.2 spellings → today's (`.InConflict` → `.inConflict`,
// `removeOtherVersionsOfItemAtURL` → `removeOtherVersionsOfItem(at:)`, `resolved` → `isResolved`)
// and `dispatch_async(dispatch_get_main_queue(), tableView.reloadData)` (UI) left out;
// SimpleiCloudDocument's completion handler is `@Sendable` (Swift 6 asks it of what the
// global queue's block captures, against Apple's SDK too).
import Folio
import FolioTestTraits
import Foundation
import Testing

final class ConflictResolverDelegate: @unchecked Sendable {
    let _document: UIDocument
    init(document: UIDocument) { _document = document }

    // Listing 6-3: Resolving a document-version conflict (the user picked a version)
    func conflictResolver(didResolveWith fileVersion: NSFileVersion) {
        _ = try? fileVersion.replaceItem(at: _document.fileURL, options: [])
        try? NSFileVersion.removeOtherVersionsOfItem(at: _document.fileURL)
        _document.revert(toContentsOf: _document.fileURL, completionHandler: nil)
        let conflictVersions = NSFileVersion.unresolvedConflictVersionsOfItem(at: _document.fileURL) ?? []
        for fileVersion in conflictVersions {
            fileVersion.isResolved = true
        }
    }

    // Listing 6-3 (the user kept the current version)
    func conflictResolverDidResolveWithCurrentVersion() {
        try? NSFileVersion.removeOtherVersionsOfItem(at: _document.fileURL)
        let conflictVersions = NSFileVersion.unresolvedConflictVersionsOfItem(at: _document.fileURL) ?? []
        for fileVersion in conflictVersions {
            fileVersion.isResolved = true
        }
    }
}

extension SimpleiCloudDocumentController {
    // Resolve the conflicts with a coordinated write: version information is metadata of the
    // document, and needs coordinated access in the iCloud environment.
    //
    func resolveConflictsAsynchronously(document: UIDocument, completionHandler: (@Sendable (Bool) -> Void)?) {
        DispatchQueue.global().async {
            NSFileCoordinator().coordinate(writingItemAt: document.fileURL,
                                           options: .contentIndependentMetadataOnly, error: nil) { newURL in
                let shouldRevert = self.pickLatestVersion(for: newURL)
                completionHandler?(shouldRevert)
            }
        }
    }
}

final class ListDocumentController: @unchecked Sendable {
    let document: UIDocument
    var documentURL: URL { document.fileURL }
    private var observer: (any NSObjectProtocol)?

    init(document: UIDocument) {
        self.document = document
        observer = NotificationCenter.default.addObserver(forName: UIDocument.stateChangedNotification, object: document, queue: nil) { [weak self] notification in
            self?.handleDocumentStateChangedNotification(notification: notification)
        }
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    func handleDocumentStateChangedNotification(notification: Notification) {
        if document.documentState.contains(.inConflict) {
            resolveConflicts()
        }
    }

    func resolveConflicts() {
        /*
            Any automatic merging logic or presentation of conflict resolution UI should go here.
            For Lister we'll pick the current version and mark the conflict versions as resolved.
        */
        do {
            try NSFileVersion.removeOtherVersionsOfItem(at: documentURL)

            let conflictVersions = NSFileVersion.unresolvedConflictVersionsOfItem(at: documentURL)!

            for fileVersion in conflictVersions {
                fileVersion.isResolved = true
            }
        }
        // Any encountered errors are swallowed, handle this appropriately in your own apps.
        catch {}
    }
}

final class SelfResolvingTextDocument: UIDocument, @unchecked Sendable {
    var text = ""
    private let logLock = NSLock()
    private var lines: [String] = []
    var logged: [String] { logLock.withLock { lines } }
    private func log(_ line: String) { logLock.withLock { lines.append(line) } }
    private var docStateObserver: (any NSObjectProtocol)?

    override init(fileURL url: URL) {
        docStateObserver = nil
        super.init(fileURL: url)
        docStateObserver = NotificationCenter.default.addObserver(forName: UIDocument.stateChangedNotification, object: self, queue: nil) { _ in
            if self.documentState.contains(.inConflict) {
                self.resolveDocumentConflict()
            }
        }
    }

    override func contents(forType typeName: String) throws -> Any { Data(text.utf8) }
    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        text = String(decoding: contents as? Data ?? Data(), as: UTF8.self)
    }

    private func resolveDocumentConflict() {

        // To accept the current version, remove the other versions,
        // and resolve all the unresolved versions.
        do {
            try NSFileVersion.removeOtherVersionsOfItem(at: fileURL)

            if let conflictingVersions = NSFileVersion.unresolvedConflictVersionsOfItem(at: fileURL) {
                for version in conflictingVersions {
                    version.isResolved = true
                }
            }
        } catch let error {
            log("*** Error: \(error.localizedDescription) ***")
        }
    }
}

@Suite("Apple's samples: resolving version conflicts", .elasticPool)
struct ConflictResolutionSampleTests {
    /// A document in conflict with one other device's version.
    static func conflicted(_ world: PortWorld, _ name: String, mine: String = "mine", theirs: String = "theirs") throws -> URL {
        let url = world.url(name)
        try Data(mine.utf8).write(to: url)
        _ = try world.store.addVersion(ofItemAt: url.path, data: Data(theirs.utf8), modified: Date(), kind: .conflict, isConflict: true)
        return url
    }

    /// The user picks the other device's version: it replaces the file, the open document shows
    /// it, and no conflict is left.
    @Test func theUserPicksTheOtherVersion() async throws {
        let world = try PortWorld("pick-version")
        try await world.run {
            let url = try Self.conflicted(world, "Pick.txt")
            let document = NoteDocument(fileURL: url)
            #expect(await document.open())
            #expect(document.documentState.contains(.inConflict))
            let theirs = try #require(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.first)
            ConflictResolverDelegate(document: document).conflictResolver(didResolveWith: theirs)
            #expect(try Data(contentsOf: url) == Data("theirs".utf8))
            #expect(await world.wait { document.documentText == "theirs" && !document.documentState.contains(.inConflict) })
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty ?? true)
            #expect(await document.close())
        }
    }

    /// The user keeps the current version: the file stays, the conflict goes.
    @Test func theUserKeepsTheCurrentVersion() async throws {
        let world = try PortWorld("keep-version")
        try await world.run {
            let url = try Self.conflicted(world, "Keep.txt")
            let document = NoteDocument(fileURL: url)
            #expect(await document.open())
            ConflictResolverDelegate(document: document).conflictResolverDidResolveWithCurrentVersion()
            #expect(try Data(contentsOf: url) == Data("mine".utf8))
            #expect(await world.wait { !document.documentState.contains(.inConflict) })
            #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty ?? true)
            #expect(await document.close())
        }
    }

    /// "Latest wins" under a coordinated write for metadata: the newer version replaces the
    /// file, the caller is told to revert, and no conflict is left. The sample resolves on a global queue, where a
    /// test's task-local version store does not reach: this test uses the process's own store
    /// (the resolution removes the versions it added).
    @Test
    func latestWinsUnderCoordination() async throws {
        let world = try PortWorld("latest-coordinated")
        let url = world.url("Latest.sicd")
        try Data("mine".utf8).write(to: url)
        var times = [timeval(tv_sec: 1_700_000_000, tv_usec: 0), timeval(tv_sec: 1_700_000_000, tv_usec: 0)]
        #expect(utimes(url.path, &times) == 0)
        _ = try VersionStore.shared.addVersion(ofItemAt: url.path, data: Data("newer".utf8), modified: Date(timeIntervalSince1970: 1_750_000_000), kind: .conflict, isConflict: true)
        let document = NoteDocument(fileURL: url)
        #expect(await document.open())
        #expect(document.documentState.contains(.inConflict))
        final class Told: @unchecked Sendable {
            let lock = NSLock()
            var shouldRevert: Bool?
        }
        let told = Told()
        SimpleiCloudDocumentController().resolveConflictsAsynchronously(document: document) { shouldRevert in
            told.lock.withLock { told.shouldRevert = shouldRevert }
        }
        #expect(await world.wait { told.lock.withLock { told.shouldRevert } != nil })
        #expect(told.lock.withLock { told.shouldRevert } == true)
        #expect(await document.revert(toContentsOf: document.fileURL))
        #expect(document.documentText == "newer")
        // No conflict version is left. Beyond Apple, the content the open document knew ("mine")
        // may be kept as an ordinary version, since a writer other than the document replaced
        // it (Folio's guarantee; whether it is made before or after the sample's
        // removeOtherVersionsOfItem depends on when the document hears of the change).
        let left = NSFileVersion.otherVersionsOfItem(at: url) ?? []
        #expect(left.allSatisfy { !$0.isConflict && $0.kindName == "external" && (try? String(contentsOf: $0.url, encoding: .utf8)) == "mine" },
            "\(left.map { "\($0.identifier) \($0.kindName) conflict=\($0.isConflict) resolved=\($0.isResolved) \((try? String(contentsOf: $0.url, encoding: .utf8)) ?? "?")" })")
        #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: url)?.isEmpty ?? true)
        #expect(await world.wait { !document.documentState.contains(.inConflict) })
        #expect(await document.close())
    }

    /// Lister's and the document browser's policy: as soon as a document shows a conflict, the
    /// current version is kept and the conflict versions are marked resolved.
    /// The samples resolve in the state notification's handler, on a thread a test's task-local
    /// version store does not reach: this test uses the process's own store (the resolutions
    /// remove the versions it adds).
    @Test func theCurrentVersionIsKeptWhenAConflictShows() async throws {
        let world = try PortWorld("keep-current")
        func conflicted(_ name: String) throws -> URL {
            let url = world.url(name)
            try Data("mine".utf8).write(to: url)
            _ = try VersionStore.shared.addVersion(ofItemAt: url.path, data: Data("theirs".utf8), modified: Date(), kind: .conflict, isConflict: true)
            return url
        }
        let listURL = try conflicted("Groceries.list")
        let listDocument = NoteDocument(fileURL: listURL)
        let controller = ListDocumentController(document: listDocument)
        #expect(await listDocument.open())
        #expect(await world.wait { NSFileVersion.unresolvedConflictVersionsOfItem(at: listURL)?.isEmpty ?? true })
        #expect(await world.wait { !listDocument.documentState.contains(.inConflict) })
        #expect(listDocument.documentText == "mine")
        _ = controller
        #expect(await listDocument.close())

        let textURL = try conflicted("Story.txt")
        let textDocument = SelfResolvingTextDocument(fileURL: textURL)
        #expect(await textDocument.open())
        #expect(await world.wait { !textDocument.documentState.contains(.inConflict) })
        #expect(textDocument.text == "mine" && textDocument.logged.isEmpty)
        #expect(NSFileVersion.unresolvedConflictVersionsOfItem(at: textURL)?.isEmpty ?? true)
        #expect(await textDocument.close())
    }
}
