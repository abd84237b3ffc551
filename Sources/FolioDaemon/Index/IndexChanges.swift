/// What one index transaction changed, for the live queries: items written (their current
/// records) and paths that went (an item, or a folder with everything under it).
struct IndexChanges: Sendable {
    /// New or changed items, by path.
    var written: [String: IndexRecord] = [:]
    /// Items that went, and folders that went with their contents.
    var removed: Set<String> = []
    /// False when no live query listens (a crawl then keeps nothing).
    var recording = true

    var isEmpty: Bool { written.isEmpty && removed.isEmpty }

    mutating func wrote(_ record: IndexRecord) {
        guard recording else { return }
        written[record.path] = record
        removed.remove(record.path)
    }

    mutating func removedTree(_ path: String) {
        guard recording else { return }
        removed.insert(path)
        written = written.filter { !($0.key == path || $0.key.hasPrefix(path + "/")) }
    }
}
