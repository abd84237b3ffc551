import FolioSystem
import Foundation

/// Reads a crawl step's folders from the disk ahead of the writer, on a queue of its own, so that
/// the directory reads, `lstat`s and rows of the next folders are made while SQLite writes this
/// one: the crawl's two halves on two cores. Folders are read in order, each watched first (an
/// event after the read is then never missed); the reader stays at most `aheadEntries` entries
/// ahead of the writer, and stops when the writer's step ends.
final class FolderReadAhead: @unchecked Sendable {
    private let condition = NSCondition()
    private var listings: [IndexWriter.FolderListing?]
    /// Entries read and not yet taken by the writer.
    private var pendingEntries = 0
    private var stopped = false
    private let aheadEntries: Int

    /// The one queue the reads run on: a crawl step at a time, and a read that hangs (a network
    /// file system) holds up only the crawl, never a shared pool.
    private static let queue = DispatchQueue(label: "folio.index.read-ahead")

    /// Starts reading `folders` with `writer`'s scanner, watching each with `watcher` first.
    init(folders: [String], writer: IndexWriter, watcher: InotifyWatcher?, aheadEntries: Int) {
        listings = Array(repeating: nil, count: folders.count)
        self.aheadEntries = aheadEntries
        Self.queue.async { [self] in
            for (index, path) in folders.enumerated() {
                guard waitForRoom() else { return }
                watcher?.watch(path)
                let listing = writer.read(folder: path)
                condition.withLock {
                    listings[index] = listing
                    pendingEntries += listing.entries.count
                    condition.broadcast()
                }
            }
        }
    }

    /// Waits while the reader is far enough ahead; false once stopped.
    private func waitForRoom() -> Bool {
        condition.withLock {
            while !stopped && pendingEntries >= aheadEntries { condition.wait() }
            return !stopped
        }
    }

    /// The listing of the `index`th folder, once read; waits at most `seconds`.
    func listing(at index: Int, within seconds: Double = 120) throws -> IndexWriter.FolderListing {
        try condition.withLock {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while listings[index] == nil {
                guard condition.wait(until: deadline) else {
                    throw DaemonError("reading a folder for the index took more than \(Int(seconds)) s")
                }
            }
            let listing = listings[index]!
            listings[index] = nil
            pendingEntries -= listing.entries.count
            condition.broadcast()
            return listing
        }
    }

    /// Ends the reads: the folders not yet read stay for the next step.
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }
}
