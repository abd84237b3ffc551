/// What a sync pass did.
package struct SyncReport: Sendable, Equatable {
    package var uploaded = 0
    package var downloaded = 0
    /// Remote files written (or brought up to date) as placeholders: listed here, content on the server.
    package var placeholders = 0
    /// Items moved or renamed (on the server for moves made here, here for the server's).
    package var moved = 0
    package var deletedOnServer = 0
    package var deletedHere = 0
    /// Paths both sides changed to the same content.
    package var converged = 0
    /// Paths both sides changed differently: the server's content has the name, the local one is
    /// a conflict version.
    package var conflicts: [String] = []
    /// Conflict versions other devices kept, added here to their documents.
    package var sharedConflicts = 0
    /// Conflicts another device's user resolved, marked resolved here.
    package var resolvedConflicts = 0
    /// Deletions held back by the mass-deletion guard (run again with deletions confirmed).
    package var heldDeletions = 0
    /// Whether the pass merged (first sync, reset journal, restored or replaced server): no deletions.
    package var merged = false
    /// Paths that were not synced this time, with the reason (they are tried again next pass).
    package var deferred: [String: String] = [:]
    /// Paths not tried this time because the same action failed pass after pass, with the reason
    /// and until when they wait (tried again then, when the item changes, or in a pass asked for).
    package var setAside: [String: String] = [:]
    /// Items left out of the listing (names no file system here can hold, duplicates).
    package var skipped: [String] = []

    /// A report of a pass that did nothing yet.
    package init() {}
}
