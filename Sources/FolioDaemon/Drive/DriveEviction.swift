import Folio
import FolioSync
import Foundation

extension DaemonContext {
    /// Evicts the drive items at `relative` (drive paths), each inside a coordinated eviction on
    /// the daemon's own engine: the item's presenters in every process are asked to accommodate
    /// it first (a document closes), and one that refuses, or that cannot (a presenter without
    /// `accommodatePresentedItemEviction`), keeps the item downloaded — as on Apple's systems.
    func evictCoordinated(_ relative: [String], drive: DriveSync, driveDirectory: String) async throws
        -> (evicted: [String], refused: [(String, FileProviderError)])
    {
        var evicted: [String] = [], refused: [(String, FileProviderError)] = []
        for path in relative {
            let url = URL(fileURLWithPath: path.isEmpty ? driveDirectory : driveDirectory + "/" + path)
            var ran = false
            do {
                // The claim waits for the presenters' answers without holding a thread.
                let (done, notDone) = try await FileCoordinator(filePresenter: nil, engine: access.coordination)
                    .coordinate(writingItemAt: url, options: .forEvicting) { _ in
                        ran = true
                        return try await drive.evict([path])
                    }
                evicted += done
                refused += notDone
            } catch where !ran {
                refused.append((path, FileProviderError(.nonEvictable, message: "“\(path)” is presented by an app that did not let it go: \((error as NSError).localizedDescription)")))
            }
        }
        return (evicted, refused)
    }
}
