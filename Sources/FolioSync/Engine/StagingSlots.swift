#if canImport(Glibc)
@preconcurrency import Glibc
#endif
import Foundation

/// The files an upload's snapshot is copied into, reused from one upload to the next: a pass of
/// many small files would otherwise create and delete a file for each, and ext4 makes every new
/// file slower while many were deleted recently (its inode allocator passes over them: measured as
/// 40% of a 4,000-file upload's time). A slot is held for one upload and given back only after a
/// provider call that succeeded; a pass removes the free ones at its end.
final class StagingSlots: @unchecked Sendable {
    private let folder: String
    private let lock = NSLock()
    private var free: [String] = []
    private var made = 0

    init(folder: String) { self.folder = folder }

    /// A slot's path, its file perhaps holding an earlier upload's bytes (the copy writes over it and cuts it to size).
    func take() -> String {
        lock.withLock {
            if let slot = free.popLast() { return slot }
            made += 1
            return folder + "/upload-slot-\(made)"
        }
    }

    /// Gives `slot` back for the next upload: only once nothing reads it any more (a provider
    /// call that failed or was cancelled may have left a reader behind: ``discard(_:)``).
    func give(_ slot: String) {
        lock.withLock { free.append(slot) }
    }

    /// Removes `slot`'s file instead of reusing it: a reader it may still have keeps the old
    /// bytes, and the next upload gets a new file.
    func discard(_ slot: String) {
        unlink(slot)
    }

    /// Removes the files of the slots no upload holds.
    func removeFree() {
        let slots = lock.withLock {
            defer { free.removeAll() }
            return free
        }
        for slot in slots { unlink(slot) }
    }
}
