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

            #expect(await document.close())
        }
    }

    /// A deleting writer: the override closes the document inside
    /// `accommodatePresentedItemDeletion`, then the deletion goes ahead at once (not after the
    /// presenter timeout, which a close waiting behind its own relinquishment used to cost).
    @Test func closesWhenTheFileIsDeleted() async throws {
        let world = try PortWorld("synced-deleted")
        try await world.run {
            let url = world.url("Gone.sicd")
            try Data("soon gone".utf8).write(to: url)
            let document = WatchedSyncedDocument(fileURL: url)
            #expect(await document.open())
            let started = ContinuousClock.now
            var failure: NSError?
            NSFileCoordinator().coordinate(writingItemAt: url, options: .forDeleting, error: &failure) { newURL in
                try? FileManager.default.removeItem(at: newURL)
            }
            #expect(failure == nil, "\(String(describing: failure))")
            #expect(ContinuousClock.now - started < .seconds(10), "the deletion waited for a presenter timeout")
            #expect(await world.wait { document.documentState.contains(.closed) })
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }
}
