import Foundation
import FolioSystem
import Logging
import SystemPackage

extension Document {
    func presenterSave(_ completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        guard hasUnsavedChanges else { return completionHandler(nil) }
        let url = fileURL
        autosave { saved in
            completionHandler(saved ? nil : Self.failure(.fileWriteUnknown, url, "the document could not save its changes"))
        }
    }

    func presenterRelinquishToWriter(_ writer: @escaping @Sendable ((@Sendable () -> Void)?) -> Void) {
        // The document's own file access waits until the writer is done (its reacquirer runs); a
        // writer that never finishes cannot stall the document for more than two minutes.
        performAsynchronousFileAccess { [self] in
            let resumed = DispatchSemaphore(value: 0)
            writer { resumed.signal() }
            if resumed.wait(timeout: .now() + 120) == .timedOut {
                logger.warning("a writer held the document's file for two minutes; going on", metadata: ["file": "\(fileURL.path)"])
            }
        }
    }

    func presenterAccommodateDeletion(_ completionHandler: @escaping @Sendable ((any Error)?) -> Void) {
        // Not through the file-access queue: the deleting writer was relinquished to already, and
        // that queue waits for it to finish.
        cancelAutosave()
        FileCoordinator.removeFilePresenter(self, engine: engine)
        updateState { $0.insert(.closed) }
        completionHandler(nil)
    }

    /// Another writer changed the file. What the document knew is kept as a version (beyond Apple: so
    /// even a writer that did not coordinate cannot destroy the only copy); then the document reloads,
    /// or, with unsaved changes, saves them at once: its save finds the other writer's content, keeps
    /// it as a conflict version (unless the bytes are the same) and shows `.inConflict`.
    func presenterDidChange() {
        performAsynchronousFileAccess { [self] in
            guard !documentState.contains(.closed), let base else { return }
            let path = fileURL.path
            let current = ItemStamp(path: path)
            guard current.exists, current != base.stamp, !current.isDirectory else { return }
            if let identity, DocumentIdentity.adopt(identity, at: path) {
                logger.notice("a writer replaced the file without keeping its identity; restored it", metadata: ["file": "\(path)"])
            }
            let disk = FileManager.default.contents(atPath: path)
            if let known = base.data, disk != known {
                do {
                    try versions.addVersion(
                        ofItemAt: path, data: known, modified: Date(timeIntervalSince1970: base.stamp.modificationTime), kind: .external)
                } catch {
                    logger.error("could not keep the replaced contents as a version", metadata: ["file": "\(path)", "error": "\(error)"])
                }
            }
            if hasUnsavedChanges {
                autosave()
            } else {
                // Through the overridable method, as UIDocument reverts after another writer's
                // change (queued behind this access).
                revert(toContentsOf: fileURL)
            }
        }
    }
}
