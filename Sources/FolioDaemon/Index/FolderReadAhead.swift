import FolioSystem
import Foundation

/// Reads the crawl's next folders from the disk ahead of the writer, on a queue of its own, so
/// that the directory reads, `lstat`s and rows of the next folders are made while SQLite writes
/// the last ones: the crawl's two halves on two cores, and no write transaction ever waits for
/// the disk (a step writes only the listings already read). Folders are read in order, each
/// watched first (an event after the read is then never missed); the reader stays at most
/// `aheadEntries` entries ahead of the writer, and stops when told.
final class FolderReadAhead: @unchecked Sendable {
    /// The folders, in the order they are read (their rows' ids, paths, and the device and inode
    /// each was found as).
    let folders: [(id: Int64, path: String, identity: (device: UInt64, inode: UInt64)?)]
    /// The next folder the writer takes.
    var next = 0

    private let condition = NSCondition()
    private var listings: [IndexWriter.FolderListing?]
    /// Entries read and not yet taken by the writer.
    private var pendingEntries = 0
    private var stopped = false
    /// The reader gave up waiting for the writer (see `waitForRoom`).
    private var abandoned = false
    private let aheadEntries: Int

    /// The one queue the reads run on: a crawl at a time, and a read that hangs (a network file
    /// system) holds up only the crawl, never a shared pool.
    private static let queue = DispatchQueue(label: "folio.index.read-ahead")

    /// Starts reading `folders` with `writer`'s scanner, watching each with `watcher` first.
    init(folders: [(id: Int64, path: String, identity: (device: UInt64, inode: UInt64)?)], writer: IndexWriter, watcher: InotifyWatcher?, aheadEntries: Int) {
        self.folders = folders
        listings = Array(repeating: nil, count: folders.count)
        self.aheadEntries = aheadEntries
        Self.queue.async { [self] in
            for (index, folder) in folders.enumerated() {
                guard waitForRoom() else {
                    condition.withLock {
                        abandoned = true
                        condition.broadcast()
                    }
                    return
                }
                watcher?.watch(folder.path)
                let listing = writer.read(folder: folder.path, expecting: folder.identity)
                condition.withLock {
                    listings[index] = listing
                    pendingEntries += listing.entries.count
                    condition.broadcast()
                }
            }
        }
    }

    /// Whether every folder was taken, or the reader gave up before the next one.
    var isFinished: Bool { next == folders.count || condition.withLock { abandoned && listings[next] == nil } }

    /// Waits while the reader is far enough ahead; false once stopped, or when the writer has
    /// taken nothing for a minute (the read-ahead then ends: its folders stay unlisted).
    private func waitForRoom() -> Bool {
        let deadline = Date(timeIntervalSinceNow: 60)
        return condition.withLock {
            while !stopped && pendingEntries >= aheadEntries {
                guard condition.wait(until: deadline) else { return false }
            }
            return !stopped
        }
    }

    /// Waits at most `seconds` for the next folder's listing; whether it is read.
    func waitForNext(within seconds: Double) -> Bool {
        guard next < folders.count else { return false }
        let deadline = Date(timeIntervalSinceNow: seconds)
        return condition.withLock {
            while listings[next] == nil {
                guard !abandoned, condition.wait(until: deadline) else { return false }
            }
            return true
        }
    }

    /// The next folder with its listing, when it is read already (never waits).
    func takeNext() -> (id: Int64, listing: IndexWriter.FolderListing)? {
        guard next < folders.count else { return nil }
        let listing: IndexWriter.FolderListing? = condition.withLock {
            guard let listing = listings[next] else { return nil }
            listings[next] = nil
            pendingEntries -= listing.entries.count
            condition.broadcast()
            return listing
        }
        guard let listing else { return nil }
        defer { next += 1 }
        return (folders[next].id, listing)
    }

    /// Ends the reads: the folders not taken stay unlisted, for a later step to read again.
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }
}
