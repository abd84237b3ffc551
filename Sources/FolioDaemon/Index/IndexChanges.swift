import Folio

/// What one index transaction changed, for the live queries: items written (their current
/// records) and paths that went (an item, or a folder with everything under it); and, for
/// presenters, the drive items whose ubiquity keys changed.
struct IndexChanges: Sendable {
    /// New or changed items, by path.
    var written: [String: IndexRecord] = [:]
    /// Items that went, and folders that went with their contents.
    var removed: Set<String> = []
    /// False when no live query listens (a crawl then keeps nothing).
    var recording = true
    /// Drive items whose ubiquity keys changed, with the keys: kept whether or not a live query
    /// listens (presenters hear them).
    var ubiquity: [(path: String, keys: [String])] = []

    var isEmpty: Bool { written.isEmpty && removed.isEmpty }

    mutating func wrote(_ record: IndexRecord) {
        guard recording else { return }
        written[record.path] = record
        removed.remove(record.path)
    }

    /// Notes a drive item's sync state changing from `old` to `new` (nothing when no key changed).
    mutating func syncStateChanged(_ path: String, from old: UbiquitousSyncState?, to new: UbiquitousSyncState?) {
        let keys = UbiquitousSyncState.changedKeys(from: old, to: new)
        if !keys.isEmpty { ubiquity.append((path, keys)) }
    }

    mutating func removedTree(_ path: String) {
        guard recording else { return }
        removed.insert(path)
        written = written.filter { !($0.key == path || $0.key.hasPrefix(path + "/")) }
    }
}
