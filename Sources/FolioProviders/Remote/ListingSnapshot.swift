import Folio

/// Change tracking for providers whose servers keep no change history (WebDAV, S3): the last whole
/// listing, compared with each new one, feeds a ``ProviderChangeLog``. The provider's own writes are
/// remembered as they happen, so the next listing does not report them twice.
struct ListingSnapshot: Sendable {
    /// The items of the last listing (nil before the first).
    private(set) var items: [FileProviderItemIdentifier: FileProviderItemRecord]?
    /// The changes seen so far.
    private(set) var changes = ProviderChangeLog()
    /// The items sorted by identifier (the working set's page order), made once per listing.
    private var sorted: [FileProviderItemRecord]?

    /// The items sorted by identifier's bytes.
    mutating func sortedByIdentifier() -> [FileProviderItemRecord] {
        if let sorted { return sorted }
        let made = ProviderPaging.sorted(Array((items ?? [:]).values), key: \.itemIdentifier.rawValue)
        sorted = made
        return made
    }

    /// Takes a new whole listing, recording what differs from the last one.
    mutating func update(with found: [FileProviderItemIdentifier: FileProviderItemRecord]) {
        if let previous = items {
            for (identifier, old) in previous {
                if let new = found[identifier] {
                    if new.itemVersion != old.itemVersion || new.size != old.size { changes.recordUpdate(identifier) }
                } else {
                    changes.recordDeletion(identifier)
                }
            }
            for identifier in found.keys where previous[identifier] == nil { changes.recordUpdate(identifier) }
        }
        items = found
        sorted = nil
    }

    /// Records a change this provider made: `item` created or changed, and `removed` (with whatever
    /// lay below them) gone.
    mutating func remember(_ item: FileProviderItemRecord?, removed: [FileProviderItemIdentifier] = []) {
        sorted = nil
        if !removed.isEmpty {
            let gone = Set(removed)
            for identifier in removed where items?[identifier] == nil { changes.recordDeletion(identifier) }
            for (identifier, record) in items ?? [:] where gone.contains(identifier) || isBelow(record, gone) {
                items?[identifier] = nil
                changes.recordDeletion(identifier)
            }
        }
        if let item {
            // A file whose version is not known yet (a write whose reply named none) is not kept:
            // the next listing brings it with its version.
            items?[item.itemIdentifier] = item.isFolder || !item.itemVersion.contentVersion.isEmpty ? item : nil
            changes.recordUpdate(item.itemIdentifier)
        }
    }

    /// Whether one of `record`'s ancestors in the listing is in `folders`.
    private func isBelow(_ record: FileProviderItemRecord, _ folders: Set<FileProviderItemIdentifier>) -> Bool {
        var parent = record.parentItemIdentifier
        var steps = 0
        while parent != .rootContainer, steps < 4096 {
            if folders.contains(parent) { return true }
            guard let next = items?[parent]?.parentItemIdentifier else { return false }
            parent = next
            steps += 1
        }
        return false
    }
}
