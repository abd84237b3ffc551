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
    /// The walk the items are from, while nothing else has changed them (``ListingWalk/number``).
    private var takenWalk: Int?

    /// The items sorted by identifier's bytes.
    mutating func sortedByIdentifier() -> [FileProviderItemRecord] {
        if let sorted { return sorted }
        let made = ProviderPaging.sorted(Array((items ?? [:]).values), key: \.itemIdentifier.rawValue)
        sorted = made
        return made
    }

    /// Takes a new whole listing, recording what differs from the last one: nothing to compare when
    /// the walk repeats the one whose items these are, untouched since (the sorted items then stand too).
    mutating func update(with walk: ListingWalk) {
        let repeatsTaken = walk.repeats != nil && walk.repeats == takenWalk && items != nil
        takenWalk = walk.number
        if repeatsTaken { return }
        let found = walk.items
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
        takenWalk = nil
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

/// A whole listing of a provider's items, as a walk of its folders or keys found them.
struct ListingWalk: Sendable {
    /// Every item below the root.
    var items: [FileProviderItemIdentifier: FileProviderItemRecord]
    /// This walk's number, among the provider's walks (0: not counted).
    var number = 0
    /// The number of the walk this one repeats, when the server answered every listing of it as it
    /// answered that walk's (the items are then that walk's).
    var repeats: Int?
}
