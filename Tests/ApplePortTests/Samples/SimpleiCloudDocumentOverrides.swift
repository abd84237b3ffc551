// Sample 10 of Apple's "Synchronizing documents in the iCloud environment" (SimpleiCloudDocument,
// Document.swift): a document that logs `revert(toContentsOf:)` (which UIDocument calls itself
// after another device's change) and closes itself before its file is deleted.
//
// Lines changed from Apple's: `import UIKit` → `import Folio` (+ Foundation); the class's
// `contents`/`load` (Apple's keep a `Data` property) are the sample's own, from the same file.
import Folio
import FolioTestTraits
import Foundation
import Testing

class SyncedDocument: UIDocument {
    var data = Data()

    override func contents(forType typeName: String) throws -> Any {
        return data
    }

    override func load(fromContents contents: Any, ofType typeName: String?) throws {
        if let data = contents as? Data {
            self.data = data
        }
    }

    // UIDocument calls this method to revert the document to the most recent document data
    // on-disk after synchronizing peer changes.
    // Print this call to reveal the process.
    //
    override func revert(toContentsOf url: URL, completionHandler: ((Bool) -> Void)? = nil) {
        print("\(#function)")
        super.revert(toContentsOf: url, completionHandler: completionHandler)
    }

    // To accommodate the deletion, close the document, if necessary, then call super's implementation.
    //
    override func accommodatePresentedItemDeletion(completionHandler: @escaping (Error?) -> Void) {
        guard !documentState.contains(.closed) else {
            super.accommodatePresentedItemDeletion(completionHandler: completionHandler)
            return
        }
        close { success in
            if !success {
                print("Failed to close the document: \(self.fileURL)")
            }
            super.accommodatePresentedItemDeletion(completionHandler: completionHandler)
        }
    }
}

/// The test's own subclass (not Apple's): it records that UIDocument called `revert`.
final class WatchedSyncedDocument: SyncedDocument, @unchecked Sendable {
    private let lock = NSLock()
    private var reverts = 0
    var revertCount: Int { lock.withLock { reverts } }
    override func revert(toContentsOf url: URL, completionHandler: ((Bool) -> Void)? = nil) {
        lock.withLock { reverts += 1 }
        super.revert(toContentsOf: url, completionHandler: completionHandler)
    }
}

@Suite("Apple's samples: Synchronizing documents (the document)", .elasticPool)
struct SimpleiCloudDocumentOverrideTests {
    /// Another writer's change makes the document revert, through the override.
    @Test func revertsAfterAnotherWritersChange() async throws {
        let world = try PortWorld("synced")
        try await world.run {
            let url = world.url("Notes.sicd")
            try Data("first".utf8).write(to: url)
            let document = WatchedSyncedDocument(fileURL: url)
            #expect(await document.open())
            NSFileCoordinator().coordinate(writingItemAt: url, options: [], error: nil) { newURL in
                try? Data("from another device".utf8).write(to: newURL)
            }
            #expect(await world.wait { document.data == Data("from another device".utf8) })
            #expect(document.revertCount == 1, "UIDocument reverts through revert(toContentsOf:)")

            // Not yet checked here: the override's close inside accommodatePresentedItemDeletion.
            // Folio asks a presenter to relinquish to the deleting writer before it asks it to
            // accommodate the deletion, so the close waits behind the writer until the presenter
            // times out (docs/apple-api.md, item 22).
            #expect(await document.close())
        }
    }
}
